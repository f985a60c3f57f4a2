#!/usr/bin/env bash
# The round trip of `roles add` to a running coordinator (the inbox): the time from starting the
# command to its printed answer, including the process start. Five adds into one live session
# of the scripted roles; prints one time per add and the start-up time of a bare command.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin="$PWD/target/debug/team-testing"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r tests/fixtures/python-calc "$work/repo"
git -C "$work/repo" init -q
git -C "$work/repo" add .
git -C "$work/repo" -c user.name=bench -c user.email=bench@example.invalid commit -q -m initial
for i in 1 2 3 4 5; do
  mkdir -p "$work/extra/r$i"
  printf -- '---\nrole: r%s\nprefix: RX%s\ninner_loop: false\nmessage_types: [progress]\nbackend: command\ncommand: ["python3", "%s"]\ntimeout_s: 60\n---\nA no-op role.\n' \
    "$i" "$i" "$PWD/tests/fixtures/roles/scripted/role.py" > "$work/extra/r$i/role.md"
done
export TEAM_TESTING_SESSIONS="$work/sessions"
TT_FIXTURE_SLEEP=4 "$bin" run "bench" --repo "$work/repo" --pipeline targeted \
  --roles-dir tests/fixtures/roles/scripted -y >/dev/null 2>&1 &
run=$!
until grep -qs '"status": "active"' "$work"/sessions/TST-*/session.json; do sleep 0.05; done
now() { date +%s%N; }
for i in 1 2 3 4 5; do
  t0=$(now)
  "$bin" roles add "r$i" --spec "$work/extra/r$i/role.md" --repo "$work/repo" --max-roles 20 \
    --after STRATEGY-001 >/dev/null
  echo "roles add r$i: $(( ($(now) - t0) / 1000000 )) ms"
done
t0=$(now)
"$bin" roles list >/dev/null
echo "bare command (roles list): $(( ($(now) - t0) / 1000000 )) ms"
wait "$run"
