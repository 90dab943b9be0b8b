#!/usr/bin/env bash
# CI: headless Chromium and its driver from the distribution's packages, for the matrix page's
# browser test (tests/matrix/test_page_browser.py). Nothing is downloaded when both are there.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y chromium chromium-driver \
    || { $SUDO apt-get update && $SUDO apt-get install -y chromium chromium-driver; }
