#!/usr/bin/env bash
# Installs what the tests need beyond Python packages, on a fresh Debian machine (as root, or with sudo):
# PostgreSQL's server (the history tests start their own server in a temp dir), Chromium (the
# dashboard's browser test, driven by Playwright with executable_path=/usr/bin/chromium) and valgrind
# (bench/engine_instructions.py counts the engine's instructions under it; its test runs the count).
# No C compiler: the project is pure Python (docs/decisions/0005-pure-python-only.md).
# Idempotent and quick when everything is already there: apt is only asked for what is missing.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

missing=()
# Debian puts the server's binaries under /usr/lib/postgresql/<major>/bin, not on PATH.
if ! compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" > /dev/null && ! command -v pg_ctl > /dev/null; then
  missing+=(postgresql)
fi
if ! command -v runuser > /dev/null; then
  missing+=(util-linux)
fi
if [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
if ! command -v valgrind > /dev/null; then
  missing+=(valgrind)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "ci-setup: postgresql, chromium and valgrind already installed"
  exit 0
fi

echo "ci-setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# With its recommended packages: Chromium's fonts among them, so pages and screenshots render as here.
$SUDO apt-get install -y -qq "${missing[@]}" > /dev/null
echo "ci-setup: done"
