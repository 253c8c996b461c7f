#!/usr/bin/env bash
# What each Soft-RoCE VM of vm_cluster_test.sh runs: rtotemd with transport rdma (fallback no), a
# listener on group "orders", MESSAGES short messages and one of 3000 bytes (3 packets, sent from
# the registered buffers, not inline) of its own once every node listens, then the
# node's status and stats into $RXE_OUT; then rtotem-bench sends 1,000,000-byte messages from
# every node for 2 s (big.json, big.rc). Then the last node's rtotemd is killed with kill -9: the
# others must re-form without it (shrunk.txt) and see its listener leave; it is restarted with the
# same state directory, the ring of all nodes forms again over rdma (status-rejoin.txt), and every
# node sends REJOIN_MESSAGES more, which every node's listener must deliver. Then the last node
# takes its link down: its rtotemd must see the port fail and exit 1 (link_down.txt). Every wait is
# bounded; the daemon is stopped on any exit. KEYFILE (or none): crypto on with a copy of that key.
# Usage (inside rxe-vm): vm_cluster_node.sh BUILD_DIR MESSAGES REJOIN_MESSAGES KEYFILE|none
set -euo pipefail
build=${1:?build dir}
messages=${2:?messages per node}
rejoin_messages=${3:?messages per node after the rejoin}
key=${4:?key file or none}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
last=$([[ $node == "$RXE_NODES" ]] && echo yes || echo no)
total=$(((messages + 1) * RXE_NODES))
conf=$RXE_OUT/rtotem.conf
# max_message_size is left at 1 MiB: at rxe's 1024-byte MTU the pools are sized for its packets.
crypto=()
if [[ "$key" != none ]]; then
  install -m 0400 "$key" "$state/authkey"
  crypto=("crypto: on" "keyfile: $state/authkey")
fi
write_conf "$conf" vm-cluster 239.192.77.1 "fallback: no" "${crypto[@]}"

start_daemon "$conf"
wait_ring "$all_nodes" 120 || true  # the status below shows what there was instead
ctl status >"$RXE_OUT/status.txt"
ctl --json status >"$RXE_OUT/status.json"
grep -qx 'state: operational' "$RXE_OUT/status.txt" || { say "no ring of $all_nodes"; cat "$RXE_OUT/status.txt"; exit 1; }
say "ring formed: $(grep -E '^(ring|members|transport|local_address)' "$RXE_OUT/status.txt" | tr '\n' ' ')"

start_listener "$RXE_OUT/listen.txt"
echo "$listener" >"$RXE_SHARED/listener.$node"  # its pid is in the group's member lists
"$RXE_VM" barrier listening 180

for ((m = 1; m <= messages; m++)); do ctl send orders "node$node-message$m"; done
ctl send orders "node$node-large-$(printf '%03000d' 0)"
wait_delivered "$RXE_OUT/listen.txt" 'node[0-9]+-(message|large)' "$total" || true
"$RXE_VM" barrier delivered 180 || true
ctl stats >"$RXE_OUT/stats.txt"
ctl --json stats >"$RXE_OUT/stats.json"
[[ "$(delivered "$RXE_OUT/listen.txt" 'node[0-9]+-(message|large)')" -ge "$total" ]]
"$RXE_VM" barrier counted 180 || true

# Messages near the default max_message_size: 1,000,000 bytes are about 1060 packets at rxe's
# MTU, more than a send queue of 1024 held. rtotem-bench checks that every sender's messages and
# end marker reached it in the sender's order; the host compares the order hashes.
rc=0
timeout --kill-after=5 150 "$build/bench/rtotem-bench" --group big --size 1000000 --duration 2 \
  --senders "$RXE_NODES" --json >"$RXE_OUT/big.json" 2>"$RXE_OUT/big.err" || rc=$?
echo "exit $rc" >"$RXE_OUT/big.rc"
say "1,000,000-byte messages: rtotem-bench exit $rc"
"$RXE_VM" barrier big 180 || true

# kill -9 and rejoin. The killed daemon leaves nothing behind that a restart must clean: the
# kernel destroys its QP and leaves its multicast group when the process dies.
survivors=$(seq -s ' ' 1 $((RXE_NODES - 1)))
if [[ $last == yes ]]; then
  kill -KILL "$daemon"
  wait "$daemon" 2>/dev/null || true
  daemon=""
  timeout 10 tail --pid="$listener" -f /dev/null || { say "the listener outlived its daemon"; kill -TERM "$listener"; }
  listener=""
  "$RXE_VM" barrier killed 60
  "$RXE_VM" barrier shrunk 240  # the survivors re-formed without us: now come back
  start_daemon "$conf"
else
  "$RXE_VM" barrier killed 60
  wait_ring "$survivors" 120
  ctl status >"$RXE_OUT/shrunk.txt"
  gone=$(cat "$RXE_SHARED/listener.$RXE_NODES")
  for ((t = 0; t < 300; t++)); do  # the killed node's listener reported gone (60 s)
    grep -qE "^group orders: .* left \[([^]]* )?$RXE_NODES:$gone\(nodedown\)" "$RXE_OUT/listen.txt" && break
    sleep 0.2
  done
  "$RXE_VM" barrier shrunk 180
fi
wait_ring "$all_nodes" 180
ctl status >"$RXE_OUT/status-rejoin.txt"
say "rejoined: $(grep -E '^(ring|members|transport)' "$RXE_OUT/status-rejoin.txt" | tr '\n' ' ')"
rejoin_listen=$RXE_OUT/listen.txt
if [[ $last == yes ]]; then
  rejoin_listen=$RXE_OUT/listen-rejoin.txt
  start_listener "$rejoin_listen"
fi
wait_listeners || true  # the deliveries below say what was missed
"$RXE_VM" barrier relistening 120
for ((m = 1; m <= rejoin_messages; m++)); do ctl send orders "node$node-rejoin$m"; done
wait_delivered "$rejoin_listen" 'node[0-9]+-rejoin' $((rejoin_messages * RXE_NODES)) || true
"$RXE_VM" barrier redelivered 180 || true
ctl --json stats >"$RXE_OUT/stats-rejoin.json"
"$RXE_VM" barrier recounted 180 || true

if [[ $last == yes ]]; then  # the port goes down under a running daemon
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
