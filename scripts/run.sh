#!/usr/bin/env bash
# Opens the traceloom window on the bundled sample trace (or on the paths
# given), installing the system packages it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ $# -eq 0 ]; then set -- traces/sample-kernel; fi
exec cargo run --release --locked --bin traceloom -- "$@"
