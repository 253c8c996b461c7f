#!/usr/bin/env bash
# Debian's Pacemaker, unmodified, on a 3-node cluster whose cluster layer is STACK: rtotemd with
# the drop-in Corosync libraries (rtotem), or Debian's own Corosync 3 (corosync), so that one run
# can compare the two with the same scenario and equal token timeouts:
#   1. 3 nodes online, "partition with quorum", on every node;
#   2. a Dummy resource starts (stonith disabled);
#   3. kill -9 the cluster daemon of the node running it: the other two see it lost, stay quorate
#      and start the resource on one of them; the time from the kill to the resource running
#      elsewhere ("failover_ms") and to the controller's "node lost" ("lost_ms") are printed, from
#      Pacemaker's own log timestamps; the killed node is then rebooted and rejoins;
#   4. the node running the resource is cut off (its switch port down): it loses quorum and stops
#      the resource, which the other two start;
#   5. the cut is healed: 3 nodes online again, the resource on exactly one node.
#
# Each node is a network namespace (veth to a bridge in a switch namespace) with its own mount,
# UTS and PID namespaces, held by one long-lived process: its own /run, /dev/shm,
# /var/lib/pacemaker, /var/log/pacemaker and hostname. Everything of a node (cluster daemon,
# pacemakerd, the cluster tools) runs in all of its namespaces, because libqb's IPC is an abstract
# socket (per network namespace) plus rings in /dev/shm (per mount namespace), and CPG member pids
# must match the daemons' getpid() (per PID namespace). Pacemaker panics by reboot(2): it runs
# without CAP_SYS_BOOT, in a PID namespace, with /proc/sysrq-trigger masked.
# Killing a node's PID 1 kills the whole node; cleanup does that for every node and deletes the
# namespaces, on failure too.
#
# Usage: pacemaker_netns_test.sh rtotem|corosync
# Environment: RTOTEMD, RTOTEMCTL, RTOTEM_DROPIN (default build/src/...), RTOTEM_PCMK_KEEP=1 keeps
# the scratch dir (configs, logs, CIBs).
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, Pacemaker or Corosync not installed).
set -euo pipefail

stack="${1:-}"
[[ "$stack" == rtotem || "$stack" == corosync ]] || { echo "usage: $0 rtotem|corosync" >&2; exit 2; }
repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
rtotemd="${RTOTEMD:-$repo/build/src/daemon/rtotemd}"
rtotemctl="${RTOTEMCTL:-$repo/build/src/client/rtotemctl}"
dropin="${RTOTEM_DROPIN:-$repo/build/src/corosync}"
name="pacemaker-$stack"
prefix="rpk$$"
subnet="10.77.14"
token_ms=1000  # the same for both stacks
started=$SECONDS
# Which Corosync libraries a program loads is this script's choice (pcmk_env), not the caller's:
# meson test, for one, points LD_LIBRARY_PATH at the drop-ins it built.
unset LD_LIBRARY_PATH LD_PRELOAD

skip() { echo "$name: SKIP: $*"; exit 77; }
[[ $EUID -eq 0 ]] || skip "needs root (namespaces, mounts)"
for f in /usr/sbin/pacemakerd /usr/sbin/crm_mon /usr/sbin/cibadmin /usr/sbin/crm_resource \
         /usr/lib/ocf/resource.d/pacemaker/Dummy; do
  [[ -x "$f" ]] || skip "$f missing (apt-get install pacemaker pacemaker-cli-utils resource-agents)"
done
id hacluster >/dev/null 2>&1 || skip "no user hacluster (package pacemaker-common)"
for f in nsenter unshare setpriv; do command -v "$f" >/dev/null || skip "no $f (util-linux)"; done
if [[ "$stack" == rtotem ]]; then
  for f in "$rtotemd" "$rtotemctl" "$dropin/libcpg.so.4"; do
    [[ -e "$f" ]] || { echo "$name: FAIL: no $f (set RTOTEMD / RTOTEMCTL / RTOTEM_DROPIN)"; exit 1; }
  done
else
  [[ -x /usr/sbin/corosync ]] || skip "/usr/sbin/corosync missing (apt-get install corosync)"
fi

