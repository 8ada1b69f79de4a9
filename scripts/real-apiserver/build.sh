#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager from Debian's `kubernetes` source package, the way
# debian/rules does (`make WHAT=cmd/...`), once per machine: the binaries are cached outside the work
# tree (≈13 min of 2 cores to build; a cache hit is instant). Prints the bin directory on stdout.
#
#   scripts/real-apiserver/build.sh            # build unless cached
#   ROLLGATE_REAL_APISERVER_CACHE=DIR ...      # cache elsewhere (default ~/.cache/rollgate/real-apiserver)
#
# Needs root for apt-get (deb-src entry, golang-go, rsync, dpkg-dev, Debian's reflect2 sources).
set -euo pipefail

CACHE="${ROLLGATE_REAL_APISERVER_CACHE:-${HOME}/.cache/rollgate/real-apiserver}"
# The source package version this script was written against: a different one may need other fixes, so a
# cache built from another version is rebuilt rather than trusted.
PKG_VERSION="1.20.5+really1.20.2"
BIN="${CACHE}/bin"
STAMP="${BIN}/.built-from"
WHAT="cmd/kube-apiserver cmd/kube-controller-manager"

log() { printf '[real-apiserver build] %s\n' "$*" >&2; }

if [[ -x "${BIN}/kube-apiserver" && -x "${BIN}/kube-controller-manager" && -f "${STAMP}" ]] &&
  [[ "$(cat "${STAMP}")" == "${PKG_VERSION}" ]]; then
  echo "${BIN}"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# `apt-get source` needs a deb-src line; Debian's image ships only binary ones. The suite is the one the
# binary entries use, so the source matches the golang-go and etcd-server this machine installs.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  suite="$(. /etc/os-release && echo "${VERSION_CODENAME}")"
  log "adding a deb-src entry for ${suite}"
  cat >/etc/apt/sources.list.d/rollgate-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${suite}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
apt-get update -qq >&2
# Build-Depends of the source package (debhelper and bash-completion serve only the .deb packaging),
# dpkg-dev for `apt-get source`, and Debian's reflect2 1.0.2 (see below).
apt-get install -y -qq golang-go rsync jq dpkg-dev golang-github-modern-go-reflect2-dev >&2

mkdir -p "${CACHE}/src"
cd "${CACHE}/src"
SRC_DIR="${CACHE}/src/kubernetes-${PKG_VERSION}"
if [[ ! -d "${SRC_DIR}" ]]; then
  log "apt-get source kubernetes=${PKG_VERSION}-*"
  apt-get source -qq "kubernetes" >&2
fi
[[ -d "${SRC_DIR}" ]] || { log "no ${SRC_DIR} after apt-get source (another package version?)"; exit 1; }
cd "${SRC_DIR}"

# Vendored github.com/modern-go/reflect2 1.0.1 reads Go runtime internals that changed in Go 1.18: the
# API server then crashes (unexpected fault address) on the first custom-resource write. Debian's 1.0.2
# has the fix and the same API, so its sources replace the vendored ones (go.mod excluded: vendor/
# holds packages, not modules).
R2_VENDOR=vendor/github.com/modern-go/reflect2
R2_DEBIAN=/usr/share/gocode/src/github.com/modern-go/reflect2
if [[ ! -f "${R2_VENDOR}/go_above_118.go" ]]; then
  log "replacing vendored reflect2 1.0.1 with Debian's ${R2_DEBIAN}"
  rm -f "${R2_VENDOR}"/*.go "${R2_VENDOR}"/*.s
  cp "${R2_DEBIAN}"/*.go "${R2_DEBIAN}"/*.s "${R2_VENDOR}/"
fi

# As debian/rules: a GOPATH whose k8s.io/kubernetes is this tree, no cgo.
export GOPATH="${SRC_DIR}/.go"
export CGO_ENABLED=0
export GOCACHE="${CACHE}/go-build-cache"
mkdir -p .go/src/k8s.io
[[ -L .go/src/k8s.io/kubernetes ]] || ln -s ../../.. .go/src/k8s.io/kubernetes
# No .git in a source package: the version the server reports (and clients' discovery reads) is given.
export KUBE_GIT_VERSION="v1.20.2" KUBE_GIT_MAJOR="1" KUBE_GIT_MINOR="20" KUBE_GIT_TREE_STATE="clean"
# providerless: no cloud-provider SDKs compiled in (smaller, faster build; nothing here talks to a cloud).
log "make WHAT='${WHAT}' GOFLAGS=-tags=providerless (long: ≈13 min on 2 cores)"
started=$(date +%s)
nice -n 19 make WHAT="${WHAT}" GOFLAGS="-tags=providerless" >&2
log "built in $(($(date +%s) - started)) s"

mkdir -p "${BIN}"
cp _output/bin/kube-apiserver _output/bin/kube-controller-manager "${BIN}/"
echo "${PKG_VERSION}" >"${STAMP}"
echo "${BIN}"
