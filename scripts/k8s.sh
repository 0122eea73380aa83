#!/usr/bin/env bash
# A single-node Kubernetes cluster built from source, on loopback, for streamsim's pod runs.
#
#   scripts/k8s.sh build                     build Kubernetes v1.34.4 (apiserver, controller-manager,
#                                            scheduler, kubelet, kube-proxy, kubectl) from the Go module
#                                            proxy, the pause image from its pause.c, sync-service
#   scripts/k8s.sh up                        build if needed, install containerd/runc/etcd from Debian,
#                                            start everything on 127.0.0.1, wait for the node to be Ready
#   scripts/k8s.sh run COMPOSITION [ARGS..]  up (if not up), build the plan image, load it, run the
#                                            composition as pods with `streamsim k8s`, report
#   scripts/k8s.sh down                      stop every process by pid, remove iptables, CNI and pod state
#   scripts/k8s.sh env                       print KUBECONFIG and PATH to use kubectl by hand
#
# Everything lives in .k8s/ (git-ignored): src/ (the wrapper module Kubernetes is built from),
# bin/ (binaries, reused while their stamp matches), state/ (etcd data, certificates, kubelet and
# containerd state), logs/, run/ (pid files). Environment: STREAMSIM_K8S_DIR (default .k8s),
# STREAMSIM_K8S_OUT (outputs of `run`, default out/k8s).
set -euo pipefail

readonly K8S_VERSION=v1.34.4
readonly STAGING_VERSION=v0.34.4
readonly SYNC_SERVICE_VERSION=v0.1.0
readonly PAUSE_IMAGE=registry.k8s.io/pause:3.10
readonly APISERVER_PORT=6443
readonly ETCD_PORT=2379
readonly ETCD_PEER_PORT=2380
# The node's name is its address: the kubelet refuses a loopback node IP, so the API server
# reaches the kubelet (logs, stats) through the Hostname address, which is this.
readonly NODE_NAME=127.0.0.1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
KDIR=${STREAMSIM_K8S_DIR:-$ROOT/.k8s}
BIN=$KDIR/bin
SRC=$KDIR/src
STATE=$KDIR/state
LOGS=$KDIR/logs
RUNDIR=$KDIR/run
OUT=${STREAMSIM_K8S_OUT:-$ROOT/out/k8s}
export KUBECONFIG=$STATE/kubeconfig

