#!/bin/sh
# Regenerates babeltrace2 2.1's expected output for the CTF 2 test traces
# (traces/oracle/babeltrace2-2.1/, compared by tests/tests/ctf2_parity.rs,
# so that the tests need no babeltrace2 2.1).
#
#   scripts/ctf2-oracle.sh [BABELTRACE2]    (default /opt/babeltrace2-2.1/bin/babeltrace2)
#
# babeltrace2 2.1 is not in Debian 12: it is built from its source
# release (2.1.2) into a prefix of its own, away from the system's 2.0.4,
# which the CTF 1.8 parity tests use. The Trace Compass CTF2-7.0-* traces
# are in the specification's draft form, which babeltrace2 2.1 refuses:
# their expected output is babeltrace2's on a copy rewritten in the final
# form (scripts/ctf2-draft-to-final.py); traceloom reads the originals.
set -eu
BT2=${1:-/opt/babeltrace2-2.1/bin/babeltrace2}
cd "$(dirname "$0")/.."
"$BT2" --version | grep -q '^Babeltrace 2\.1\.' || {
    echo "ctf2-oracle: $BT2 is not babeltrace2 2.1" >&2
    exit 1
}
OUT=traces/oracle/babeltrace2-2.1
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run() { # NAME TRACE_DIR
    TERM=dumb "$BT2" --clock-gmt "$2" >"$OUT/$1.txt" 2>"$TMP/err" || {
        cat "$TMP/err" >&2
        exit 1
    }
    # Discarded-records warnings (often none) go beside the output, with
    # the absolute path of traces/ written TRACES (the test does the same).
    { grep -a 'WARNING' "$TMP/err" || true; } | sed "s|$(pwd)/traces/|TRACES/|g" >"$OUT/$1.warnings"
    echo "$1: $(wc -l <"$OUT/$1.txt") lines"
}
run CTF2-vl-ints traces/ctf/tracecompass/CTF2-vl-ints
for t in CTF2-7.0-smalltrace CTF2-7.0-succeed1 CTF2-7.0-lttng-crash CTF2-7.0-trace-with-index; do
    scripts/ctf2-draft-to-final.py "traces/ctf/tracecompass/$t" "$TMP/$t"
    run "$t" "$TMP/$t"
done
run ust_pid traces/ctf/ctf2/ust_pid
run hello-lost traces/ctf/ctf2/hello-lost
# 9.8 and 4.2 MB of text: kept compressed (the test reads it with flate2).
gzip -9 -n -f "$OUT/ust_pid.txt" "$OUT/hello-lost.txt"
