#!/usr/bin/env bash
# Prepares the js-libp2p interop peer: checks for Node.js >= 20 and npm, and installs the
# pinned dependencies of package-lock.json with `npm ci` (skipped when node_modules is already
# installed from the current lockfile, as the Go package interop decides too).
#
# In CI (CI=true) running as root, a missing or too old Node.js or npm is installed with apt
# (Debian packages nodejs and npm) first. Debian 12 (bookworm) ships Node.js 18, which is too
# old: there, install Node.js 20 or later from NodeSource (https://github.com/nodesource/distributions)
# or use Debian 13 (trixie, Node.js 20).
#
# Exit status: 0 when the peer is ready to run, 1 otherwise (with the reason on stderr).
set -euo pipefail
cd "$(dirname "$0")"

min_major=20

node_major() {
  local v
  v=$(node --version 2>/dev/null) || return 1
  [[ $v =~ ^v([0-9]+)\. ]] || return 1
  echo "${BASH_REMATCH[1]}"
}

node_ok() {
  local major
  major=$(node_major) && [ "$major" -ge "$min_major" ]
}

describe() {
  if ! command -v node >/dev/null; then
    echo "node is not on PATH"
  else
    echo "node $(node --version 2>/dev/null || echo '(no version)') at $(command -v node)"
  fi
  command -v npm >/dev/null || echo "npm is not on PATH"
}

if ! node_ok || ! command -v npm >/dev/null; then
  if [ "${CI:-}" = "true" ] && [ "$(id -u)" = 0 ]; then
    echo "interop/js/setup.sh: $(describe | paste -sd ';' -); installing with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    node_ok || apt-get install -y -qq --no-install-recommends nodejs
    # NodeSource's nodejs package includes npm; Debian's does not.
    command -v npm >/dev/null || apt-get install -y -qq --no-install-recommends npm
  fi
fi

if ! node_ok || ! command -v npm >/dev/null; then
  {
    echo "interop/js/setup.sh: Node.js >= $min_major and npm are required for the js-libp2p interop test."
    describe | sed 's/^/  found: /'
    echo "  Install them (apt-get install nodejs npm on Debian 13; Debian 12 ships Node.js 18, use"
    echo "  NodeSource's node_20.x or later)."
  } >&2
  exit 1
fi

if [ -f node_modules/.package-lock.json ] && [ ! node_modules/.package-lock.json -ot package-lock.json ]; then
  echo "interop/js: node_modules is current ($(node --version), npm $(npm --version))"
  exit 0
fi
echo "interop/js: npm ci ($(node --version), npm $(npm --version))"
npm ci --no-audit --no-fund --loglevel=error
