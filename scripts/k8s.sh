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
readonly NODE_NAME=streamsim-node

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
  build_sync_service
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

# build_sync_service builds testground's sync service (it listens on :5050, hard-coded; the
# copy is patched to listen on 127.0.0.1 only, as scripts/testground.sh does).
build_sync_service() {
  local syncdir src=$SRC/sync-service
  syncdir=$(mod_dir github.com/testground/sync-service "$SYNC_SERVICE_VERSION")
  rm -rf "$src"
  cp -R "$syncdir" "$src"
  chmod -R u+w "$src"
  sed -i 's|net.Listen("tcp", ":"+strconv.Itoa(port))|net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))|' "$src/server.go"
  grep -q '"127.0.0.1:"+strconv.Itoa(port)' "$src/server.go" || die "could not patch sync-service's listen address"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$BIN/sync-service" ./cmd) \
    >"$LOGS/build-sync-service.log" 2>&1 ||
    { tail -n 30 "$LOGS/build-sync-service.log" >&2; die "building sync-service failed"; }
}

mkdir -p "$LOGS"
case ${1:-} in
build) build_kubernetes ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
