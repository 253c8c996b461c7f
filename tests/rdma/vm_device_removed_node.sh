#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_device_removed_test.sh runs: rtotemd on rdma (fallback yes, the
# default) on a ring of every node, a listener on "orders", MESSAGES messages from each node. Then
# this node's RDMA device is removed (rdma link delete) under the running daemon: it must log the
# failure and exit 1 (removed.txt). Then, as systemd's Restart=on-failure would, the same command
# with the same state directory: it finds no RDMA device and runs on UDP multicast (the netdev is
# still up); the nodes form one ring again and MESSAGES more from each node reach every listener.
# Every wait is bounded; the daemon and the listener are stopped on any exit.
# Usage (inside rxe-vm): vm_device_removed_node.sh BUILD_DIR MESSAGES
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node, before and after}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
conf=$RXE_OUT/rtotem.conf
write_conf "$conf" vm-device-removed 239.192.77.4 "fallback: yes"

start_daemon "$conf"
wait_ring "$all_nodes" 120 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status-rdma.txt"
grep -qx 'state: operational' "$RXE_OUT/status-rdma.txt" || { say "no ring: $(cat "$RXE_OUT/status-rdma.txt")"; exit 1; }
say "on rdma: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-rdma.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen-rdma.txt"
"$RXE_VM" barrier listening 180
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-rdma$m"; done
wait_delivered "$RXE_OUT/listen-rdma.txt" 'node[0-9]+-rdma' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier delivered 180 || true

# rxe has no way to detach a process from a device it removes: the removal returns once every
# process closed the device, so rtotemd must see the removal, let go and exit.
rc=0
timeout 60 rdma link delete "$RXE_DEV" >"$RXE_OUT/delete.txt" 2>&1 || rc=$?
echo "rdma link delete $RXE_DEV: exit $rc" >>"$RXE_OUT/delete.txt"
for ((t = 0; t < 300; t++)); do  # 60 s
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.2
done
rc=0
kill -0 "$daemon" 2>/dev/null && { say "rtotemd still runs 60 s after its device went"; kill -KILL "$daemon"; }
wait "$daemon" || rc=$?
daemon=""
echo "exit $rc" >"$RXE_OUT/removed.txt"
timeout 10 tail --pid="$listener" -f /dev/null || { say "the listener outlived its daemon"; kill -TERM "$listener"; }
listener=""
{ rdma link show; ibv_devices; } >"$RXE_OUT/after-removal.txt" 2>&1
say "device removed: rtotemd exit $rc: $(grep -o 'the link failed.*' "$RXE_OUT/rtotemd.log" || echo 'no link failure logged')"
"$RXE_VM" barrier removed 120

# The supervisor's restart: the same command, the same state directory.
start_daemon "$conf"
wait_ring "$all_nodes" 180 || true
ctl status >"$RXE_OUT/status-udp.txt"
say "restarted: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-udp.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen-udp.txt"
wait_listeners || true  # the deliveries below say what was missed
"$RXE_VM" barrier relistening 120
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-udp$m"; done
wait_delivered "$RXE_OUT/listen-udp.txt" 'node[0-9]+-udp' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier redelivered 180 || true
