#!/usr/bin/env bash
# The nodelist changed at run time on rdma, in 3 Soft-RoCE VMs (tests/rdmalab; vm_nodelist_node.sh
# is what each runs): nodes 1 and 2 run a ring from a nodelist of two, add node 3 with one reload
# of every node, and keep their ring until node 3 joins over rdma (its address handle made on its
# first packet, its token through it); every message is delivered in one order. Node 3 stops, the
# two take it out with another reload: no ring change but its own leave.
# Usage: vm_nodelist_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_nodelist_test.sh BUILD_DIR}")
nodes=3
messages=6
work=$(mktemp -d /tmp/rtotem-vm-nodelist.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

lab_run "rdma vm nodelist" --quiet --nodes "$nodes" --timeout 540 --workdir "$work/vm" -- \
  "$here/vm_nodelist_node.sh" "$build" "$messages" || true
status=0
fail() { echo "rdma vm nodelist: FAIL: $*"; status=1; }
status_line() { sed -n "s/^$2: //p" "$1" 2>/dev/null; }
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log console.log || { fail "node$n"; continue; }
  [[ "$(status_line "$out/status-three.txt" members)" == "1, 2, 3" ]] ||
    fail "node$n: no ring of all 3: $(grep -E '^(state|members):' "$out/status-three.txt" | tr '\n' ' ')"
  [[ "$(status_line "$out/status-three.txt" transport)" == rdma* ]] ||
    fail "node$n: not on rdma: $(status_line "$out/status-three.txt" transport)"
  sed -nE "s/^[0-9]+ ([0-9]+:[0-9]+ node[0-9]+-grown[0-9]+)\$/\\1/p" "$out/listen.txt" >"$work/grown.$n" || true
  ((n == 2)) && continue
  two=$(status_line "$out/status-two.txt" ring.seq) reloaded=$(status_line "$out/status-add.txt" ring.seq)
  [[ -n "$two" && "$two" == "$reloaded" ]] || fail "node$n: the reload that added node 3 changed the ring: $two, then $reloaded"
  left=$(status_line "$out/status-left.txt" ring.seq) removed=$(status_line "$out/status-remove.txt" ring.seq)
  [[ -n "$left" && "$left" == "$removed" ]] || fail "node$n: the reload that removed node 3 changed the ring: $left, then $removed"
  [[ "$(status_line "$out/status-remove.txt" members)" == "1, 2" ]] ||
    fail "node$n: members after the removal: $(status_line "$out/status-remove.txt" members)"
done
reloads=$work/vm/node0
for node in 1 2; do
  grep -q "node $node: nodelist: node 3 added" "$reloads/reload-add.txt" ||
    fail "the first reload did not add node 3 on node $node: $(cat "$reloads/reload-add.txt")"
  grep -q "node $node: nodelist: node 3 removed" "$reloads/reload-remove.txt" ||
    fail "the second reload did not remove node 3 on node $node: $(cat "$reloads/reload-remove.txt")"
done
grep -qx "exit 0" "$reloads/reload-add.txt" && grep -qx "exit 0" "$reloads/reload-remove.txt" || fail "a reload did not exit 0"
if [[ $status == 0 ]]; then
  # shellcheck disable=SC2046  # one word per node's file
  lab_one_order "rdma vm nodelist: FAIL" $((nodes * messages)) $(seq -f "$work/grown.%g" 0 $((nodes - 1))) || status=1
fi
[[ $status == 0 ]] && echo "rdma vm nodelist: PASS: node 3 added with one reload of nodes 1 and 2 (their ring kept) joined over rdma, $((nodes * messages)) messages in one order; removed with another, no ring change but its leave"
exit $status
