#!/usr/bin/env bash
# rtotem against Corosync 3 on the same machine, in the same run: N "hosts" as network namespaces on
# a bridge (lib/netns.sh), an N-node cluster of each system in turn on them (lib/systems.sh), and the
# very same client loop against both (rtotem-bench on librtotem, cpg-bench on libcpg: bench/
# group_bench_run.cpp); and rtotem once more with cpg-bench itself, the binary of Corosync's rows,
# on the drop-in libcpg (rtotem-cpg). Rows:
#   throughput   every node sends S-byte messages flat out for T s; msgs/s and MB/s delivered at
#                each node; every node's order hash and count must agree (else the run FAILS)
#   latency      node 1 (the representative) sends at a low fixed rate, the others receive;
#                send-to-self-delivery p50/p99/p99.9 (10,000 samples up to 16 KiB; fewer above,
#                where the rate must drop); then the same from node N, which is not
#   idle         each node in turn sends one 64-byte message every 250 ms (longer than either
#                system's token hold, so the ring is idle before each) for IDLE s; its
#                send-to-self-delivery p50/p90/max
#   idle CPU     no client: each daemon's CPU time (all threads, /proc schedstat) over IDLE_CPU s
#                of an idle ring, in µs per second
#   failure      kill -9 of node N's daemon; time until every survivor's client has the group
#                change (watch mode), with equal token (1000 ms) and consensus (1200 ms)
#   link failure configs with two links only: node 1 sends 1 KiB at 1000/s for 9 s; at 3 s node
#                N's link 0 is cut (its bridge port down, both ways), at 6 s restored; the longest
#                time between two deliveries at any node, and whether the ring changed; first the
#                same load without the cut (row "linksteady"), the control
#   costs        in the middle of each throughput run: CPU time (user + system, all threads) of
#                every daemon and of every client per delivered message; rtotem: node 1's sendmmsg
#                calls (link.tx_calls), datagrams (link.tx_packets), heap allocations per message
# With --noise, the throughput and latency rows run a second time in the same cluster, with one
# busy loop per CPU at normal priority in each node's namespace (row label "noise": "on").
# Configurations alternate (A B A B: every configuration once per repetition) and the report gives
# medians and ranges, so that a drift of the shared machine hits all of them alike. Results:
# OUT/results.jsonl (one line per client run), OUT/meta.txt, OUT/report.md (bench/compare/report.py).
#
# Usage: bench/compare/compare.sh [--quick] [--out DIR] [--nodes "3 5"] [--reps R] [--secs T]
#          [--sizes "64 1024 ..."] [--lat-sizes "..."] [--configs "system:transport:crypto:sched ..."]
#          [--baseline DIR] [--mtu M] [--noise] [--no-build]
#   --quick    N=3; sizes 64, 1 KiB, 64 KiB; 3 s runs; latency at 1 KiB; one repetition (< 10 min)
#   default    N=3 and 5; sizes 64 B .. 1 MiB; 5 s runs; two repetitions
#   configs    rtotem:udpu|udp|udpu-2links-active|udpu-2links-passive:off|on:other[:NETMTU] (2links:
#              a second udpu link on a second bridge, in that link mode; corosync's is
#              knet-2links-active|passive), rtotem-cpg:... (as rtotem:..., the client
#              cpg-bench on the drop-in libcpg), corosync:knet|udpu:off|on:rr|other (rr =
#              corosync's default real-time scheduling, other = sched_rr: no; rtotem's rr: rtotemd
#              started under chrt --rr 99, where corosync puts itself, its other SCHED_OTHER, as it
#              runs by default; NETMTU: rtotem's totem.netmtu, default 1400; crypto on: totem.crypto
#              with a key from rtotem-keygen, corosync's aes256/sha256), raw:udp:off:other (bare
#              sendmmsg/recvmmsg, a datagram per entry, rtotem-udp-wire, throughput only),
#              rtotem-base:... (as rtotem:..., with the --baseline build's binaries)
#   --baseline a second rtotem build (bench/compare/build-baseline.sh COMMIT DIR makes one of an
#              older commit), run as the configs rtotem-base:...: a same-run A/B of a change. Its
#              rows are named "rtotem baseline <git describe>", left out of "rtotem best", and
#              compared in a column "rtotem best / baseline best"; its failed runs are findings,
#              like Corosync's (listed in the report, not counted in the exit code)
#   --mtu      the hosts' link MTU (default 1500; 9000: jumbo frames, with a config's NETMTU to use
#              them, e.g. rtotem:udpu:off:other:8900)
#   --noise    the throughput and latency rows again under CPU load: nproc busy loops (nice 0) in
#              each node's namespace, the same for every system; the report's tables get a column
#              "noise"
#   --no-build run CMP_BUILD as it is (a tree mid-edit, or a build whose source is gone)
# Needs root (namespaces). Installs corosync and libcpg-dev if missing, and builds rtotem (release,
# invariant checks off) in CMP_BUILD (default build-bench). Everything it starts is killed and every
# namespace it made deleted when it exits, on failure or interrupt too. Exit 0: every rtotem run
# passed its checks (Corosync's and the baseline's failed runs are listed in the report and left
# out of its tables).
set -euo pipefail

