#!/usr/bin/env bash
# Large rings on one host: N daemons started at once; how long until every one is on one ring of
# N (formation), and after a kill -9 of node N how long until every survivor is on a ring of the
# other N-1 (detection). rtotem runs on loopback (node i on 127.0.0.i, UDP unicast); Corosync 3
# (knet) cannot share one address space (it finds itself by its address, and takes a fixed lock
# file), so each of its nodes gets a network namespace on one bridge (bench/compare/lib/netns.sh).
# Both get the same token (1000 ms) and consensus (1200 ms; bench/compare/lib/systems.sh). Both are
# timed from their own logs, polled every 0.2 s (rtotem: "ring R/S: members [...]"; Corosync:
# "Sync members[K]:"), so no client adds to the load.
# Prints one markdown row per system and N, with the exact command, machine and commit above.
#
# Usage: bench/big_ring.sh [--nodes "8 16 32 64"] [--systems "rtotem corosync"] [--limit S]
#          [--send-join MS] [--join MS] [--netmtu BYTES]
#   --limit      seconds a ring may take to form, and to re-form after the kill (default 60)
#   --send-join  rtotem's totem.send_join, --join its totem.join (default: rtotem's defaults)
#   --netmtu     rtotem's totem.netmtu (default: the least a ring of N needs, 1400 up to 42 nodes)
# Corosync rows need root (namespaces) and install corosync if missing. Builds nothing: runs
# RTOTEM_BUILD_DIR (default build). Every daemon started is killed by pid and every namespace made
# deleted when it exits, on failure or interrupt too. Exit: 0 when every rtotem run formed and
# re-formed within the limit (Corosync's failures are rows of the table, not errors).
set -euo pipefail

CMP_REPO="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
CMP_BUILD="$(readlink -f "${RTOTEM_BUILD_DIR:-$CMP_REPO/build}")"
CMP_BASELINE=""
CMP_PREFIX="rtbig$$"
# shellcheck source=bench/compare/lib/netns.sh
source "$CMP_REPO/bench/compare/lib/netns.sh"
# shellcheck source=bench/compare/lib/systems.sh
source "$CMP_REPO/bench/compare/lib/systems.sh"

nodes="8 16 32 64"
systems="rtotem corosync"
limit=60
send_join=""
join=""
netmtu=""
args=("$@")
while (($#)); do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --send-join) send_join=$2; shift 2 ;;
    --join) join=$2; shift 2 ;;
    --netmtu) netmtu=$2; shift 2 ;;
    *) echo "big_ring: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ " $systems " != *" corosync "* ]] || ((EUID == 0)) || { echo "big_ring: Corosync needs root (namespaces)" >&2; exit 2; }
[[ -x $CMP_BUILD/src/daemon/rtotemd ]] || { echo "big_ring: $CMP_BUILD/src/daemon/rtotemd is missing" >&2; exit 1; }
if [[ " $systems " == *" corosync "* ]] && ! command -v corosync >/dev/null; then
  # shellcheck source=scripts/lib/packages.sh
  source "$CMP_REPO/scripts/lib/packages.sh"
  RTOTEM_PACKAGES=(corosync)
  rtotem_install_packages
fi

