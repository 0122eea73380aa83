#!/usr/bin/env bash
# Run streamsim's Testground plan on this machine with the local:exec runner.
#
#   scripts/testground.sh run compositions/hub-leaves-local.toml   build tools if needed, start the
#                                                                   sync service and daemon, import the
#                                                                   plan, run, collect, report, stop
#   scripts/testground.sh build                                    only build the tools
#   scripts/testground.sh daemon                                   start the services and the daemon and
#                                                                   wait (Ctrl-C stops them), for the CLI
#   scripts/testground.sh env                                      print the variables to use the tools by hand
#
# Everything lives in .testground/ (git-ignored): bin/ (testground v0.6.0, sync-service v0.1.0,
# streamsim), src/ (the tool module they are built from), home/ (TESTGROUND_HOME with .env.toml,
# the imported plan, build work dirs and run outputs), logs/. Collected archives go to
# out/testground/. Needs only Go and gcc: testground and sync-service are built from the Go
# module proxy (their version lists are refused there, so `go install …@vX` cannot be used).
#
# Environment: STREAMSIM_TG_DIR (default .testground), STREAMSIM_TG_PORT (daemon port,
# default 8042), STREAMSIM_TG_OUT (collected archives, default out/testground),
# STREAMSIM_TG_TIMEOUT_MIN (daemon task timeout in minutes, default 30), STREAMSIM_TG_VERBOSE=1
# (print the client's whole output, not only milestones; it is always in .testground/logs/).
set -euo pipefail

readonly TESTGROUND_VERSION=v0.6.0
readonly SYNC_SERVICE_VERSION=v0.1.0
readonly SYNC_PORT=5050 # hard-coded in sync-service v0.1.0
readonly REDIS_PORT=6379 # local:exec's healthcheck aborts every run when this port is taken

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TGDIR=${STREAMSIM_TG_DIR:-$ROOT/.testground}
BIN=$TGDIR/bin
LOGS=$TGDIR/logs
RUNDIR=$TGDIR/run
OUT=${STREAMSIM_TG_OUT:-$ROOT/out/testground}
DAEMON_PORT=${STREAMSIM_TG_PORT:-8042}
TASK_TIMEOUT_MIN=${STREAMSIM_TG_TIMEOUT_MIN:-30}
export TESTGROUND_HOME=$TGDIR/home
# The plan is reached through a link to the checkout's parent, so the plan directory itself is a
# real directory and the client applies .testgroundignore when it zips the plan (it does not
# through a link to the plan directory itself, and would ship .testground/ and .git/).
readonly PLAN_LINK=streamsim-checkout
export STREAMSIM_TG_PLAN="$PLAN_LINK/$(basename "$ROOT")"

