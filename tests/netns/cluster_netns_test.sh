#!/usr/bin/env bash
# N real rtotemd daemons (3 unless told), one per network namespace, joined by a bridge in another
# namespace,
# with packet loss (and delay, where the kernel has netem) on every node's link: agreed delivery
# under loss, a cut and restored link (partition and merge), a kill -9 and restart. Nothing touches
# the host's own namespace.
#
# Usage: cluster_netns_test.sh [LINKS [MODE [NODES]]]. LINKS 2: every node also has link 1, on a
# second bridge (br1, rt1 = 10.77.14.N/24, unimpaired), in link_mode MODE (passive, the default, or
# active: every packet on both links, so the protocol gets a copy of each token, join and message
# and must drop it); then step l cuts one link of the last node at a time under traffic, then its
# link 0 to node 1 only, one way (the ring must not change, and the messages still arrive, once
# each, in order), and step b cuts both. NODES: 3 (the default) to 9.
#
# Topology (prefix P = rtn<pid>, unique per run; the last node, N, is the one cut off):
#   P-1 .. P-N:    lo, and veth rt0 = 10.77.13.N/24; what leaves through rt0 is impaired once:
#                  tc netem "loss L% delay D" if the kernel has sch_netem, else an nftables rule
#                  that drops L% at random (loss only: nftables cannot delay)
#   P-sw:          bridge br0 with the peers p1 .. pN (cutting node N = pN down)
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
nodes="${3:-3}"
[[ "$links" == 1 || "$links" == 2 ]] && [[ "$link_mode" == passive || "$link_mode" == active ]] &&
  [[ "$nodes" =~ ^[3-9]$ ]] ||
  { echo "usage: $0 [1|2 [passive|active [3..9]]] (links per node, link mode, nodes)"; exit 2; }
all=$(seq -s ' ' 1 "$nodes")        # every node: "1 2 3"
last=$nodes                          # the node cut off in steps l and b
rest=$(seq -s ' ' 1 $((nodes - 1)))  # the majority it leaves: "1 2"
but_2=$(seq -s ' ' 1 "$nodes" | sed 's/^1 2 /1 /')  # the survivors of node 2's kill: "1 3"
prefix="rtn$$"
subnet="10.77.13"
subnet1="10.77.14"  # link 1's network
group="t"
token_ms=1000
change_s=30    # bounds a ring forming, splitting or merging (token 1 s), a link going down or up
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

ns() { echo "$prefix-$1"; }  # ns 1..N | ns sw
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
  for node in $all; do
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
  switch_up $all
  ((links == 1)) || switch_link 1 "$subnet1" $all
  for node in $all; do impair "$node"; done
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
    printf 'totem {\n\tversion: 2\n\tcluster_name: %s\n\ttransport: udpu\n\ttoken: %d\n\ttoken_coefficient: 0\n' "$prefix" "$token_ms"
    printf '\tlink_mode: %s\n' "$link_mode"
    printf '\tinterface {\n\t\tmcastport: 5405\n\t}\n}\n'
    printf 'nodelist {\n'
    for node in $all; do
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

