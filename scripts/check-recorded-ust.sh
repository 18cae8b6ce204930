#!/usr/bin/env bash
# check-recorded-ust.sh -- compare `traceloom dump --clock-gmt` with
# `babeltrace2 --clock-gmt` on real LTTng-UST traces recorded by
# scripts/record-ust-traces.sh.
#
# usage: scripts/check-recorded-ust.sh [OUTDIR=./ust-traces] [THREADS=4] [ITERS=625000]
#
# * If OUTDIR does not hold the four traces yet (ust_uid_blocking,
#   ust_uid_discard, ust_pid, ust_overwrite), they are recorded first with
#   `record-ust-traces.sh OUTDIR THREADS ITERS`, which needs root (it installs
#   and starts LTTng). Each trace holds about 1.41 * THREADS * ITERS events:
#   the defaults give ~3.5 million; `... 2 2000` gives a small set for CI.
#   An existing OUTDIR is never re-recorded.
# * Each trace is then printed by both tools (streamed, nothing stored) and
#   the outputs must be byte-identical, and both tools must succeed.
# * babeltrace2's lost-records warnings on standard error ("WARNING: Tracer
#   discarded N events ...", "... may have discarded ...", "... discarded N
#   packets ...") must be printed by traceloom too, in the same order,
#   except one deliberate difference: where a stream's `events_discarded`
#   counter goes backwards (LTTng-UST discard and overwrite modes),
#   babeltrace2 prints the wrapped difference (2^64 - n events) and
#   traceloom prints nothing (see `lost_events` in engine/ctf/src/stream.rs);
#   those babeltrace2 lines are counted and left out of the comparison.
#
# Environment: TRACELOOM (a traceloom binary; default: built here with
# `cargo build --release -p traceloom`), RECORD_UST (the recording script),
# BABELTRACE2 (default: babeltrace2).
#
# Exit status: 0 when every trace matches, 1 when one differs or a tool
# fails, 77 when the traces are missing and cannot be recorded here (not
# root, or no recording script).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:-./ust-traces}")
THREADS=${2:-4}
ITERS=${3:-625000}
RECORD_UST=${RECORD_UST:-$here/scripts/record-ust-traces.sh}
BT2=${BABELTRACE2:-babeltrace2}
KINDS=(ust_uid_blocking ust_uid_discard ust_pid ust_overwrite)

note() { printf '%s\n' "check-recorded-ust: $*" >&2; }

have_all() {
    local k
    for k in "${KINDS[@]}"; do
        [ -d "$OUT/$k" ] || return 1
    done
}

if have_all; then
    note "using the traces already in $OUT (not re-recorded)"
else
    if [ "$(id -u)" != 0 ]; then
        note "$OUT does not hold the four traces and recording needs root: skipped"
        exit 77
    fi
    if [ ! -f "$RECORD_UST" ]; then
        note "recording script not found ($RECORD_UST): skipped"
        exit 77
    fi
    note "recording into $OUT with $THREADS threads x $ITERS iterations"
    bash "$RECORD_UST" "$OUT" "$THREADS" "$ITERS"
    if ! have_all; then
        note "recording did not produce the four traces in $OUT"
        exit 1
    fi
fi

if ! command -v "$BT2" >/dev/null; then
    note "$BT2 not found"
    exit 1
fi

if [ -z "${TRACELOOM:-}" ]; then
    (cd "$here" && cargo build --release --quiet -p traceloom)
    TRACELOOM="${CARGO_TARGET_DIR:-$here/target}/release/traceloom"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The lost-records warnings of a standard error file (as the parity tests
# pick them), without those whose count is a wrapped negative difference
# (at least 2^63) when WRAPPED=drop.
warnings() {
    grep 'WARNING' "$1" | grep ': Tracer ' |
        awk -v mode="${2:-keep}" '
            { wrapped = match($0, /discarded [0-9]+ events/) &&
                  substr($0, RSTART + 10, RLENGTH - 17) + 0 >= 9223372036854775808 }
            mode == "keep" || !wrapped' || true
}

failed=0
for k in "${KINDS[@]}"; do
    trace="$OUT/$k"
    start=$(date +%s)
    # Both tools print the trace at once into `cmp`, through FIFOs.
    rm -f "$work/bt2.out" "$work/tl.out"
    mkfifo "$work/bt2.out" "$work/tl.out"
    TERM=dumb "$BT2" --clock-gmt "$trace" >"$work/bt2.out" 2>"$work/bt2.err" &
    bt2_pid=$!
    "$TRACELOOM" dump --clock-gmt "$trace" >"$work/tl.out" 2>"$work/tl.err" &
    tl_pid=$!
    set +e
    cmp_out=$(cmp "$work/bt2.out" "$work/tl.out" 2>&1)
    same=$?
    # After an early difference, the writers may be stopped by SIGPIPE.
    wait "$bt2_pid"
    bt2_rc=$?
    wait "$tl_pid"
    tl_rc=$?
    set -e
    secs=$(($(date +%s) - start))
    events=$("$TRACELOOM" count "$trace" 2>/dev/null | head -n1 || true)
    problem=""
    if [ "$same" != 0 ]; then
        problem=$'\n'"  outputs differ: $cmp_out"
        # cmp names the first differing line: show it from both.
        n=$(printf '%s\n' "$cmp_out" | sed -n 's/.* line \([0-9][0-9]*\).*/\1/p')
        if [ -n "$n" ]; then
            # (sed stops reading there: the writers end with SIGPIPE)
            ref=$(TERM=dumb "$BT2" --clock-gmt "$trace" 2>/dev/null | sed -n "${n}{p;q}" || true)
            ours=$("$TRACELOOM" dump --clock-gmt "$trace" 2>/dev/null | sed -n "${n}{p;q}" || true)
            problem+=$'\n'"  babeltrace2: $ref"$'\n'"  traceloom:   $ours"
        fi
    fi
    if [ "$bt2_rc" != 0 ] && [ "$bt2_rc" != 141 ]; then
        problem+=$'\n'"  babeltrace2 failed (status $bt2_rc): $(head -c 2000 "$work/bt2.err")"
    fi
    if [ "$tl_rc" != 0 ] && [ "$tl_rc" != 141 ]; then
        problem+=$'\n'"  traceloom failed (status $tl_rc): $(head -c 2000 "$work/tl.err")"
    fi
    if [ "$same" = 0 ] && ! diff <(warnings "$work/bt2.err" drop) <(warnings "$work/tl.err") >"$work/warn.diff"; then
        problem+=$'\n'"  lost-records warnings differ (< babeltrace2, > traceloom):"$'\n'"$(head -n 20 "$work/warn.diff")"
    fi
    nwarn=$(warnings "$work/tl.err" | wc -l)
    nwrapped=$(warnings "$work/bt2.err" | awk 'END { print NR }')
    nwrapped=$((nwrapped - $(warnings "$work/bt2.err" drop | awk 'END { print NR }')))
    if [ -z "$problem" ]; then
        printf 'PASS %-18s %s, identical output, %s identical lost-records warnings' \
            "$k" "$events" "$nwarn"
        if [ "$nwrapped" -gt 0 ]; then
            printf ' (+%s babeltrace2 warnings with a wrapped count, not printed by traceloom)' "$nwrapped"
        fi
        printf ', %ss\n' "$secs"
    else
        printf 'FAIL %-18s%s\n' "$k" "$problem"
        failed=1
    fi
done
exit "$failed"
