#!/usr/bin/env bash
# Peak memory of the report parsers on large files: a JUnit report of SIZE_MB (default 1024)
# with 20,000 failing test cases whose bodies are large, and an LCOV tracefile of the same size.
# Prints the peak resident set size and wall time of each parse (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${SIZE_MB:-1024}
cargo build --quiet --example parse_report
bin="$PWD/target/debug/examples/parse_report"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$size_mb" <<'PY'
import sys
work, size = sys.argv[1], int(sys.argv[2]) << 20
body = ("Traceback (most recent call last):\n  File \"t.py\", line 3\nAssertionError: " + "x" * 100 + "\n") * 400
with open(f"{work}/junit.xml", "w") as f:
    f.write('<?xml version="1.0"?>\n<testsuites><testsuite name="pytest">\n')
    i = 0
    while f.tell() < size:
        f.write(f'<testcase classname="tests.test_m" name="test_{i}" time="0.01">'
                f'<failure message="boom {i}">{body}</failure></testcase>\n')
        i += 1
    f.write('</testsuite></testsuites>\n')
with open(f"{work}/cov.lcov", "w") as f:
    i = 0
    while f.tell() < size:
        f.write(f"SF:src/m{i}.rs\n" + "".join(f"DA:{l},{l % 3}\n" for l in range(1, 2001)) + "end_of_record\n")
        i += 1
PY
for kind in junit lcov; do
  file=$([ "$kind" = junit ] && echo "$work/junit.xml" || echo "$work/cov.lcov")
  /usr/bin/time -f "$kind $(du -m "$file" | cut -f1) MB: %M KB peak RSS, %e s" "$bin" "$kind" "$file"
done