members_of() {  # members_of NODE: "1 2 3" (its ring's members) if operational, else empty
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
  echo "^group $group: .* joined \[([^]]* )?$1:${2:-${listen_pid[$1]}}\("
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

step "network: namespaces $prefix-{1..$nodes,sw}, bridge br0, $subnet.1-$nodes/24$( ((links == 1)) || echo ", bridge br1, $subnet1.1-$nodes/24")"
net_up
write_config
if [[ "$impairment" == netem ]]; then
  echo "every node's rt0: tc netem loss $loss_pct% delay $delay"
else
  echo "every node's rt0: nftables drops $loss_pct% at random; NO delay (this kernel has no sch_netem)"
fi

step "a. a ring of $nodes forms over the bridge under loss; $messages messages per node, agreed order"
for node in $all; do daemon_start "$node"; done
for node in $all; do wait_ring "$node" "$all"; done
for node in $all; do listen_start "$node"; done
wait_group_size 1 "$nodes"
for node in $all; do wait_group_size "$node" "$nodes"; done
send_start a "$messages" $all
send_wait
wait_delivered a $((nodes * messages)) $all
check_same a "$all" "$messages" $all
check "the listeners' whole outputs agree, delivery numbers included"
for node in ${all#1 }; do
  diff <(grep -E '^[0-9]+ ' "$dir/listen-1.txt") <(grep -E '^[0-9]+ ' "$dir/listen-$node.txt") >/dev/null ||
    fail "node $node's numbered deliveries differ from node 1's"
done
check "the impairment dropped packets (on ~100 packets a node, 0 at one node is possible, not at all of them)"
lost_all=0
for node in $all; do
  lost=$(dropped "$node")
  lost_all=$((lost_all + ${lost:-0}))
  echo "node $node: ${lost:-?} packets dropped;" \
    "$(ctl "$node" stats | grep -E '(retransmits_requested|retransmits_sent|tokens_retransmitted):' | tr '\n' ' ')"
done
((lost_all > 0)) || fail "no packet was dropped on any link: the loss is not in effect"
echo "a: PASS: $((nodes * messages)) messages, the same order on all $nodes nodes"

ring_of() { ctl "$1" status 2>/dev/null | sed -n 's/^ring.seq: //p'; }  # ring_of NODE: its ring's seq
# wait_status NODE LINE WHAT: until NODE's status has LINE, within change_s. For a link that must be up:
# at 5 % loss each way a link misses two pings in a row now and then, goes down for a moment and
# comes back after two good pongs, so one reading may catch it down; a link that is cut stays down.
wait_status() {
  local node=$1 line=$2 what=$3 deadline=$((SECONDS + change_s))
  until ctl "$node" status | grep -qx "$line"; do
    ((SECONDS < deadline)) || fail "node $node's status: $what (no line '$line' within ${change_s} s)"
    sleep 0.2
  done
}
link_lines() { grep -c "link $1 (udp) to node $2 is $3" "$dir/node-1.log" || true; }  # as node 1 logs them

if ((links == 2)); then
  step "l. node $last loses link 0, then link 1, then link 0 to node 1 one way, each under traffic: the ring stays, every message arrives"
  declare -A ring_before=()
  for node in $all; do ring_before[$node]=$(ring_of "$node"); done
  for link in 0 1; do
    ups=$(link_lines "$link" "$last" up)
    set_links "$last" down "$link"
    send_start "l$link" 20 $all
    send_wait
    wait_delivered "l$link" $((20 * nodes)) $all
    check_same "l$link" "$all" 20 $all
    check "node 1 saw link $link to node $last go down"
    deadline=$((SECONDS + change_s))
    while (($(link_lines "$link" "$last" down) == 0)) && ((SECONDS < deadline)); do sleep 0.2; done
    (($(link_lines "$link" "$last" down) > 0)) || fail "node 1 never logged link $link to node $last down"
    check "node 1's status shows link $link to node $last down, the other link up"
    wait_status 1 "links.$link.nodes.$last.connected: false" "link $link to $last not down"
    wait_status 1 "links.$((1 - link)).nodes.$last.connected: true" "the other link down"
    set_links "$last" up "$link"
    check "node 1 sees link $link to node $last up again"
    deadline=$((SECONDS + change_s))
    while (($(link_lines "$link" "$last" up) <= ups)) && ((SECONDS < deadline)); do sleep 0.2; done
    (($(link_lines "$link" "$last" up) > ups)) || fail "link $link to node $last did not come back up at node 1"
  done
  # One way, one peer: node N's link 0 packets to node 1 go nowhere (a blackhole route), the rest
  # flows. Both ends lose that link's pongs and leave it; node N still reaches node 2 on link 0.
  # Counted once link 0 is up at node 1: a pong lost under load can take it down for a moment,
  # and a link already down when the cut comes logs no new line.
  wait_status 1 "links.0.nodes.$last.connected: true" "link 0 to $last down before the one-way cut"
  downs=$(link_lines 0 "$last" down)
  ip -n "$(ns "$last")" route add blackhole "$subnet.1/32"
  send_start l2 20 $all
  send_wait
  wait_delivered l2 $((20 * nodes)) $all
  check_same l2 "$all" 20 $all
  check "node 1 saw link 0 to node $last go down, and node $last kept link 0 to node 2"
  deadline=$((SECONDS + change_s))
  while (($(link_lines 0 "$last" down) == downs)) && ((SECONDS < deadline)); do sleep 0.2; done
  (($(link_lines 0 "$last" down) > downs)) || fail "node 1 never logged link 0 to node $last down (one-way cut)"
  wait_status "$last" "links.0.nodes.2.connected: true" "lost link 0 to node 2 as well"
  ip -n "$(ns "$last")" route del blackhole "$subnet.1/32"
  check "no node changed its ring"
  for node in $all; do
    [[ "$(ring_of "$node")" == "${ring_before[$node]}" ]] ||
      fail "node $node's ring changed (seq ${ring_before[$node]} -> $(ring_of "$node")) for one link's failure"
  done
  echo "l: PASS: one link at a time cut, then one way to one peer: the same ring throughout, $((60 * nodes))" \
    "messages in the same order at all $nodes"
fi

step "b. cut node $last's links: [$rest] and [$last]; messages on both sides; restore: one ring again"
mark $all
set_links "$last" down $(all_links)
for node in $rest; do wait_ring "$node" "$rest"; done
wait_ring "$last" "$last"
for node in $rest; do wait_line "$node" "$(left_re "$last")" "node $last's listener leave"; done
wait_line "$last" "^group $group: members \[$last:${listen_pid[$last]}\] " "itself alone in the group"
send_start bmaj 20 $rest
send_start bcut 20 "$last"
send_wait
wait_delivered bmaj $((20 * (nodes - 1))) $rest
wait_delivered bcut 20 "$last"
check_same bmaj "$rest" 20 $rest
check_same bcut "$last" 20 "$last"
check_absent bmaj "$last"
check_absent bcut $rest

mark $all
set_links "$last" up $(all_links)
for node in $all; do wait_ring "$node" "$all"; done
for node in $rest; do wait_line "$node" "$(joined_re "$last")" "node $last's listener rejoin"; done
for node in $rest; do wait_line "$last" "$(joined_re "$node")" "node $node's listener rejoin"; done
send_start c 20 $all
send_wait
wait_delivered c $((20 * nodes)) $all
check_same c "$all" 20 $all
check_absent bmaj "$last"
check_absent bcut $rest
echo "b: PASS: split into [$rest] and [$last], each side delivered its own, merged, agreed again"

step "c. kill -9 node 2's daemon under loss; [$but_2]; restart it; [$all]"
old_listener=${listen_pid[2]}
mark $but_2
daemons_alive
daemon_kill9 2
check "node 2's listener exits when its daemon dies"
timeout 10 tail --pid="$old_listener" -f /dev/null || fail "node 2's listener still runs without its daemon"
wait "$old_listener" 2>/dev/null || true
unset "listen_pid[2]"
for node in $but_2; do wait_ring "$node" "$but_2"; done
for node in $but_2; do wait_line "$node" "$(left_re 2 "$old_listener")" "node 2's listener leave"; done
send_start d 10 $but_2
send_wait
wait_delivered d $((10 * (nodes - 1))) $but_2
check_same d "$but_2" 10 $but_2

mark $but_2
daemon_start 2
for node in $all; do wait_ring "$node" "$all"; done
listen_start 2
for node in $all; do wait_group_size "$node" "$nodes"; done
for node in $but_2; do wait_line "$node" "$(joined_re 2)" "node 2's new listener join"; done
send_start e 20 $all
send_wait
wait_delivered e $((20 * nodes)) $all
check_same e "$all" 20 $all
echo "c: PASS: survivors formed [$but_2], node 2 restarted and rejoined, agreed again"

daemons_alive
step "netns-cluster ($nodes nodes, $links link$( ((links == 1)) || echo "s, $link_mode")): PASS"
