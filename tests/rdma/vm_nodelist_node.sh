#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_nodelist_test.sh runs: nodes 1 and 2 form a ring on rdma from a
# nodelist of the two; both add node 3 to their file and node 1 reloads every node; node 3 starts
# and joins over rdma, MESSAGES from each node are delivered; node 3 stops, the two take it out of
# their file and node 1 reloads again. Statuses are kept for the test to compare ring ids.
# Every wait is bounded; the daemon and the listener are stopped on any exit.
# Usage (inside rxe-vm): vm_nodelist_node.sh BUILD_DIR MESSAGES
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
conf=$RXE_OUT/rtotem.conf
conf_nodes=2 write_conf "$RXE_OUT/two.conf" vm-nodelist 239.192.77.7
write_conf "$RXE_OUT/three.conf" vm-nodelist 239.192.77.7
"$RXE_VM" barrier configured 120

# reload_two FILE BEFORE AFTER: nodes 1 and 2, on a ring of both, keep their status (status-BEFORE)
# and take FILE as their file; node 1 reloads every node (reload-AFTER.txt); 2 s later, what the
# two show (status-AFTER), once a ring change the reload caused would have shown.
reload_two() {
  local file=$1 before=$2 after=$3
  if ((node < 3)); then
    wait_ring "1 2" 180 || true
    ctl status >"$RXE_OUT/status-$before.txt"
    cp "$file" "$conf"
  fi
  "$RXE_VM" barrier "written-$after" 180 || true
  if ((node == 1)); then
    { ctl reload; echo "exit $?"; } >"$RXE_OUT/reload-$after.txt" 2>&1 || true
  fi
  "$RXE_VM" barrier "reloaded-$after" 180 || true
  if ((node < 3)); then
    sleep 2
    ctl status >"$RXE_OUT/status-$after.txt"
  fi
}

if ((node < 3)); then
  cp "$RXE_OUT/two.conf" "$conf"
  start_daemon "$conf"
fi
reload_two "$RXE_OUT/three.conf" two add
"$RXE_VM" barrier checked 180 || true  # node 3 starts only once the two have shown their ring
if ((node == 3)); then
  cp "$RXE_OUT/three.conf" "$conf"
  start_daemon "$conf"
fi
wait_ring "1 2 3" 180 || true
ctl status >"$RXE_OUT/status-three.txt"
say "three: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-three.txt" | tr '\n' ' ')"
start_listener "$RXE_OUT/listen.txt"
wait_listeners || true
"$RXE_VM" barrier listening 180 || true
for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-grown$m"; done
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-grown' $((messages * RXE_NODES)) || true
"$RXE_VM" barrier delivered 180 || true

if ((node == 3)); then
  stop_node
  daemon="" listener=""
fi
"$RXE_VM" barrier left 180 || true
reload_two "$RXE_OUT/two.conf" left remove
"$RXE_VM" barrier done 180 || true
