#!/usr/bin/env bash
# Makes the HTML report's fixed test inputs from small real runs (TestReportHTML* in
# cmd/streamsim): a live check, a mesh A/B, a neighbourhood A/B (its small form) and a sweep.
# Usage: make.sh STREAMSIM_BINARY   (from the repository root; 3 min 18 s on 2 cores at load 0.8–1.5, 2026-12-04).
# Kept: summaries, message logs and the neighbourhood's report files; run logs, traces and
# charts are dropped to keep the testdata small.
set -euo pipefail
bin=$1
out=cmd/streamsim/testdata/html
rm -rf "$out/live" "$out/mesh-ab" "$out/nb-ab" "$out/sweep"
"$bin" run --profile all-subnets --slots 2 --time-scale 2 --validators 32768 --out "$out/live"
"$bin" run --scenario mesh --nodes 16 --codecs plain,snappy-stream --bandwidths 50Mbit --slots 2 --time-scale 1 \
  --validators 16384 --out "$out/mesh-ab"
"$bin" run --scenario neighbourhood --codecs plain,snappy-stream --slots 2 --time-scale 1 \
  --validators 200000 --set warmup=2 --set observed_peers=8 --set subnets=1 \
  --set mix=default:0.25,all-subnets:0.5,supernode:0.25 --set boundary=14 --set dialled_share=1 \
  --out "$out/nb-ab"
tmp=$(mktemp -d)
"$bin" workload --profile all-subnets --slots 2 --validators 200000 --trace "$tmp/all.trace" >/dev/null
"$bin" sweep --direction in --payload ssz_snappy --profile all-subnets,default \
  --codecs none,plain,snappy-stream:4KiB:fast,snappy-stream:64KiB:fast,snappy-stream:1MiB:fast,zstd:3:2MiB \
  --out "$tmp/sweep" "$tmp/all.trace" >/dev/null
mkdir -p "$out/sweep" && cp "$tmp/sweep/sweep.json" "$out/sweep/"
rm -rf "$tmp"
find "$out" \( -name run.out -o -name results.out -o -name diagnostics.out -o -name '*.png' -o -name '*.svg' -o -name 'frames.trace.gz' \) -delete
du -sh "$out"/*
