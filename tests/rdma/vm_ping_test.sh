#!/usr/bin/env bash
# The RDMA UD backend alone, on real Soft-RoCE (tests/rdmalab): 3 VMs each run rtotem-ping
# --mode rdma; every node multicasts pings to the group and answers the others' pings with unicast
# pongs (an address handle to the peer's GID, the QP number learned from its packets). PASS when
# every ping is answered by every peer on every node, no completion failed, and each node's own
# multicasts came back from the NIC and were filtered (drop_self_echo), not delivered twice.
# Usage: vm_ping_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_ping_test.sh BUILD_DIR}")
nodes=3
count=200
work=$(mktemp -d /tmp/rtotem-vm-ping.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

# Whatever rxe-vm's status, the nodes' results below say what passed and what failed.
lab_run "rdma vm ping" --quiet --nodes "$nodes" --timeout 280 --workdir "$work/vm" -- bash -c '
  peers=(); i=1
  for ip in $RXE_IPS; do peers+=(--peer "$i=$ip:5405"); i=$((i + 1)); done
  exec "$0" --mode rdma --node $((RXE_NODE + 1)) "${peers[@]}" --group 239.192.72.1:5406 \
    --count "$1" --size 256 --timeout-s 150' "$build/src/tools/rtotem-ping" "$count" || true
status=0
counter() { awk -v name="$1" '$1 == name { print $2 }' "$2" | tail -1; }
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" console.log || { echo "rdma vm ping: FAIL: node$n did not get every pong"; status=1; continue; }
  grep -q "mode rdma" "$out/stdout" || { echo "rdma vm ping: FAIL: node$n did not run on rdma"; status=1; }
  for c in tx_completion_errors rx_completion_errors link_failures; do
    [[ -z "$(counter "$c" "$out/stdout")" ]] || { echo "rdma vm ping: FAIL: node$n counted $c"; status=1; }
  done
  own=$(counter rx_loopback "$out/stdout")
  echoed=$(counter drop_self_echo "$out/stdout")
  [[ -n "$own" && "$own" == "$echoed" ]] ||
    { echo "rdma vm ping: FAIL: node$n: ${own:-0} own multicasts, ${echoed:-0} NIC echoes filtered"; status=1; }
  pongs=$(grep -c "pongs $count/$count, lost 0" "$out/stdout" || true)
  [[ "$pongs" == $((nodes - 1)) ]] || { echo "rdma vm ping: FAIL: node$n: $pongs of $((nodes - 1)) peers answered all"; status=1; }
done
[[ $status == 0 ]] && echo "rdma vm ping: PASS: $nodes nodes, $count pings each, every one answered by every peer"
exit $status
