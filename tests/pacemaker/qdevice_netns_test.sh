#!/usr/bin/env bash
# A two-node cluster with a quorum device: Debian's corosync-qdevice on both nodes and
# corosync-qnetd on a third host (TLS off, algorithm ffsplit), all unmodified, with Pacemaker on
# top. The same scenario runs first on Debian's Corosync, the reference, then on rtotemd with the
# drop-in libraries, from the same corosync.conf; every answer rtotem gives must be Corosync's:
#   1. corosync-quorumtool -s shows 3 total votes, the Qdevice flag and both nodes' device
#      A,V,NMW on each node; corosync-qnetd-tool -l lists both nodes;
#   2. a Dummy resource runs; the link between the two nodes is cut (both still reach qnetd):
#      exactly one node stays quorate (ffsplit's tie-breaker, the lowest node id) and runs the
#      resource, the other stops it; the cut heals;
#   3. node 2's corosync-qdevice is stopped (SIGSTOP): once the device timeout passes its device
#      shows not alive and no vote (NA,NV,NMW); it resumes;
#   4. qnetd is killed while the ring is whole: both nodes stay quorate.
# Where rtotem differs from Corosync by design, that answer is printed, not compared: after (3)
# Corosync's node 2 counts without the device (total 2) while node 1 counts it; rtotem's ring
# counts it at both while node 1's device votes for the ring (docs/quorum.md).
#
# Usage: qdevice_netns_test.sh
# Environment: RTOTEMD, RTOTEMCTL, RTOTEM_DROPIN (default build/src/...); those of
# tests/lib/pacemaker_nodes.sh (RTOTEM_PCMK_KEEP, RTOTEM_PCMK_DEBUG).
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, Pacemaker, Corosync or qdevice missing).
set -euo pipefail

repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
name="pacemaker-qdevice"
prefix="rqd$$"
subnet="10.77.17"
device_timeout_ms=5000
started=$SECONDS
unset LD_LIBRARY_PATH LD_PRELOAD  # which libraries a program loads is pcmk_env's choice

# shellcheck source=tests/lib/pacemaker_nodes.sh
source "$repo/tests/lib/pacemaker_nodes.sh"
pcmk_preflight
for f in /usr/sbin/corosync /usr/sbin/corosync-qdevice /usr/bin/corosync-qnetd /usr/bin/corosync-qnetd-tool \
  /usr/sbin/corosync-quorumtool; do
  [[ -x "$f" ]] || skip "$f missing (apt-get install corosync corosync-qdevice corosync-qnetd)"
done
pcmk_need_rtotem
pcmk_begin
pcmk_copy_dropins
base_env=("${pcmk_env[@]}")

# One file for both stacks: rtotemd reads Corosync's (knet runs as UDP there).
cat >"$dir/corosync.conf" <<EOF
totem {
	version: 2
	cluster_name: qd
	transport: knet
	token: 1000
	token_coefficient: 0
	crypto_cipher: none
	crypto_hash: none
}
nodelist {
	node {
		nodeid: 1
		name: node1
		ring0_addr: $subnet.1
	}
	node {
		nodeid: 2
		name: node2
		ring0_addr: $subnet.2
	}
}
quorum {
	provider: corosync_votequorum
	device {
		model: net
		votes: 1
		timeout: $device_timeout_ms
		net {
			host: $subnet.3
			algorithm: ffsplit
			tls: off
		}
	}
}
logging {
	to_stderr: yes
	to_syslog: no
	to_logfile: no
	timestamp: on
}
EOF

# corosync-qdevice reads corosync.conf's quorum.device from cmap; its socket is under the node's /run.
start_qdevice() {
  local n=$1
  in_node "$n" install -d /run/corosync-qdevice
  in_node "$n" env -i "${pcmk_env[@]}" sh -c 'echo $$ >/run/qdevice.pid; exec corosync-qdevice -f -d' \
    >>"$dir/node$n/qdevice.log" 2>&1 &
  qdevice_job[$n]=$!
}
declare -A qdevice_job

# SIGCONT to node N's corosync-qdevice, and to the nsenter on the host that waits for it: nsenter
# stops itself when its child stops (util-linux), and a stopped nsenter never reaps the device.
continue_qdevice() {
  in_node "$1" sh -c 'kill -CONT "$(cat /run/qdevice.pid)"'
  pkill -CONT -P "${qdevice_job[$1]}" nsenter || true
}

