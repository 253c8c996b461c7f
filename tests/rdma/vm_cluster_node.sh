#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_cluster_test.sh runs: rtotemd with transport rdma (fallback no), a
# listener on group "orders", MESSAGES short messages and one of 3000 bytes (3 packets, sent from
# the registered buffers, not inline) of its own once every node listens, then the
# node's status and stats into $RXE_OUT. Then the last node takes its link down: its rtotemd must
# see the port fail and exit 1 (link_down.txt). Every wait is bounded; the daemon is stopped on any
# exit. KEYFILE (or none): crypto on with a copy of that key.
# Usage (inside rxe-vm): vm_cluster_node.sh BUILD_DIR MESSAGES KEYFILE|none
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node}
key=${3:?key file or none}
node=$((RXE_NODE + 1))
total=$(((messages + 1) * RXE_NODES))
state=$(mktemp -d /tmp/rtotem-state.XXXXXX)
conf=$RXE_OUT/rtotem.conf
ctl() { "$build/src/client/rtotemctl" "$@"; }
say() { echo "node $node: $*"; }

{
  # rxe on a 1500-byte link carries 1024-byte messages: a 1 MiB message would be 1111 packets, more
  # than send_queue_max and the send buffers allow (conf/rtotem-rdma.conf says more).
  printf 'totem {\n  cluster_name: vm-cluster\n  transport: rdma\n  fallback: no\n  token: 5000\n'
  printf '  max_message_size: 524288\n'
  if [[ "$key" != none ]]; then
    install -m 0400 "$key" "$state/authkey"
    printf '  crypto: on\n  keyfile: %s\n' "$state/authkey"
  fi
  printf '  interface {\n    mcastaddr: 239.192.77.1\n  }\n}\nnodelist {\n'
  i=1
  for ip in $RXE_IPS; do printf '  node {\n    nodeid: %d\n    ring0_addr: %s\n  }\n' "$i" "$ip"; i=$((i + 1)); done
  printf '}\n'
} >"$conf"

"$build/src/daemon/rtotemd" -f -c "$conf" --nodeid "$node" --state-dir "$state" >"$RXE_OUT/rtotemd.log" 2>&1 &
daemon=$!
listener=""
finish() {
  [[ -n "$listener" ]] && kill -TERM "$listener" 2>/dev/null
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  true
}
trap finish EXIT

want_members=$(seq -s ' ' 1 "$RXE_NODES")
for ((t = 0; t < 600; t++)); do  # 120 s
  status=$(ctl status 2>/dev/null || true)
  if grep -qx 'state: operational' <<<"$status" && [[ "$(sed -n 's/^members: //p' <<<"$status" | tr -d ',')" == "$want_members" ]]; then
    break
  fi
  kill -0 "$daemon" 2>/dev/null || { say "rtotemd exited"; cat "$RXE_OUT/rtotemd.log"; exit 1; }
  sleep 0.2
done
ctl status >"$RXE_OUT/status.txt"
ctl --json status >"$RXE_OUT/status.json"
grep -qx 'state: operational' "$RXE_OUT/status.txt" || { say "no ring of $want_members"; cat "$RXE_OUT/status.txt"; exit 1; }
say "ring formed: $(grep -E '^(ring|members|transport|local_address)' "$RXE_OUT/status.txt" | tr '\n' ' ')"

ctl listen orders >"$RXE_OUT/listen.txt" 2>&1 &
listener=$!
for ((t = 0; t < 300; t++)); do  # until our listener is in the group: its first line says so
  grep -q '^group orders: ' "$RXE_OUT/listen.txt" && break
  sleep 0.2
done
"$RXE_VM" barrier listening 180

for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-message$m"; done
ctl send orders "node$node-large-$(printf '%03000d' 0)"
delivered() { grep -cE '^[0-9]+ [0-9]+:[0-9]+ ' "$RXE_OUT/listen.txt" || true; }
for ((t = 0; t < 600; t++)); do
  [[ "$(delivered)" -ge "$total" ]] && break
  sleep 0.2
done
say "delivered $(delivered) of $total"
"$RXE_VM" barrier delivered 180 || true
ctl stats >"$RXE_OUT/stats.txt"
ctl --json stats >"$RXE_OUT/stats.json"
[[ "$(delivered)" -ge "$total" ]]
"$RXE_VM" barrier counted 180 || true

if [[ $node == "$RXE_NODES" ]]; then  # the port goes down under a running daemon
  kill -TERM "$listener" 2>/dev/null
  listener=""
  ip link set "$RXE_NETDEV" down
  for ((t = 0; t < 300; t++)); do  # 60 s
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.2
  done
  rc=0
  wait "$daemon" || rc=$?
  daemon=""
  echo "exit $rc" >"$RXE_OUT/link_down.txt"
  say "link down: rtotemd exit $rc: $(grep -o 'the link failed.*' "$RXE_OUT/rtotemd.log" || echo 'no link failure logged')"
fi
