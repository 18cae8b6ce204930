#!/usr/bin/env bash
# Refreshes the committed screenshots in docs/screenshots/ by running the
# GUI test suite under xvfb with TRACELOOM_SCREENSHOTS_DIR pointing there
# (a normal test run writes its screenshots under target/ instead). Look at
# the pictures before committing them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export TRACELOOM_SCREENSHOTS_DIR="$PWD/docs/screenshots"
xvfb-run -a -s "-screen 0 2000x1300x24" cargo test --locked -p traceloom --test gui
git status --short docs/screenshots
