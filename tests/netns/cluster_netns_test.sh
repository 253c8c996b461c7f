#!/usr/bin/env bash
# Three real rtotemd daemons, one per network namespace, joined by a bridge in a fourth namespace,
# with packet loss (and delay, where the kernel has netem) on every node's link: agreed delivery
# under loss, a cut and restored link (partition and merge), a kill -9 and restart. Nothing touches
# the host's own namespace.
#
# Usage: cluster_netns_test.sh [LINKS [MODE]]. LINKS 2: every node also has link 1, on a second
# bridge (br1, rt1 = 10.77.14.N/24, unimpaired), in link_mode MODE (passive, the default, or
# active: every packet on both links, so the protocol gets a copy of each token, join and message
# and must drop it); then step l cuts one link of node 3 at a time under traffic, then link 0 from
# node 3 to node 1 only, one way (the ring must not change, and the messages still arrive, once
# each, in order), and step b cuts both.
#
# Topology (prefix P = rtn<pid>, unique per run):
#   P-1, P-2, P-3: lo, and veth rt0 = 10.77.13.N/24; what leaves through rt0 is impaired once:
#                  tc netem "loss L% delay D" if the kernel has sch_netem, else an nftables rule
#                  that drops L% at random (loss only: nftables cannot delay)
#   P-sw:          bridge br0 with the peers p1, p2, p3 (cutting node 3 = p3 down)
# Every process started is recorded by pid and killed on exit, every namespace made is deleted,
# and the daemons' leftover /dev/shm/qb-<pid>-* directories are removed, on failure too.
#
# Environment: RTOTEMD, RTOTEMCTL (default build/src/...), RTOTEM_NETNS_MESSAGES (per node in the
# first scenario, default 50), RTOTEM_NETNS_LOSS_PCT (default 5), RTOTEM_NETNS_DELAY (netem's
# delay and jitter, default "2ms 1ms"), RTOTEM_NETNS_KEEP=1 keeps the scratch dir (config, logs,
# listener output).
# Exit: 0 pass, 1 fail, 77 skip (not root; no network namespaces, bridge, or netem/nftables here).
set -euo pipefail

repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
rtotemd="${RTOTEMD:-$repo/build/src/daemon/rtotemd}"
rtotemctl="${RTOTEMCTL:-$repo/build/src/client/rtotemctl}"
messages="${RTOTEM_NETNS_MESSAGES:-50}"
loss_pct="${RTOTEM_NETNS_LOSS_PCT:-5}"
delay="${RTOTEM_NETNS_DELAY:-2ms 1ms}"
read -r -a delay_args <<<"$delay"

links="${1:-1}"
link_mode="${2:-passive}"
[[ "$links" == 1 || "$links" == 2 ]] && [[ "$link_mode" == passive || "$link_mode" == active ]] ||
  { echo "usage: $0 [1|2 [passive|active]] (links per node, link mode)"; exit 2; }
prefix="rtn$$"
subnet="10.77.13"
subnet1="10.77.14"  # link 1's network
group="t"
token_ms=1000
change_s=30    # a ring forms, splits or merges within this (token 1 s, consensus 1.2 s)
deliver_s=60   # every message sent is delivered within this
started=$SECONDS

skip() { echo "netns-cluster: SKIP: $*"; exit 77; }
[[ $EUID -eq 0 ]] || skip "needs root (network namespaces, veth, bridge, tc netem)"
for exe in "$rtotemd" "$rtotemctl"; do
  [[ -x "$exe" ]] || { echo "netns-cluster: FAIL: no executable $exe (set RTOTEMD / RTOTEMCTL)"; exit 1; }
done

dir="$(mktemp -d /tmp/rtotem-netns.XXXXXX)"
namespaces=()            # made by this run, deleted on exit
declare -A daemon_pid=() # node -> pid of its running daemon
declare -A listen_pid=() # node -> pid of its running listener
helper_pids=()           # sender loops

ns() { echo "$prefix-$1"; }  # ns 1..3 | ns sw
ipc() { echo "$prefix-$1"; }

# ---------------------------------------------------------------- cleanup and failure

