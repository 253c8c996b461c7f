#!/usr/bin/env bash
# bench/rdma_hw.sh as a functional test. On this host (no RDMA device) it must exit 77 naming the
# reason; in one Soft-RoCE VM (rxe0, an active RoCE port) it must run its whole matrix, 3 rtotemd
# over the device and over UDP at 64 B, 1 KiB, 64 KiB and 1 MiB, perftest beside them, and print
# its table: a row per run with equal histories at every node, the ratios, and PASS. Timings
# under TCG mean nothing; the table's shape and the runs' outcomes are what is checked.
# Usage: vm_rdma_hw_test.sh BUILD_DIR. Exit 77 (SKIP) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_rdma_hw_test.sh BUILD_DIR}")
repo=$(readlink -f "$here/../..")
name="rdma hw bench"
status=0
fail() { echo "$name: FAIL: $*"; status=1; }

if [[ -z "$(find /sys/class/infiniband -mindepth 1 -maxdepth 1 2>/dev/null)" ]]; then
  rc=0
  out=$(RTOTEM_BUILD_DIR=$build timeout 60 "$repo/bench/rdma_hw.sh" 2>&1) || rc=$?
  if [[ $rc != 77 ]] || ! grep -q '^rdma_hw: SKIP: no RDMA device' <<<"$out"; then
    fail "without a device: exit $rc, not 77 with the reason: $out"
  fi
  echo "host without a device: exit $rc: $out"
fi

work=$(mktemp -d /tmp/rtotem-vm-rdma-hw.XXXXXX)
trap 'rm -rf "$work"' EXIT  # rxe-vm kills its VMs itself, on timeout and on INT/TERM
sizes="64 1024 65536 1048576"
lab_run "$name" --quiet --nodes 1 --mem 2048 --timeout 900 --workdir "$work/vm" -- \
  env RTOTEM_BUILD_DIR="$build" RTOTEM_HW_DURATION=2 RTOTEM_HW_REPS=1 RTOTEM_HW_TOKEN=5000 \
  RTOTEM_HW_LAT_BYTES=1048576 RTOTEM_HW_SIZES="$sizes" \
  "$repo/bench/rdma_hw.sh" || true
out=$work/vm/node0
lab_node_done "$out" console.log || fail "the bench in the VM"
table=$out/stdout
grep -q '^device: rxe0 port 1 ' "$table" || fail "no device line for rxe0"
grep -q '^ *hca_id:' "$table" || fail "no ibv_devinfo in the header"
for size in $sizes; do
  for transport in rdma udp; do
    grep -Eq "^\| $transport \| $size \| 1 \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+ \| [0-9]+ \| yes \|$" "$table" ||
      fail "no $transport row at $size B with every node's history equal"
  done
  # The ratios, and perftest's RC figures on rxe (numbers, not "-").
  grep -Eq "^\| $size \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$" "$table" ||
    fail "no ratio and perftest row at $size B"
done
grep -qx 'rdma_hw: PASS' "$table" || fail "the bench did not say PASS"
[[ $status == 0 ]] && echo "$name: PASS: bench/rdma_hw.sh ran 3 rtotemd over rxe0 and over UDP at $sizes B in one VM, with perftest, and printed its table"
exit $status
