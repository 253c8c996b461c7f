#!/usr/bin/env bash
# rtotem-bench over rtotemd on RDMA against the same over UDP, in one run of 3 Soft-RoCE VMs
# (tests/rdmalab): for each size the runs alternate rdma, UDP, rdma, UDP in the same VMs
# (bench/rdma_vm_node.sh), every node sending. Prints per run the msgs/s delivered at each node,
# per size the ratio rdma/UDP (mean of the runs), and from node 1's link counters around each rdma
# run the verbs work per delivered message. The VMs are emulated (qemu TCG without KVM here):
# the numbers are functional, only the same-run ratio means anything. Builds nothing. Needs root,
# qemu and a prepared lab (`tests/rdmalab/rxe-vm setup`); exit 3 when the lab cannot start, 1 if
# a run fails or the nodes of a run delivered different histories.
#
# Environment: RTOTEM_BUILD_DIR (default build), RTOTEM_BENCH_DURATION (seconds per run, default
# 10), RTOTEM_BENCH_SIZES (default "64 1024 16384"), RTOTEM_BENCH_UDP (udp: IP multicast, the
# default, as rdma multicasts too; or udpu), RTOTEM_BENCH_KEEP=1 keeps the VMs' output.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
build=$(readlink -f "${RTOTEM_BUILD_DIR:-build}")
duration=${RTOTEM_BENCH_DURATION:-10}
sizes=${RTOTEM_BENCH_SIZES:-64 1024 16384}
udp=${RTOTEM_BENCH_UDP:-udp}
[[ $udp == udp || $udp == udpu ]] || { echo "rdma_vm: RTOTEM_BENCH_UDP is udp or udpu" >&2; exit 2; }
for f in bench/rtotem-bench src/daemon/rtotemd src/client/rtotemctl; do
  [[ -x "$build/$f" ]] || { echo "rdma_vm: $build/$f is missing: build $build first" >&2; exit 1; }
done
work=$(mktemp -d /tmp/rtotem-rdma-vm.XXXXXX)
# rxe-vm kills its VMs itself, on timeout and on INT/TERM.
trap '[[ "${RTOTEM_BENCH_KEEP:-0}" == 1 ]] && echo "rdma_vm: kept $work" || rm -rf "$work"' EXIT

runs=$(($(wc -w <<<"$sizes") * 4))
limit=$((runs * (duration + 120) + 300))  # ring, bench and its end markers, stop; boot and margin
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
echo "machine: $(nproc) host CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: RTOTEM_BENCH_DURATION=$duration RTOTEM_BENCH_SIZES=\"$sizes\" RTOTEM_BENCH_UDP=$udp bench/rdma_vm.sh"
set +e  # rxe-vm's first lines say whether the VMs run on KVM or TCG, and why
tests/rdmalab/rxe-vm run --nodes 3 --timeout "$limit" --workdir "$work/vm" -- \
  "$PWD/bench/rdma_vm_node.sh" "$build" "$duration" "$sizes" "$udp"
rc=$?
set -e
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ $rc == 3 ]]; then echo "rdma_vm: the Soft-RoCE lab cannot start here (tests/rdmalab/rxe-vm doctor says why)"; exit 3; fi
if [[ $rc != 0 ]]; then
  for n in 0 1 2; do echo "--- node$n"; tail -20 "$work/vm/node$n/stdout" "$work/vm/node$n/stderr" 2>/dev/null; done
  echo "rdma_vm: FAIL: rxe-vm exit $rc"
  exit 1
fi
python3 bench/rdma_vm_report.py "$work/vm" "$sizes" "$udp"
