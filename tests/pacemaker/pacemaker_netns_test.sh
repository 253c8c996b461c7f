#!/usr/bin/env bash
# Debian's Pacemaker, unmodified, on a 3-node cluster whose cluster layer is STACK: rtotemd with
# the drop-in Corosync libraries (rtotem), or Debian's own Corosync 3 (corosync), so that one run
# can compare the two with the same scenario and equal token timeouts:
#   1. 3 nodes online, "partition with quorum", on every node;
#   2. a Dummy resource starts (stonith disabled);
#   3. kill -9 the cluster daemon of the node running it: the other two see it lost, stay quorate
#      and start the resource on one of them; the time from the kill to the resource running
#      elsewhere ("failover_ms") and to the controller's "node lost" ("lost_ms") are printed, from
#      Pacemaker's own log timestamps, and whether the node killed was the DC ("dc_killed"); the killed node is then rebooted and rejoins;
#   4. the node running the resource is cut off (its switch port down): it loses quorum and stops
#      the resource, which the other two start;
#   5. the cut is healed: 3 nodes online again, the resource on exactly one node.
#
# The nodes are tests/lib/pacemaker_nodes.sh's (namespaces, each its own /run, /dev/shm and
# Pacemaker dirs). Everything of a node (cluster daemon, pacemakerd, the cluster tools) runs in
# all of its namespaces, because libqb's IPC is an abstract socket (per network namespace) plus
# rings in /dev/shm (per mount namespace), and CPG member pids must match the daemons' getpid()
# (per PID namespace).
#
# Usage: pacemaker_netns_test.sh rtotem|corosync
# Environment: RTOTEMD, RTOTEMCTL, RTOTEM_DROPIN (default build/src/...), RTOTEM_PCMK_KEEP=1 keeps
# the scratch dir (configs, logs, CIBs); RTOTEM_PCMK_DEBUG=pacemaker-controld (PCMK_debug) adds
# those daemons' debug lines to their logs.
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, Pacemaker or Corosync not installed).
set -euo pipefail

stack="${1:-}"
[[ "$stack" == rtotem || "$stack" == corosync ]] || { echo "usage: $0 rtotem|corosync" >&2; exit 2; }
repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
name="pacemaker-$stack"
prefix="rpk$$"
subnet="10.77.14"
token_ms=1000  # the same for both stacks
started=$SECONDS
# Which Corosync libraries a program loads is this script's choice (pcmk_env), not the caller's:
# meson test, for one, points LD_LIBRARY_PATH at the drop-ins it built.
unset LD_LIBRARY_PATH LD_PRELOAD

# shellcheck source=tests/lib/pacemaker_nodes.sh
source "$repo/tests/lib/pacemaker_nodes.sh"
pcmk_preflight
if [[ "$stack" == rtotem ]]; then
  pcmk_need_rtotem
else
  [[ -x /usr/sbin/corosync ]] || skip "/usr/sbin/corosync missing (apt-get install corosync)"
fi

pcmk_begin
if [[ "$stack" == rtotem ]]; then
  pcmk_copy_dropins
  pcmk_env+=("LD_LIBRARY_PATH=$dropin")
fi

# ---------------------------------------------------------------- the nodes' cluster daemon

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

quorate() {  # quorate N: the cluster layer of node N says it is quorate
  if [[ "$stack" == rtotem ]]; then
    in_node "$1" "$rtotemctl" quorum >/dev/null 2>&1
  else
    in_node "$1" env -i "${pcmk_env[@]}" corosync-quorumtool -s >/dev/null 2>&1
  fi
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
switch_up 1 2 3
write_config
for n in 1 2 3; do node_up "$n"; start_clusterd "$stack" "$n" "$dir/cluster.conf"; done
for n in 1 2 3; do wait_for 60 quorate "$n" || fail "node$n: the cluster layer is not quorate"; done
for n in 1 2 3; do start_pacemaker "$n"; done
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online with quorum"
done
echo "check: crm_mon -1 shows 3 nodes online, partition with quorum, on every node"

step "a Dummy resource"
add_dummy 1
wait_for 90 d_on_one_of 1 node1 node2 node3 || fail "d never started"
v="$(where_d 1)"; v="${v#node}"
echo "check: d runs on node$v"

step "kill -9 the $stack daemon of node$v"
mapfile -t rest < <(others "$v")
dc="$(dc_of "${rest[0]}")"
# Pacemaker elects a new DC first when the DC is the node killed: a failover takes longer then.
dc_killed=$([[ "$dc" == "node$v" ]] && echo yes || echo no)
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
echo "$name: failover_ms=$failover_ms lost_ms=$lost_ms dc_killed=$dc_killed (from the kill -9 of the cluster daemon: d started elsewhere; the controller saw node$v lost; the DC was ${dc:-unknown}; token $token_ms ms)"

step "node$v reboots and rejoins"
node_down "$v"
node_up "$v"
start_clusterd "$stack" "$v" "$dir/cluster.conf"
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
