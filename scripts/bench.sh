#!/usr/bin/env bash
# Codec benchmarks: regression guard, Snappy release comparison, libsnappy.
#
#   scripts/bench.sh record FILE           run the payload benchmarks (go test -bench format,
#                                          -count 5) into FILE, e.g. bench/testdata/<release>.txt
#   scripts/bench.sh compare [BASELINE]    run them on the working tree and compare with BASELINE
#                                          (default: the newest bench/testdata/*.txt) by benchstat
#   scripts/bench.sh snappy OLD NEW        golang/snappy release OLD against NEW (e.g. v0.0.4 v1.0.0) on
#                                          the same payloads: builds the benchmark against each through a
#                                          temporary -modfile, compares by benchstat
#   scripts/bench.sh libsnappy [FLAGS]     install Debian's libsnappy-dev if it is missing (apt-get) and
#                                          run `streamsim bench FLAGS` built with -tags libsnappy
#
# Environment: BENCH_COUNT (default 5), BENCH_FILTER (go test -bench regexp, default Payloads),
# BENCH_TIME (go test -benchtime, default 1s). benchstat is golang.org/x/perf/cmd/benchstat at
# a fixed version, run with `go run` (from the Go module proxy; nothing to install).
set -euo pipefail

readonly BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"
COUNT=${BENCH_COUNT:-5}
FILTER=${BENCH_FILTER:-Payloads}
BENCHTIME=${BENCH_TIME:-1s}

run_bench() { # [go test flags...]
	go test "$@" -run='^$' -bench="$FILTER" -benchtime="$BENCHTIME" -count="$COUNT" ./bench/
}

benchstat() { go run "$BENCHSTAT" "$@"; }

case "${1:-}" in
record)
	[ $# -eq 2 ] || { echo "usage: $0 record FILE" >&2; exit 2; }
	mkdir -p "$(dirname "$2")"
	run_bench | tee "$2"
	;;
compare)
	base=${2:-$(ls -1 bench/testdata/*.txt 2>/dev/null | sort | tail -n 1)}
	[ -n "$base" ] && [ -f "$base" ] || { echo "$0 compare: no baseline (${base:-none}); record one first" >&2; exit 2; }
	new=$(mktemp --suffix=.txt)
	run_bench > "$new"
	benchstat -ignore pkg base="$base" new="$new" # baselines recorded before the move say pkg codec/bench
	echo "working tree results: $new"
	;;
snappy)
	[ $# -eq 3 ] || { echo "usage: $0 snappy OLD NEW   (golang/snappy versions, e.g. v0.0.4 v1.0.0)" >&2; exit 2; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p out
	# One test binary per version (a replace directive in a temporary copy of go.mod: other
	# modules' requirements stay as they are), then the runs interleaved, one count at a
	# time, so that a busy machine slows both alike.
	for v in "$2" "$3"; do
		cp go.mod "$tmp/go.$v.mod"
		cp go.sum "$tmp/go.$v.sum"
		go mod edit -modfile="$tmp/go.$v.mod" -replace=github.com/golang/snappy=github.com/golang/snappy@"$v"
		go test -mod=mod -modfile="$tmp/go.$v.mod" -c -o "$tmp/bench-$v.test" ./bench/
		: > "out/bench-golang-snappy-$v.txt"
	done
	filter=${BENCH_FILTER:-Payloads/payload=.*/impl=golang-snappy/}
	for i in $(seq "$COUNT"); do
		for v in "$2" "$3"; do
			(cd bench && "$tmp/bench-$v.test" -test.run='^$' -test.bench="$filter" -test.benchtime="$BENCHTIME" -test.count=1) >> "out/bench-golang-snappy-$v.txt"
		done
	done
	benchstat "$2=out/bench-golang-snappy-$2.txt" "$3=out/bench-golang-snappy-$3.txt"
	echo "raw results: out/bench-golang-snappy-$2.txt, out/bench-golang-snappy-$3.txt"
	;;
libsnappy)
	shift
	if [ ! -f /usr/include/snappy-c.h ]; then
		echo "installing libsnappy-dev (Debian) ..." >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq libsnappy-dev >&2
	fi
	go run -tags libsnappy ./cmd/streamsim bench "$@"
	;;
*)
	sed -n '2,17p' "$0" >&2
	exit 2
	;;
esac
