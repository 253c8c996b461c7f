#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_links_test.sh runs: two links, link 0 rdma and link 1 udpu (a
# second address on the same NIC). The last node has no RDMA device (its rxe is deleted before
# rtotemd starts): it runs on link 1 alone, in the same ring as the others. MESSAGES from each node
# are delivered; then node 1's rxe device is deleted while every node sends MESSAGES more: its
# RDMA link goes out of service, the ring stays the same and every message is delivered.
# Every wait is bounded; the daemon and the listener are stopped on any exit.
# Usage (inside rxe-vm): vm_links_node.sh BUILD_DIR MESSAGES
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node, before and during the removal}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
conf=$RXE_OUT/rtotem.conf
link1_of() { echo "${RXE_IP%.*.*}.1.$1"; }  # node N's link 1 address: 10.77.1.N
ip addr add "$(link1_of "$node")/24" dev "$RXE_NETDEV"
{
  # netmtu 992: what an rxe port of active MTU 1024 carries (an RDMA link must carry netmtu).
  printf 'totem {\n  cluster_name: vm-links\n  transport: rdma\n  token: 5000\n  token_coefficient: 0\n  netmtu: 992\n'
  printf '  interface {\n    linknumber: 0\n    mcastaddr: 239.192.77.6\n  }\n'
  printf '  interface {\n    linknumber: 1\n    transport: udpu\n  }\n}\nnodelist {\n'
  i=1
  for ip in $RXE_IPS; do
    printf '  node {\n    nodeid: %d\n    ring0_addr: %s\n    ring1_addr: %s\n  }\n' "$i" "$ip" "$(link1_of $i)"
    i=$((i + 1))
  done
  printf '}\n'
} >"$conf"

if ((node == RXE_NODES)); then
  timeout 60 rdma link delete "$RXE_DEV" >"$RXE_OUT/delete.txt" 2>&1 || { say "cannot delete $RXE_DEV: $(cat "$RXE_OUT/delete.txt")"; exit 1; }
fi
"$RXE_VM" barrier configured 120
start_daemon "$conf"
wait_ring "$all_nodes" 180 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status-joined.txt"
say "joined: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-joined.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen.txt"
wait_listeners || true
"$RXE_VM" barrier listening 180
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-before$m"; done
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-before' $((messages * RXE_NODES)) || true
ctl status >"$RXE_OUT/status-before.txt"
"$RXE_VM" barrier delivered 180 || true

# Under load: every node sends; node 1 loses its RDMA device after its first few messages.
for ((m = 1; m <= messages; m++)); do
  ctl send orders "node$node-during$m"
  if ((node == 1 && m == 2)); then
    # rxe completes a removal once no process has the device open, and librdmacm keeps it open
    # until rtotemd exits: the delete returns when the daemon stops (delete.txt), not before.
    { timeout 300 rdma link delete "$RXE_DEV"; echo "rdma link delete $RXE_DEV: exit $?"; } >"$RXE_OUT/delete.txt" 2>&1 &
  fi
  sleep 0.3
done
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-during' $((messages * RXE_NODES)) || true
ctl status >"$RXE_OUT/status-after.txt"
say "after: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-after.txt" | tr '\n' ' ')"
"$RXE_VM" barrier done 180 || true
