#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_device_removed_test.sh runs: rtotemd on rdma (fallback yes, the
# default) on a ring of every node, a listener on "orders", MESSAGES messages from each node. Then
# this node's RDMA device is removed (rdma link delete) under the running daemon: it must log the
# failure and go on over UDP multicast in the same process (the netdev is still up), with the
# listener still connected; the nodes form one ring again and MESSAGES more from each node reach
# the same listener. rxe completes a removal only once no process has the device open, and
# librdmacm keeps it open until exit: the delete returns when rtotemd stops (delete.txt).
# Every wait is bounded; the daemon and the listener are stopped on any exit.
# Usage (inside rxe-vm): vm_device_removed_node.sh BUILD_DIR MESSAGES
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node, before and after}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
deleting=""
cleanup() {
  stop_node
  [[ -n "$deleting" ]] && kill "$deleting" 2>/dev/null
  true
}
trap cleanup EXIT
conf=$RXE_OUT/rtotem.conf
write_conf "$conf" vm-device-removed 239.192.77.4 "fallback: yes"

start_daemon "$conf"
wait_ring "$all_nodes" 120 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status-rdma.txt"
grep -qx 'state: operational' "$RXE_OUT/status-rdma.txt" || { say "no ring: $(cat "$RXE_OUT/status-rdma.txt")"; exit 1; }
say "on rdma: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-rdma.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen.txt"
"$RXE_VM" barrier listening 180
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-rdma$m"; done
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-rdma' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier delivered 180 || true

{ timeout 300 rdma link delete "$RXE_DEV"; echo "rdma link delete $RXE_DEV: exit $?"; } >"$RXE_OUT/delete.txt" 2>&1 &
deleting=$!
for ((t = 0; t < 300; t++)); do  # until rtotemd has moved to udp (60 s)
  ctl status 2>/dev/null | grep -qx 'transport: udp' && break
  sleep 0.2
done
wait_ring "$all_nodes" 180 || true
ctl status >"$RXE_OUT/status-udp.txt"
say "after the removal: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-udp.txt" | tr '\n' ' ')"
kill -0 "$daemon" 2>/dev/null && echo running >"$RXE_OUT/removed.txt" || echo exited >"$RXE_OUT/removed.txt"
kill -0 "$listener" 2>/dev/null && echo connected >"$RXE_OUT/listener.txt" || echo gone >"$RXE_OUT/listener.txt"
wait_listeners || true  # the deliveries below say what was missed
"$RXE_VM" barrier relistening 120
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-udp$m"; done
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-udp' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier redelivered 180 || true

stop_node  # lets go of the device: the removal completes
daemon="" listener=""
timeout 60 tail --pid="$deleting" -f /dev/null || say "the removal did not complete after rtotemd stopped"
deleting=""
{ rdma link show; ibv_devices; } >"$RXE_OUT/after-removal.txt" 2>&1
