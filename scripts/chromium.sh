#!/usr/bin/env bash
# Installs headless Chromium from Debian's packages for the HTML report's browser test
# (cmd/streamsim TestReportHTMLInBrowser). Idempotent: does nothing when chromium is on PATH.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  chromium --version
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is not installed and this script is not root: run apt-get install -y chromium as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version
