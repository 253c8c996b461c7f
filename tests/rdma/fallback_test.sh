#!/usr/bin/env bash
# transport rdma on a host without a usable RDMA device (no rdma in the kernel, or no active port):
# with fallback yes (the default) rtotemd runs on UDP multicast, logs exactly one warning line
# about it and serves a client; with fallback no it refuses to start and says why. On a host that
# HAS an active RDMA port this is not the case under test: SKIP (exit 77), said loudly.
set -euo pipefail
: "${RTOTEMD:?path to rtotemd}" "${RTOTEMCTL:?path to rtotemctl}"

work=$(mktemp -d)
daemon_pid=""
cleanup() {
  [[ -n "$daemon_pid" ]] && kill -KILL "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "rdma fallback: FAIL: $*" >&2; [[ -f "$work/rtotemd.log" ]] && tail -20 "$work/rtotemd.log" >&2; exit 1; }

if compgen -G '/sys/class/infiniband/*/ports/*/state' >/dev/null &&
  grep -qs ACTIVE /sys/class/infiniband/*/ports/*/state; then
  echo "rdma fallback: SKIP: this host has an active RDMA port, so it is not the no-device case"
  exit 77
fi

port=$((30000 + $$ % 20000))
write_conf() {  # write_conf FILE FALLBACK
  cat >"$1" <<CONF
totem {
  cluster_name: rdma-fallback
  transport: rdma
  fallback: $2
  token: 1000
  interface {
    mcastaddr: 239.192.77.1
    mcastport: $port
  }
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: 127.0.0.1
  }
}
CONF
}

# fallback no: refused, with the reason and the key that decided it.
write_conf "$work/no.conf" no
if "$RTOTEMD" -f -c "$work/no.conf" --state-dir "$work/state-no" >"$work/no.log" 2>&1; then
  fail "fallback no: rtotemd started without an RDMA device"
fi
grep -q "transport rdma: no RDMA device.*not starting (totem.fallback is no)" "$work/no.log" ||
  fail "fallback no: no clear refusal in: $(cat "$work/no.log")"
echo "check: fallback no refuses: $(grep -o 'transport rdma: .*' "$work/no.log")"

# fallback yes: runs on udp, one warning line, and a client sees it operational.
write_conf "$work/yes.conf" yes
ipc="rtotem-rdma-fallback-$$"
"$RTOTEMD" -f -c "$work/yes.conf" --ipc-name "$ipc" --state-dir "$work/state-yes" >"$work/rtotemd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do
  "$RTOTEMCTL" --ipc-name "$ipc" status 2>/dev/null | grep -qx 'state: operational' && break
  sleep 0.2
done
"$RTOTEMCTL" --ipc-name "$ipc" status | grep -qx 'state: operational' || fail "fallback yes: not operational"
warnings=$(grep -c "transport rdma: .*running on udp multicast 239.192.77.1:$port instead" "$work/rtotemd.log" || true)
[[ "$warnings" == 1 ]] || fail "fallback yes: $warnings fallback warning lines, want exactly 1"
echo "check: fallback yes runs on udp: $(grep -o 'transport rdma: .*' "$work/rtotemd.log")"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "rtotemd did not exit cleanly on SIGTERM"
daemon_pid=""
echo "rdma fallback: PASS"
