#!/usr/bin/env bash
# A multicast join the device refuses, for real, in 2 Soft-RoCE VMs (tests/rdmalab): on each node
# mcast_group_filler holds every QP join the ring's group takes on rxe (max_mcast_qp_attach) and
# shows that one more is refused. Then rtotemd with transport rdma and fallback no must refuse to
# start, naming the failed join, and exit non-zero; with fallback yes every node must log exactly
# one fallback warning naming the failed join, run on UDP multicast, and the nodes must form one
# ring over it. The no-device case is fallback_test.sh, an address without RDMA vm_probe_test.sh.
# Usage: vm_join_refused_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot
# start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_join_refused_test.sh BUILD_DIR}")
nodes=2
group=239.192.77.3
work=$(mktemp -d /tmp/rtotem-vm-join-refused.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

# Whatever rxe-vm's status, the nodes' results below say what passed and what failed.
lab_run "rdma vm join refused" --quiet --nodes "$nodes" --timeout 420 --workdir "$work/vm" -- \
  "$here/vm_join_refused_node.sh" "$build" "$group" || true
status=0
fail() { echo "rdma vm join refused: FAIL: $*"; status=1; }
refused="RDMA_CM_EVENT_MULTICAST_ERROR"
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" filler.txt rtotemd.log console.log || { fail "node$n"; continue; }
  grep -q "refused: .*$refused" "$out/full.txt" || fail "node$n: the filler did not see a join refused"
  warnings=$(grep -c "transport rdma: rdma: joining multicast group $group on rxe0 port 1: got $refused .*; running on udp multicast $group:5405 instead" "$out/rtotemd.log" || true)
  [[ "$warnings" == 1 ]] || fail "node$n: $warnings fallback warnings naming the refused join, want exactly 1: $(head -5 "$out/rtotemd.log")"
  grep -q 'transport udp on ' "$out/rtotemd.log" || fail "node$n: rtotemd did not open UDP"
  grep -qx 'transport: udp' "$out/status.txt" || fail "node$n: not on udp: $(cat "$out/status.txt")"
  grep -qx 'state: operational' "$out/status.txt" && grep -qx "members: $(seq -s ', ' 1 "$nodes")" "$out/status.txt" ||
    fail "node$n: no ring of all $nodes over udp: $(grep -E '^(state|members):' "$out/status.txt")"
  grep -qx 'exit 0' "$out/stopped.txt" || fail "node$n: rtotemd did not exit 0 on SIGTERM"
  echo "node$n fallback yes: $(grep -o "transport rdma: .*" "$out/rtotemd.log")"
done
no="$work/vm/node0/no.txt"
grep -qx 'exit 0' "$no" 2>/dev/null && fail "fallback no: rtotemd started although its join was refused"
grep -qE '^exit [1-9]' "$no" 2>/dev/null || fail "fallback no: no exit status: $(cat "$no" 2>/dev/null)"
grep -q "transport rdma: rdma: joining multicast group $group on rxe0 port 1: got $refused .*; not starting (totem.fallback is no)" "$no" ||
  fail "fallback no: the refusal does not name the refused join: $(cat "$no" 2>/dev/null)"
echo "node0 fallback no: $(grep -o 'transport rdma: .*' "$no" 2>/dev/null), $(tail -1 "$no" 2>/dev/null)"
[[ $status == 0 ]] && echo "rdma vm join refused: PASS: with the group full on rxe, fallback no refused to start and fallback yes ran $nodes nodes on one udp ring, each with one warning naming the refused join"
exit $status
