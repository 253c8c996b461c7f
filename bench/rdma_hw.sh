#!/usr/bin/env bash
# rtotem on a host's RDMA device: N rtotemd on this host over the device (RDMA UD, multicast with
# loopback: each node its own address on the device's netdev, so its own RoCE v2 GID), against the
# same N over UDP multicast on those addresses, the runs alternating rdma, udp, rdma, udp per size.
# Per run: msgs/s and MB/s delivered (all nodes sending), CPU per delivered message (every daemon
# and every rtotem-bench, user + system), and p50/p99 latency of one sender that is not node 1.
# Then perftest's ib_send_bw / ib_send_lat on the device (RC, loopback) as the physical limit,
# when installed. Prints the device (ibv_devinfo), its link speed, and one BENCHMARKS.md-ready
# table with the rdma/udp ratios.
#
# Needs root (it adds the addresses, /32, and removes them on exit), a build (RTOTEM_BUILD_DIR,
# default build) and an RDMA device with an active RoCE port. Exit 77 with the reason when there
# is none; 1 when a run fails or the nodes of a run delivered different histories.
#
# Environment: RTOTEM_BUILD_DIR; RTOTEM_HW_DEVICE (default: the first device with an active RoCE
# port); RTOTEM_HW_NODES (3); RTOTEM_HW_NET (the addresses' first three octets, 198.18.0: RFC
# 2544's benchmarking range); RTOTEM_HW_SIZES ("64 1024 65536 1048576"); RTOTEM_HW_DURATION
# (seconds per run, 8); RTOTEM_HW_REPS (2); RTOTEM_HW_TOKEN (token ms, 3000); RTOTEM_HW_LAT_BYTES
# (the latency run's pace: 1000 messages/s, or fewer to stay within these bytes/s; 16 MiB);
# RTOTEM_HW_KEEP=1 keeps the work directory (under $TMPDIR, else /tmp).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
# shellcheck source=scripts/lib/cluster.sh
source scripts/lib/cluster.sh

skip() { echo "rdma_hw: SKIP: $*"; exit 77; }
fail() { echo "rdma_hw: FAIL: $*" >&2; exit 1; }
build=$(readlink -f "${RTOTEM_BUILD_DIR:-build}")
nodes=${RTOTEM_HW_NODES:-3}
net=${RTOTEM_HW_NET:-198.18.0}
sizes=${RTOTEM_HW_SIZES:-64 1024 65536 1048576}
duration=${RTOTEM_HW_DURATION:-8}
reps=${RTOTEM_HW_REPS:-2}
token=${RTOTEM_HW_TOKEN:-3000}
lat_bytes=${RTOTEM_HW_LAT_BYTES:-16777216}
if ! [[ $nodes =~ ^[0-9]+$ ]] || ((nodes < 2 || nodes > 16)); then fail "RTOTEM_HW_NODES is 2 to 16"; fi
for f in bench/rtotem-bench src/daemon/rtotemd src/client/rtotemctl; do
  [[ -x "$build/$f" ]] || fail "$build/$f is missing: build $build first"
done

