#!/usr/bin/env bash
# CI: the distribution's packages some tests drive: headless Chromium and its driver (the matrix
# page's browser test, tests/matrix/test_page_browser.py) and quilt (import/export-series round
# trip, tests/importers). Nothing is downloaded when they are there.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v quilt >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y chromium chromium-driver quilt \
    || { $SUDO apt-get update && $SUDO apt-get install -y chromium chromium-driver quilt; }
