#!/usr/bin/env bash
# Starts a real Kubernetes control plane on loopback for tests: etcd (Debian's etcd-server), kube-apiserver
# and kube-controller-manager (built by build.sh), with a self-signed CA, token auth and RBAC. Writes
# DIR/kubeconfig (admin) and DIR/pids, and returns once the API server is ready. stop.sh DIR ends it all.
#
#   scripts/real-apiserver/start.sh DIR
set -euo pipefail

DIR="$(mkdir -p "${1:?usage: start.sh DIR}" && cd "$1" && pwd)"
HERE="$(cd "$(dirname "$0")" && pwd)"
log() { printf '[real-apiserver] %s\n' "$*" >&2; }

BIN="$("${HERE}/build.sh")"
missing=()
command -v etcd >/dev/null || missing+=(etcd-server)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
if [[ ${#missing[@]} -gt 0 ]]; then
  log "installing ${missing[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}
ETCD_PORT="$(free_port)"
ETCD_PEER_PORT="$(free_port)"
API_PORT="$(free_port)"

# --- certificates: a CA, the API server's serving certificate (127.0.0.1, localhost), the service-account key.
PKI="${DIR}/pki"
mkdir -p "${PKI}"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rollgate-test-ca" \
  -keyout "${PKI}/ca.key" -out "${PKI}/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
  -keyout "${PKI}/apiserver.key" -out "${PKI}/apiserver.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default\nextendedKeyUsage=serverAuth\n' \
  >"${PKI}/apiserver.ext"
openssl x509 -req -in "${PKI}/apiserver.csr" -CA "${PKI}/ca.crt" -CAkey "${PKI}/ca.key" -CAcreateserial \
  -days 2 -extfile "${PKI}/apiserver.ext" -out "${PKI}/apiserver.crt" 2>/dev/null
openssl genrsa -out "${PKI}/sa.key" 2048 2>/dev/null
openssl rsa -in "${PKI}/sa.key" -pubout -out "${PKI}/sa.pub" 2>/dev/null

# --- static tokens: the admin the tests use, and the controller manager (both system:masters: the
# controllers then need no per-controller RBAC, which is not what these tests are about).
ADMIN_TOKEN="$(openssl rand -hex 16)"
CM_TOKEN="$(openssl rand -hex 16)"
printf '%s,rollgate-admin,rollgate-admin,system:masters\n%s,system:kube-controller-manager,kcm,system:masters\n' \
  "${ADMIN_TOKEN}" "${CM_TOKEN}" >"${PKI}/tokens.csv"

kubeconfig() { # FILE USER TOKEN
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
  - name: real-apiserver
    cluster:
      server: https://127.0.0.1:${API_PORT}
      certificate-authority: ${PKI}/ca.crt
users:
  - name: $2
    user:
      token: $3
contexts:
  - name: real-apiserver
    context: {cluster: real-apiserver, user: $2, namespace: default}
current-context: real-apiserver
KC
  chmod 600 "$1"
}
kubeconfig "${DIR}/kubeconfig" rollgate-admin "${ADMIN_TOKEN}"
kubeconfig "${DIR}/controller-manager.kubeconfig" system:kube-controller-manager "${CM_TOKEN}"

: >"${DIR}/pids"
# The data lives in memory when /dev/shm is there: etcd's fsyncs are most of a write's latency on disk.
DATA="${DIR}/etcd-data"
if [[ -d /dev/shm && -w /dev/shm ]]; then DATA="$(mktemp -d /dev/shm/rollgate-etcd.XXXXXX)"; fi
echo "${DATA}" >"${DIR}/etcd-data-dir"

log "etcd on 127.0.0.1:${ETCD_PORT}"
etcd --name rollgate-test --data-dir "${DATA}" \
  --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
  --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-cluster "rollgate-test=http://127.0.0.1:${ETCD_PEER_PORT}" \
  >"${DIR}/etcd.log" 2>&1 &
echo $! >>"${DIR}/pids"

# Like any cluster that has run for a while, etcd's revision starts well above 1: the API server's watch
# caches start at the revision they first list, so a watch from an early resourceVersion (the conformance
# suite uses 1) is 410 Expired, as the sandbox answers after compaction. On a brand-new etcd they would
# start near 1 and hold it. The keys are outside /registry, where the API server never reads.
for _ in $(seq 1 100); do
  if curl -fsS -X POST "http://127.0.0.1:${ETCD_PORT}/v3/kv/put" \
    -d '{"key":"L3JvbGxnYXRlLXRlc3Qvd2FybXVw","value":"MQ=="}' >/dev/null 2>&1; then
    break
  fi
  sleep 0.2
done
for _ in $(seq 1 30); do
  curl -fsS -X POST "http://127.0.0.1:${ETCD_PORT}/v3/kv/put" \
    -d '{"key":"L3JvbGxnYXRlLXRlc3Qvd2FybXVw","value":"MQ=="}' >/dev/null
done

# An audit log of every request a ServiceAccount makes (metadata only: who, what, the answer's code), so a
# test running Rollgate as its ServiceAccount can show that not one request was refused (403).
cat >"${DIR}/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: [system:serviceaccounts]
  - level: None
POLICY

log "kube-apiserver on https://127.0.0.1:${API_PORT}"
# ServiceAccount admission is off: no token controller runs, and pods need no service account here. No
# endpoint reconciler: the `kubernetes` Service's endpoints refuse a loopback address (nothing reads them).
"${BIN}/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="${API_PORT}" --insecure-port=0 \
  --cert-dir="${PKI}" --tls-cert-file="${PKI}/apiserver.crt" --tls-private-key-file="${PKI}/apiserver.key" \
  --client-ca-file="${PKI}/ca.crt" --token-auth-file="${PKI}/tokens.csv" \
  --authorization-mode=RBAC \
  --service-account-key-file="${PKI}/sa.pub" --service-account-signing-key-file="${PKI}/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.96.0.0/16 \
  --disable-admission-plugins=ServiceAccount \
  --endpoint-reconciler-type=none \
  --audit-policy-file="${DIR}/audit-policy.yaml" --audit-log-path="${DIR}/audit.log" \
  --allow-privileged=true --logtostderr=true --v=1 \
  >"${DIR}/kube-apiserver.log" 2>&1 &
echo $! >>"${DIR}/pids"

ready=""
for _ in $(seq 1 120); do
  if curl -fsS --cacert "${PKI}/ca.crt" -H "Authorization: Bearer ${ADMIN_TOKEN}" \
    "https://127.0.0.1:${API_PORT}/readyz" >/dev/null 2>&1; then
    ready=1
    break
  fi
  sleep 0.5
done
if [[ -z "${ready}" ]]; then
  log "kube-apiserver not ready after 60 s; last lines of its log:"
  tail -n 30 "${DIR}/kube-apiserver.log" >&2
  exit 1
fi

# The Job controller runs the Jobs of analysis `job` metrics; the kubelet stand-in ends their pods.
log "kube-controller-manager (replicaset, job, garbagecollector, namespace)"
"${BIN}/kube-controller-manager" \
  --kubeconfig="${DIR}/controller-manager.kubeconfig" \
  --controllers=replicaset,job,garbagecollector,namespace \
  --leader-elect=false --port=0 --secure-port=0 \
  --logtostderr=true --v=1 \
  >"${DIR}/kube-controller-manager.log" 2>&1 &
echo $! >>"${DIR}/pids"

log "ready: KUBECONFIG=${DIR}/kubeconfig"
