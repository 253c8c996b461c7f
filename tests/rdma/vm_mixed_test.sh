#!/usr/bin/env bash
# A cluster with mixed transports, in 3 Soft-RoCE VMs (tests/rdmalab): transport rdma everywhere,
# but the last node has no RDMA device, so it falls back to UDP multicast (one warning) while the
# others run on rdma. Nodes on different transports cannot hear each other: the test asserts the
# documented outcome, a split by transport: the rdma nodes form one ring and deliver only their
# messages in one order, the UDP node forms a ring of its own and delivers only its own, and a
# while later neither side has merged or heard the other. Then the repair: the device back on the
# last node and its rtotemd restarted, the 3 form one ring over rdma and deliver in one order.
# Usage: vm_mixed_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_mixed_test.sh BUILD_DIR}")
nodes=3
messages=5
group=239.192.77.5
work=$(mktemp -d /tmp/rtotem-vm-mixed.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

lab_run "rdma vm mixed" --quiet --nodes "$nodes" --timeout 540 --workdir "$work/vm" -- \
  "$here/vm_mixed_node.sh" "$build" "$messages" || true
status=0
fail() { echo "rdma vm mixed: FAIL: $*"; status=1; }
status_line() { sed -n "s/^$2: //p" "$1"; }
last=$((nodes - 1))
rdma_members=$(seq -s ', ' 1 "$last")
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log console.log || { fail "node$n"; continue; }
  log=$out/rtotemd.log
  if ((n == last)); then want_transport=udp want_members=$nodes want_warnings=1
  else want_transport=rdma want_members=$rdma_members want_warnings=0; fi
  for when in split later; do
    [[ "$(status_line "$out/status-$when.txt" transport)" == "$want_transport" &&
      "$(status_line "$out/status-$when.txt" members)" == "$want_members" ]] ||
      fail "node$n ($when): want a ring of [$want_members] on $want_transport: $(grep -E '^(transport|state|members):' "$out/status-$when.txt" | tr '\n' ' ')"
  done
  warnings=$(grep -c "transport rdma: no RDMA device.*; running on udp multicast $group:5405 instead" "$log" || true)
  [[ "$warnings" == "$want_warnings" ]] || fail "node$n: $warnings fallback warnings, want $want_warnings"
  [[ "$(status_line "$out/status-joined.txt" transport)" == rdma &&
    "$(status_line "$out/status-joined.txt" members)" == "$(seq -s ', ' 1 "$nodes")" ]] ||
    fail "node$n: no ring of all $nodes over rdma after the repair: $(grep -E '^(transport|state|members):' "$out/status-joined.txt" | tr '\n' ' ')"
  joined=$out/listen-split.txt
  ((n == last)) && joined=$out/listen-joined.txt
  for batch in split joined; do
    file=$out/listen-split.txt
    [[ $batch == joined ]] && file=$joined
    sed -nE "s/^[0-9]+ ([0-9]+:[0-9]+ node[0-9]+-${batch}[0-9]+)\$/\\1/p" "$file" >"$work/$batch.$n" || true
  done
done
if [[ $status == 0 ]]; then
  # Each side delivered exactly its own nodes' messages: nothing crossed between transports.
  grep -vE "^[0-9]+:[0-9]+ node($(seq -s '|' 1 "$last"))-split" "$work/split.0" && fail "node0 delivered a message from the udp side"
  # shellcheck disable=SC2046  # one word per node's file
  lab_one_order "rdma vm mixed: FAIL: split" $((last * messages)) $(seq -f "$work/split.%g" 0 $((last - 1))) || status=1
  [[ "$(grep -c "node$nodes-split" "$work/split.$last")" == "$messages" && "$(wc -l <"$work/split.$last")" == "$messages" ]] ||
    fail "split: the udp node delivered $(wc -l <"$work/split.$last") messages, want only its own $messages: $(head -3 "$work/split.$last")"
  # shellcheck disable=SC2046
  lab_one_order "rdma vm mixed: FAIL: joined" $((nodes * messages)) $(seq -f "$work/joined.%g" 0 $((nodes - 1))) || status=1
fi
[[ $status == 0 ]] && echo "rdma vm mixed: PASS: with node $nodes on udp (no device, one warning) and the others on rdma, each side formed its own ring and delivered only its own $((last * messages)) and $messages messages, unmerged after several token timeouts; with the device back and rtotemd restarted, the $nodes formed one rdma ring and delivered $((nodes * messages)) in one order"
exit $status