# Nothing a node mounts may show on the host. The host's mount points, but for the netns ones:
host_mounts() { awk '$5 !~ /^\/run\/netns/ { print $5 }' /proc/self/mountinfo | sort; }
unmount() {  # unmount WHY MOUNT_POINT...: lazily, from the host, saying so
  local why=$1 m; shift
  for m; do echo "$name: $why: $m; unmounted"; umount -l "$m" 2>/dev/null; done
}
# An earlier run's leaked bind mounts (over /var/lib/pacemaker, say) would fail this one's.
mapfile -t stale < <(awk 'index($4, "/tmp/rtotem-pcmk.") == 1 { print $5 }' /proc/self/mountinfo)
unmount "an earlier run's mount is still on the host" "${stale[@]}"
host_mounts_before="$(host_mounts)"
dir="$(mktemp -d /tmp/rtotem-pcmk.XXXXXX)"  # not under /run: each node mounts its own /run
chmod 755 "$dir"
if [[ "$stack" == rtotem ]]; then
  # Pacemaker's daemons run as hacluster, which may not be able to traverse the checkout (a CI
  # clone under a 0700 directory, say): they load copies from the scratch dir, which it can read.
  mkdir "$dir/dropin"
  cp -L "$dropin"/lib*.so.[0-9] "$dir/dropin/"
  [[ ! -e "$dropin/../client/librtotem.so.0" ]] || cp -L "$dropin/../client/librtotem.so.0" "$dir/dropin/"
  chmod -R a+rX "$dir/dropin"
  dropin="$dir/dropin"
fi
namespaces=()
declare -A holder=()   # node -> pid (on the host) of the node's PID 1
declare -A unshared=() # node -> pid of the unshare process that made it (reaped on exit)

ns() { echo "$prefix-$1"; }  # ns 1..3 | ns sw

# ---------------------------------------------------------------- cleanup and failure

node_down() {  # node_down N: kills every process of node N (SIGKILL to its PID 1)
  local n=$1
  [[ -n "${unshared[$n]:-}" ]] || return 0
  # unshare --kill-child: its death kills the node's PID 1 too, should it not have a holder yet.
  [[ -n "${holder[$n]:-}" ]] && kill -KILL "${holder[$n]}" 2>/dev/null
  kill -KILL "${unshared[$n]}" 2>/dev/null
  wait "${unshared[$n]}" 2>/dev/null || true
  unset "holder[$n]" "unshared[$n]"
}