start_qnetd() {  # on node 3, the third host
  in_node 3 install -d /run/corosync-qnetd
  in_node 3 sh -c 'echo $$ >/run/qnetd.pid; exec corosync-qnetd -f -d -s off' >>"$dir/node3/qnetd.log" 2>&1 &
}

quorumtool() { in_node "$1" timeout 20 env -i "${pcmk_env[@]}" corosync-quorumtool -s 2>/dev/null || true; }
# The facts of corosync-quorumtool -s that both stacks must share, one per line (no date, no ring id).
facts() {
  quorumtool "$1" | sed -n -e 's/^\(Quorate\|Expected votes\|Total votes\|Quorum\|Flags\): *\(.*\)/\1: \2/p' \
    -e 's/^ *\([0-9]\+\) \+\([0-9]\+\) \+\([A-Z,]*\) *\(node[0-9]\|Qdevice\).*/member \1 votes \2 device \3 \4/p'
}
has_provider() { quorumtool "$1" | grep -q '^Quorum provider: *corosync_votequorum'; }
has_fact() { facts "$1" | grep -qxF "$2"; }
quorate_is() { has_fact "$1" "Quorate: $2"; }
device_of_is() {  # device_of_is N M FLAGS: node N's quorumtool shows node M's device FLAGS
  facts "$1" | grep -q "^member $2 votes [0-9]* device $3 node$2$"
}
qnetd_lists() { in_node 3 timeout 10 corosync-qnetd-tool -l 2>/dev/null | grep -c "Node ID" | grep -qx "$1"; }

cut() {  # cut on|off: node 1 drops all it exchanges with node 2; both still reach qnetd
  if [[ "$1" == on ]]; then
    ip netns exec "$(ns 1)" nft -f - <<EOF
table inet rtcut {
	chain in { type filter hook input priority 0; ip saddr $subnet.2 drop; }
	chain out { type filter hook output priority 0; ip daddr $subnet.2 drop; }
}
EOF
  else
    ip netns exec "$(ns 1)" nft delete table inet rtcut
  fi
}

# answer STACK KEY VALUE: one answer of the scenario, compared across stacks at the end.
declare -A answers
answer() { answers[$1/$2]="$3"; echo "$1: $2 = $3"; }

