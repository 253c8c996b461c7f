#!/usr/bin/env bash
# The RDMA backend's tests that need a device (rdma_backend_device_test), in one Soft-RoCE VM with
# two rxe devices on one L2 segment (tests/rdmalab): node 1 on rxe0, node 2 on rxe1.
# Usage: vm_backend_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_backend_test.sh BUILD_DIR}")
work=$(mktemp -d /tmp/rtotem-vm-backend.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VM itself, on timeout and on INT/TERM

# Whatever rxe-vm's status, the node's result below says what passed and what failed.
lab_run "rdma vm backend" --quiet --nodes 1 --nics 2 --timeout 240 --workdir "$work/vm" -- \
  "$build/tests/rdma_backend_device_test" || true
out="$work/vm/node0"
cat "$out/stdout" "$out/stderr" 2>/dev/null || true
rc=$(cat "$out/exit_code" 2>/dev/null || echo none)
if [[ "$rc" != 0 ]]; then
  echo "rdma vm backend: FAIL: exit $rc"
  tail -20 "$out/console.log" 2>/dev/null
  exit 1
fi
# A GoogleTest binary whose tests skipped (no second device) exits 0 too: every test it lists here
# must have run and passed there.
tests=$("$build/tests/rdma_backend_device_test" --gtest_list_tests | grep -c '^  ')
if ! grep -q "^\[  PASSED  \] $tests tests\.$" "$out/stdout" || grep -q '^\[  SKIPPED \]' "$out/stdout"; then
  echo "rdma vm backend: FAIL: not all $tests tests ran and passed"
  exit 1
fi
echo "rdma vm backend: PASS"