# shellcheck disable=SC2317  # reached through the trap
cleanup() {
  local status=$? n
  trap - EXIT
  set +e
  for n in "${!unshared[@]}"; do node_down "$n"; done
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null; done
  mapfile -t leaked < <(comm -13 <(echo "$host_mounts_before") <(host_mounts) | tac)
  if ((${#leaked[@]} > 0)); then
    unmount "a node's mount showed on the host" "${leaked[@]}"
    ((status != 0)) || { echo "$name: FAIL: the nodes' mounts showed on the host"; status=1; }
  fi
  if [[ "${RTOTEM_PCMK_KEEP:-0}" == 1 ]]; then echo "$name: kept $dir"; else rm -rf "$dir"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_node() { local n=$1; shift; nsenter -t "${holder[$n]}" -m -u -n -p --wd=/ -- "$@"; }

show_logs() {
  local n
  for n in 1 2 3; do
    echo "--- node$n: cluster daemon (tail) ---"
    tail -n 15 "$dir/node$n/clusterd.log" 2>/dev/null
    echo "--- node$n: pacemaker.log, errors (tail) ---"
    grep -E 'error|crit|warning|authentic|evicted|duplicate local pid|quorum is not configured|Lost connection' \
      "$dir/node$n/log-pacemaker/pacemaker.log" 2>/dev/null | tail -n 15
    if [[ -n "${holder[$n]:-}" ]]; then
      echo "--- node$n: crm_mon -1 ---"
      in_node "$n" timeout 10 env -i "${pcmk_env[@]}" crm_mon -1 2>&1 | head -n 20
    fi
  done
}

fail() {
  echo "$name: FAIL: $* (after $((SECONDS - started)) s)"
  show_logs || true
  exit 1
}

step() { echo; echo "== $* ($((SECONDS - started)) s) =="; }

wait_for() {  # wait_for SECONDS CMD...: until CMD succeeds, polling every 0.5 s
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}

# ---------------------------------------------------------------- network and nodes

# shellcheck source=tests/lib/netns_switch.sh
source "$repo/tests/lib/netns_switch.sh"

node_up() {  # node_up N: the node's PID 1 and its mounts; a node that was down boots afresh
  local n=$1 init="" _
  install -d "$dir/node$n/state" "$dir/node$n/lib-pacemaker"
  install -d -o hacluster -g haclient -m 0770 "$dir/node$n/log-pacemaker"
  nsenter --net="/run/netns/$(ns "$n")" -- \
    unshare --mount --uts --pid --fork --kill-child --mount-proc --propagation private -- sleep infinity &
  unshared[$n]=$!
  # The node's PID 1 is ready once it runs sleep: unshare's child makes its mounts private and
  # mounts /proc before that exec, and a mount made earlier could propagate to the host.
  for _ in $(seq 100); do
    init="$(ps -o pid= --ppid "${unshared[$n]}" | tr -d ' ' || true)"
    [[ -n "$init" && "$(cat "/proc/$init/comm" 2>/dev/null)" == sleep ]] && break
    init=""
    kill -0 "${unshared[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$init" ]] || skip "unshare --pid --mount-proc refused here"
  [[ "$(readlink "/proc/$init/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]] ||
    fail "node$n: its PID 1 ($init) shares the host's mount namespace"
  holder[$n]=$init
  # /var/run and /var/lock are links into /run on Debian 12. The state bind mount is the cluster
  # daemon's: rtotemd's --state-dir, Corosync's /var/lib/corosync. Private again first, whatever
  # the host's propagation: nothing mounted here may show on the host.
  in_node "$n" sh -ec "
    mount --make-rprivate /
    mount -t tmpfs -o mode=0755 tmpfs /run
    install -d -m 1777 /run/lock
    mount -t tmpfs -o mode=1777 tmpfs /dev/shm
    mount --bind '$dir/node$n/lib-pacemaker' /var/lib/pacemaker
    mount --bind '$dir/node$n/log-pacemaker' /var/log/pacemaker
    if [ -d /var/lib/corosync ]; then mount --bind '$dir/node$n/state' /var/lib/corosync; fi
    if [ -e /proc/sysrq-trigger ]; then mount --bind /dev/null /proc/sysrq-trigger; fi
    hostname node$n"
}

write_config() {
  local n nodes=""
  for n in 1 2 3; do
    nodes+="	node {
		nodeid: $n
		name: node$n
		ring0_addr: $subnet.$n
	}
"
  done
  if [[ "$stack" == rtotem ]]; then
    cat >"$dir/cluster.conf" <<EOF
totem {
	cluster_name: pcmk
	transport: udpu
	token: $token_ms
	token_coefficient: 0
}
nodelist {
$nodes}
quorum {
	provider: corosync_votequorum
}
ipc {
	allow_gid: haclient
}
EOF
  else
    cat >"$dir/cluster.conf" <<EOF
totem {
	version: 2
	cluster_name: pcmk
	transport: knet
	token: $token_ms
	token_coefficient: 0
	crypto_cipher: none
	crypto_hash: none
}
nodelist {
$nodes}
quorum {
	provider: corosync_votequorum
}
logging {
	to_stderr: yes
	to_syslog: no
	to_logfile: no
	timestamp: on
}
EOF
  fi
}

start_clusterd() {  # its pid file is the node's /run/clusterd.pid
  local n=$1
  if [[ "$stack" == rtotem ]]; then
    in_node "$n" sh -c 'echo $$ >/run/clusterd.pid; exec "$0" -f -c "$1" --state-dir "$2"' \
      "$rtotemd" "$dir/cluster.conf" "$dir/node$n/state" >>"$dir/node$n/clusterd.log" 2>&1 &
  else
    in_node "$n" sh -c 'echo $$ >/run/clusterd.pid; exec /usr/sbin/corosync -f -c "$0"' \
      "$dir/cluster.conf" >>"$dir/node$n/clusterd.log" 2>&1 &
  fi
}

# What Pacemaker and its tools run with: the drop-ins for rtotem, Debian's libraries otherwise.
pcmk_env=(PATH=/usr/sbin:/usr/bin:/sbin:/bin)
[[ "$stack" == rtotem ]] && pcmk_env+=("LD_LIBRARY_PATH=$dropin")

start_pacemaker() {
  local n=$1
  in_node "$n" setpriv --bounding-set -sys_boot -- env -i "${pcmk_env[@]}" \
    PCMK_logfile=/var/log/pacemaker/pacemaker.log PCMK_logfacility=none \
    sh -c 'echo $$ >/run/pacemakerd.pid; exec /usr/sbin/pacemakerd' \
    >>"$dir/node$n/pacemakerd.out" 2>&1 &
}

quorate() {  # quorate N: the cluster layer of node N says it is quorate
  if [[ "$stack" == rtotem ]]; then
    in_node "$1" "$rtotemctl" quorum >/dev/null 2>&1
  else
    in_node "$1" env -i "${pcmk_env[@]}" corosync-quorumtool -s >/dev/null 2>&1
  fi
}

mon() { in_node "$1" timeout 20 env -i "${pcmk_env[@]}" crm_mon -1 2>/dev/null; }

cluster_is() {  # cluster_is N "node1 node2 node3" quorate|not: what node N's crm_mon shows
  local out
  out="$(mon "$1")" || return 1
  if [[ "$3" == quorate ]]; then
    grep -q 'partition with quorum' <<<"$out" || return 1
  else
    grep -q 'partition WITHOUT quorum' <<<"$out" || return 1
  fi
  grep -qF "* Online: [ $2 ]" <<<"$out"
}

where_d() {  # where_d N: the node(s) running resource d, as node N's CIB says
  in_node "$1" timeout 20 env -i "${pcmk_env[@]}" crm_resource --locate --resource d --quiet 2>/dev/null |
    sort | tr '\n' ' ' | sed 's/ $//'
}
d_on_one_of() {  # d_on_one_of N NODES...: node N's CIB has d running on exactly one of NODES
  local here="$1" at; shift
  at="$(where_d "$here")"
  [[ -n "$at" && "$at" != *" "* && " $* " == *" $at "* ]]
}
d_not_on() {  # d_not_on N NODE: node N's CIB does not have d running on NODE
  [[ " $(where_d "$1") " != *" $2 "* ]]
}

others() { local n; for n in 1 2 3; do ((n == $1)) || echo "$n"; done; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# log_ms SINCE_MS REGEX NODE...: the time (ms since the epoch) of the first line matching REGEX,
# at or after SINCE_MS, in the Pacemaker logs of NODEs (their lines start "Mon DD HH:MM:SS.mmm").
# Pacemaker's own timestamps, so that the failover time does not depend on how often this polls.
log_ms() {
  local since=$1 regex=$2 n line ms first=""; shift 2
  for n; do
    while IFS= read -r line; do
      ms="$(date -d "${line:0:19}" +%s%3N)" || continue
      ((ms >= since)) || continue
      if [[ -z "$first" ]] || ((ms < first)); then first=$ms; fi
    done < <(grep -E "$regex" "$dir/node$n/log-pacemaker/pacemaker.log" 2>/dev/null || true)
  done
  echo "$first"
}

# ---------------------------------------------------------------- the scenario

step "3 nodes: $stack, then Pacemaker"
if [[ "$stack" == rtotem ]]; then
  # The non-root daemons load the libraries from LD_LIBRARY_PATH: a directory hacluster cannot
  # read is skipped silently by the loader, and Debian's real libraries would load instead.
  # Checked even on the copies, so that a loader that still falls back fails here, not later.
  runuser -u hacluster -- env LD_LIBRARY_PATH="$dropin" ldd /usr/lib/pacemaker/pacemaker-controld |
    grep -q "$dropin/libcpg.so.4" ||
    fail "user hacluster does not load the drop-in libraries from $dropin (a directory it cannot read?)"
fi
switch_up 1 2 3
write_config
for n in 1 2 3; do node_up "$n"; start_clusterd "$n"; done
for n in 1 2 3; do wait_for 60 quorate "$n" || fail "node$n: the cluster layer is not quorate"; done
for n in 1 2 3; do start_pacemaker "$n"; done
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online with quorum"
done
echo "check: crm_mon -1 shows 3 nodes online, partition with quorum, on every node"

step "a Dummy resource"
in_node 1 env -i "${pcmk_env[@]}" crm_attribute --type crm_config --name stonith-enabled --update false
in_node 1 env -i "${pcmk_env[@]}" cibadmin --create --scope resources --xml-text \
  '<primitive id="d" class="ocf" provider="pacemaker" type="Dummy"><operations><op id="d-monitor-5s" name="monitor" interval="5s" timeout="20s"/></operations></primitive>'
wait_for 90 d_on_one_of 1 node1 node2 node3 || fail "d never started"
v="$(where_d 1)"; v="${v#node}"
echo "check: d runs on node$v"

step "kill -9 the $stack daemon of node$v"
mapfile -t rest < <(others "$v")
t0="$(now_ms)"
in_node "$v" sh -c 'kill -KILL "$(cat /run/clusterd.pid)"'
wait_for 120 d_on_one_of "${rest[0]}" "node${rest[0]}" "node${rest[1]}" ||
  fail "d did not start on node${rest[0]} or node${rest[1]}"
for n in "${rest[@]}"; do
  wait_for 60 cluster_is "$n" "node${rest[0]} node${rest[1]}" quorate || fail "node$n: did not see node$v lost"
done
echo "check: node${rest[0]} and node${rest[1]} see node$v lost, stay quorate, and run d on $(where_d "${rest[0]}")"
lost_at="$(log_ms "$t0" "pacemaker-controld .*Node node$v state is now lost" "${rest[@]}")"
started_at="$(log_ms "$t0" "Result of start operation for d on node[0-9]: ok" "${rest[@]}")"
[[ -n "$lost_at" && -n "$started_at" ]] || fail "no 'state is now lost' or 'Result of start operation' line after the kill"
lost_ms=$((lost_at - t0))
failover_ms=$((started_at - t0))
echo "$name: failover_ms=$failover_ms lost_ms=$lost_ms (from the kill -9 of the cluster daemon: d started elsewhere; the controller saw node$v lost; token $token_ms ms)"

step "node$v reboots and rejoins"
node_down "$v"
node_up "$v"
start_clusterd "$v"
wait_for 60 quorate "$v" || fail "node$v: the cluster layer did not rejoin"
start_pacemaker "$v"
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online after node$v rebooted"
done

step "cut off the node running d"
# Until the rejoined node's probe comes back, its status from before the kill still shows d
# running there too: wait for the CIB to settle on one node.
wait_for 60 d_on_one_of 1 node1 node2 node3 || fail "d is not running on exactly one node ($(where_d 1))"
c="$(where_d 1)"; c="${c#node}"
[[ "$c" =~ ^[123]$ ]] || fail "d is not running on exactly one node ($(where_d 1))"
mapfile -t rest < <(others "$c")
ip -n "$(ns sw)" link set "p$c" down
wait_for 120 cluster_is "$c" "node$c" not || fail "node$c: did not lose quorum"
wait_for 120 d_not_on "$c" "node$c" || fail "node$c: still runs d without quorum"
for n in "${rest[@]}"; do
  wait_for 120 cluster_is "$n" "node${rest[0]} node${rest[1]}" quorate || fail "node$n: did not see node$c cut off"
done
wait_for 120 d_on_one_of "${rest[0]}" "node${rest[0]}" "node${rest[1]}" || fail "d did not move off node$c"
echo "check: node$c lost quorum and stopped d; node${rest[0]} and node${rest[1]} run it on $(where_d "${rest[0]}")"

step "heal node$c's link"
ip -n "$(ns sw)" link set "p$c" up
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online after the heal"
done
for n in 1 2 3; do
  wait_for 60 d_on_one_of "$n" node1 node2 node3 || fail "node$n: d is not running on exactly one node"
done
echo "check: 3 nodes online again, d on $(where_d 1) only"

echo
echo "$name: PASS in $((SECONDS - started)) s (failover_ms=$failover_ms lost_ms=$lost_ms)"