CMP_REPO="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
here="$CMP_REPO/bench/compare"
CMP_BUILD="${CMP_BUILD:-$CMP_REPO/build-bench}"
CMP_PREFIX="rtcmp$$"
CMP_MTU=1500  # the hosts' links (lib/netns.sh)
# shellcheck source=bench/compare/lib/netns.sh
source "$here/lib/netns.sh"
# shellcheck source=bench/compare/lib/systems.sh
source "$here/lib/systems.sh"
# shellcheck source=scripts/lib/packages.sh
source "$CMP_REPO/scripts/lib/packages.sh"

out="$CMP_REPO/bench/compare/results/$(date +%Y%m%d-%H%M%S)"
nodes="3 5"
reps=2
secs=5
sizes="64 1024 16384 65536 1047552"  # 1047552: libcpg's largest atomic message (1 MiB - 1 KiB)
lat_sizes="64 1024 16384 65536 1047552"
configs="rtotem:udpu:off:other rtotem:udp:off:other rtotem-cpg:udpu:off:other corosync:knet:off:rr corosync:knet:off:other corosync:udpu:off:rr corosync:udpu:off:other corosync:knet:on:rr"
lat_seconds=10
idle_seconds=8
idle_rate=4  # one message every 250 ms: rtotem's hold is 190 ms at token 1000, corosync's 180
idle_cpu_seconds=10
mode=full
baseline=""
build=1
noise_modes=off
args=("$@")
while (($#)); do
  case "$1" in
    --quick)
      mode=quick nodes=3 reps=1 secs=3 sizes="64 1024 65536" lat_sizes=1024 lat_seconds=5 idle_seconds=5
      configs="rtotem:udpu:off:other rtotem:udp:off:other rtotem-cpg:udpu:off:other corosync:knet:off:rr corosync:knet:off:other corosync:udpu:off:other"
      shift ;;
    --out) out=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --secs) secs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --lat-sizes) lat_sizes=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --mtu) CMP_MTU=$2; shift 2 ;;
    --noise) noise_modes="off on"; shift ;;
    --no-build) build=""; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
if ! [[ $CMP_MTU =~ ^[0-9]+$ ]] || ((CMP_MTU < 1280 || CMP_MTU > 65535)); then
  echo "compare: --mtu '$CMP_MTU' is not an MTU from 1280 to 65535" >&2
  exit 2
fi
for v in "$reps" "$secs"; do [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "compare: '$v' is not a positive number" >&2; exit 2; }; done
[[ $EUID -eq 0 ]] || { echo "compare: needs root (network namespaces)" >&2; exit 2; }
# A baseline without its configs (or the reverse) is a mistake found now, not after an hour's run.
CMP_BASELINE=""
if [[ " $configs" == *" rtotem-base:"* ]]; then
  [[ -n $baseline ]] || { echo "compare: an rtotem-base config needs --baseline DIR" >&2; exit 2; }
  CMP_BASELINE="$(readlink -f "$baseline")"
  for f in src/daemon/rtotemd src/client/rtotemctl bench/rtotem-bench; do
    [[ -x $CMP_BASELINE/$f ]] || { echo "compare: baseline $baseline has no $f (bench/compare/build-baseline.sh makes one)" >&2; exit 2; }
  done
