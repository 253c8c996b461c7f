#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_join_refused_test.sh runs: mcast_group_filler takes every QP join
# the ring's multicast group allows on this node's rxe device, so rtotemd's own join is refused
# by the device. Node 1 first starts rtotemd with fallback no (it must refuse to start: no.txt).
# Then every node starts rtotemd with fallback yes: each must fall back to UDP multicast and the
# nodes must form one ring over it (status.txt). Every wait is bounded; the daemon and the filler
# are stopped on any exit.
# Usage (inside rxe-vm): vm_join_refused_node.sh BUILD_DIR GROUP
set -euo pipefail
build=${1:?build dir}
group=${2:?multicast group}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
write_conf "$RXE_OUT/no.conf" vm-join-refused "$group" "fallback: no"
write_conf "$RXE_OUT/yes.conf" vm-join-refused "$group" "fallback: yes"

filler=""
finish() {
  stop_node
  [[ -n "$filler" ]] && kill -TERM "$filler" 2>/dev/null && wait "$filler" 2>/dev/null
  true
}
trap finish EXIT

"$build/tests/mcast_group_filler" "$RXE_IP" "$group" "$RXE_OUT/full.txt" >"$RXE_OUT/filler.txt" 2>&1 &
filler=$!
for ((t = 0; t < 600; t++)); do  # 56 cm_ids and QPs under TCG: seconds (120 s)
  [[ -s "$RXE_OUT/full.txt" ]] && break
  kill -0 "$filler" 2>/dev/null || { say "the filler exited: $(cat "$RXE_OUT/filler.txt")"; exit 1; }
  sleep 0.2
done
[[ -s "$RXE_OUT/full.txt" ]] || { say "the group is not full after 120 s"; exit 1; }
say "$(cat "$RXE_OUT/full.txt")"

if [[ $node == 1 ]]; then
  rc=0
  timeout 60 "$build/src/daemon/rtotemd" -f -c "$RXE_OUT/no.conf" --nodeid 1 --state-dir "$state/no" \
    >"$RXE_OUT/no.txt" 2>&1 || rc=$?
  echo "exit $rc" >>"$RXE_OUT/no.txt"
  say "fallback no: exit $rc"
fi
"$RXE_VM" barrier refused 120

start_daemon "$RXE_OUT/yes.conf"
wait_ring "$all_nodes" 120 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status.txt"
say "fallback yes: $(grep -E '^(transport|state|members):' "$RXE_OUT/status.txt" | tr '\n' ' ')"
"$RXE_VM" barrier formed 120
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
daemon=""
echo "exit $rc" >"$RXE_OUT/stopped.txt"
