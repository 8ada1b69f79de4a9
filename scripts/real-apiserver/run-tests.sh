#!/usr/bin/env bash
# `npm run test:real-apiserver`: the conformance suite and the whole-system tests against a real
# kube-apiserver 1.20 (Debian's, built once per machine by build.sh), with the kubelet stand-in
# (`rollgate sandbox kubelet`) writing pod status. Extra arguments go to vitest (e.g. a file filter).
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { printf '[real-apiserver] %s\n' "$*" >&2; }

started=$(date +%s)
scripts/real-apiserver/build.sh >/dev/null
log "binaries ready in $(($(date +%s) - started)) s"

DIR="$(mktemp -d /tmp/rollgate-real-apiserver.XXXXXX)"
KUBELET_PID=""
cleanup() {
  status=$?
  set +e
  if [[ -n "${KUBELET_PID}" ]]; then kill "${KUBELET_PID}" 2>/dev/null; fi
  scripts/real-apiserver/stop.sh "${DIR}"
  if [[ ${status} -ne 0 ]]; then
    log "failed (${status}); the control plane's logs are in ${DIR}"
  else
    rm -rf "${DIR}"
  fi
  exit "${status}"
}
trap cleanup EXIT

scripts/real-apiserver/start.sh "${DIR}"
export ROLLGATE_CONFORMANCE_KUBECONFIG="${DIR}/kubeconfig"
# What ServiceAccounts asked and were answered (start.sh): the RBAC tests look for refusals there.
export ROLLGATE_REAL_APISERVER_AUDIT_LOG="${DIR}/audit.log"

# Pods become Ready (or crash-loop, or fail to pull) as their sandbox.rollgate.dev/behavior says; images of
# unpullable.registry.test fail to pull here only (UNPULLABLE_REGISTRY, test/real-apiserver/support/real-cluster.ts).
node bin/rollgate.js sandbox kubelet --kubeconfig "${ROLLGATE_CONFORMANCE_KUBECONFIG}" --ready-delay-ms 500 \
  --missing-image 'unpullable.registry.test/*' \
  >"${DIR}/kubelet.log" 2>&1 &
KUBELET_PID=$!
sleep 1
if ! kill -0 "${KUBELET_PID}" 2>/dev/null; then
  log "the kubelet stand-in exited at once:"
  cat "${DIR}/kubelet.log" >&2
  exit 1
fi

npx vitest run --config vitest.real-apiserver.config.ts "$@"
# Tests whose pods never became Ready would say so, but a stand-in that died is named here.
if ! kill -0 "${KUBELET_PID}" 2>/dev/null; then
  log "the kubelet stand-in died during the run:"
  tail -n 20 "${DIR}/kubelet.log" >&2
  exit 1
fi
