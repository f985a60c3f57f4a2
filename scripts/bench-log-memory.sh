#!/usr/bin/env bash
# Peak memory of `team-testing log` reading (and following) a 1 GB messages.jsonl: a real session
# of the scripted roles whose log is grown to SIZE_MB (default 1024) with realistic records.
# Prints the peak resident set size and wall time of each command (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${SIZE_MB:-1024}
cargo build --quiet
bin="$PWD/target/debug/team-testing"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r tests/fixtures/python-calc "$work/repo"
git -C "$work/repo" init -q
git -C "$work/repo" add .
git -C "$work/repo" -c user.name=bench -c user.email=bench@example.invalid commit -q -m initial
export TEAM_TESTING_SESSIONS="$work/sessions"
"$bin" run "bench" --repo "$work/repo" --pipeline standard \
  --roles-dir tests/fixtures/roles/scripted --completion keep >/dev/null 2>&1
session=$(ls "$work/sessions")
log="$work/sessions/$session/.msg/messages.jsonl"
python3 - "$log" "$size_mb" <<'PY'
import json, sys
path, size = sys.argv[1], int(sys.argv[2]) << 20
last = sum(1 for _ in open(path))
kinds = [("executor", "progress"), ("generator", "progress"), ("executor", "task_complete")]
with open(path, "a") as f:
    n = last
    while f.tell() < size:
        n += 1
        frm, kind = kinds[n % 3]
        rec = {"id": f"MSG-{n:03}", "ts": "2026-12-03T10:00:00.000+00:00", "from": frm,
               "to": "coordinator", "type": kind,
               "summary": f"[{frm}] TESTRUN-001 {kind} " + "x" * 120,
               "data": {"task_id": "TESTRUN-001", "phase": "tests_running", "progress_pct": 50.0}}
        f.write(json.dumps(rec) + "\n")
PY
echo "log: $(du -m "$log" | cut -f1) MB, $(wc -l < "$log") lines"
measure() {
  local label=$1; shift
  /usr/bin/time -f "$label: %M KB peak RSS, %e s" "$@" >/dev/null
}
measure "log --type task_complete --from executor" "$bin" log "$session" --type task_complete --from executor
measure "log --last 5" "$bin" log "$session" --last 5
measure "log --follow (session not running)" "$bin" log "$session" --follow
