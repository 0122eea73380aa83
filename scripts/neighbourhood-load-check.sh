#!/usr/bin/env bash
# On-demand check of issue 29's load independence: the neighbourhood's calibration form on the
# virtual clock for seeds 1-3 (the seed-to-seed spread), then seed 1 again beside two processes
# that keep both cores busy. `streamsim report OUT/seed1 OUT/seed2 OUT/seed3` prints the spread;
# compare OUT/seed1-busy's calibration table with OUT/seed1's. About 15 minutes on two cores.
# Usage: scripts/neighbourhood-load-check.sh OUT [extra streamsim run args, e.g. --set bandwidth=off]
set -eu
out=${1:?usage: $0 OUT [streamsim run args...]}
shift
extra=("$@")
mkdir -p "$out"
bin="$out/streamsim"
go build -o "$bin" ./cmd/streamsim
run() { # name seed
  echo "== $1 $(date -u +%T) $(uptime)"
  /usr/bin/time -f "wall %e s, user %U s, sys %S s, maxrss %M KiB" \
    "$bin" run --scenario neighbourhood --clock virtual --seed "$2" --set topology_seed="$2" --out "$out/$1" ${extra[@]+"${extra[@]}"} >"$out/$1.log" 2>&1
  tail -1 "$out/$1.log"
}
for s in 1 2 3; do run seed$s $s; done
spin() { timeout 1200 sh -c 'while :; do :; done'; }
spin & p1=$!
spin & p2=$!
run seed1-busy 1
kill $p1 $p2 2>/dev/null || true
echo "== end $(date -u +%T) $(uptime)"
"$bin" report "$out/seed1" "$out/seed2" "$out/seed3"
