#!/usr/bin/env bash
# What each Soft-RoCE VM of bench/rdma_vm.sh runs: for each size, four runs in the order rdma,
# UDP, rdma, UDP; each run starts rtotemd on that transport (the same config otherwise), waits for
# the ring of all nodes, runs one rtotem-bench (--senders RXE_NODES) against it, and stops it.
# Every node writes, per run NAME (TRANSPORT-SIZE-REP), into $RXE_OUT: NAME.json (rtotem-bench),
# NAME.err, NAME.log (rtotemd) and NAME.before.json / NAME.after.json (`rtotemctl --json stats`
# just before and after the run, every node's bench done). Every wait is bounded; a failed run
# stops the script (exit 1), its daemon stopped.
# Usage (inside rxe-vm): rdma_vm_node.sh BUILD_DIR DURATION_S "SIZE..." UDP_TRANSPORT(udp|udpu)
set -euo pipefail
build=${1:?build dir}
duration=${2:?seconds per run}
sizes=${3:?sizes}
udp=${4:?udp or udpu}
node=$((RXE_NODE + 1))
state=$(mktemp -d /tmp/rtotem-state.XXXXXX)  # one per node for all runs, as a restarted node has
rtotemctl=$build/src/client/rtotemctl
ctl() { timeout 10 "$rtotemctl" "$@"; }
say() { echo "node $node: $*"; }

write_conf() {  # write_conf TRANSPORT FILE: the cluster's config, only the transport differs
  {
    # token 5000: emulated CPUs stall for hundreds of ms under load; the ring must not re-form
    # during a run. 512 KiB messages at most, as when BENCHMARKS.md's lab numbers were measured
    # (rtotemd then needed it at rxe's 1024-byte port MTU; it now sizes its pools for 1 MiB).
    printf 'totem {\n  cluster_name: rdma-vm-bench\n  transport: %s\n  token: 5000\n  token_coefficient: 0\n' "$1"
    printf '  max_message_size: 524288\n'
    [[ $1 == rdma ]] && printf '  fallback: no\n'
    printf '  interface {\n    mcastaddr: 239.192.77.%d\n  }\n}\nnodelist {\n' "$([[ $1 == rdma ]] && echo 1 || echo 2)"
    local i=1 ip
    for ip in $RXE_IPS; do printf '  node {\n    nodeid: %d\n    ring0_addr: %s\n  }\n' "$i" "$ip"; i=$((i + 1)); done
    printf '}\n'
  } >"$2"
}

daemon=""
stop_daemon() {  # TERM, then KILL after 20 s
  [[ -n "$daemon" ]] || return 0
  kill -TERM "$daemon" 2>/dev/null || true
  timeout 20 tail --pid="$daemon" -f /dev/null || kill -KILL "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  daemon=""
}
trap stop_daemon EXIT

wait_ring() {  # until operational on a ring of every node (120 s)
  local want status t
  want=$(seq -s ' ' 1 "$RXE_NODES")
  for ((t = 0; t < 600; t++)); do
    status=$(ctl status 2>/dev/null || true)
    grep -qx 'state: operational' <<<"$status" &&
      [[ "$(sed -n 's/^members: //p' <<<"$status" | tr -d ',')" == "$want" ]] && return 0
    kill -0 "$daemon" 2>/dev/null || { say "rtotemd exited"; return 1; }
    sleep 0.2
  done
  say "no ring of [$want] after 120 s"
  return 1
}

run() {  # run TRANSPORT SIZE REP
  local name=$1-$2-$3 rc=0
  write_conf "$1" "$RXE_OUT/$name.conf"
  "$build/src/daemon/rtotemd" -f -c "$RXE_OUT/$name.conf" --nodeid "$node" --state-dir "$state" \
    >"$RXE_OUT/$name.log" 2>&1 &
  daemon=$!
  wait_ring || { tail -20 "$RXE_OUT/$name.log"; return 1; }
  "$RXE_VM" barrier "$name-ring" 180
  ctl --json stats >"$RXE_OUT/$name.before.json"
  "$RXE_VM" barrier "$name-counted" 60
  # The bench's own waits (members 60 s, end markers 30 s) plus room: bounded whatever happens.
  timeout --kill-after=5 $((duration + 150)) "$build/bench/rtotem-bench" --group "bench-$2" --size "$2" \
    --duration "$duration" --senders "$RXE_NODES" --json >"$RXE_OUT/$name.json" 2>"$RXE_OUT/$name.err" || rc=$?
  "$RXE_VM" barrier "$name-done" $((duration + 180))
  ctl --json stats >"$RXE_OUT/$name.after.json"
  stop_daemon
  "$RXE_VM" barrier "$name-stopped" 60
  say "$name: rtotem-bench exit $rc: $(head -c 300 "$RXE_OUT/$name.json")"
  return "$rc"
}

for size in $sizes; do
  for rep in 1 2; do
    run rdma "$size" "$rep"
    run "$udp" "$size" "$rep"
  done
done