elif [[ -n $baseline ]]; then
  echo "compare: --baseline given but no rtotem-base:... config runs it" >&2
  exit 2
fi

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# Corosync's and the baseline's failed runs are findings, reported and left out of the tables;
# those of the rtotem under test fail the run ("system": "rtotem-base" does not match).
fail() {
  log "FAIL: $*"
  if [[ $* == *'"system": "rtotem"'* || $* == *'"system": "rtotem-cpg"'* ]]; then failures=$((failures + 1)); fi
}
failures=0

# ---------------------------------------------------------------- set-up and cleanup

RTOTEM_PACKAGES+=(corosync libcpg-dev)
rtotem_install_packages
if [[ -n $build ]]; then
  if [[ ! -f $CMP_BUILD/build.ninja ]]; then
    meson setup "$CMP_BUILD" "$CMP_REPO" -Dbuildtype=release -Dinvariants=false -Dtests=disabled >/dev/null
  fi
  meson compile -C "$CMP_BUILD" >/dev/null
fi
if [[ " $configs" == *" corosync:"* || " $configs" == *" rtotem-cpg:"* ]]; then
  [[ -x $CMP_BUILD/bench/cpg-bench ]] || { echo "compare: $CMP_BUILD has no cpg-bench (libcpg-dev missing at setup?)" >&2; exit 1; }
fi
[[ " $configs" != *" rtotem-cpg:"* || -e $CMP_BUILD/src/corosync/libcpg.so.4 ]] || { echo "compare: $CMP_BUILD has no drop-in libcpg.so.4" >&2; exit 1; }

work="$(mktemp -d /tmp/rtotem-compare.XXXXXX)"
declare -A daemon_pid=()  # node -> pid of its running daemon
client_pids=()
noise_pids=()

