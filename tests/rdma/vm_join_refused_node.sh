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
node=$((RXE_NODE + 1))
state=$(mktemp -d /tmp/rtotem-state.XXXXXX)
ctl() { timeout 10 "$build/src/client/rtotemctl" "$@"; }
say() { echo "node $node: $*"; }

write_conf() {  # write_conf FILE FALLBACK
  {
    printf 'totem {\n  cluster_name: vm-join-refused\n  transport: rdma\n  fallback: %s\n  token: 5000\n' "$2"
    printf '  interface {\n    mcastaddr: %s\n  }\n}\nnodelist {\n' "$group"
    i=1
    for ip in $RXE_IPS; do printf '  node {\n    nodeid: %d\n    ring0_addr: %s\n  }\n' "$i" "$ip"; i=$((i + 1)); done
    printf '}\n'
  } >"$1"
}
write_conf "$RXE_OUT/no.conf" no
write_conf "$RXE_OUT/yes.conf" yes

filler=""
daemon=""
finish() {
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
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

"$build/src/daemon/rtotemd" -f -c "$RXE_OUT/yes.conf" --nodeid "$node" --state-dir "$state/yes" \
  >"$RXE_OUT/rtotemd.log" 2>&1 &
daemon=$!
want=$(seq -s ', ' 1 "$RXE_NODES")
for ((t = 0; t < 600; t++)); do  # 120 s
  status=$(ctl status 2>/dev/null || true)
  grep -qx 'state: operational' <<<"$status" && grep -qx "members: $want" <<<"$status" && break
  kill -0 "$daemon" 2>/dev/null || { say "rtotemd exited"; tail -20 "$RXE_OUT/rtotemd.log"; exit 1; }
  sleep 0.2
done
ctl status >"$RXE_OUT/status.txt"
say "fallback yes: $(grep -E '^(transport|state|members):' "$RXE_OUT/status.txt" | tr '\n' ' ')"
"$RXE_VM" barrier formed 120
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
daemon=""
echo "exit $rc" >"$RXE_OUT/stopped.txt"
