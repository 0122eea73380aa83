#!/bin/sh
# Rebuilds a run of consecutive real mainnet execution payloads from public JSON and measures
# it as TestConsecutiveMainnet measures the 28 kept in workload/payloadstat/testdata.
#
# The 100 payloads of blocks 24 364 071-170 (1 Feb 2026) are eth-act/blob-encoding-experiments'
# payloads/block_<n>.json (7.3 MB as gzip SSZ, too large to keep here). With a checkout of that
# repository at DIR:
#
#   scripts/mainnet-run.sh DIR/payloads [OUT]
#
# writes mainnet-<n>.ssz.gz into OUT (default: a temporary directory), says for each block
# whether it is the child of the previous one, and runs the test on the longest run (it
# generates 84 era 2026-05 blocks to compare: run it under the heavy-command lock).
set -eu
src=${1:?usage: scripts/mainnet-run.sh PAYLOADS_DIR [OUT_DIR]}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
cd "$(dirname "$0")/.."
go run ./workload/payloadstat/importmainnet -out "$out" "$src"/block_*.json
STREAMSIM_MAINNET_DIR=$out go test ./workload -run TestConsecutiveMainnet -count=1 -v
