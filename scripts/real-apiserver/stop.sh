#!/usr/bin/env bash
# Stops what start.sh DIR started (by the process ids it recorded) and removes etcd's data.
set -uo pipefail
DIR="${1:?usage: stop.sh DIR}"
if [[ -f "${DIR}/pids" ]]; then
  # Reverse order: controller manager, API server, then etcd.
  for pid in $(tac "${DIR}/pids"); do kill "${pid}" 2>/dev/null; done
  for pid in $(tac "${DIR}/pids"); do
    for _ in $(seq 1 50); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pid}" 2>/dev/null
  done
  : >"${DIR}/pids"
fi
if [[ -f "${DIR}/etcd-data-dir" ]]; then rm -rf "$(cat "${DIR}/etcd-data-dir")"; fi
exit 0
