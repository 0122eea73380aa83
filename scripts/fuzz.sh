#!/usr/bin/env bash
# Fuzz campaign: run fuzz targets for a number of executions on one core and keep what they find.
#
#   scripts/fuzz.sh run TARGET EXECS     run one target (PKG/FuzzName, e.g.
#                                        codec/snappystream/FuzzDecode) for EXECS executions
#                                        (go test -fuzztime EXECSx -parallel 1), niced; append a
#                                        row to docs/fuzz-campaign.tsv; copy the grown corpus from
#                                        the Go cache into PKG/testdata/fuzz/FuzzName so that
#                                        `go test ./...` replays it
#   scripts/fuzz.sh campaign             every target to its goal (the network decoders 2e7
#                                        executions, the others 1e6), skipping what the log
#                                        already totals
#   scripts/fuzz.sh totals               executions, time and findings per target from the log
#
# To make room for something timed: `touch docs/fuzz.pause` and interrupt the running go test
# (SIGINT): it stops, its executions so far are logged, and the campaign ends; run
# `campaign` again later to go on where the log says. CAMPAIGN_ORDER=reverse walks the targets
# from the end, for a second campaign on the other core while nothing is timed.
#
# Do not pause a running campaign with SIGSTOP: the fuzz coordinator then loses its worker and
# reports a "hung or terminated" failure with an input that replays clean.
#
# A failing input is written by go test to PKG/testdata/fuzz/FuzzName (it stays there as a
# regression seed); the row records "FAIL" and the campaign stops so that it is looked at.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"
LOG=docs/fuzz-campaign.tsv
NETWORK_GOAL=20000000
OTHER_GOAL=1000000

# Targets and their goals. The first three face the network (they decode what a peer sends).
TARGETS=(
	"codec/snappystream/FuzzDecode $NETWORK_GOAL"
	"codec/snappystream/FuzzReader $NETWORK_GOAL"
	"codec/snappystream/FuzzReference $NETWORK_GOAL"
	"codec/FuzzZstdReader $OTHER_GOAL"
	"trace/FuzzReader $OTHER_GOAL"
	"gossip/FuzzSplitFrame $OTHER_GOAL"
	"gossip/FuzzPayloadTranscode $OTHER_GOAL"
	"workload/FuzzDataColumnSidecar $OTHER_GOAL"
	"analysis/replay/FuzzTopicFilter $OTHER_GOAL"
)

total_of() { # TARGET -> executions logged so far
	[ -f "$LOG" ] || { echo 0; return; }
	awk -F'\t' -v t="$1" '$2==t {s+=$3} END {print s+0}' "$LOG"
}

run_one() { # TARGET EXECS
	local target=$1 execs=$2 pkg name out start end status lastline ran newint
	pkg=${target%/*}
	name=${target##*/}
	out=$(mktemp)
	start=$(date +%s)
	status=ok
	nice -n 19 go test -run '^$' -fuzz "^${name}\$" -fuzztime "${execs}x" -parallel 1 "./$pkg" >"$out" 2>&1 || status=FAIL
	# Interrupted (SIGINT, see above): go test reports the target's PASS but exits non-zero.
	if [ "$status" = FAIL ] && grep -q '^PASS$' "$out" && ! grep -q -- '^--- FAIL' "$out"; then
		status=interrupted
	fi
	end=$(date +%s)
	# go test prints "fuzz: elapsed: 41s, execs: 1000000 (24390/sec), new interesting: 3 (total: 12)".
	lastline=$(grep -E 'fuzz: elapsed: .*execs: ' "$out" | tail -n 1 || true)
	ran=$(sed -E 's/.*execs: ([0-9]+).*/\1/' <<<"$lastline")
	newint=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$lastline")
	[ -n "$ran" ] || ran=0
	[ -n "$newint" ] || newint=0
	[ "$status" = FAIL ] && cat "$out" >&2
	mkdir -p "$(dirname "$LOG")"
	[ -f "$LOG" ] || printf 'date\ttarget\texecutions\tseconds\tnew_interesting\tresult\tgo\n' >"$LOG"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$ran" "$((end - start))" \
		"$newint" "$status" "$(go env GOVERSION)" >>"$LOG"
	keep_corpus "$pkg" "$name"
	rm -f "$out"
	echo "$target: $ran executions in $((end - start)) s, $newint new interesting, $status"
	[ "$status" != FAIL ]
}

keep_corpus() { # PKG NAME: the grown corpus from the Go cache into testdata, so CI replays it
	local cache
	cache="$(go env GOCACHE)/fuzz/$(go list "./$1")/$2"
	[ -d "$cache" ] || return 0
	mkdir -p "$1/testdata/fuzz/$2"
	cp -n "$cache"/* "$1/testdata/fuzz/$2/" 2>/dev/null || true
}

case "${1:-}" in
run)
	[ $# -eq 3 ] || { echo "usage: $0 run PKG/FuzzName EXECS" >&2; exit 2; }
	run_one "$2" "$3"
	;;
campaign)
	order=("${TARGETS[@]}")
	if [ "${CAMPAIGN_ORDER:-}" = reverse ]; then
		order=()
		for ((i = ${#TARGETS[@]} - 1; i >= 0; i--)); do order+=("${TARGETS[$i]}"); done
	fi
	for entry in "${order[@]}"; do
		if [ -e docs/fuzz.pause ]; then
			echo "docs/fuzz.pause: campaign paused"
			exit 0
		fi
		read -r target goal <<<"$entry"
		done_so_far=$(total_of "$target")
		left=$((goal - done_so_far))
		if [ "$left" -le 0 ]; then
			echo "$target: $done_so_far executions logged, goal $goal reached"
			continue
		fi
		run_one "$target" "$left"
	done
	;;
totals)
	[ -f "$LOG" ] || { echo "no campaign log ($LOG)" >&2; exit 1; }
	printf "%-36s %14s %9s %6s %9s %s\n" target executions seconds runs new failures
	awk -F'\t' 'NR>1 {e[$2]+=$3; s[$2]+=$4; n[$2]+=$5; r[$2]++; if ($6=="FAIL") f[$2]++}
		END {for (t in e) printf "%-36s %14d %9d %6d %9d %d\n", t, e[t], s[t], r[t], n[t], f[t]+0}' "$LOG" | sort
	;;
*)
	echo "usage: $0 run PKG/FuzzName EXECS | campaign | totals" >&2
	exit 2
	;;
esac