# --- the device ---------------------------------------------------------------------------------
sys=/sys/class/infiniband
devices=$(find "$sys" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort || true)
[[ -n $devices ]] || skip "no RDMA device (ibv_devices lists none)"
device="" port="" netdev=""
for dev in ${RTOTEM_HW_DEVICE:-$devices}; do
  for p in "$sys/$dev"/ports/*; do
    [[ -r $p/state ]] || continue
    grep -q ACTIVE "$p/state" || continue
    [[ "$(cat "$p/link_layer")" == Ethernet ]] || continue
    nd=$(cat "$p"/gid_attrs/ndevs/0 2>/dev/null || true)
    [[ -n $nd ]] || nd=$(rdma link show "$dev/${p##*/}" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
    [[ -n $nd ]] || continue
    device=$dev port=${p##*/} netdev=$nd
    break 2
  done
done
[[ -n $device ]] || skip "no RDMA device with an active RoCE port (rtotem's backend runs RoCE v2 over IPv4): ${devices//$'\n'/ }"
((EUID == 0)) || skip "adding the nodes' addresses to $netdev needs root"

work=$(mktemp -d "${TMPDIR:-/tmp}/rtotem-rdma-hw.XXXXXX")
added=()
BENCH_PIDS=()
# shellcheck disable=SC2317  # reached through the trap
finish() {
  local pid a
  for pid in "${BENCH_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${BENCH_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  cluster_cleanup
  for a in "${added[@]}"; do ip addr del "$a/32" dev "$netdev" 2>/dev/null || true; done
  if [[ "${RTOTEM_HW_KEEP:-0}" == 1 ]]; then echo "rdma_hw: kept $work"; else rm -rf "$work"; fi
}
trap finish EXIT

# Each node's address, and its RoCE v2 GID (::ffff:a.b.c.d) in the port's table before it is used.
for ((i = 1; i <= nodes; i++)); do
  a=$net.$i
  if ! ip -4 -o addr show dev "$netdev" | grep -qF " $a/"; then
    ip addr add "$a/32" dev "$netdev" || fail "cannot add $a to $netdev"
    added+=("$a")
  fi
done
gid_of() {  # gid_of A.B.C.D: its RoCE v2 GID as sysfs prints it
  local -a o
  IFS=. read -ra o <<<"$1"
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[@]}"
}
for ((i = 1; i <= nodes; i++)); do
  want=$(gid_of "$net.$i")
  for ((t = 0; t < 50; t++)); do
    grep -qxF "$want" "$sys/$device/ports/$port"/gids/* 2>/dev/null && break
    sleep 0.1
  done
  grep -qxF "$want" "$sys/$device/ports/$port"/gids/* 2>/dev/null || fail "no GID for $net.$i on $device port $port"
done

# --- the runs -----------------------------------------------------------------------------------
CLUSTER_BIN=$build
CLUSTER_DIR=$work
CLUSTER_NAME=rtotem-hw-$$
port_udp=$((30000 + $$ % 20000))

write_conf() {  # write_conf TRANSPORT FILE
  {
    printf 'totem {\n  cluster_name: rtotem-hw-%s\n  transport: %s\n  token: %s\n  token_coefficient: 0\n' "$$" "$1" "$token"
    printf '  max_message_size: 2097152\n'  # 1 MiB of data and the bench's header
    [[ $1 == rdma ]] && printf '  fallback: no\n'
    printf '  interface {\n    mcastaddr: 239.192.78.%d\n    mcastport: %d\n  }\n}\nnodelist {\n' \
      "$([[ $1 == rdma ]] && echo 1 || echo 2)" "$port_udp"
    local i
    for ((i = 1; i <= nodes; i++)); do printf '  node {\n    nodeid: %d\n    ring0_addr: %s.%d\n  }\n' "$i" "$net" "$i"; done
    printf '}\n'
  } >"$2"
}

# daemon_ticks: utime + stime of every daemon (all threads), in clock ticks.
daemon_ticks() {
  local node line total=0
  local -a f
  for node in "${!CLUSTER_PIDS[@]}"; do
    read -r line <"/proc/${CLUSTER_PIDS[$node]}/stat"
    read -ra f <<<"${line##*) }"
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}

# bench NAME NODE ARGS...: one rtotem-bench in the background; its JSON in NAME-NODE.json, and the
# CPU it used (user + system, in seconds) in NAME-NODE.cpu, from its shell's `times`.
bench() {
  local name=$1 node=$2
  shift 2
  (
    rc=0
    timeout --kill-after=5 $((duration + 150)) "$build/bench/rtotem-bench" --ipc-name "$(cluster_ipc "$node")" "$@" \
      --json >"$work/$name-$node.json" 2>"$work/$name-$node.err" || rc=$?
    times | tail -1 | awk '{ gsub(/[ms]/, " "); split($0, v, " "); print v[1] * 60 + v[2] + v[3] * 60 + v[4] }' \
      >"$work/$name-$node.cpu"
    exit $rc
  ) &
  BENCH_PIDS+=("$!")
}

wait_benches() {  # wait_benches NAME: every bench of the run done, 0 if each exited 0
  local pid status=0 f
  for pid in "${BENCH_PIDS[@]}"; do wait "$pid" || status=$?; done
  BENCH_PIDS=()
  if ((status != 0)); then
    for f in "$work/$1"-*.err; do sed "s|^|  ${f##*/}: |" "$f" >&2; done
    for f in "$work"/node-*.log; do tail -5 "$f" | sed "s|^|  ${f##*/}: |" >&2; done
    fail "run $1: rtotem-bench exited $status"
  fi
}

