#!/usr/bin/env bash
# rtotem-bench on a 3-node cluster on this host (rtotemd on 127.0.0.1, .2 and .3, UDP unicast):
# throughput with all three nodes sending, at 64 B and at 1 KiB (the three order hashes must be
# equal), then latency at 1 KiB (one sender, 1000 msg/s). Prints a markdown table row per run and
# node, with the exact command. Builds nothing. Exits non-zero if a run fails or the hashes differ.
#
# Environment: RTOTEM_BUILD_DIR (default build), RTOTEM_BENCH_DURATION (seconds per run, default
# 10), RTOTEM_BENCH_PORT (the cluster's UDP port, default one derived from this script's pid).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
# shellcheck source=scripts/lib/cluster.sh
source scripts/lib/cluster.sh

build_dir="${RTOTEM_BUILD_DIR:-build}"
duration="${RTOTEM_BENCH_DURATION:-10}"
latency_rate=1000
bench="$build_dir/bench/rtotem-bench"
for f in "$bench" "$build_dir/src/daemon/rtotemd" "$build_dir/src/client/rtotemctl"; do
  [[ -x "$f" ]] || { echo "loopback: $f is missing: build $build_dir first" >&2; exit 1; }
done

CLUSTER_BIN="$build_dir"
CLUSTER_DIR="$(mktemp -d)"
CLUSTER_NAME="rtotem-bench-$$"
BENCH_PIDS=()  # rtotem-bench instances (under timeout) of the run in progress
# shellcheck disable=SC2317  # reached through the trap
finish() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done  # timeout passes it on
  for pid in "${BENCH_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  cluster_cleanup
  rm -rf "$CLUSTER_DIR"
}
trap finish EXIT
fail() { echo "loopback: FAIL: $*" >&2; exit 1; }

# The demo's configuration with this run's own port and cluster name, so that another cluster on
# this host (the demo, a test) neither collides with it nor joins it.
port="${RTOTEM_BENCH_PORT:-$((30000 + $$ % 20000))}"
CLUSTER_CONF="$CLUSTER_DIR/bench-3node.conf"
sed -e "s/^\(\s*mcastport:\).*/\1 $port/" -e "s/^\(\s*cluster_name:\).*/\1 $CLUSTER_NAME/" \
  conf/demo-3node.conf >"$CLUSTER_CONF"
grep -q "mcastport: $port" "$CLUSTER_CONF" || fail "could not set the port in $CLUSTER_CONF"

for node in 1 2 3; do cluster_start "$node"; done
for node in 1 2 3; do cluster_wait_members "$node" "1 2 3" 30 || fail "no ring of 3 (logs: $CLUSTER_DIR)"; done

# run NAME NODES ARGS...: rtotem-bench with ARGS on each of NODES at once; output in
# $CLUSTER_DIR/NAME-NODE.{json,err}, the command of each in NAME-NODE.cmd.
run() {
  local name=$1 nodes=$2 node pid status=0
  shift 2
  BENCH_PIDS=()
  for node in $nodes; do
    local cmd=("$bench" --ipc-name "$(cluster_ipc "$node")" "$@" --json)
    echo "${cmd[*]}" >"$CLUSTER_DIR/$name-$node.cmd"
    # Bounded whatever happens: the bench's own waits (members, end markers) plus room.
    timeout --kill-after=5 $((duration + 150)) "${cmd[@]}" \
      >"$CLUSTER_DIR/$name-$node.json" 2>"$CLUSTER_DIR/$name-$node.err" &
    BENCH_PIDS+=("$!")
  done
  for pid in "${BENCH_PIDS[@]}"; do wait "$pid" || status=$?; done
  BENCH_PIDS=()
  if ((status != 0)); then
    for node in $nodes; do sed "s/^/  node $node: /" "$CLUSTER_DIR/$name-$node.err" >&2; done
    fail "run $name exited $status"
  fi
}

# table NAME NODES: one markdown row per node (a summary line into summary.txt); non-zero if the
# nodes delivered different histories (order hashes or counts differ).
table() {
  python3 - "$CLUSTER_DIR" "$1" "$2" <<'PY'
import json, sys
directory, name, nodes = sys.argv[1], sys.argv[2], sys.argv[3].split()
runs = []
for node in nodes:
    with open(f"{directory}/{name}-{node}.json") as f:
        r = json.load(f)
    with open(f"{directory}/{name}-{node}.cmd") as f:
        r["command"] = f.read().strip()
    runs.append(r)
for r in runs:
    latency = (f"{r['samples']} | {r['p50_us']:.0f} | {r['p99_us']:.0f} | {r['p999_us']:.0f} | {r['max_us']:.0f}"
               if "samples" in r else "- | - | - | - | -")
    print(f"| {name} | {r['size']} | {r['node']} | {r['messages_sent']} | {r['eagain']} | {r['messages_delivered']} | "
          f"{r['msgs_per_s']:.0f} | {r['mb_per_s']:.1f} | {r['order_hash']} | {r['fifo_violations']} | "
          f"{latency} | `{r['command']}` |")
hashes = {r["order_hash"] for r in runs}
delivered = {r["messages_delivered"] for r in runs}
total = sum(r["msgs_per_s"] for r in runs)
with open(f"{directory}/summary.txt", "a") as f:
    print(f"{name}: order hashes equal: {'yes' if len(hashes) == 1 else 'NO'}; "
          f"messages delivered equal: {'yes' if len(delivered) == 1 else 'NO'}; "
          f"deliveries/s, all nodes: {total:.0f}", file=f)
sys.exit(0 if len(hashes) == 1 and len(delivered) == 1 else 1)
PY
}

echo "load before: $(uptime)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' + uncommitted changes'); $(nproc) CPUs"
echo "| run | size B | node | sent | EAGAIN | delivered | msgs/s | MB/s | order hash | FIFO violations | samples | p50 µs | p99 µs | p99.9 µs | max µs | command |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"
for size in 64 1024; do
  run "throughput-$size" "1 2 3" --group "bench-$size" --size "$size" --duration "$duration" --senders 3
  table "throughput-$size" "1 2 3" ||
    { cat "$CLUSTER_DIR/summary.txt"; fail "throughput at $size B: the nodes delivered different histories"; }
done
run latency-1024 1 --group latency --mode latency --size 1024 --rate "$latency_rate" --duration "$duration"
table latency-1024 1
samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$CLUSTER_DIR/latency-1024-1.json")
((samples == latency_rate * duration)) || fail "latency: $samples samples, not $((latency_rate * duration))"
cat "$CLUSTER_DIR/summary.txt"
# What the daemons found worth a warning during the runs (not the refusals while the ring formed).
grep -h -i -e warning -e error "$CLUSTER_DIR"/node-*.log | grep -v 'is not ready' | sed 's/^/daemon: /' || true
echo "load after: $(uptime)"
echo "loopback: PASS"