log() { printf '[k8s.sh] %s\n' "$*" >&2; }
die() { printf '[k8s.sh] error: %s\n' "$*" >&2; exit 1; }

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# mod_dir prints the module cache directory of module@version, downloading it if needed.
mod_dir() {
  local dir
  dir=$(cd / && GOFLAGS= go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') ||
    die "go mod download $1@$2 failed"
  [[ -n $dir && -d $dir ]] || die "go mod download $1@$2 gave no directory"
  printf '%s' "$dir"
}

readonly K8S_COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

# build_kubernetes builds the Kubernetes binaries from a wrapper module that requires
# k8s.io/kubernetes and points each staging module (a ./staging/src replace in Kubernetes' own
# go.mod, absent from the proxy's zip) at its published v0.x version.
build_kubernetes() {
  command -v go >/dev/null || die "go is not on PATH (Go 1.26 or later is needed)"
  command -v gcc >/dev/null || die "gcc is not on PATH (the pause image is built from pause.c with it)"
  local stamp="kubernetes=$K8S_VERSION staging=$STAGING_VERSION sync-service=$SYNC_SERVICE_VERSION $(go env GOVERSION)"
  [[ -x $BIN/kubectl && -x $BIN/pause ]] || rm -f "$BIN/.stamp"
  if [[ -f $BIN/.stamp && $(<"$BIN/.stamp") == "$stamp" ]]; then
    log "reusing the binaries in $BIN ($stamp)"
    return
  fi
  local start=$SECONDS kdir
  mkdir -p "$BIN" "$SRC/build"
  log "downloading k8s.io/kubernetes@$K8S_VERSION from the module proxy (about 107 MB)"
  kdir=$(mod_dir k8s.io/kubernetes "$K8S_VERSION")
  {
    printf 'module streamsim.invalid/k8s-build\n\ngo 1.24\n\nrequire k8s.io/kubernetes %s\n\n' "$K8S_VERSION"
    sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*$|replace \1 => \1 '"$STAGING_VERSION"'|p' "$kdir/go.mod"
  } >"$SRC/build/go.mod"
  grep -q '^replace k8s.io/api ' "$SRC/build/go.mod" || die "found no staging replaces in $kdir/go.mod"
  cat >"$SRC/build/tools.go" <<'GO'
//go:build tools

// Package tools only pins the Kubernetes commands this module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
  log "resolving the module graph (go mod tidy)"
  (cd "$SRC/build" && GOFLAGS=-mod=mod go mod tidy) >"$LOGS/build-tidy.log" 2>&1 ||
    { tail -n 30 "$LOGS/build-tidy.log" >&2; die "go mod tidy of the Kubernetes wrapper module failed (log: $LOGS/build-tidy.log)"; }
  local ld="-s -w"
  local v
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=34 -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
  done
  local c
  for c in "${K8S_COMPONENTS[@]}"; do
    local t=$SECONDS
    log "building $c"
    (cd "$SRC/build" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$BIN/$c.new" "k8s.io/kubernetes/cmd/$c") \
      >"$LOGS/build-$c.log" 2>&1 ||
      { tail -n 30 "$LOGS/build-$c.log" >&2; die "building $c failed (log: $LOGS/build-$c.log)"; }
    mv "$BIN/$c.new" "$BIN/$c"
    log "built $c in $((SECONDS - t)) s"
  done
  build_pause "$kdir"
  printf '%s' "$stamp" >"$BIN/.stamp"
  log "built Kubernetes $K8S_VERSION in $((SECONDS - start)) s"
}

# build_pause compiles the pod sandbox's pause process from the module's own source.
build_pause() {
  local kdir=$1
  [[ -f $kdir/build/pause/linux/pause.c ]] || die "no build/pause/linux/pause.c in $kdir"
  gcc -Os -Wall -Werror -static -DVERSION=v3.10-streamsim -o "$BIN/pause" "$kdir/build/pause/linux/pause.c" ||
    die "gcc -static pause.c failed (is the static libc, libc6-dev, installed?)"
  strip "$BIN/pause" 2>/dev/null || true
}

# build_sync_service builds testground's sync service v0.1.0 patched to listen where
# SYNC_LISTEN_HOST and SYNC_LISTEN_PORT say (default 127.0.0.1:5050; v0.1.0 hard-codes :5050,
# every interface, which collides on a shared machine and is not loopback).
build_sync_service() {
  local stamp="sync-service=$SYNC_SERVICE_VERSION env-listen=1 $(go env GOVERSION)"
  if [[ -x $BIN/sync-service && -f $BIN/.sync-stamp && $(<"$BIN/.sync-stamp") == "$stamp" ]]; then
    return
  fi
  local syncdir src=$SRC/sync-service t=$SECONDS
  log "building sync-service $SYNC_SERVICE_VERSION"
  syncdir=$(mod_dir github.com/testground/sync-service "$SYNC_SERVICE_VERSION")
  rm -rf "$src"
  cp -R "$syncdir" "$src"
  chmod -R u+w "$src"
  sed -i 's|net.Listen("tcp", ":"+strconv.Itoa(port))|net.Listen("tcp", listenHost()+":"+strconv.Itoa(port))|' "$src/server.go"
  grep -q 'listenHost()+":"' "$src/server.go" || die "could not patch sync-service's listen address in $src/server.go"
  cat >"$src/listen_env.go" <<'GO'
package sync

import "os"

// listenHost is SYNC_LISTEN_HOST, default loopback (streamsim's patch: see scripts/k8s.sh).
func listenHost() string {
	if h := os.Getenv("SYNC_LISTEN_HOST"); h != "" {
		return h
	}
	return "127.0.0.1"
}
GO
  sed -i 's|sync.NewServer(service, 5050)|sync.NewServer(service, listenPort())|' "$src/cmd/main.go"
  grep -q 'listenPort()' "$src/cmd/main.go" || die "could not patch sync-service's port in $src/cmd/main.go"
  cat >"$src/cmd/listen_env.go" <<'GO'
package main

import (
	"os"
	"strconv"
)

// listenPort is SYNC_LISTEN_PORT, default 5050 (streamsim's patch: see scripts/k8s.sh).
func listenPort() int {
	if p, err := strconv.Atoi(os.Getenv("SYNC_LISTEN_PORT")); err == nil && p > 0 {
		return p
	}
	return 5050
}
GO
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$BIN/sync-service" ./cmd) \
    >"$LOGS/build-sync-service.log" 2>&1 ||
    { tail -n 30 "$LOGS/build-sync-service.log" >&2; die "building sync-service failed (log: $LOGS/build-sync-service.log)"; }
  printf '%s' "$stamp" >"$BIN/.sync-stamp"
  log "built sync-service in $((SECONDS - t)) s"
}

# build_plan builds streamsim (the runner) and the plan as a static binary (no cgo: the
# zstd-c codec is absent from it, as from any cgo-less build; the others are all there).
build_plan() {
  log "building streamsim and the static plan binary"
  (cd "$ROOT" && go build -o "$BIN/streamsim" ./cmd/streamsim) || die "building ./cmd/streamsim failed"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$BIN/plan" ./plans) || die "building ./plans (CGO_ENABLED=0) failed"
}

# --- the cluster ------------------------------------------------------------------------------

readonly DEB_PACKAGES=(containerd runc etcd-server containernetworking-plugins iptables openssl)

install_packages() {
  local missing=() p
  for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  log "installing ${missing[*]} from Debian"
  # policy-rc.d (if the machine has one) keeps the packages' services from starting.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >"$LOGS/apt.log" 2>&1 ||
    { apt-get update >>"$LOGS/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$LOGS/apt.log" 2>&1; } ||
    { tail -n 20 "$LOGS/apt.log" >&2; die "apt-get install ${missing[*]} failed (log: $LOGS/apt.log)"; }
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

readonly PORTS=("$ETCD_PORT:etcd" "$ETCD_PEER_PORT:etcd-peer" "$APISERVER_PORT:kube-apiserver" 10250:kubelet 10248:kubelet-healthz
  10257:kube-controller-manager 10259:kube-scheduler 10249:kube-proxy-metrics 10256:kube-proxy-healthz)

start_bg() {
  local name=$1 logfile=$LOGS/$1.log pid
  shift
  mkdir -p "$RUNDIR"
  setsid "$@" >"$logfile" 2>&1 </dev/null &
  pid=$!
  printf '%s' "$pid" >"$RUNDIR/$name.pid"
  log "started $name (pid $pid, log $logfile)"
}

# wait_for runs a check until it passes, or dies naming the component and its log.
wait_for() {
  local name=$1 secs=$2 i pid
  shift 2
  pid=$(<"$RUNDIR/$name.pid")
  for ((i = 0; i < secs * 5; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$LOGS/$name.log" >&2 || true
      die "$name exited during start-up (log: $LOGS/$name.log)"
    fi
    sleep 0.2
  done
  tail -n 30 "$LOGS/$name.log" >&2 || true
  die "$name not ready after $secs s (log: $LOGS/$name.log)"
}

is_up() {
  [[ -f $RUNDIR/kubelet.pid ]] && kill -0 "$(<"$RUNDIR/kubelet.pid")" 2>/dev/null &&
    "$BIN/kubectl" get node "$NODE_NAME" >/dev/null 2>&1
}

write_configs() {
  mkdir -p "$STATE"/{pki,etcd,kubelet,pod-logs,containerd/root,containerd/state,cni/net.d}
  if [[ ! -f $STATE/pki/sa.key ]]; then
    openssl genrsa -out "$STATE/pki/sa.key" 2048 2>/dev/null || die "openssl genrsa failed"
    openssl rsa -in "$STATE/pki/sa.key" -pubout -out "$STATE/pki/sa.pub" 2>/dev/null || die "openssl rsa -pubout failed"
  fi
  if [[ ! -f $STATE/token ]]; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$STATE/token"
  fi
  local token
  token=$(<"$STATE/token")
  printf '%s,admin,admin,system:masters\n' "$token" >"$STATE/pki/tokens.csv"
  cat >"$KUBECONFIG" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: streamsim
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $token
contexts:
- name: streamsim
  context: {cluster: streamsim, user: admin}
current-context: streamsim
YAML
  chmod 600 "$KUBECONFIG" "$STATE/pki/tokens.csv"
  # containerd: its own root, state and socket, so it shares nothing with another containerd.
  cat >"$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
[grpc]
  address = "$STATE/containerd/containerd.sock"
[ttrpc]
  address = "$STATE/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # runc cannot lower oom_score_adj here (no CAP_SYS_RESOURCE): every sandbox fails without.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
TOML
  # Pods here use the host network: the only CNI network is loopback (the runtime needs one
  # configured to call the node's network ready). No bridge, no addresses, no iptables rules.
  cat >"$STATE/cni/net.d/10-loopback.conflist" <<'JSON'
{"cniVersion": "0.4.0", "name": "streamsim-loopback", "plugins": [{"type": "loopback"}]}
JSON
  cat >"$STATE/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$STATE/containerd/containerd.sock
podLogsDir: $STATE/pod-logs
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
maxPods: 250
oomScoreAdj: 0
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard:
  memory.available: "200Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
registerNode: true
resolvConf: /etc/resolv.conf
YAML
}

cmd_up() {
  local start=$SECONDS
  if is_up; then
    log "the cluster is already up (kubectl: $BIN/kubectl, KUBECONFIG=$KUBECONFIG)"
    return
  fi
  [[ $(id -u) == 0 ]] || die "the cluster needs root (kubelet, containerd, iptables)"
  cmd_down quiet
  build_kubernetes
  build_sync_service
  install_packages
  local build_done=$SECONDS p
  for p in "${PORTS[@]}"; do
    port_busy "${p%%:*}" && die "port ${p%%:*} (${p#*:}) is in use on 127.0.0.1: another cluster or etcd runs here; stop it first"
  done
  write_configs
  # A start-up that fails half-way leaves nothing running.
  trap 'rc=$?; if [[ $rc -ne 0 ]]; then log "start-up failed: stopping what started"; cmd_down quiet; fi' EXIT
  local sock=$STATE/containerd/containerd.sock
  ((${#sock} < 100)) || die "containerd's socket path $sock is too long for a unix socket: set STREAMSIM_K8S_DIR to a shorter path"

  start_bg etcd etcd --name streamsim --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "streamsim=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls ""
  wait_for etcd 30 port_busy "$ETCD_PORT"

  start_bg kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --cert-dir "$STATE/pki" --token-auth-file "$STATE/pki/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$STATE/pki/sa.pub" --service-account-signing-key-file "$STATE/pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.96.0.0/24 \
    --endpoint-reconciler-type none --kubelet-preferred-address-types Hostname \
    --enable-priority-and-fairness=false --profiling=false
  wait_for kube-apiserver 120 "$BIN/kubectl" get --raw /readyz

  start_bg kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 --service-account-private-key-file "$STATE/pki/sa.key" \
    --use-service-account-credentials=false --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route' \
    --leader-elect=false --profiling=false
  start_bg kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  touch "$RUNDIR/started-kube-proxy" # down then cleans the iptables chains (ours only after this)
  start_bg kube-proxy "$BIN/kube-proxy" --kubeconfig "$KUBECONFIG" --proxy-mode iptables \
    --hostname-override "$NODE_NAME" --bind-address 127.0.0.1 --metrics-bind-address 127.0.0.1:10249 \
    --healthz-bind-address 127.0.0.1:10256 --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 \
    --conntrack-tcp-timeout-close-wait 0 --iptables-localhost-nodeports=false --nodeport-addresses 127.0.0.1/32
  start_bg containerd containerd --config "$STATE/containerd/config.toml"
  wait_for containerd 30 ctr -a "$sock" version
  import_image "$BIN/pause" "$PAUSE_IMAGE" pause

  touch "$RUNDIR/started-kubelet" # down then empties and removes the pod cgroups
  start_bg kubelet "$BIN/kubelet" --config "$STATE/kubelet/config.yaml" --kubeconfig "$KUBECONFIG" \
    --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" --hostname-override "$NODE_NAME"
  wait_for kubelet 120 node_ready
  local up=$((SECONDS - build_done))
  log "node $NODE_NAME Ready: cluster up in $((SECONDS - start)) s (of which start-up $up s, build/install $((build_done - start)) s)"
  printf '%s %s\n' "$((SECONDS - start))" "$up" >"$RUNDIR/up-seconds"
  trap - EXIT
}

# node_ready: Ready, and the node lifecycle controller has lifted its not-ready taint.
node_ready() {
  [[ $("$BIN/kubectl" get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.taints}' 2>/dev/null) == "True " ]]
}

# import_image wraps a static binary as a FROM-scratch image and loads it into the node's
# containerd (namespace k8s.io, the one the kubelet's CRI uses).
import_image() {
  local binary=$1 ref=$2 entry=$3
  local tar=$KDIR/images/$entry.tar
  mkdir -p "$KDIR/images"
  if [[ ! -x $BIN/streamsim ]]; then
    (cd "$ROOT" && go build -o "$BIN/streamsim" ./cmd/streamsim) || die "building ./cmd/streamsim failed"
  fi
  "$BIN/streamsim" k8s image -o "$tar" -ref "$ref" -binary "$binary" -entry "$entry" || die "writing the image archive of $ref failed"
  ctr -a "$STATE/containerd/containerd.sock" -n k8s.io images import "$tar" >"$LOGS/import-$entry.log" 2>&1 ||
    { cat "$LOGS/import-$entry.log" >&2; die "ctr images import $tar ($ref) failed"; }
  log "loaded image $ref ($(du -h "$tar" | cut -f1))"
}

# stop_pid stops one process we started (its process group: setsid made it a leader).
stop_pid() {
  local name=$1 pidfile=$RUNDIR/$1.pid pid i
  [[ -f $pidfile ]] || return 0
  pid=$(<"$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; }
    [[ ${2:-} == quiet ]] || log "stopped $name (pid $pid)"
  fi
  rm -f "$pidfile"
}

# kubepods_pids lists the processes in the kubelet's pod cgroups (cgroup v1 and v2 layouts).
kubepods_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods.slice /sys/fs/cgroup/kubepods.slice; do
    [[ -d $d ]] && printf '%s\n' "$d"
  done
}

cmd_down() {
  local quiet=${1:-}
  local sock=$STATE/containerd/containerd.sock
  # Pods first, while the kubelet and containerd still run: their containers end cleanly.
  if [[ -f $RUNDIR/kube-apiserver.pid ]] && kill -0 "$(<"$RUNDIR/kube-apiserver.pid")" 2>/dev/null; then
    "$BIN/kubectl" delete namespace streamsim --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  stop_pid kubelet "$quiet"
  if [[ -S $sock ]] && [[ -f $RUNDIR/containerd.pid ]]; then
    local t
    for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$sock" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
    sleep 1
    for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$sock" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true
    done
  fi
  stop_pid kube-proxy "$quiet"
  stop_pid kube-scheduler "$quiet"
  stop_pid kube-controller-manager "$quiet"
  stop_pid kube-apiserver "$quiet"
  stop_pid etcd "$quiet"
  stop_pid containerd "$quiet"
  # Shims of our containerd (each names our socket) and anything left in the pod cgroups:
  # by pid, nothing else on the machine.
  local pid
  for pid in $(pgrep -f -- "-address $sock" 2>/dev/null || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  # Only what this script's kubelet and kube-proxy made: nothing if they never started here.
  local cg
  if [[ -f $RUNDIR/started-kubelet ]]; then
    for cg in $(kubepods_cgroups); do
      for pid in $(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null || true
      done
    done
    sleep 0.5
    for cg in $(kubepods_cgroups); do
      find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
  fi
  # kube-proxy's and the kubelet's iptables chains.
  if [[ -f $RUNDIR/started-kube-proxy || -f $RUNDIR/started-kubelet ]] && [[ -x $BIN/kube-proxy ]] && command -v iptables >/dev/null; then
    "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
    local tbl chain
    for tbl in filter nat mangle; do
      for chain in $(iptables -t "$tbl" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
        while iptables -t "$tbl" -S 2>/dev/null | grep -- "-j $chain\$" | grep -q '^-A'; do
          local rule
          rule=$(iptables -t "$tbl" -S 2>/dev/null | grep -- "-j $chain\$" | grep '^-A' | head -n1 | sed 's/^-A/-D/')
          eval "iptables -t $tbl $rule" 2>/dev/null || break
        done
      done
      for chain in $(iptables -t "$tbl" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
        iptables -t "$tbl" -F "$chain" 2>/dev/null || true
      done
      for chain in $(iptables -t "$tbl" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
        iptables -t "$tbl" -X "$chain" 2>/dev/null || true
      done
    done
    if command -v ip6tables >/dev/null; then
      for tbl in filter nat mangle; do
        for chain in $(ip6tables -t "$tbl" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
          ip6tables -t "$tbl" -F "$chain" 2>/dev/null || true
        done
      done
    fi
  fi
  # Mounts the kubelet and containerd made under our state (pod volumes, overlay rootfs).
  local m
  for m in $(awk -v s="$STATE/" 'index($2, s) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  # CNI state (host-local IPAM, cache) of the loopback network and the pods' state.
  rm -rf /var/lib/cni/networks/streamsim-loopback /var/lib/cni/results/streamsim-loopback-* 2>/dev/null || true
  rm -rf "$STATE/kubelet" "$STATE/containerd/state" "$STATE/etcd" "$STATE/pod-logs" 2>/dev/null || true
  rm -f "$RUNDIR/started-kubelet" "$RUNDIR/started-kube-proxy"
  [[ $quiet == quiet ]] || log "down: processes stopped, iptables KUBE-* chains, pod cgroups, mounts and CNI state removed"
}

cmd_run() {
  [[ $# -ge 1 ]] || { usage >&2; exit 2; }
  local comp=$1
  shift
  [[ -f $comp ]] || die "composition $comp not found"
  cmd_up
  build_plan
  import_image "$BIN/plan" streamsim-plan:dev plan
  import_image "$BIN/sync-service" streamsim-sync:dev sync-service
  mkdir -p "$OUT"
  local name
  name=$(basename "$comp" .toml)
  rm -rf "${OUT:?}/$name" # the previous run of this composition
  "$BIN/streamsim" k8s run -kubectl "$BIN/kubectl" -kubeconfig "$KUBECONFIG" -host-network -sync-port 0 \
    -out "$OUT/$name" "$@" "$comp"
}

cmd_env() {
  printf 'export KUBECONFIG=%q\n' "$KUBECONFIG"
  printf 'export PATH=%q:"$PATH"\n' "$BIN"
}

mkdir -p "$LOGS"
case ${1:-} in
build) build_kubernetes; build_sync_service ;;
up) cmd_up ;;
down) cmd_down ;;
run) shift; cmd_run "$@" ;;
env) cmd_env ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