latency_rate() {  # messages/s for the latency run at SIZE: 1000, or fewer to stay within lat_bytes/s
  local r=$((lat_bytes / $1))
  ((r > 1000)) && r=1000
  ((r < 2)) && r=2
  echo "$r"
}

run() {  # run TRANSPORT SIZE REP
  local transport=$1 size=$2 rep=$3 name=$1-$2-$3 node before after
  CLUSTER_CONF=$work/$name.conf
  write_conf "$transport" "$CLUSTER_CONF"
  for ((node = 1; node <= nodes; node++)); do cluster_start "$node"; done
  for ((node = 1; node <= nodes; node++)); do
    cluster_wait_members "$node" "$(seq -s ' ' 1 "$nodes")" 60 || fail "$name: no ring of $nodes (logs: $work)"
  done
  before=$(daemon_ticks)
  for ((node = 1; node <= nodes; node++)); do
    bench "tp-$name" "$node" --group "tp-$size" --size "$size" --duration "$duration" --senders "$nodes"
  done
  wait_benches "tp-$name"
  after=$(daemon_ticks)
  echo "$((after - before))" >"$work/tp-$name.daemon-ticks"
  bench "lat-$name" "$nodes" --group "lat-$size" --mode latency --size "$size" --rate "$(latency_rate "$size")" \
    --duration "$duration"
  wait_benches "lat-$name"
  for ((node = 1; node <= nodes; node++)); do cluster_kill "$node" TERM; done
  cat "$work"/node-*.log >>"$work/$name.log"
  rm -f "$work"/node-*.log
  echo "rdma_hw: $name done" >&2
}

# perftest at SIZE on node 1's GID (the path rtotem's traffic takes), RC, loopback: the client's
# output in perf-bw-SIZE.txt and perf-lat-SIZE.txt, which the report reads; none if not installed.
perftest() {
  local size=$1 kind gid server
  command -v ib_send_bw >/dev/null && command -v ib_send_lat >/dev/null || return 0
  gid=$(grep -lxF "$(gid_of "$net.1")" "$sys/$device/ports/$port"/gids/* | head -1 || true)
  gid=${gid##*/}
  for kind in bw lat; do
    local -a args=(-d "$device" -i "$port" -x "$gid" -c RC -s "$size" -D 2 -F)
    [[ $kind == bw ]] && args+=(--report_gbits)
    timeout 60 "ib_send_$kind" "${args[@]}" >"$work/perf-$kind-$size-server.txt" 2>&1 &
    server=$!
    sleep 1
    timeout 60 "ib_send_$kind" "${args[@]}" "$net.1" >"$work/perf-$kind-$size.txt" 2>&1 || true
    wait "$server" 2>/dev/null || true
  done
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "device: $device port $port (netdev $netdev), link $(cat "$sys/$device/ports/$port/rate" 2>/dev/null || echo unknown), active MTU $(ibv_devinfo -d "$device" -i "$port" 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*//p' | head -1)"
ibv_devinfo -d "$device" -i "$port" 2>/dev/null | sed 's/^/    /' || true
echo "command: RTOTEM_HW_NODES=$nodes RTOTEM_HW_SIZES=\"$sizes\" RTOTEM_HW_DURATION=$duration RTOTEM_HW_REPS=$reps RTOTEM_HW_TOKEN=$token RTOTEM_HW_LAT_BYTES=$lat_bytes bench/rdma_hw.sh"
for size in $sizes; do
  for ((rep = 1; rep <= reps; rep++)); do
    run rdma "$size" "$rep"
    run udp "$size" "$rep"
  done
  perftest "$size"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/rdma_hw_report.py "$work" "$nodes" "$sizes" "$reps" "$(getconf CLK_TCK)"
