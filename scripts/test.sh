#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace
# (babeltrace2 / pj_dump parity tests included; GUI tests run under xvfb).
# Ends with the totals over all test binaries: "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log="$scratch/test.log"
# Analysis stores and checkpoint caches that tests write go to a scratch
# cache, not the user's ~/.cache/traceloom.
export XDG_CACHE_HOME="$scratch/cache"
# GUI tests open real windows: run everything under a virtual X server.
status=0
xvfb-run -a -s "-screen 0 2000x1300x24" cargo test --workspace --locked 2>&1 | tee "$log" ||
    status=$?
# libtest's "test result: ok. N passed; M failed; K ignored; ..." lines and
# the GUI harness's "N passed, M failed" line, summed.
awk '
    /^test result: / {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) ~ /^passed/) passed += $i
            if ($(i + 1) ~ /^failed/) failed += $i
            if ($(i + 1) ~ /^ignored/) ignored += $i
        }
        next
    }
    /^[0-9]+ passed, [0-9]+ failed/ { passed += $1; failed += $3 }
    END {
        line = sprintf("%d passed, %d failed", passed, failed)
        if (ignored) line = line sprintf(", %d skipped", ignored)
        print "\n" line
        if (passed == 0) exit 1
    }
' "$log" || status=1
exit "$status"
