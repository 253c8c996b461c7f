#!/usr/bin/env bash
# rtotemd on RDMA, on real Soft-RoCE (tests/rdmalab): 3 VMs each run rtotemd with transport rdma
# and fallback no (vm_cluster_node.sh). PASS when they form one ring of all three over rdma, every
# node delivers every node's messages (short ones and a 3-packet one each) in the same order, and
# each node's link counters show traffic, filtered own echoes and no error completion or link
# failure. Then the last node's link goes down under its running rtotemd: it must log the failure
# and exit 1 (the port-down event), not hang on a dead device. With `sealed` the cluster runs
# with crypto on (one key made here with rtotem-keygen): the same, every packet sealed on its way
# out of registered memory, and no packet may fail to open (drop_auth, drop_replay 0).
# Usage: vm_cluster_test.sh BUILD_DIR [sealed]. Exit 77 (SKIP, with the reason) when the lab
# cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
build=$(readlink -f "${1:?usage: vm_cluster_test.sh BUILD_DIR [sealed]}")
sealed=${2:-}
[[ -z "$sealed" || "$sealed" == sealed ]] || { echo "usage: vm_cluster_test.sh BUILD_DIR [sealed]" >&2; exit 2; }
nodes=3
messages=10
work=$(mktemp -d /tmp/rtotem-vm-cluster.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM
key=none
if [[ -n "$sealed" ]]; then
  key=$work/authkey
  "$build/src/tools/rtotem-keygen" --key "$key" >/dev/null
  chmod 0444 "$key"  # each VM copies it into its own state dir, mode 0400
fi

set +e
"$here/../rdmalab/rxe-vm" run --quiet --nodes "$nodes" --timeout 560 --workdir "$work/vm" -- \
  "$here/vm_cluster_node.sh" "$build" "$messages" "$key"
rc=$?
set -e
if [[ $rc == 3 ]]; then
  echo "rdma vm cluster: SKIP: the Soft-RoCE lab cannot start here (tests/rdmalab/rxe-vm doctor says why)"
  exit 77
fi
status=0
fail() { echo "rdma vm cluster: FAIL: $*"; status=1; }
link_counter() {  # link_counter NAME FILE: the value in the stats' link section
  python3 -c 'import json,sys; print(json.load(open(sys.argv[2]))["link"][sys.argv[1]])' "$1" "$2"
}
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  echo "--- node$n: exit $(cat "$out/exit_code" 2>/dev/null || echo none)"
  cat "$out/stdout" "$out/stderr" 2>/dev/null || true
  if [[ "$(cat "$out/exit_code" 2>/dev/null)" != 0 ]]; then
    fail "node$n"; tail -30 "$out/rtotemd.log" "$out/console.log" 2>/dev/null; continue
  fi
  grep -q '^transport: rdma' "$out/status.txt" || fail "node$n: not on transport rdma: $(cat "$out/status.txt")"
  grep -q 'transport rdma on' "$out/rtotemd.log" || fail "node$n: rtotemd did not open the RDMA backend"
  want_crypto=$([[ -n "$sealed" ]] && echo on || echo off)
  [[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["crypto"])' "$out/status.json")" == "$want_crypto" ]] ||
    fail "node$n: crypto is not $want_crypto: $(cat "$out/status.json")"
  for c in tx_packets rx_packets drop_self_echo; do
    [[ "$(link_counter "$c" "$out/stats.json")" -gt 0 ]] || fail "node$n: link counter $c is 0"
  done
  for c in tx_completion_errors rx_completion_errors link_failures tx_errors ${sealed:+drop_auth drop_replay}; do
    [[ "$(link_counter "$c" "$out/stats.json")" == 0 ]] || fail "node$n: link counter $c is not 0"
  done
  echo "node$n link: $(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["link"]; print(", ".join(f"{k} {v}" for k,v in l.items() if v))' "$out/stats.json")"
  grep -E '^[0-9]+ [0-9]+:[0-9]+ ' "$out/listen.txt" >"$work/delivered.$n" || true
done
last="$work/vm/node$((nodes - 1))"
grep -qx 'exit 1' "$last/link_down.txt" 2>/dev/null || fail "link down: rtotemd did not exit 1: $(cat "$last/link_down.txt" 2>/dev/null)"
grep -q 'the link failed: rdma: ' "$last/rtotemd.log" || fail "link down: no link failure in the log"
echo "link down on node$((nodes - 1)): $(grep -o 'the link failed: .*' "$last/rtotemd.log" | head -1)"
if [[ $status == 0 ]]; then
  total=$((nodes * (messages + 1)))
  [[ "$(wc -l <"$work/delivered.0")" == "$total" ]] || fail "node0 delivered $(wc -l <"$work/delivered.0") of $total"
  for ((n = 1; n < nodes; n++)); do
    cmp -s "$work/delivered.0" "$work/delivered.$n" || { fail "node$n delivered another order than node0"; diff "$work/delivered.0" "$work/delivered.$n" | head; }
  done
fi
[[ $status == 0 ]] && echo "rdma vm cluster: PASS: one ring of $nodes nodes over rdma${sealed:+, every packet sealed}, $((nodes * (messages + 1))) messages delivered in the same order on every node, a link taken down detected"
exit $status