run_stack() {
  local stack=$1 n
  step "$stack: two nodes, a quorum device on each, qnetd on the third host"
  pcmk_env=("${base_env[@]}")
  [[ "$stack" == rtotem ]] && pcmk_env+=("LD_LIBRARY_PATH=$dropin")
  for n in 1 2 3; do node_up "$n"; done
  start_qnetd
  for n in 1 2; do start_clusterd "$stack" "$n" "$dir/corosync.conf"; done
  # As systemd orders corosync-qdevice.service after corosync.service: once the cluster layer answers.
  for n in 1 2; do wait_for 60 has_provider "$n" || fail "$stack node$n: the cluster layer does not answer"; done
  for n in 1 2; do start_qdevice "$n"; done
  for n in 1 2; do
    wait_for 90 has_fact "$n" "Total votes: 3" || fail "$stack node$n: not 3 votes: $(quorumtool "$n")"
    wait_for 30 device_of_is "$n" 1 A,V,NMW || fail "$stack node$n: node1's device does not vote: $(quorumtool "$n")"
    wait_for 30 device_of_is "$n" 2 A,V,NMW || fail "$stack node$n: node2's device does not vote: $(quorumtool "$n")"
    answer "$stack" "node$n start" "$(facts "$n" | tr '\n' ';')"
  done
  wait_for 30 qnetd_lists 2 || fail "$stack: corosync-qnetd-tool -l does not list 2 nodes"
  answer "$stack" "qnetd clients" "$(in_node 3 corosync-qnetd-tool -l | grep -c 'Node ID')"

  step "$stack: Pacemaker and a Dummy resource"
  for n in 1 2; do start_pacemaker "$n"; done
  for n in 1 2; do wait_for 240 cluster_is "$n" "node1 node2" quorate || fail "$stack node$n: not 2 nodes online"; done
  add_dummy 1
  wait_for 90 d_on_one_of 1 node1 node2 || fail "$stack: d never started"
  echo "check: d runs on $(where_d 1)"

  step "$stack: cut the link between node1 and node2"
  cut on
  wait_for 60 quorate_is 2 No || fail "$stack node2: still quorate after the cut: $(quorumtool 2)"
  wait_for 60 quorate_is 1 Yes || fail "$stack node1: not quorate after the cut: $(quorumtool 1)"
  wait_for 60 has_fact 1 "Total votes: 2" || fail "$stack node1: not 2 votes after the cut: $(quorumtool 1)"
  wait_for 120 d_on_one_of 1 node1 || fail "$stack node1: d does not run there ($(where_d 1))"
  wait_for 120 d_not_on 2 node2 || fail "$stack node2: still runs d without quorum"
  # The loser's side stays inquorate: checked again after both had time to settle.
  sleep 3
  quorate_is 2 No || fail "$stack node2: quorate again during the cut: $(quorumtool 2)"
  for n in 1 2; do answer "$stack" "node$n cut" "$(facts "$n" | grep -E '^(Quorate|Total votes|Quorum)' | tr '\n' ';')"; done
  answer "$stack" "d during the cut" "$(where_d 1)"

  step "$stack: heal the cut"
  cut off
  for n in 1 2; do
    wait_for 120 has_fact "$n" "Total votes: 3" || fail "$stack node$n: not 3 votes after the heal: $(quorumtool "$n")"
    wait_for 120 cluster_is "$n" "node1 node2" quorate || fail "$stack node$n: not 2 nodes online after the heal"
  done
  wait_for 60 d_on_one_of 2 node1 node2 || fail "$stack: d not on exactly one node after the heal"

  step "$stack: SIGSTOP node2's corosync-qdevice"
  in_node 2 sh -c 'kill -STOP "$(cat /run/qdevice.pid)"'
  local stopped=$SECONDS
  wait_for 60 device_of_is 2 2 NA,NV,NMW || fail "$stack node2: its stopped device still shows alive: $(quorumtool 2)"
  echo "check: node2's device shows NA,NV,NMW after $((SECONDS - stopped)) s (timeout ${device_timeout_ms} ms)"
  for n in 1 2; do quorate_is "$n" Yes || fail "$stack node$n: not quorate with node2's device stopped"; done
  answer "$stack" "node2's own device stopped" "$(facts 2 | grep '^member 2 ' || true)"
  answer "$stack" "node1 sees node2's device stopped" "$(facts 1 | grep '^member 2 ' || true)"
  echo "$stack: with node2's device stopped, total votes: node1 $(facts 1 | sed -n 's/^Total votes: //p')," \
    "node2 $(facts 2 | sed -n 's/^Total votes: //p') (not compared: docs/quorum.md)"
  continue_qdevice 2
  wait_for 60 device_of_is 2 2 A,V,NMW || fail "$stack node2: its device did not vote again after SIGCONT"

  step "$stack: kill qnetd while the ring is whole"
  in_node 3 sh -c 'kill -KILL "$(cat /run/qnetd.pid)"'
  sleep $((device_timeout_ms * 3 / 1000))
  for n in 1 2; do
    quorate_is "$n" Yes || fail "$stack node$n: not quorate without qnetd: $(quorumtool "$n")"
    cluster_is "$n" "node1 node2" quorate || fail "$stack node$n: Pacemaker lost quorum without qnetd"
    answer "$stack" "node$n without qnetd" "$(facts "$n" | grep -E '^(Quorate|Quorum)' | tr '\n' ';')"
  done

  step "$stack: down"
  for n in 1 2 3; do node_down "$n"; done
  for n in 1 2 3; do mv "$dir/node$n" "$dir/node$n.$stack"; done
}

switch_up 1 2 3
run_stack corosync
run_stack rtotem

step "rtotem's answers against Corosync's"
differ=0
for key in "${!answers[@]}"; do
  [[ "$key" == corosync/* ]] || continue
  k="${key#corosync/}"
  if [[ "${answers[rtotem/$k]-}" != "${answers[$key]}" ]]; then
    echo "differs: $k: corosync '${answers[$key]}', rtotem '${answers[rtotem/$k]-}'"
    differ=1
  fi
done
((differ == 0)) || fail "rtotem answered otherwise than Corosync"
echo "check: ${#answers[@]} answers, rtotem's equal to Corosync's"
echo
echo "$name: PASS in $((SECONDS - started)) s"
