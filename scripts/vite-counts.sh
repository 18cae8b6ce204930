#!/usr/bin/env bash
# Regenerates tests/expected/vite/<trace>.counts: what ViTE's own SVG
# export (`vite -f TRACE -e OUT.svg`, Debian package `vite`) draws for the
# shared Pajé examples, counted per kind. tests/tests/vite_compare.rs
# compares traceloom's export of the same traces with these counts, so CI
# needs no ViTE.
#
# ViTE's SVG (ViTE 1.2): a background rect; one rect (fill rgb(0,0,153))
# and one label per container; inside the second clip group, one rect per
# state drawn and one line per variable piece; links go to a third group,
# which ViTE 1.2's export leaves empty.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v vite >/dev/null || { echo "vite is not installed (apt-get install vite)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in g5k simu-mardi; do
  QT_QPA_PLATFORM=offscreen vite -f "traces/paje/$t.trace" -e "$tmp/$t.svg" >/dev/null 2>&1
  python3 - "$tmp/$t.svg" > "tests/expected/vite/$t.counts" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
groups = re.findall(r'<g[^>]*>(.*?)</g>', s, flags=re.S)
top = re.sub(r'<g[^>]*>.*?</g>', '', s, flags=re.S)
containers = len(re.findall(r'<rect[^>]*fill="rgb\(0,0,153\)"', top))
states = sum(len(re.findall(r'<rect\b', g)) for g in groups)
variables = sum(len(re.findall(r'<line\b', g)) for g in groups)
links = sum(len(re.findall(r'<(?:polygon|path)\b', g)) for g in groups[2:]) + \
        sum(len(re.findall(r'<line\b', g)) for g in groups[2:])
fills = sorted({m for g in groups for m in re.findall(r'<rect[^>]*fill="rgb\(([0-9,]+)\)"', g)})
print(f"containers {containers}")
print(f"states {states}")
print(f"links {links}")
print(f"variables {variables}")
for f in fills:
    # ViTE writes 256 for a component of 1.0.
    r, g, b = (min(int(x), 255) for x in f.split(','))
    print(f"state_color {r:02x}{g:02x}{b:02x}")
PY
  echo "tests/expected/vite/$t.counts"
done