remove_shm() {  # remove_shm PID: libqb's per-connection dirs left by a daemon that is gone
  local pid=$1 left
  left=$(find /dev/shm -maxdepth 1 -name "qb-$pid-*" | wc -l)
  ((left == 0)) && return 0
  echo "removing $left /dev/shm/qb-$pid-* left by rtotemd pid $pid"
  rm -rf /dev/shm/qb-"$pid"-* 2>/dev/null || true
}

stop_pids() {  # stop_pids PID...: TERM to all, KILL to those still there after 5 s; reaps them
  local pid deadline=$((SECONDS + 5))
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}

# shellcheck disable=SC2317  # reached through the trap
cleanup() {
  local status=$? pid node name
  trap - EXIT
  set +e
  for pid in "${helper_pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  stop_pids "${listen_pid[@]}"
  stop_pids "${daemon_pid[@]}"
  for pid in "${daemon_pid[@]}"; do remove_shm "$pid"; done
  # Whatever still runs in our namespaces was started by this run (a send under `timeout`).
  for name in "${namespaces[@]}"; do
    for pid in $(ip netns pids "$name" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for name in "${namespaces[@]}"; do ip netns del "$name" 2>/dev/null; done
  if [[ "${RTOTEM_NETNS_KEEP:-0}" == 1 ]]; then echo "netns-cluster: kept $dir"; else rm -rf "$dir"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

show_logs() {
  local node
  for node in 1 2 3; do
    echo "--- node $node: daemon log (tail) ---"
    tail -n 25 "$dir/node-$node.log" 2>/dev/null || true
    echo "--- node $node: listener (tail) ---"
    tail -n 15 "$dir/listen-$node.txt" 2>/dev/null || true
  done
}

fail() {
  echo "netns-cluster: FAIL: $* (after $((SECONDS - started)) s)"
  show_logs
  exit 1
}

step() { echo; echo "== $* ($((SECONDS - started)) s) =="; }
check() { echo "check: $*"; }

# ---------------------------------------------------------------- network

# shellcheck source=tests/lib/netns_switch.sh
source "$repo/tests/lib/netns_switch.sh"
net_up() {
  local node
  switch_up 1 2 3
  ((links == 1)) || switch_link 1 "$subnet1" 1 2 3
  for node in 1 2 3; do impair "$node"; done
}

set_links() {  # set_links NODE up|down LINK...: NODE's switch ports of those links
  local node=$1 state=$2 link
  shift 2
  for link; do ip -n "$(ns sw)" link set "$(switch_port "$link" "$node")" "$state"; done
}
all_links() { seq 0 $((links - 1)); }

impairment=""  # netem | nft: chosen on node 1, the same on all
impair() {  # impair NODE: loss (and delay) on what leaves through NODE's rt0, one pass per packet
  local node=$1
  if [[ "$impairment" != nft ]] &&
     tc -n "$(ns "$node")" qdisc add dev rt0 root netem loss "$loss_pct%" delay "${delay_args[@]}" 2>/dev/null; then
    impairment=netem
    return 0
  fi
  [[ "$impairment" != netem ]] || fail "tc netem worked on node 1 but not on node $node"
  command -v nft >/dev/null || skip "this kernel has no sch_netem, and nftables (nft) is not installed"
  ip netns exec "$(ns "$node")" nft -f - <<EOF || skip "this kernel has no sch_netem, and nft refused the loss rule"
table inet rtotem_loss {
  chain out {
    type filter hook output priority 0; policy accept;
    oifname "rt0" numgen random mod 100 < $loss_pct counter drop
  }
}
EOF
  impairment=nft
}

dropped() {  # dropped NODE: packets the impairment has dropped on NODE's rt0 so far
  if [[ "$impairment" == netem ]]; then
    tc -n "$(ns "$1")" -s qdisc show dev rt0 | sed -nE 's/.*\(dropped ([0-9]+),.*/\1/p' | head -n 1
  else
    ip netns exec "$(ns "$1")" nft list chain inet rtotem_loss out | sed -nE 's/.*counter packets ([0-9]+) .*/\1/p'
  fi
}

write_config() {
  local node
  {
    printf 'totem {\n\tversion: 2\n\tcluster_name: %s\n\ttransport: udpu\n\ttoken: %d\n' "$prefix" "$token_ms"
    printf '\tlink_mode: %s\n' "$link_mode"
    printf '\tinterface {\n\t\tmcastport: 5405\n\t}\n}\n'
    printf 'nodelist {\n'
    for node in 1 2 3; do
      printf '\tnode {\n\t\tnodeid: %d\n\t\tring0_addr: %s.%d\n' "$node" "$subnet" "$node"
      ((links == 1)) || printf '\t\tring1_addr: %s.%d\n' "$subnet1" "$node"
      printf '\t}\n'
    done
    printf '}\n'
    printf 'logging {\n\tto_stderr: yes\n\tto_syslog: no\n\ttimestamp: on\n}\n'
  } >"$dir/rtotem.conf"
}

# ---------------------------------------------------------------- daemons and clients

ctl() {  # ctl NODE ARGS...: rtotemctl against node NODE's daemon, in its namespace
  local node=$1; shift
  ip netns exec "$(ns "$node")" timeout 10 "$rtotemctl" --ipc-name "$(ipc "$node")" "$@"
}

daemon_start() {
  local node=$1
  mkdir -p "$dir/state-$node"
  echo "--- start ($((SECONDS - started)) s) ---" >>"$dir/node-$node.log"
  # `ip netns exec` execs the command: $! is the daemon's own pid.
  ip netns exec "$(ns "$node")" "$rtotemd" -f -c "$dir/rtotem.conf" --nodeid "$node" \
    --ipc-name "$(ipc "$node")" --state-dir "$dir/state-$node" >>"$dir/node-$node.log" 2>&1 &
  daemon_pid[$node]=$!
}

daemon_kill9() {
  local node=$1 pid=${daemon_pid[$1]}
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  unset "daemon_pid[$node]"
  remove_shm "$pid"
}

daemons_alive() {  # fails the test if a daemon that should run has exited (a crash)
  local node
  for node in "${!daemon_pid[@]}"; do
    kill -0 "${daemon_pid[$node]}" 2>/dev/null || fail "node $node's rtotemd (pid ${daemon_pid[$node]}) has exited"
  done
}

listen_start() {  # listen_start NODE: a listener on group $group, output to listen-NODE.txt
  local node=$1
  ip netns exec "$(ns "$node")" "$rtotemctl" --ipc-name "$(ipc "$node")" listen "$group" \
    >>"$dir/listen-$node.txt" 2>&1 &
  listen_pid[$node]=$!
}

members_of() {  # members_of NODE: "1 2 3" if operational, else empty
  local status
  status=$(ctl "$1" status 2>/dev/null) || return 0
  grep -qx "state: operational" <<<"$status" || return 0
  sed -n 's/^members: //p' <<<"$status" | tr -d ','
}

wait_ring() {  # wait_ring NODE "1 2 3": node NODE operational on a ring of exactly those members
  local node=$1 want=$2 deadline=$((SECONDS + change_s))
  check "node $node is operational on a ring of [$want]"
  while ((SECONDS < deadline)); do
    daemons_alive
    [[ "$(members_of "$node")" == "$want" ]] && return 0
    sleep 0.2
  done
  echo "node $node's status:"; ctl "$node" status 2>&1 | grep -v '^link\.' || true
  fail "node $node is not on a ring of [$want] after ${change_s} s"
}

wait_group_size() {  # wait_group_size NODE COUNT: node NODE sees COUNT processes in $group
  local node=$1 want=$2 deadline=$((SECONDS + change_s))
  check "node $node sees $want processes in group '$group'"
  while ((SECONDS < deadline)); do
    [[ "$(ctl "$node" members "$group" 2>/dev/null | grep -o 'nodeid' | wc -l)" == "$want" ]] && return 0
    sleep 0.2
  done
  ctl "$node" members "$group" || true
  fail "node $node does not see $want processes in group '$group'"
}

declare -A marked=()  # node -> lines of its listener's output before the event looked for
mark() {  # mark NODE...: wait_line looks only at what those listeners print from now on
  local node
  for node in "$@"; do marked[$node]=$(wc -l <"$dir/listen-$node.txt"); done
}

wait_line() {  # wait_line NODE REGEX WHAT: until listener NODE prints (after its mark) a line matching REGEX
  local node=$1 regex=$2 what=$3 deadline=$((SECONDS + change_s))
  check "node $node's listener sees $what"
  while ((SECONDS < deadline)); do
    tail -n +$((${marked[$node]:-0} + 1)) "$dir/listen-$node.txt" | grep -Eq "$regex" && return 0
    sleep 0.2
  done
  fail "node $node's listener printed no line matching /$regex/ ($what) after line ${marked[$node]:-0}"
}

joined_re() {  # joined_re NODE [PID]: a group change line in which NODE's listener (PID) joins
  echo "^group $group: .* joined \[([^]]* )?$1:${2:-${listen_pid[$1]}}[] ]"
}

left_re() {  # left_re NODE [PID]: a group change line in which NODE's listener (PID) leaves
  echo "^group $group: .* left \[([^]]* )?$1:${2:-${listen_pid[$1]}}\("
}

send_from() {  # send_from NODE TAG COUNT &: COUNT messages "TAG nNODE I", one after the other
  local node=$1 tag=$2 count=$3 i
  for ((i = 1; i <= count; i++)); do
    ctl "$node" send "$group" "$tag n$node $i" >/dev/null || { echo "send $tag n$node $i failed"; return 1; }
  done
}

send_start() {  # send_start TAG COUNT NODE...: those nodes start sending, concurrently
  local tag=$1 count=$2 node
  shift 2
  echo "nodes [$*] each send $count messages tagged '$tag', concurrently"
  for node in "$@"; do
    send_from "$node" "$tag" "$count" &
    helper_pids+=("$!")
  done
}

send_wait() {  # send_wait: every sender started has finished, each send accepted
  local pid deadline=$((SECONDS + deliver_s))
  for pid in "${helper_pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && fail "sending took more than ${deliver_s} s"
    wait "$pid" || fail "a send failed (rtotemctl's message above)"
  done
  helper_pids=()
}

messages_of() {  # messages_of NODE TAG: "node:pid TAG nSENDER I" lines, in delivery order
  sed -nE "s/^[0-9]+ ([0-9]+:[0-9]+ $2 n[0-9]+ [0-9]+)$/\1/p" "$dir/listen-$1.txt"
}

wait_delivered() {  # wait_delivered TAG COUNT NODE...: each listener has COUNT messages tagged TAG
  local tag=$1 want=$2 node got deadline=$((SECONDS + deliver_s))
  shift 2
  check "listeners on [$*] each deliver $want messages tagged '$tag'"
  for node in "$@"; do
    while got=$(messages_of "$node" "$tag" | wc -l); ((got < want)) && ((SECONDS < deadline)); do
      daemons_alive
      sleep 0.2
    done
    ((got == want)) || fail "node $node's listener delivered $got messages tagged '$tag', want $want"
  done
}

check_same() {  # check_same TAG SENDERS COUNT NODE...: identical sequences, complete, no duplicates
  local tag=$1 senders=$2 count=$3 first=$4 node sender
  shift 3
  check "listeners on [$*] delivered the same '$tag' messages in the same order"
  messages_of "$first" "$tag" >"$dir/seq-$tag-$first.txt"
  for node in "$@"; do
    messages_of "$node" "$tag" >"$dir/seq-$tag-$node.txt"
    diff -u "$dir/seq-$tag-$first.txt" "$dir/seq-$tag-$node.txt" >"$dir/diff.txt" || {
      head -n 40 "$dir/diff.txt"
      fail "node $node delivered '$tag' messages differently from node $first"
    }
  done
  check "'$tag': every message of [$senders] exactly once, each sender's in its sending order"
  [[ -z "$(cut -d' ' -f2- "$dir/seq-$tag-$first.txt" | sort | uniq -d)" ]] ||
    fail "'$tag' duplicated at node $first: $(cut -d' ' -f2- "$dir/seq-$tag-$first.txt" | sort | uniq -d | head -3)"
  for sender in $senders; do
    diff <(awk -v n="n$sender" '$3 == n { print $4 }' "$dir/seq-$tag-$first.txt") <(seq "$count") >/dev/null ||
      fail "'$tag' from node $sender at node $first: not 1..$count in order:" \
        "$(awk -v n="n$sender" '$3 == n { printf "%s ", $4 }' "$dir/seq-$tag-$first.txt")"
  done
}

check_absent() {  # check_absent TAG NODE...: no message tagged TAG reached those listeners
  local tag=$1 node
  shift
  check "no '$tag' message reached the listeners on [$*]"
  for node in "$@"; do
    [[ -z "$(messages_of "$node" "$tag")" ]] ||
      fail "node $node delivered '$tag' messages, sent in another partition: $(messages_of "$node" "$tag" | head -3)"
  done
}

# ---------------------------------------------------------------- scenarios

step "network: namespaces $prefix-{1,2,3,sw}, bridge br0, $subnet.1-3/24$( ((links == 1)) || echo ", bridge br1, $subnet1.1-3/24")"
net_up
write_config
if [[ "$impairment" == netem ]]; then
  echo "every node's rt0: tc netem loss $loss_pct% delay $delay"
else
  echo "every node's rt0: nftables drops $loss_pct% at random; NO delay (this kernel has no sch_netem)"
fi

step "a. a ring of 3 forms over the bridge under loss; $messages messages per node, agreed order"
for node in 1 2 3; do daemon_start "$node"; done
for node in 1 2 3; do wait_ring "$node" "1 2 3"; done
for node in 1 2 3; do listen_start "$node"; done
wait_group_size 1 3
for node in 1 2 3; do wait_group_size "$node" 3; done
send_start a "$messages" 1 2 3
send_wait
wait_delivered a $((3 * messages)) 1 2 3
check_same a "1 2 3" "$messages" 1 2 3
check "the listeners' whole outputs agree, delivery numbers included"
for node in 2 3; do
  diff <(grep -E '^[0-9]+ ' "$dir/listen-1.txt") <(grep -E '^[0-9]+ ' "$dir/listen-$node.txt") >/dev/null ||
    fail "node $node's numbered deliveries differ from node 1's"
done
check "the impairment dropped packets (on ~100 packets a node, 0 at one node is possible, not at all three)"
lost_all=0
for node in 1 2 3; do
  lost=$(dropped "$node")
  lost_all=$((lost_all + ${lost:-0}))
  echo "node $node: ${lost:-?} packets dropped;" \
    "$(ctl "$node" stats | grep -E '(retransmits_requested|retransmits_sent|tokens_retransmitted):' | tr '\n' ' ')"
done
((lost_all > 0)) || fail "no packet was dropped on any link: the loss is not in effect"
echo "a: PASS: $((3 * messages)) messages, the same order on all three nodes"

ring_of() { ctl "$1" status 2>/dev/null | sed -n 's/^ring.seq: //p'; }  # ring_of NODE: its ring's seq
link_lines() { grep -c "link $1 (udp) to node $2 is $3" "$dir/node-1.log" || true; }  # as node 1 logs them

if ((links == 2)); then
  step "l. node 3 loses link 0, then link 1, then link 0 to node 1 one way, each under traffic: the ring stays, every message arrives"
  declare -A ring_before=()
  for node in 1 2 3; do ring_before[$node]=$(ring_of "$node"); done
  for link in 0 1; do
    ups=$(link_lines "$link" 3 up)
    set_links 3 down "$link"
    send_start "l$link" 20 1 2 3
    send_wait
    wait_delivered "l$link" 60 1 2 3
    check_same "l$link" "1 2 3" 20 1 2 3
    check "node 1 saw link $link to node 3 go down"
    deadline=$((SECONDS + 5))
    while (($(link_lines "$link" 3 down) == 0)) && ((SECONDS < deadline)); do sleep 0.2; done
    (($(link_lines "$link" 3 down) > 0)) || fail "node 1 never logged link $link to node 3 down"
    check "node 1's status shows link $link to node 3 down, the other link up"
    ctl 1 status | grep -qx "links.$link.nodes.3.connected: false" || fail "node 1's status: link $link to 3 not down"
    ctl 1 status | grep -qx "links.$((1 - link)).nodes.3.connected: true" || fail "node 1's status: the other link down"
    set_links 3 up "$link"
    check "node 1 sees link $link to node 3 up again"
    deadline=$((SECONDS + 10))
    while (($(link_lines "$link" 3 up) <= ups)) && ((SECONDS < deadline)); do sleep 0.2; done
    (($(link_lines "$link" 3 up) > ups)) || fail "link $link to node 3 did not come back up at node 1"
  done
  # One way, one peer: node 3's link 0 packets to node 1 go nowhere (a blackhole route), the rest
  # flows. Both ends lose that link's pongs and leave it; node 3 still reaches node 2 on link 0.
  downs=$(link_lines 0 3 down)
  ip -n "$(ns 3)" route add blackhole "$subnet.1/32"
  send_start l2 20 1 2 3
  send_wait
  wait_delivered l2 60 1 2 3
  check_same l2 "1 2 3" 20 1 2 3
  check "node 1 saw link 0 to node 3 go down, and node 3 kept link 0 to node 2"
  deadline=$((SECONDS + 5))
  while (($(link_lines 0 3 down) == downs)) && ((SECONDS < deadline)); do sleep 0.2; done
  (($(link_lines 0 3 down) > downs)) || fail "node 1 never logged link 0 to node 3 down (one-way cut)"
  ctl 3 status | grep -qx "links.0.nodes.2.connected: true" || fail "node 3 lost link 0 to node 2 as well"
  ip -n "$(ns 3)" route del blackhole "$subnet.1/32"
  check "no node changed its ring"
  for node in 1 2 3; do
    [[ "$(ring_of "$node")" == "${ring_before[$node]}" ]] ||
      fail "node $node's ring changed (seq ${ring_before[$node]} -> $(ring_of "$node")) for one link's failure"
  done
  echo "l: PASS: one link at a time cut, then one way to one peer: the same ring throughout, 180 messages in the" \
    "same order at all three"
fi

step "b. cut node 3's links: [1, 2] and [3]; messages on both sides; restore: one ring again"
mark 1 2 3
set_links 3 down $(all_links)
wait_ring 1 "1 2"
wait_ring 2 "1 2"
wait_ring 3 "3"
for node in 1 2; do wait_line "$node" "$(left_re 3)" "node 3's listener leave"; done
wait_line 3 "^group $group: members \[3:${listen_pid[3]}\] " "itself alone in the group"
send_start b12 20 1 2
send_start b3 20 3
send_wait
wait_delivered b12 40 1 2
wait_delivered b3 20 3
check_same b12 "1 2" 20 1 2
check_same b3 "3" 20 3
check_absent b12 3
check_absent b3 1 2

mark 1 2 3
set_links 3 up $(all_links)
for node in 1 2 3; do wait_ring "$node" "1 2 3"; done
for node in 1 2; do wait_line "$node" "$(joined_re 3)" "node 3's listener rejoin"; done
for node in 1 2; do wait_line 3 "$(joined_re "$node")" "node $node's listener rejoin"; done
send_start c 20 1 2 3
send_wait
wait_delivered c 60 1 2 3
check_same c "1 2 3" 20 1 2 3
check_absent b12 3
check_absent b3 1 2
echo "b: PASS: split into [1, 2] and [3], each side delivered its own, merged, agreed again"

step "c. kill -9 node 2's daemon under loss; [1, 3]; restart it; [1, 2, 3]"
old_listener=${listen_pid[2]}
mark 1 3
daemons_alive
daemon_kill9 2
check "node 2's listener exits when its daemon dies"
timeout 10 tail --pid="$old_listener" -f /dev/null || fail "node 2's listener still runs without its daemon"
wait "$old_listener" 2>/dev/null || true
unset "listen_pid[2]"
wait_ring 1 "1 3"
wait_ring 3 "1 3"
for node in 1 3; do wait_line "$node" "$(left_re 2 "$old_listener")" "node 2's listener leave"; done
send_start d 10 1 3
send_wait
wait_delivered d 20 1 3
check_same d "1 3" 10 1 3

mark 1 3
daemon_start 2
for node in 1 2 3; do wait_ring "$node" "1 2 3"; done
listen_start 2
for node in 1 2 3; do wait_group_size "$node" 3; done
for node in 1 3; do wait_line "$node" "$(joined_re 2)" "node 2's new listener join"; done
send_start e 20 1 2 3
send_wait
wait_delivered e 60 1 2 3
check_same e "1 2 3" 20 1 2 3
echo "c: PASS: survivors formed [1, 3], node 2 restarted and rejoined, agreed again"

daemons_alive
step "netns-cluster ($links link$( ((links == 1)) || echo "s, $link_mode")): PASS"
