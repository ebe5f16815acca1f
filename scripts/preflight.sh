#!/usr/bin/env bash
# Before `make test` runs anything: are the system packages its tests need installed?
# As root on Debian (apt-get present) it installs the missing ones, as .ci/run does; otherwise it
# stops with one line naming them and the command that installs them. Exit status 0: all there.
#
# Usage: scripts/preflight.sh [PYTHON]   (PYTHON: the interpreter that creates .venv; python3)
set -uo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}

# command:package, one per system package the suite needs.
# bubblewrap: grading runs every student kernel in it, and the grading tests grade real classes.
needed=("bwrap:bubblewrap")

missing=()
for pair in "${needed[@]}"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
# `make` creates .venv with `python3 -m venv`, which Debian ships separately.
if [ ! -x .venv/bin/python ] && ! "$python" -c "import ensurepip, venv" >/dev/null 2>&1; then
    missing+=(python3-venv)
fi

if ((${#missing[@]})) && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make test: installing ${missing[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; }
    still=()
    for pair in "${needed[@]}"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || still+=("${pair#*:}")
    done
    if [ ! -x .venv/bin/python ] && ! "$python" -c "import ensurepip, venv" >/dev/null 2>&1; then
        still+=(python3-venv)
    fi
    missing=("${still[@]}")
fi

if ((${#missing[@]})); then
    echo "error: make test needs the system package(s) ${missing[*]}, not found on this machine;" \
         "install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi

# Installed but refused (e.g. unprivileged user namespaces switched off): say so before the suite.
if ! problem=$(bwrap --ro-bind / / true 2>&1); then
    echo "error: bubblewrap is installed but cannot create a sandbox here (${problem//$'\n'/ });" \
         "grading and its tests need it (see docs/workbook.md, set-up)" >&2
    exit 1
fi
exit 0
