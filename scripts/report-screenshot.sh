#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of analysis/report.html: a real standard run
# (built-in roles, real pytest and coverage.py) on tests/fixtures/python-calc with an uncommitted
# change to its tokenizer, then headless Chromium with the network off screenshots the page from
# its Coverage by Layer section (the charts, the timeline, the file table with one source open).
# Needs python3 with pytest and coverage (requirements-test.txt) and chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || { echo "needs chromium (apt-get install -y chromium)" >&2; exit 1; }
cargo build --quiet
bin="$PWD/target/debug/team-testing"
out="$PWD/docs/report.png"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
cp -r tests/fixtures/python-calc "$repo"
find "$repo" -name __pycache__ -prune -exec rm -rf {} +
git -C "$repo" init -q
git -C "$repo" add .
git -C "$repo" -c user.name=example -c user.email=example@example.invalid commit -q -m initial
sed -i 's|OPERATORS = "+-\*/()"|OPERATORS = "+-*/()%"|' "$repo/calc/tokenizer.py"

TEAM_TESTING_SESSIONS="$work/sessions" timeout 600 \
  "$bin" run "test the new tokenizer" --repo "$repo" --pipeline standard -y >/dev/null
html=$(ls "$work"/sessions/TST-*/analysis/report.html)
# The picture starts at Coverage by Layer (the headline and score above it are text), with the
# first file's source open (what a click on its row shows).
sed -e 's|<details id="src-0">|<details id="src-0" open>|' \
  -e 's|</head>|<style>header,nav,main>:not(#layers):not(#layers~*){display:none}</style></head>|' \
  "$html" >"$work/shot.html"
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --proxy-server=127.0.0.1:9 --user-data-dir="$work/profile" \
  --window-size=1280,2000 \
  --screenshot="$out" "file://$work/shot.html" >/dev/null 2>&1
ls -l "$out"
