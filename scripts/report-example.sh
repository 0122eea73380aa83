#!/usr/bin/env bash
# Regenerates docs/report-example.png (the README's picture of the decision page) by the
# browser test's own path: the page from the committed testdata, rendered in headless
# Chromium, its viewport screenshot stamped with the page's hash. TestReportHTMLInBrowser
# fails when the page no longer is the one the picture shows.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/chromium.sh >/dev/null
STREAMSIM_REPORT_SCREENSHOT="$PWD/docs/report-example.png" go test ./cmd/streamsim -run 'TestReportHTMLInBrowser$' -count=1
