#!/usr/bin/env bash
# A run-time RDMA failure ends on UDP in the same process, end to end, in 3 Soft-RoCE VMs
# (tests/rdmalab): rtotemd on rdma (fallback yes, the default) forms one ring and delivers a batch;
# then every node's rxe device is removed under its running daemon (rdma link delete; the netdev
# stays up). Each rtotemd must log the failure and keep running, log one fallback warning and go
# on over UDP multicast; its listener stays connected; the three must form one ring again and a
# new batch must reach the same listeners in one order. The removal completes once rtotemd stops
# (librdmacm holds the device until then; rxe cannot take it away). With fallback no a failure
# makes rtotemd exit 1 instead: vm_cluster_test.sh.
# Usage: vm_device_removed_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot
# start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_device_removed_test.sh BUILD_DIR}")
nodes=3
messages=5
group=239.192.77.4
work=$(mktemp -d /tmp/rtotem-vm-device-removed.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

# Whatever rxe-vm's status, the nodes' results below say what passed and what failed.
lab_run "rdma vm device removed" --quiet --nodes "$nodes" --timeout 540 --workdir "$work/vm" -- \
  "$here/vm_device_removed_node.sh" "$build" "$messages" || true
status=0
fail() { echo "rdma vm device removed: FAIL: $*"; status=1; }
members=$(seq -s ', ' 1 "$nodes")
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log console.log || { fail "node$n"; continue; }
  log=$out/rtotemd.log
  grep -qx 'transport: rdma' "$out/status-rdma.txt" && grep -qx "members: $members" "$out/status-rdma.txt" ||
    fail "node$n: no ring of all $nodes over rdma first: $(grep -E '^(transport|members):' "$out/status-rdma.txt")"
  grep -q 'exit 0' "$out/delete.txt" || fail "node$n: the device was not removed once rtotemd stopped: $(cat "$out/delete.txt")"
  grep -qx running "$out/removed.txt" || fail "node$n: rtotemd exited when its device went"
  grep -q 'the link failed: rdma: ' "$log" || fail "node$n: no link failure in the log"
  grep -q 'rxe0' "$out/after-removal.txt" && fail "node$n: rxe0 is still there: $(cat "$out/after-removal.txt")"
  warnings=$(grep -c "transport rdma: rdma: .*; running on udp multicast $group:5405 instead" "$log" || true)
  [[ "$warnings" == 1 ]] || fail "node$n: $warnings fallback warnings after the failure, want exactly 1"
  [[ "$(grep -c 'transport rdma on ' "$log")" == 1 && "$(grep -c 'transport udp on ' "$log")" == 1 ]] ||
    fail "node$n: not rdma and then udp: $(grep -o 'transport [a-z]* on .*' "$log")"
  [[ "$(grep -c 'rtotemd [0-9.]*: node' "$log")" == 1 ]] || fail "node$n: rtotemd started more than once"
  grep -qx connected "$out/listener.txt" || fail "node$n: the listener lost its daemon"
  grep -qx 'transport: udp' "$out/status-udp.txt" && grep -qx 'state: operational' "$out/status-udp.txt" &&
    grep -qx "members: $members" "$out/status-udp.txt" ||
    fail "node$n: no ring of all $nodes over udp after the failure: $(grep -E '^(transport|state|members):' "$out/status-udp.txt")"
  echo "node$n: $(grep -o 'the link failed: .*' "$log" | head -1)"
  echo "node$n: $(grep -o 'transport rdma: rdma: .*' "$log" | head -1)"
  for batch in rdma udp; do
    sed -nE "s/^[0-9]+ ([0-9]+:[0-9]+ node[0-9]+-${batch}[0-9]+)\$/\\1/p" "$out/listen.txt" >"$work/$batch.$n" || true
  done
done
if [[ $status == 0 ]]; then
  for batch in rdma udp; do
    # shellcheck disable=SC2046  # one word per node's file
    lab_one_order "rdma vm device removed: FAIL: $batch" $((nodes * messages)) $(seq -f "$work/$batch.%g" 0 $((nodes - 1))) ||
      status=1
  done
fi
[[ $status == 0 ]] && echo "rdma vm device removed: PASS: $nodes nodes on rdma delivered $((nodes * messages)) messages in one order; each rtotemd went on over udp with one warning when its rxe device was removed, its listener still connected, and the $nodes formed one ring that delivered $((nodes * messages)) more in one order"
exit $status
