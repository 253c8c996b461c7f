#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_mixed_test.sh runs. The last node has no RDMA device (its rxe is
# deleted before rtotemd starts), so transport rdma falls back to UDP multicast there while the
# others run on rdma: each side forms a ring of its own (the UDP node alone), delivers MESSAGES from
# each of its nodes and nothing from the other side, and stays that way for a while. Then the
# operator's repair: the last node gets its device back and its rtotemd is restarted with the same
# state directory; all nodes form one ring over rdma and MESSAGES more from each reach every node.
# Every wait is bounded; the daemon and the listener are stopped on any exit.
# Usage (inside rxe-vm): vm_mixed_node.sh BUILD_DIR MESSAGES
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node, before and after the repair}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
conf=$RXE_OUT/rtotem.conf
write_conf "$conf" vm-mixed 239.192.77.5 "fallback: yes"
on_udp=$((node == RXE_NODES))
rdma_nodes=$(seq -s ' ' 1 $((RXE_NODES - 1)))

if ((on_udp)); then
  timeout 60 rdma link delete "$RXE_DEV" >"$RXE_OUT/delete.txt" 2>&1 || { say "cannot delete $RXE_DEV: $(cat "$RXE_OUT/delete.txt")"; exit 1; }
  side=$node
else
  side=$rdma_nodes
fi
"$RXE_VM" barrier configured 120
start_daemon "$conf"
wait_ring "$side" 180 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status-split.txt"
say "split: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-split.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen-split.txt"
"$RXE_VM" barrier listening 180
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-split$m"; done
wait_delivered "$RXE_OUT/listen-split.txt" 'node[0-9]+-split' $((messages * $(wc -w <<<"$side"))) || true
"$RXE_VM" barrier delivered 180 || true
# Idle on purpose, the wait is the check: over several token timeouts neither side hears the other,
# so nothing merges and nothing more arrives.
sleep 12
ctl status >"$RXE_OUT/status-later.txt"
"$RXE_VM" barrier settled 120 || true

if ((on_udp)); then  # the repair: the device back, rtotemd restarted with its state directory
  kill -TERM "$daemon"
  wait "$daemon" || true
  daemon=""
  timeout 10 tail --pid="$listener" -f /dev/null || kill -TERM "$listener"
  listener=""
  timeout 60 rdma link add "$RXE_DEV" type rxe netdev "$RXE_NETDEV" >"$RXE_OUT/add.txt" 2>&1 ||
    { say "cannot add $RXE_DEV back: $(cat "$RXE_OUT/add.txt")"; exit 1; }
  start_daemon "$conf"
fi
wait_ring "$all_nodes" 180 || true
ctl status >"$RXE_OUT/status-joined.txt"
say "joined: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-joined.txt" | tr '\n' ' ')"
((on_udp)) && start_listener "$RXE_OUT/listen-joined.txt"
wait_listeners || true  # the deliveries below say what was missed
"$RXE_VM" barrier relistening 120
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-joined$m"; done
# The repaired node's listener is new; the others' listeners hear both batches in one file.
joined_out=$RXE_OUT/listen-split.txt
((on_udp)) && joined_out=$RXE_OUT/listen-joined.txt
wait_delivered "$joined_out" 'node[0-9]+-joined' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier redelivered 180 || true
