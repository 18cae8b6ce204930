#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace
# (babeltrace2 / pj_dump parity tests included; GUI tests run under xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# GUI tests open real windows: run everything under a virtual X server.
xvfb-run -a -s "-screen 0 1600x1200x24" cargo test --workspace --locked
