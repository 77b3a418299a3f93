#!/usr/bin/env bash
# The browser tests (tests/test_ui.py) drive Debian's Chromium through its own
# chromedriver, so the two always match and nothing is downloaded at run time.
# 'make test' runs this first; as root it installs them, otherwise it says how.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium and chromium-driver for the browser tests (apt-get)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
else
  echo "scripts/browser.sh: chromium and chromium-driver are missing:" \
       "sudo apt-get install chromium chromium-driver (the browser tests fail in CI without them" \
       "and are skipped elsewhere)" >&2
fi
