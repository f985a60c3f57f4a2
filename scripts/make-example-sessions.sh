#!/usr/bin/env bash
# Regenerates sessions/: two real sessions made by the built-in roles on tests/fixtures/python-calc
# with an uncommitted change to its tokenizer — one run to the end (completed), one interrupted
# with Ctrl-C after its strategy task (paused). Temp paths are replaced by a neutral placeholder so
# nothing of this machine is checked in. Needs python3 with pytest and coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin="$PWD/target/debug/team-testing"
placeholder=/tmp/team-testing-example

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
cp -r tests/fixtures/python-calc "$repo"
find "$repo" -name __pycache__ -prune -exec rm -rf {} +
git -C "$repo" init -q
git -C "$repo" add .
git -C "$repo" -c user.name=example -c user.email=example@example.invalid commit -q -m initial
sed -i 's|OPERATORS = "+-\*/()"|OPERATORS = "+-*/()%"|' "$repo/calc/tokenizer.py"

export TEAM_TESTING_SESSIONS="$work/sessions"

# 1. completed
"$bin" run "test the new tokenizer" --repo "$repo" -y >/dev/null 2>&1 || true

# 2. paused: interrupted once its strategy is done
"$bin" run "test the tokenizer edge cases" --repo "$repo" --pipeline standard >/dev/null 2>&1 &
pid=$!
paused=""
for _ in $(seq 1 500); do
  f=$(ls -d "$work"/sessions/TST-test-the-tokenizer-edge-cases-*/tasks.json 2>/dev/null | head -n1 || true)
  if [ -n "$f" ] && grep -q '"status": "completed"' "$f"; then
    kill -INT "$pid"
    paused=yes
    break
  fi
  sleep 0.02
done
wait "$pid" || true
[ -n "$paused" ] || { echo "could not interrupt the second run" >&2; exit 1; }

rm -rf sessions
mkdir -p sessions
# -y archived the completed one: the examples sit side by side.
for s in "$work"/sessions/TST-* "$work"/sessions/archive/TST-*; do
  name=$(basename "$s")
  cp -r "$s" "sessions/$name"
done
# Mirrors of the repository (workspace/), binary coverage databases and the lock hold nothing
# a reader needs.
find sessions -mindepth 2 -maxdepth 2 -name workspace -type d -exec rm -rf {} +
find sessions -name '.coverage*' -type f -delete
find sessions -name '.lock' -type f -delete
find sessions -name '__pycache__' -prune -exec rm -rf {} +
find sessions -type f \( -name '*.json' -o -name '*.jsonl' -o -name '*.md' -o -name '*.xml' -o -name '*.ini' -o -name '*.py' -o -name '*.log' \) \
  -exec sed -i "s|$work|$placeholder|g" {} +
ls sessions
