#!/usr/bin/env bash
# In one Soft-RoCE VM (tests/rdmalab): rtotemd's start-up probe finds the real rxe device, so
# transport rdma runs on it (rtotemd -t names the device). Then the case of a usable device on
# which the RDMA backend cannot open: the node's address is on an interface without RDMA (a dummy
# link), so the backend fails: with fallback yes rtotemd runs on UDP multicast with exactly one
# warning line and reaches a ring; with fallback no it refuses to start and says why. The host's
# no-device case is tests/rdma/fallback_test.sh.
# Usage: vm_probe_test.sh BUILD_DIR. Exit 77 (SKIP, with the reason) when the lab cannot start.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_probe_test.sh BUILD_DIR}")
work=$(mktemp -d /tmp/rtotem-vm-probe.XXXXXX)
trap 'rm -rf "$work"' EXIT

write_conf() {  # write_conf FILE ADDRESS FALLBACK
  cat >"$1" <<CONF
totem {
  cluster_name: vm-probe
  transport: rdma
  fallback: $3
  token: 2000
  interface {
    mcastaddr: 239.192.77.2
  }
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: $2
  }
}
CONF
}
write_conf "$work/rdma.conf" 10.77.0.1 yes
write_conf "$work/no-rdma-yes.conf" 10.99.0.1 yes
write_conf "$work/no-rdma-no.conf" 10.99.0.1 no

# In the VM: -t on the rxe address; then an address on a dummy link (no RDMA device behind it).
cat >"$work/in-vm.sh" <<'VM'
set -u
build=$1 work=$2
"$build/src/daemon/rtotemd" -t -c "$work/rdma.conf" --nodeid 1 >"$RXE_OUT/check.txt" 2>&1
echo "check exit $?" >>"$RXE_OUT/check.txt"
modprobe dummy && ip link add rdmaless type dummy && ip addr add 10.99.0.1/24 dev rdmaless && ip link set rdmaless up
"$build/src/daemon/rtotemd" -f -c "$work/no-rdma-no.conf" --nodeid 1 --state-dir /tmp/state-no >"$RXE_OUT/no.txt" 2>&1
echo "exit $?" >>"$RXE_OUT/no.txt"
"$build/src/daemon/rtotemd" -f -c "$work/no-rdma-yes.conf" --nodeid 1 --state-dir /tmp/state-yes >"$RXE_OUT/yes.txt" 2>&1 &
daemon=$!
for _ in $(seq 150); do
  "$build/src/client/rtotemctl" status 2>/dev/null | grep -qx 'state: operational' && break
  sleep 0.2
done
"$build/src/client/rtotemctl" status >"$RXE_OUT/yes-status.txt" 2>&1
kill -TERM $daemon; wait $daemon
VM

# Whatever rxe-vm's status, the nodes' results below say what passed and what failed.
lab_run "rdma vm probe" --quiet --nodes 1 --timeout 240 --workdir "$work/vm" -- \
  bash "$work/in-vm.sh" "$build" "$work" || true
out="$work/vm/node0"
[[ -f "$out/exit_code" ]] || { echo "rdma vm probe: FAIL: the VM left no result"; tail -20 "$out/console.log"; exit 1; }
status=0
fail() { echo "rdma vm probe: FAIL: $*"; status=1; }
echo "check: $(cat "$out/check.txt")"
grep -q "transport rdma, this node 1 (10.77.0.1 on rxe0 port 1)" "$out/check.txt" ||
  fail "rtotemd -t did not choose rdma on rxe0 port 1"
echo "fallback no: $(grep -o 'transport rdma: .*' "$out/no.txt")"
grep -q "transport rdma: rdma: .*10.99.0.1.*not starting (totem.fallback is no)" "$out/no.txt" ||
  fail "fallback no did not refuse with the reason: $(cat "$out/no.txt")"
grep -qx "exit 1" "$out/no.txt" || fail "fallback no: rtotemd did not exit 1"
echo "fallback yes: $(grep -o 'transport rdma: .*' "$out/yes.txt")"
warnings=$(grep -c "transport rdma: rdma: .*running on udp multicast 239.192.77.2:5405 instead" "$out/yes.txt" || true)
[[ "$warnings" == 1 ]] || fail "fallback yes: $warnings fallback warning lines, want exactly 1: $(cat "$out/yes.txt")"
grep -qx 'state: operational' "$out/yes-status.txt" || fail "fallback yes: not operational: $(cat "$out/yes-status.txt")"
grep -qx 'transport: udp' "$out/yes-status.txt" || fail "fallback yes: not on udp: $(cat "$out/yes-status.txt")"
[[ $status == 0 ]] && echo "rdma vm probe: PASS"
exit $status
