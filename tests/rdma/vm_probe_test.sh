#!/usr/bin/env bash
# In one Soft-RoCE VM (tests/rdmalab): rtotemd's start-up probe finds the real rxe device, so
# transport rdma does NOT fall back to UDP there (it is refused, as the RDMA backend does not exist
# yet, naming the device it found). The host's no-device case is tests/rdma/fallback_test.sh.
# Usage: vm_probe_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
build=$(readlink -f "${1:?usage: vm_probe_test.sh BUILD_DIR}")
work=$(mktemp -d /tmp/rtotem-vm-probe.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/rdma.conf" <<'CONF'
totem {
  cluster_name: vm-probe
  transport: rdma
  fallback: yes
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: 10.77.0.1
  }
}
CONF

set +e
"$here/../rdmalab/rxe-vm" run --quiet --nodes 1 --timeout 240 --workdir "$work/vm" -- \
  "$build/src/daemon/rtotemd" -t -c "$work/rdma.conf" --nodeid 1
rc=$?
set -e
if [[ $rc == 3 ]]; then
  echo "rdma vm probe: SKIP: the Soft-RoCE lab cannot start here (tests/rdmalab/rxe-vm doctor says why)"
  exit 77
fi
out="$work/vm/node0"
[[ -f "$out/exit_code" ]] || { echo "rdma vm probe: FAIL: the VM left no result"; tail -20 "$out/console.log"; exit 1; }
echo "rdma vm probe: rtotemd -t exit $(cat "$out/exit_code"): $(cat "$out/stderr" "$out/stdout")"
grep -q "transport rdma: rxe0 port 1 is usable, but this build has no RDMA backend yet" "$out/stderr" || {
  echo "rdma vm probe: FAIL: the probe did not report rxe0 port 1 as usable"; exit 1; }
if grep -q "running on udp" "$out/stderr" "$out/stdout"; then
  echo "rdma vm probe: FAIL: fell back to udp although rxe0 is active"; exit 1
fi
echo "rdma vm probe: PASS"