work="$(mktemp -d /tmp/rtotem-big.XXXXXX)"
declare -A daemon_pid=()  # node -> pid of its running daemon
stop_all() {  # every daemon still running, and the namespaces
  local pid
  for pid in "${daemon_pid[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    sys_after_kill any "$pid"
  done
  daemon_pid=()
  netns_down
}
cleanup() {
  stop_all
  [[ -n ${BIG_KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

node_log() {  # node_log SYSTEM I
  case "$1" in
    rtotem) echo "$work/cluster/n$2/daemon.log" ;;
    corosync) echo "$work/cluster/n$2/corosync.log" ;;
  esac
}
# How many of the nodes' logs show a ring of K members at or after line FROM[i] (0: the start).
on_ring_of() {  # on_ring_of SYSTEM K NODES...
  local system=$1 k=$2 i count=0 from
  shift 2
  for i in "$@"; do
    from=${log_from[$i]:-0}
    if [[ $system == rtotem ]]; then
      tail -n "+$((from + 1))" "$(node_log rtotem "$i")" 2>/dev/null |
        grep -o 'members \[[0-9 ]*\], joined' | awk -v k="$k" '{ gsub(/.*\[|\].*/, ""); if (NF == k) f = 1 } END { exit !f }' &&
        count=$((count + 1))
    else
      tail -n "+$((from + 1))" "$(node_log corosync "$i")" 2>/dev/null | grep -q "Sync members\[$k\]:" && count=$((count + 1))
    fi
  done
  echo "$count"
}
# Seconds from T0 (ns) until every one of NODES logs a ring of K, or "-" after the limit.
time_until_ring() {  # time_until_ring SYSTEM K T0 NODES...
  local system=$1 k=$2 t0=$3 deadline=$((SECONDS + limit)) have
  shift 3
  while ((SECONDS < deadline)); do
    have=$(on_ring_of "$system" "$k" "$@")
    if ((have == $#)); then
      awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
      return 0
    fi
    sleep 0.2
  done
  log "$system N=$k: $have of $# nodes on a ring of $k after ${limit}s"
  echo "-"
  return 1
}

cpu_s() {  # user + system CPU seconds of the running daemons
  local pid clk total=0
  clk=$(getconf CLK_TCK)
  for pid in "${daemon_pid[@]}"; do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  awk -v t="$total" -v c="$clk" 'BEGIN { printf "%.1f", t / c }'
}

# Node i's config dir n<i> for rtotem on loopback: the compare harness's config (same timeouts)
# with the nodelist on 127.0.0.i and this run's port and cluster name.
rtotem_loopback_config() {  # rtotem_loopback_config N NETMTU
  local n=$1 i
  for ((i = 1; i <= n; i++)); do mkdir -p "$work/cluster/n$i/state"; done
  CMP_NETMTU=$2 CMP_SEND_JOIN=$send_join rtotem_config rtotem udpu off "$n" "$work/cluster" |
    sed -e "s/$CMP_SUBNET\./127.0.0./" -e "s/mcastport: 5405/mcastport: $port/" \
      -e "${join:+s/^\(\s*token: .*\)/\1\n\tjoin: $join/}" >"$work/cluster/rtotem.conf"
}

start_node() {  # start_node SYSTEM I: records its pid in daemon_pid
  local system=$1 i=$2
  if [[ $system == rtotem ]]; then
    "$CMP_BUILD/src/daemon/rtotemd" -f -c "$work/cluster/rtotem.conf" --nodeid "$i" \
      --ipc-name "$(rtotem_ipc_name rtotem "$i")" --state-dir "$work/cluster/n$i/state" \
      >>"$work/cluster/n$i/daemon.log" 2>&1 &
    SYS_PID=$!
  else
    sys_start corosync "$i" "$work/cluster"
  fi
  daemon_pid[$i]=$SYS_PID
}

port=$((30000 + $$ % 20000))  # this run's own: no other cluster on this host collides with it
declare -A log_from=()
failures=0
run() {  # run SYSTEM N: one table row
  local system=$1 n=$2 i t0 formed detected cpu joins="-" mtu
  log "$system N=$n"
  mtu=${netmtu:-$(((28 + 32 * n) > 1400 ? 28 + 32 * n : 1400))}
  rm -rf "$work/cluster"
  if [[ $system == rtotem ]]; then
    rtotem_loopback_config "$n" "$mtu"
  else
    netns_up "$n"
    sys_prepare corosync knet off other "$n" "$work/cluster"
  fi
  log_from=()
  t0=$(date +%s%N)
  for ((i = 1; i <= n; i++)); do start_node "$system" "$i"; done
  formed=$(time_until_ring "$system" "$n" "$t0" $(seq 1 "$n")) || true
  cpu=$(cpu_s)
  detected="-"
  if [[ $formed != - ]]; then
    for ((i = 1; i < n; i++)); do log_from[$i]=$(wc -l <"$(node_log "$system" "$i")"); done
    t0=$(date +%s%N)
    kill -KILL "${daemon_pid[$n]}"
    wait "${daemon_pid[$n]}" 2>/dev/null || true
    sys_after_kill any "${daemon_pid[$n]}"
    unset "daemon_pid[$n]"
    detected=$(time_until_ring "$system" $((n - 1)) "$t0" $(seq 1 $((n - 1)))) || true
  fi
  if [[ $system == rtotem ]]; then
    joins=$(awk '/joins_sent/ { s += $2 } END { print s + 0 }' < <(
      for ((i = 1; i < n; i++)); do
        timeout 10 "$CMP_BUILD/src/client/rtotemctl" --ipc-name "$(rtotem_ipc_name rtotem "$i")" stats 2>/dev/null ||
          true
      done))
    [[ $formed != - && $detected != - ]] || failures=$((failures + 1))
    mtu_col=$mtu
  else
    mtu_col="-"
  fi
  echo "| $system | $n | $formed | $detected | $cpu | $joins | $mtu_col | ${join:-default} | ${send_join:-default} |"
  stop_all
}

echo "command: bench/big_ring.sh ${args[*]}"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rtotem: $(sys_version rtotem)"
[[ " $systems " != *" corosync "* ]] || echo "corosync: $(sys_version corosync) (knet)"
echo "token 1000 ms, consensus 1200 ms (both); limit ${limit} s to form and to re-form"
echo
echo "| system | nodes | formed s | kill -9 seen by all s | daemon CPU s until formed | joins sent (survivors) | netmtu | join ms | send_join ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $nodes; do
  for system in $systems; do run "$system" "$n"; done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if ((failures > 0)); then
  echo "big_ring: FAIL: $failures rtotem runs did not form or re-form within ${limit}s" >&2
  exit 1
fi
echo "big_ring: PASS"
