#!/usr/bin/env bash
# Two links, link 0 rdma and link 1 udpu, in 3 Soft-RoCE VMs (tests/rdmalab; vm_links_node.sh is
# what each runs). What it shows, against the single-link behaviour (rdma-vm-mixed: a split by
# transport; rdma-vm-device-removed: the daemon exits and the ring re-forms):
# - the node without an RDMA device joins the same ring as the others, over link 1;
# - node 1's rxe device deleted under load takes its link 0 out of service and changes no
#   membership: the ring id is the one from before, and every message is delivered in one order.
# Usage: vm_links_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_links_test.sh BUILD_DIR}")
nodes=3
messages=6
work=$(mktemp -d /tmp/rtotem-vm-links.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

lab_run "rdma vm links" --quiet --nodes "$nodes" --timeout 540 --workdir "$work/vm" -- \
  "$here/vm_links_node.sh" "$build" "$messages" || true
status=0
fail() { echo "rdma vm links: FAIL: $*"; status=1; }
status_line() { sed -n "s/^$2: //p" "$1"; }
members=$(seq -s ', ' 1 "$nodes")
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log console.log || { fail "node$n"; continue; }
  log=$out/rtotemd.log
  [[ "$(status_line "$out/status-joined.txt" members)" == "$members" ]] ||
    fail "node$n: no ring of all $nodes: $(grep -E '^(state|members):' "$out/status-joined.txt" | tr '\n' ' ')"
  before=$(status_line "$out/status-joined.txt" ring.seq) after=$(status_line "$out/status-after.txt" ring.seq)
  [[ -n "$before" && "$before" == "$after" ]] || fail "node$n: the ring changed when node 1 lost its device: $before, then $after"
  [[ "$(status_line "$out/status-after.txt" members)" == "$members" ]] || fail "node$n: members after: $(status_line "$out/status-after.txt" members)"
  if ((n == nodes - 1)); then
    grep -q "link 0 (rdma): .*this node runs on its other links" "$log" || fail "node$n: no line saying it runs without its rdma link"
    grep -q "^links.0.out_of_service: no RDMA device" "$out/status-before.txt" || fail "node$n: its status does not show link 0 missing"
  else
    # The nodes with a device carried the ring over RDMA to each other before the removal.
    grep -qx "links.0.nodes.$((2 - n)).connected: true" "$out/status-before.txt" ||
      fail "node$n: link 0 (rdma) to node $((2 - n)) was not up: $(grep '^links.0' "$out/status-before.txt" | tr '\n' ' ')"
  fi
  if ((n == 0)); then
    grep -q "link 0 (rdma) is out of service" "$log" || fail "node$n: its rdma link was not taken out of service"
    grep -q "^links.0.out_of_service: ." "$out/status-after.txt" || fail "node$n: its status does not show link 0 out of service"
  fi
  for batch in before during; do
    sed -nE "s/^[0-9]+ ([0-9]+:[0-9]+ node[0-9]+-${batch}[0-9]+)\$/\\1/p" "$out/listen.txt" >"$work/$batch.$n" || true
  done
done
if [[ $status == 0 ]]; then
  for batch in before during; do
    # shellcheck disable=SC2046  # one word per node's file
    lab_one_order "rdma vm links: FAIL: $batch" $((nodes * messages)) $(seq -f "$work/$batch.%g" 0 $((nodes - 1))) || status=1
  done
fi
[[ $status == 0 ]] && echo "rdma vm links: PASS: node $nodes without an RDMA device joined the ring of all $nodes over link 1 (udpu); node 1's rxe deleted under load took its link 0 out of service with no ring change, and $((nodes * messages)) messages before and $((nodes * messages)) during were delivered in one order"
exit $status
