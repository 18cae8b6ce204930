#!/usr/bin/env bash
# Installs the Debian 12 packages traceloom needs to build, test and run.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
pkgs=(
  build-essential pkg-config
  libgtk-4-dev          # the GTK4 GUI
  xvfb xauth            # GUI tests under xvfb-run
  babeltrace2           # reference CTF reader (parity tests, benchmarks)
  pajeng                # pj_dump, the reference Pajé reader
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