cleanup() {
  local pid
  for pid in "${client_pids[@]}" "${noise_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${daemon_pid[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    sys_after_kill any "$pid"
  done
  netns_down
  [[ -n ${CMP_KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$out"
results="$out/results.jsonl"
: >"$results"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command: bench/compare/compare.sh ${args[*]}"
  echo "mode: $mode; nodes: $nodes; repetitions: $reps; throughput seconds: $secs; latency seconds: $lat_seconds; idle seconds per sender: $idle_seconds; link MTU: $CMP_MTU; noise: ${noise_modes// / and }"
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB, kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "rtotem: $(sys_version rtotem); build: $CMP_BUILD (release, invariants off)"
  [[ -z $CMP_BASELINE ]] || echo "baseline: $(sys_version rtotem-base); build: $CMP_BASELINE"
  echo "corosync: $(sys_version corosync)"
  echo "token: $CMP_TOKEN_MS ms, consensus: $CMP_CONSENSUS_MS ms (both systems)"
} >"$out/meta.txt"
cat "$out/meta.txt" >&2

# ---------------------------------------------------------------- clusters

# noise_start N / noise_stop: one busy loop per CPU at nice 0 in each of N nodes' namespaces.
noise_start() {
  local n=$1 i c
  for ((i = 1; i <= n; i++)); do
    for ((c = 0; c < $(nproc); c++)); do
      ip netns exec "$(netns_node "$i")" nice -n 0 sh -c 'while :; do :; done' &
      noise_pids+=($!)
    done
  done
}
noise_stop() {
  local pid
  for pid in "${noise_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${noise_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  noise_pids=()
}

cluster_up() {  # cluster_up SYSTEM TRANSPORT CRYPTO SCHED N
  local system=$1 n=$5 i
  rm -rf "$work/cluster"
  sys_prepare "$system" "$2" "$3" "$4" "$n" "$work/cluster"
  for ((i = 1; i <= n; i++)); do
    sys_start "$system" "$i" "$work/cluster"
    daemon_pid[$i]=$SYS_PID
  done
}

sched_class() {  # the scheduling class node 1's daemon really runs in
  chrt -p "${daemon_pid[1]}" 2>/dev/null | awk -F': ' '/policy/{print $2; exit}'
}

stop_daemon() {  # stop_daemon NODE SIGNAL
  local node=$1 sig=$2 pid=${daemon_pid[$1]} i
  kill "-$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sys_after_kill any "$pid"
  unset "daemon_pid[$node]"
}

cluster_down() {
  local node
  for node in "${!daemon_pid[@]}"; do stop_daemon "$node" TERM; done
}

# ---------------------------------------------------------------- runs

# run_idle_cpu LABEL N: every daemon's CPU time over idle_cpu_seconds of a ring with no client.
run_idle_cpu() {
  local label=$1 n=$2 i
  local -a before=() after=()
  for ((i = 1; i <= n; i++)); do before+=("$(thread_cpu_ns "${daemon_pid[$i]}")"); done
  sleep "$idle_cpu_seconds"
  for ((i = 1; i <= n; i++)); do after+=("$(thread_cpu_ns "${daemon_pid[$i]}")"); done
  local per_s=() ok=1
  for ((i = 0; i < n; i++)); do
    if [[ ${before[i]} == - || ${after[i]} == - ]]; then ok=0; per_s+=(0); continue; fi
    per_s+=($(((after[i] - before[i]) / 1000 / idle_cpu_seconds)))
  done
  local joined
  joined=$(IFS=,; echo "${per_s[*]}")
  echo "{$label, \"ok\": $ok, \"cpu_us_per_s\": [$joined]}" >>"$results"
}

# thread_cpu_ns PID: the time all of PID's threads have run, in ns (/proc/PID/task/*/schedstat's
# first field), or "-" once it has gone.
thread_cpu_ns() {
  local sum=0 ns rest t
  for t in /proc/"$1"/task/*/schedstat; do
    read -r ns rest 2>/dev/null <"$t" || continue
    sum=$((sum + ns))
  done
  [[ -d /proc/$1 ]] && echo "$sum" || echo -
}

# run_latency LABEL SYSTEM N SENDER SIZE RATE SECONDS GROUP: node SENDER sends SIZE-byte messages
# at RATE/s for SECONDS, timing each to its own delivery; the others receive.
run_latency() {
  local label=$1 system=$2 n=$3 sender=$4 size=$5 rate=$6 seconds=$7 group=$8 i
  local -a per_node=()
  for ((i = 1; i <= n; i++)); do
    if ((i == sender)); then
      per_node+=("--mode latency --senders $n --size $size --rate $rate --duration $seconds --group $group-$sender")
    else
      per_node+=("--mode receive --senders $n --size $size --duration $seconds --group $group-$sender")
    fi
  done
  run_clients "$label, \"sender\": $sender" "$system" "$n" "${per_node[@]}" || true
}

# run_clients LABEL SYSTEM N ARGS_NODE_1 ... ARGS_NODE_N: one bench client per node, in parallel,
# each bounded in time; each one's JSON goes to results.jsonl with the row's labels in front. With
# costs_label set (costs_label=... run_clients ...), sample_costs measures the run meanwhile.
run_clients() {
  local label=$1 system=$2 n=$3 i pid rc=0 sampler=""
  shift 3
  local -a pids=()
  for ((i = 1; i <= n; i++)); do
    # shellcheck disable=SC2046  # the client command and this node's options are words
    ip netns exec "$(netns_node "$i")" timeout --kill-after=5 $((secs + lat_seconds + 150)) \
      $(sys_client "$system" "$i") ${!i} --json >"$work/client-$i.json" 2>"$work/client-$i.err" &
    pids+=($!)
  done
  client_pids=("${pids[@]}")
  if [[ -n ${costs_label:-} ]]; then
    sample_costs "$costs_label" "$system" "$n" "${pids[@]}" &
    sampler=$!
    client_pids+=("$sampler")
  fi
  for ((i = 1; i <= n; i++)); do
    local ok=1
    if ! wait "${pids[i - 1]}"; then
      ok=0 rc=1
      fail "$label node $i: $(tail -c 400 "$work/client-$i.err")"
    fi
    if [[ -s $work/client-$i.json ]]; then
      sed "s/^{/{$label, \"client_node\": $i, \"ok\": $ok, /" "$work/client-$i.json" >>"$results"
    fi
  done
  [[ -z $sampler ]] || wait "$sampler" || true
  client_pids=()
  return $rc
}

latency_rate() {  # a low load: 1000/s up to 16 KiB (10,000 samples in 10 s), then ~16 MB/s
  local size=$1
  if ((size <= 16384)); then echo 1000; else echo $((16000000 / size > 0 ? 16000000 / size : 1)); fi
}

# Link 0 of node N cut under a steady load and restored; each client's longest gap between two
# deliveries (max_gap_us) and ring changes go to results.jsonl as the row "linkfail". With CUT
# "no", the same load without a cut: the row "linksteady", the control that tells the failover's
# share of the gap from this machine's scheduling.
run_link_failure() {  # run_link_failure LABEL SYSTEM N CUT
  local label=$1 system=$2 n=$3 cut=$4 i cutter=""
  local -a per_node=("--mode latency --senders $n --size 1024 --rate 1000 --duration 9 --group lf")
  for ((i = 2; i <= n; i++)); do per_node+=("--mode receive --senders $n --size 1024 --duration 9 --group lf"); done
  if [[ $cut == yes ]]; then
    { sleep 4; netns_link0 "$n" down; sleep 3; netns_link0 "$n" up; } &
    cutter=$!
  fi
  run_clients "$label" "$system" "$n" "${per_node[@]}" || true
  [[ -z $cutter ]] || wait "$cutter" || true
  netns_link0 "$n" up
}

# One line per survivor: its client's detection time, from the kill to the group change that
# took node N out (report.py detection parses the watch output).
run_failure() {  # run_failure LABEL SYSTEM N
  local label=$1 system=$2 n=$3 i t0 watch_s=90 deadline
  local -a pids=() files=()
  for ((i = 1; i <= n; i++)); do
    files+=("$work/watch-$i.jsonl")
    # shellcheck disable=SC2046
    ip netns exec "$(netns_node "$i")" timeout --kill-after=5 "$watch_s" $(sys_client "$system" "$i") \
      --mode watch --group watch --duration "$watch_s" >"$work/watch-$i.jsonl" 2>"$work/watch-$i.err" &
    pids+=($!)
  done
  client_pids=("${pids[@]}")
  deadline=$((SECONDS + 60))
  until python3 "$here/report.py" watched "$n" "${files[@]}"; do
    ((SECONDS < deadline)) || { fail "$label: the watchers never saw a group of $n"; break; }
    sleep 0.2
  done
  t0=$(date +%s%N)
  stop_daemon "$n" KILL
  deadline=$((SECONDS + 30))
  until python3 "$here/report.py" detected "$n" "$t0" "${files[@]}" >"$work/detected.txt"; do
    ((SECONDS < deadline)) || { fail "$label: the survivors never lost node $n"; break; }
    sleep 0.2
  done
  for i in "${pids[@]}"; do kill -TERM "$i" 2>/dev/null || true; wait "$i" 2>/dev/null || true; done
  client_pids=()
  while read -r node ms; do
    echo "{$label, \"client_node\": $node, \"ok\": 1, \"detection_ms\": $ms}" >>"$results"
  done <"$work/detected.txt"
}

# What a throughput run costs per delivered message, between two samples in its middle (clear of
# the clients' start, and of the drain after they stop sending): the CPU time (utime + stime in
# /proc/PID/stat: all threads, corosync's knet threads too) of every daemon and of every client,
# over the messages node 1's daemon delivered meanwhile (node1_count) times N. rtotem: node 1's
# sendmmsg calls (link.tx_calls) and datagrams (link.tx_packets) too, from the same stats samples,
# and its heap allocations, those of the asking connection itself measured (a third sample right
# after the second) and taken off. Writes a "costs" and (rtotem) an "allocs" line to results.jsonl.
sample_costs() {  # sample_costs LABEL SYSTEM N CLIENT_PIDS...: in the background, during run_clients
  local label=$1 system=$2 n=$3 first span i pid clk
  shift 3
  clk=$(getconf CLK_TCK)
  local -a daemons=() clients=()
  if [[ $system != raw ]]; then  # raw UDP: no daemon, its clients only
    for ((i = 1; i <= n; i++)); do daemons+=("${daemon_pid[$i]:-}"); done
  fi
  rm -f "$work"/count-{1,2,3}.txt "$work"/cpu-{1,2}.txt
  # From min(1.5 s, 30 %) of the run to 0.5 s before its end (at least 0.5 s on).
  read -r first span < <(awk -v s="$secs" 'BEGIN { a = s * 0.3 < 1.5 ? s * 0.3 : 1.5;
    b = s - 0.5 > a + 0.5 ? s - 0.5 : a + 0.5; print a, b - a }')
  sleep "$first"
  # The PIDs are timeout's, each client its child (ip netns exec execs; timeout forks).
  for pid; do clients+=("$(pgrep -P "$pid" | head -1 || true)"); done
  node1_count "$system" "${clients[0]}" "$work/count-1.txt"
  cpu_sample "$work/cpu-1.txt"
  sleep "$span"
  node1_count "$system" "${clients[0]}" "$work/count-2.txt"
  cpu_sample "$work/cpu-2.txt"
  if [[ $system == rtotem* ]]; then
    node1_count "$system" "${clients[0]}" "$work/count-3.txt"
    python3 "$here/report.py" allocs "$work"/count-{1,2,3}.txt "$label, \"row\": \"allocs\", \"client_node\": 1, \"ok\": 1" >>"$results"
  fi
  python3 "$here/report.py" costs "$work"/cpu-{1,2}.txt "$work"/count-{1,2}.txt "$label, \"row\": \"costs\"" >>"$results"
}

# node1_count SYSTEM CLIENT_PID FILE: node 1's daemon's counters now, for report.py costs: rtotem's
# stats (rtotemctl --json), corosync's statistics of that client's IPC connection ("dispatched":
# the messages and group changes it was given); nothing for raw, which has no daemon.
node1_count() {
  local system=$1 pid=$2 file=$3 ns
  ns=$(netns_node 1)
  case "$system" in
    rtotem | rtotem-cpg | rtotem-base)
      ip netns exec "$ns" "$(rtotem_build "$system")/src/client/rtotemctl" \
        --ipc-name "$(rtotem_ipc_name "$system" 1)" --json stats >"$file" 2>/dev/null || true
      ;;
    corosync)
      # A connection's keys hold its client's pid: stats.ipcs.service<S>.<pid>.<handle>.dispatched
      { ip netns exec "$ns" corosync-cmapctl -m stats stats.ipcs. 2>/dev/null || true; } |
        grep -F ".$pid." >"$file" || true
      ;;
  esac
}

# cpu_sample FILE: the time and clock ticks per second, then one line per daemon and client of
# sample_costs (its locals daemons, clients, clk). Builtins only, so that the samples are close
# together in time.
cpu_sample() {
  {
    echo "$EPOCHREALTIME $clk"
    proc_ticks daemon "${daemons[@]}"
    proc_ticks client "${clients[@]}"
  } >"$1"
}

# proc_ticks KIND PID...: "KIND NODE TICKS" for each, in node order; TICKS is utime + stime of all
# the process's threads, "-" for one that has gone (or was never found).
proc_ticks() {
  local kind=$1 pid i=0 line
  local -a f
  shift
  for pid; do
    i=$((i + 1))
    # The fields after "PID (COMM) ": cut at the last ')', as COMM may hold spaces and ')'.
    if [[ -n $pid ]] && read -r line 2>/dev/null <"/proc/$pid/stat"; then
      read -ra f <<<"${line##*) }"
      echo "$kind $i $((f[11] + f[12]))"  # fields 14 and 15: utime, stime
    else
      echo "$kind $i -"
    fi
  done
}

# Bare sendmmsg/recvmmsg between the same namespaces (rtotem-udp-wire), a datagram per entry, at
# the throughput sizes; no daemon, so no latency or failure rows. No longer a limit for rtotemd,
# which sends runs of datagrams with segmentation offload.
run_wire() {  # run_wire N REP
  local n=$1 rep=$2 size i
  local base="\"system\": \"raw\", \"transport\": \"udp\", \"crypto\": \"off\", \"sched\": \"other\", \"sched_seen\": \"SCHED_OTHER\", \"netmtu\": \"\", \"nodes\": $n, \"rep\": $rep"
  for size in $sizes; do
    local -a per_node=()
    for ((i = 1; i <= n; i++)); do per_node+=("--size $size --duration $secs"); done
    costs_label="$base, \"bytes\": $size" \
      run_clients "$base, \"row\": \"throughput\", \"bytes\": $size" raw "$n" "${per_node[@]}" || true
  done
}

run_config() {  # run_config CONFIG N REP
  local config=$1 n=$2 rep=$3 system transport crypto sched size i sched_now label base
  local netmtu
  IFS=: read -r system transport crypto sched netmtu <<<"$config"
  log "rep $rep, N=$n: $config"
  if [[ $system == raw ]]; then
    run_wire "$n" "$rep"
    return
  fi
  CMP_NETMTU=$netmtu CMP_SCHED=$sched cluster_up "$system" "$transport" "$crypto" "$sched" "$n"
  sleep 1
  sched_now=$(sched_class)
  base="\"system\": \"$system\", \"transport\": \"$transport\", \"crypto\": \"$crypto\", \"sched\": \"$sched\", \"sched_seen\": \"$sched_now\", \"netmtu\": \"$netmtu\", \"nodes\": $n, \"rep\": $rep"
  # The baseline's rows carry its name: the report labels them with it.
  [[ $system != rtotem-base ]] || base+=", \"build\": \"$(rtotem_describe "$CMP_BASELINE")\""
  run_idle_cpu "$base, \"row\": \"idlecpu\", \"bytes\": 0" "$n"
  local noise sender plain=$base
  for noise in $noise_modes; do
    base="$plain, \"noise\": \"$noise\""
    [[ $noise == off ]] || noise_start "$n"
    for size in $sizes; do
      label="$base, \"row\": \"throughput\", \"bytes\": $size"
      local -a per_node=()
      for ((i = 1; i <= n; i++)); do per_node+=("--mode throughput --senders $n --size $size --duration $secs --group t$size-$rep-$noise"); done
      costs_label="$base, \"bytes\": $size" run_clients "$label" "$system" "$n" "${per_node[@]}" || true
    done
    for size in $lat_sizes; do
      for sender in 1 "$n"; do
        run_latency "$base, \"row\": \"latency\", \"bytes\": $size" "$system" "$n" "$sender" "$size" \
          "$(latency_rate "$size")" "$lat_seconds" "l$size-$rep-$noise"
      done
    done
    noise_stop
  done
  base=$plain
  for ((sender = 1; sender <= n; sender++)); do
    run_latency "$base, \"row\": \"idle\", \"bytes\": 64" "$system" "$n" "$sender" 64 "$idle_rate" "$idle_seconds" "i$rep"
  done
  if [[ $transport == *-2links-* ]]; then
    run_link_failure "$base, \"row\": \"linksteady\", \"bytes\": 1024" "$system" "$n" no
    run_link_failure "$base, \"row\": \"linkfail\", \"bytes\": 1024" "$system" "$n" yes
  fi
  run_failure "$base, \"row\": \"failure\", \"bytes\": 0" "$system" "$n"
  cluster_down
}

for ((rep = 1; rep <= reps; rep++)); do
  for n in $nodes; do
    netns_up "$n"
    for config in $configs; do run_config "$config" "$n" "$rep"; done
    netns_down
  done
done

python3 "$here/report.py" report "$out" >"$out/report.md"
cat "$out/report.md"
if ((failures > 0)); then
  log "compare: $failures failed rtotem runs (see $results and above)"
  exit 1
fi
log "compare: every rtotem run passed its checks; report in $out/report.md"
