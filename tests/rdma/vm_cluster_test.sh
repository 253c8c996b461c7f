#!/usr/bin/env bash
# rtotemd on RDMA, on real Soft-RoCE (tests/rdmalab): 3 VMs each run rtotemd with transport rdma
# and fallback no (vm_cluster_node.sh). PASS when they form one ring of all three over rdma, every
# node delivers every node's messages (short ones and a 3-packet one each) in the same order, and
# each node's link counters show traffic, filtered own echoes and no error completion or link
# failure. max_message_size is the default 1 MiB: each node's send queue and pool must be sized for
# it at rxe's MTU, and messages of 1,000,000 bytes (over 1024 packets each) from every node must
# reach every node in one order (rtotem-bench: same order hash, no sender's order broken). Then the last node's rtotemd is killed with kill -9: the others must re-form without it
# and report its listener gone; restarted with its state directory it must rejoin over rdma, and
# messages sent after that must be delivered in the same order everywhere (as the UDP tests check
# over sockets). Then the last node's link goes down under its running rtotemd: it must log the
# failure and exit 1 (the port-down event), not hang on a dead device. With `sealed` the cluster runs
# with crypto on (one key made here with rtotem-keygen): the same, every packet sealed on its way
# out of registered memory, and no packet may fail to open (drop_auth, drop_replay 0).
# Usage: vm_cluster_test.sh BUILD_DIR [sealed]. Exit 77 (SKIP, with the reason) when the lab
# cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_cluster_test.sh BUILD_DIR [sealed]}")
sealed=${2:-}
[[ -z "$sealed" || "$sealed" == sealed ]] || { echo "usage: vm_cluster_test.sh BUILD_DIR [sealed]" >&2; exit 2; }
nodes=3
messages=10
rejoin_messages=5
work=$(mktemp -d /tmp/rtotem-vm-cluster.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM
key=none
if [[ -n "$sealed" ]]; then
  key=$work/authkey
  "$build/src/tools/rtotem-keygen" --key "$key" >/dev/null
  chmod 0444 "$key"  # each VM copies it into its own state dir, mode 0400
fi

# Whatever rxe-vm's status, the nodes' results below say what passed and what failed.
lab_run "rdma vm cluster" --quiet --nodes "$nodes" --timeout 560 --workdir "$work/vm" -- \
  "$here/vm_cluster_node.sh" "$build" "$messages" "$rejoin_messages" "$key" || true
status=0
fail() { echo "rdma vm cluster: FAIL: $*"; status=1; }
link_counter() {  # link_counter NAME FILE: the value in the stats' link section
  python3 -c 'import json,sys; print(json.load(open(sys.argv[2]))["link"][sys.argv[1]])' "$1" "$2"
}
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log console.log || { fail "node$n"; continue; }
  grep -q '^transport: rdma' "$out/status.txt" || fail "node$n: not on transport rdma: $(cat "$out/status.txt")"
  grep -q 'transport rdma on' "$out/rtotemd.log" || fail "node$n: rtotemd did not open the RDMA backend"
  # The default 1 MiB max_message_size at rxe's MTU takes more than the 1024 packets a fixed
  # queue held: started at all, the send queue and pool were sized for the port.
  opened=$(grep -m1 -o 'transport rdma on .*' "$out/rtotemd.log" || true)
  [[ "$(sed -nE 's/.*send_queue_max ([0-9]+).*/\1/p' <<<"$opened")" -gt 1024 ]] ||
    fail "node$n: send_queue_max not sized for a 1 MiB message at the port's MTU: $opened"
  want_crypto=$([[ -n "$sealed" ]] && echo on || echo off)
  [[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["crypto"])' "$out/status.json")" == "$want_crypto" ]] ||
    fail "node$n: crypto is not $want_crypto: $(cat "$out/status.json")"
  for c in tx_packets rx_packets drop_self_echo; do
    [[ "$(link_counter "$c" "$out/stats.json")" -gt 0 ]] || fail "node$n: link counter $c is 0"
  done
  for stats in stats.json stats-rejoin.json; do  # the first daemon's, then after the rejoin
    for c in tx_completion_errors rx_completion_errors link_failures tx_errors ${sealed:+drop_auth drop_replay}; do
      [[ "$(link_counter "$c" "$out/$stats")" == 0 ]] || fail "node$n: link counter $c is not 0 in $stats"
    done
    # The arena is registered once; every receive since is a re-post of one of its buffers.
    [[ "$(link_counter mr_registrations "$out/$stats")" == 1 ]] || fail "node$n: mr_registrations is not 1 in $stats"
    [[ "$(link_counter rx_post_calls "$out/$stats")" -gt 0 ]] || fail "node$n: rx_post_calls is 0 in $stats"
  done
  echo "node$n: $opened"
  big=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); print(b["messages_delivered"], b["fifo_violations"], b["end_markers_missing"], b["order_hash"])' "$out/big.json" 2>/dev/null || echo "none")
  read -r big_delivered big_fifo big_missing big_hash <<<"$big"
  if [[ "$(cat "$out/big.rc")" != "exit 0" || "${big_delivered:-0}" -lt "$nodes" || "$big_fifo" != 0 || "$big_missing" != 0 ]]; then
    fail "node$n: 1,000,000-byte messages: rtotem-bench $(cat "$out/big.rc"): $(cat "$out/big.json" "$out/big.err" 2>/dev/null | head -c 600)"
  fi
  echo "$big_hash" >"$work/big_hash.$n"
  echo "node$n: 1,000,000-byte messages: $big_delivered delivered, order hash $big_hash"
  echo "node$n link: $(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["link"]; print(", ".join(f"{k} {v}" for k,v in l.items() if v))' "$out/stats.json")"
  grep -E '^[0-9]+ [0-9]+:[0-9]+ node[0-9]+-(message|large)' "$out/listen.txt" >"$work/delivered.$n" || true
  # After the rejoin the killed node's listener is a new one, its delivery index restarted at 1.
  listen=$out/listen.txt
  ((n == nodes - 1)) && listen=$out/listen-rejoin.txt
  sed -nE 's/^[0-9]+ ([0-9]+:[0-9]+ node[0-9]+-rejoin[0-9]+)$/\1/p' "$listen" >"$work/rejoined.$n" || true
  if ! { grep -qx 'state: operational' "$out/status-rejoin.txt" && grep -q '^transport: rdma' "$out/status-rejoin.txt" &&
         grep -qx "members: $(seq -s ', ' 1 "$nodes")" "$out/status-rejoin.txt"; }; then
    fail "node$n: not back on a ring of all $nodes over rdma after the rejoin: $(cat "$out/status-rejoin.txt")"
  fi
  if ((n < nodes - 1)); then  # a survivor
    grep -qx "members: $(seq -s ', ' 1 $((nodes - 1)))" "$out/shrunk.txt" ||
      fail "node$n: no ring without the killed node: $(cat "$out/shrunk.txt")"
    gone=$(cat "$work/vm/shared/listener.$nodes" 2>/dev/null || echo none)
    grep -qE "^group orders: .* left \[([^]]* )?$nodes:$gone\(nodedown\)" "$out/listen.txt" ||
      fail "node$n: the killed node's listener (pid $gone) was not reported gone with its node"
  fi
done
last="$work/vm/node$((nodes - 1))"
[[ "$(grep -c 'transport rdma on' "$last/rtotemd.log")" == 2 ]] ||
  fail "kill -9: the restarted rtotemd did not open the RDMA backend again"
grep -qx 'exit 1' "$last/link_down.txt" 2>/dev/null || fail "link down: rtotemd did not exit 1: $(cat "$last/link_down.txt" 2>/dev/null)"
grep -q 'the link failed: rdma: ' "$last/rtotemd.log" || fail "link down: no link failure in the log"
echo "link down on node$((nodes - 1)): $(grep -o 'the link failed: .*' "$last/rtotemd.log" | head -1)"
if [[ $status == 0 ]]; then
  # shellcheck disable=SC2046  # one word per node's file
  lab_one_order "rdma vm cluster: FAIL" $((nodes * (messages + 1))) $(seq -f "$work/delivered.%g" 0 $((nodes - 1))) || status=1
  # shellcheck disable=SC2046
  lab_one_order "rdma vm cluster: FAIL: after the rejoin" $((nodes * rejoin_messages)) \
    $(seq -f "$work/rejoined.%g" 0 $((nodes - 1))) || status=1
  for ((n = 1; n < nodes; n++)); do
    cmp -s "$work/big_hash.0" "$work/big_hash.$n" || fail "node$n delivered the 1,000,000-byte messages in another order than node0"
  done
fi
[[ $status == 0 ]] && echo "rdma vm cluster: PASS: one ring of $nodes nodes over rdma${sealed:+, every packet sealed}, $((nodes * (messages + 1))) messages delivered in the same order on every node, and 1,000,000-byte messages of over 1024 packets; node$((nodes - 1)) killed with kill -9, the others re-formed, it rejoined and $((nodes * rejoin_messages)) more messages were delivered in the same order; a link taken down detected"
exit $status
