#!/usr/bin/env bash
# DLM on rtotem, in 3 lab VMs (their Debian kernel has dlm and configfs; this host's has neither):
# each runs rtotemd with the drop-in Corosync libraries and Debian's dlm_controld, unmodified
# (vm_dlm_node.sh). PASS when `dlm_tool ls` shows lockspace "rtotem" held by all three nodes, and,
# once the last node's rtotemd is killed with kill -9, recovered on the other two with those two as
# its members. Usage: vm_dlm_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab
# cannot start or dlm_controld is not installed.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_dlm_test.sh BUILD_DIR}")
command -v dlm_controld >/dev/null || { echo "rdma vm dlm: SKIP: no dlm_controld (apt-get install dlm-controld)"; exit 77; }
nodes=3
work=$(mktemp -d /tmp/rtotem-vm-dlm.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM

lab_run "rdma vm dlm" --quiet --nodes "$nodes" --timeout 900 --workdir "$work/vm" -- "$here/vm_dlm_node.sh" "$build" || true
status=0
fail() { echo "rdma vm dlm: FAIL: $*"; status=1; }
for ((n = 0; n < nodes; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" rtotemd.log dlm_controld.log console.log || { fail "node$n"; continue; }
  grep -Eq '^members +1 2 3 *$' "$out/ls.txt" || fail "node$n: lockspace rtotem not held by all three: $(cat "$out/ls.txt")"
  if ((n < nodes - 1)); then
    grep -Eq '^members +1 2 *$' "$out/ls-after.txt" || fail "node$n: no recovery to nodes 1 2: $(cat "$out/ls-after.txt")"
    echo "node$n after the kill: $(grep -E '^(change|members) ' "$out/ls-after.txt" | tr -s ' ' | tr '\n' ' ')"
  fi
done
[[ $status == 0 ]] && echo "rdma vm dlm: PASS: dlm_controld on rtotem in $nodes VMs; lockspace rtotem held by all $nodes, then recovered on nodes 1 and 2 after node $nodes's rtotemd was killed with kill -9"
exit $status