log() { printf '[testground.sh] %s\n' "$*" >&2; }
die() { printf '[testground.sh] error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

require_tools() {
  command -v go >/dev/null || die "go is not on PATH (Go 1.26 or later is needed)"
  command -v gcc >/dev/null || die "gcc is not on PATH (cgo dependencies of the plan need it)"
  command -v setsid >/dev/null || die "setsid (util-linux) is not on PATH: it runs the daemon in its own process group"
}

# build_tools builds testground and sync-service from one generated tool module that requires
# testground v0.6.0 (so both binaries use testground's own, checksum-verified dependency set).
# sync-service v0.1.0 listens on ":5050", every interface; the copy we build from is patched to
# listen on 127.0.0.1 only. Binaries are reused while the stamp matches.
build_tools() {
  require_tools
  local stamp="testground=$TESTGROUND_VERSION sync-service=$SYNC_SERVICE_VERSION loopback-patch=1 $(go env GOVERSION)"
  if [[ -x $BIN/testground && -x $BIN/sync-service && -f $BIN/.stamp && $(<"$BIN/.stamp") == "$stamp" ]]; then
    log "reusing $BIN/testground and $BIN/sync-service ($stamp)"
    return
  fi
  mkdir -p "$BIN" "$TGDIR/src"
  local start=$SECONDS tgdir syncdir
  log "downloading testground $TESTGROUND_VERSION and sync-service $SYNC_SERVICE_VERSION from the module proxy"
  tgdir=$(mod_dir github.com/testground/testground "$TESTGROUND_VERSION")
  syncdir=$(mod_dir github.com/testground/sync-service "$SYNC_SERVICE_VERSION")

  local src=$TGDIR/src
  rm -rf "$src/sync-service" "$src/tools"
  cp -R "$syncdir" "$src/sync-service"
  chmod -R u+w "$src/sync-service"
  sed -i 's|net.Listen("tcp", ":"+strconv.Itoa(port))|net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))|' "$src/sync-service/server.go"
  grep -q '"127.0.0.1:"+strconv.Itoa(port)' "$src/sync-service/server.go" ||
    die "could not patch sync-service's listen address in $src/sync-service/server.go"

  mkdir -p "$src/tools"
  cat >"$src/tools/go.mod" <<EOF
module streamsim.invalid/testground-tools

go 1.16

require (
	github.com/testground/sync-service $SYNC_SERVICE_VERSION
	github.com/testground/testground $TESTGROUND_VERSION
)

replace github.com/testground/sync-service => ../sync-service
EOF
  cp "$tgdir/go.sum" "$src/tools/go.sum"
  chmod u+w "$src/tools/go.sum"
  log "building testground (pulls the Kubernetes and Docker client libraries: minutes on a cold cache)"
  (cd "$src/tools" && GOFLAGS=-mod=mod go build -o "$BIN/testground.new" github.com/testground/testground) ||
    die "building testground $TESTGROUND_VERSION failed (see above)"
  log "building sync-service"
  (cd "$src/tools" && GOFLAGS=-mod=mod go build -o "$BIN/sync-service.new" github.com/testground/sync-service/cmd) ||
    die "building sync-service $SYNC_SERVICE_VERSION failed (see above)"
  mv "$BIN/testground.new" "$BIN/testground"
  mv "$BIN/sync-service.new" "$BIN/sync-service"
  printf '%s' "$stamp" >"$BIN/.stamp"
  log "built testground and sync-service in $((SECONDS - start)) s"
}

# mod_dir prints the module cache directory of module@version, downloading it if needed.
mod_dir() {
  local dir
  # Outside any module, so the repository's go.mod is not consulted or changed.
  dir=$(cd / && GOFLAGS= go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') ||
    die "go mod download $1@$2 failed"
  [[ -n $dir && -d $dir ]] || die "go mod download $1@$2 gave no directory"
  printf '%s' "$dir"
}

build_streamsim() {
  log "building streamsim (for the report)"
  (cd "$ROOT" && go build -o "$BIN/streamsim" ./cmd/streamsim) || die "building ./cmd/streamsim failed"
}

write_env_toml() {
  mkdir -p "$TESTGROUND_HOME"
  cat >"$TESTGROUND_HOME/.env.toml" <<EOF
# Written by scripts/testground.sh on every run: loopback only, no metrics back end.
[daemon]
listen = "127.0.0.1:$DAEMON_PORT"
influxdb_endpoint = "http://127.0.0.1:8086"

[daemon.scheduler]
task_timeout_min = $TASK_TIMEOUT_MIN

[client]
endpoint = "http://127.0.0.1:$DAEMON_PORT"
user = "streamsim"
EOF
}

# --- processes we start: recorded by pid, stopped by pid (process group) on exit ---------------

STARTED_PIDS=()

stop_pid() {
  local pid=$1 name=$2 i
  kill -0 "$pid" 2>/dev/null || return 0
  log "stopping $name (pid $pid)"
  # Each was started with setsid: its process group holds the daemon's builds and instances too.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local i
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
    stop_pid "${STARTED_PIDS[i]%%:*}" "${STARTED_PIDS[i]#*:}"
  done
  rm -f "$RUNDIR"/*.pid
}

# stop_stale stops a process that an earlier, hard-killed invocation of this script left behind:
# only the pid it recorded, and only if that pid still runs our binary.
stop_stale() {
  local name=$1 pidfile=$RUNDIR/$1.pid pid exe
  [[ -f $pidfile ]] || return 0
  pid=$(<"$pidfile")
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  if [[ -n $exe && $exe == "$BIN/$name"* ]]; then
    log "stopping $name left running by an earlier run (pid $pid)"
    stop_pid "$pid" "$name"
  fi
  rm -f "$pidfile"
}

start_bg() {
  local name=$1 logfile=$LOGS/$1.log pid
  shift
  mkdir -p "$LOGS" "$RUNDIR"
  setsid "$@" >"$logfile" 2>&1 </dev/null &
  pid=$!
  STARTED_PIDS+=("$pid:$name")
  printf '%s' "$pid" >"$RUNDIR/$name.pid"
  log "started $name (pid $pid, log $logfile)"
}

wait_port() {
  local port=$1 name=$2 pid=$3 i
  for i in $(seq 150); do
    port_busy "$port" && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$LOGS/$name.log" >&2 || true
      die "$name exited before listening on 127.0.0.1:$port (log: $LOGS/$name.log)"
    fi
    sleep 0.2
  done
  tail -n 30 "$LOGS/$name.log" >&2 || true
  die "$name is not listening on 127.0.0.1:$port after 30 s (log: $LOGS/$name.log)"
}

start_services() {
  stop_stale testground
  stop_stale sync-service
  port_busy "$REDIS_PORT" &&
    die "port $REDIS_PORT is in use; Testground's local:exec healthcheck aborts every run then: stop whatever listens there (e.g. a local Redis)"
  port_busy "$SYNC_PORT" &&
    die "port $SYNC_PORT is in use; sync-service $SYNC_SERVICE_VERSION can only listen there: stop the other process"
  port_busy "$DAEMON_PORT" &&
    die "port $DAEMON_PORT is in use; set STREAMSIM_TG_PORT to a free port for the daemon"

  # Build work directories (unpacked plan sources, exec:go binaries) are per run: start clean.
  rm -rf "$TESTGROUND_HOME/data/work"

  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  start_bg sync-service "$BIN/sync-service"
  wait_port "$SYNC_PORT" sync-service "${STARTED_PIDS[-1]%%:*}"
  # The daemon's environment is what the exec:go builds and the instances see.
  start_bg testground env -u INFLUXDB_URL "$BIN/testground" daemon
  wait_port "$DAEMON_PORT" testground "${STARTED_PIDS[-1]%%:*}"
}

import_plan() {
  local link=$TESTGROUND_HOME/plans/$PLAN_LINK parent
  parent=$(dirname "$ROOT")
  if [[ -L $link && $(readlink "$link") != "$parent" ]]; then
    rm "$link" # ours: left by an import of a checkout that has moved
  fi
  if [[ ! -e $link ]]; then
    "$BIN/testground" plan import --from "$parent" --name "$PLAN_LINK" >"$LOGS/plan-import.log" 2>&1 ||
      { cat "$LOGS/plan-import.log" >&2; die "testground plan import failed"; }
  fi
  [[ -f $TESTGROUND_HOME/plans/$STREAMSIM_TG_PLAN/manifest.toml ]] ||
    die "plan $STREAMSIM_TG_PLAN has no manifest.toml under $TESTGROUND_HOME/plans"
  log "plan imported as $STREAMSIM_TG_PLAN"
}

cmd_run() {
  [[ $# -ge 1 ]] || { usage >&2; exit 2; }
  local comp=$1
  shift
  [[ -f $comp ]] || die "composition $comp not found"
  comp=$(cd "$(dirname "$comp")" && pwd -P)/$(basename "$comp")
  local name
  name=$(basename "$comp" .toml)

  local start=$SECONDS
  build_tools
  build_streamsim
  write_env_toml
  start_services
  import_plan

  mkdir -p "$OUT"
  rm -f "$OUT/$name".tgz "$OUT/$name"-*.tgz "$OUT/$name-results.csv"
  log "running $comp (plan $STREAMSIM_TG_PLAN)"
  # The full client output (build, every instance's messages) goes to a log; the terminal gets
  # the milestones and outcomes unless STREAMSIM_TG_VERBOSE=1.
  local runlog=$LOGS/run-$name.log filter='build (succeeded|failed)|performing build|starting run|run finished|finished run|[[:space:]](OK|FAIL|CRASH|INCOMPLETE)[[:space:]]|ERROR|[Ee]rror|result |created file'
  [[ ${STREAMSIM_TG_VERBOSE:-0} == 1 ]] && filter=.
  local rc
  set +e
  (cd "$ROOT" && "$BIN/testground" run composition -f "$comp" --wait --collect \
    --collect-file "$OUT/$name" --result-file "$OUT/$name-results.csv" "$@") 2>&1 |
    tee "$runlog" | sed -u 's/\x1b\[[0-9;]*m//g' | grep --line-buffered -E "$filter"
  rc=${PIPESTATUS[0]}
  set -e

  local archives=() f
  for f in "$OUT/$name".tgz "$OUT/$name"-*.tgz; do
    [[ -f $f ]] && archives+=("$f")
  done
  if [[ $rc -ne 0 ]]; then
    log "testground run exited with status $rc; the last lines of $runlog:"
    tail -n 60 "$runlog" | sed 's/\x1b\[[0-9;]*m//g' >&2
    [[ -f $OUT/$name-results.csv ]] && cat "$OUT/$name-results.csv" >&2
    log "daemon log: $LOGS/testground.log; instance outputs: $TESTGROUND_HOME/data/outputs/local_exec/"
  fi
  local sources=("${archives[@]}") task
  if [[ ${#archives[@]} -eq 0 ]]; then
    # Testground collects nothing from a task that failed; report from the outputs directory.
    for task in $(sed -n 's/.*run is queued with ID: \([[:alnum:]]*\).*/\1/p' "$runlog"); do
      [[ -d $TESTGROUND_HOME/data/outputs/local_exec/streamsim/$task ]] &&
        sources+=("$TESTGROUND_HOME/data/outputs/local_exec/streamsim/$task")
    done
    [[ ${#sources[@]} -gt 0 ]] || die "no collected archive in $OUT and no outputs for $name"
    log "no collected archive (the task failed); reporting from ${sources[*]}"
  else
    log "collected: ${archives[*]}"
  fi
  local rrc=0
  "$BIN/streamsim" report "${sources[@]}" || rrc=$?
  log "done in $((SECONDS - start)) s"
  [[ $rc -eq 0 ]] || die "the Testground task failed (status $rc)"
  [[ $rrc -eq 0 ]] || die "streamsim report failed (status $rrc)"
}

cmd_daemon() {
  build_tools
  write_env_toml
  start_services
  import_plan
  log "sync service on 127.0.0.1:$SYNC_PORT, daemon on 127.0.0.1:$DAEMON_PORT; in another shell:"
  cmd_env >&2
  log "Ctrl-C stops both"
  wait
}

cmd_env() {
  printf 'export TESTGROUND_HOME=%q\n' "$TESTGROUND_HOME"
  printf 'export STREAMSIM_TG_PLAN=%q\n' "$STREAMSIM_TG_PLAN"
  printf 'export PATH=%q:"$PATH"\n' "$BIN"
}

case ${1:-} in
run) shift; cmd_run "$@" ;;
build) build_tools ;;
daemon) cmd_daemon ;;
env) cmd_env ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
