# shellcheck shell=bash disable=SC2034,SC2154  # `build` is the caller's; all_nodes is for it
# Sourced by what each Soft-RoCE VM runs (vm_*_node.sh, inside rxe-vm): this node's rtotemd with
# one state directory (kept across restarts, as systemd's would be), a listener on group "orders",
# and waits that are all bounded. The caller sets `build` (the build directory) first and traps
# EXIT to stop_node (or to its own cleanup that calls it).
node=$((RXE_NODE + 1))
state=$(mktemp -d /tmp/rtotem-state.XXXXXX)
rtotemctl=$build/src/client/rtotemctl
all_nodes=$(seq -s ' ' 1 "$RXE_NODES")
daemon=""
listener=""
ctl() { timeout 10 "$rtotemctl" "$@"; }
say() { echo "node $node: $*"; }

# write_conf FILE CLUSTER GROUP [TOTEM_LINE...]: transport rdma to multicast GROUP, token 5000 ms
# (an emulated CPU stalls for hundreds of ms under load), the lines given, every VM in the nodelist
# (the first $conf_nodes VMs where the caller sets it).
write_conf() {
  local file=$1 cluster=$2 group=$3 line ip i=1
  shift 3
  {
    printf 'totem {\n  cluster_name: %s\n  transport: rdma\n  token: 5000\n  token_coefficient: 0\n' "$cluster"
    for line in "$@"; do printf '  %s\n' "$line"; done
    printf '  interface {\n    mcastaddr: %s\n  }\n}\nnodelist {\n' "$group"
    for ip in $RXE_IPS; do
      ((i > ${conf_nodes:-$RXE_NODES})) && break
      printf '  node {\n    nodeid: %d\n    ring0_addr: %s\n  }\n' "$i" "$ip"
      i=$((i + 1))
    done
    printf '}\n'
  } >"$file"
}

# write_udp_conf FILE CLUSTER [TRANSPORT]: a corosync.conf for the HA tests: UDP (udpu, or knet
# without crypto for Debian's Corosync), token 5000 ms, every VM a node named as its host
# (rxe-node0...), votequorum.
write_udp_conf() {
  local file=$1 cluster=$2 transport=${3:-udpu} ip i=1
  {
    printf 'totem {\n  cluster_name: %s\n  transport: %s\n  token: 5000\n  token_coefficient: 0\n' "$cluster" "$transport"
    [[ $transport == knet ]] && printf '  version: 2\n  crypto_cipher: none\n  crypto_hash: none\n'
    printf '}\nnodelist {\n'
    for ip in $RXE_IPS; do
      printf '  node {\n    nodeid: %d\n    name: rxe-node%d\n    ring0_addr: %s\n  }\n' "$i" "$((i - 1))" "$ip"
      i=$((i + 1))
    done
    printf '}\nquorum {\n  provider: corosync_votequorum\n}\n'
  } >"$file"
}

stop_node() {
  [[ -n "$listener" ]] && kill -TERM "$listener" 2>/dev/null
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  true
}

start_daemon() {  # start_daemon CONF: appends to one log, so a restart's lines follow the last run's
  "$build/src/daemon/rtotemd" -f -c "$1" --nodeid "$node" --state-dir "$state" >>"$RXE_OUT/rtotemd.log" 2>&1 &
  daemon=$!
}

# wait_ring "1 2 3" SECONDS: until this node is operational on a ring of exactly those members
wait_ring() {
  local want=$1 deadline=$((SECONDS + $2)) status
  while ((SECONDS < deadline)); do
    status=$(ctl status 2>/dev/null || true)
    if grep -qx 'state: operational' <<<"$status" && [[ "$(sed -n 's/^members: //p' <<<"$status" | tr -d ',')" == "$want" ]]; then
      return 0
    fi
    kill -0 "$daemon" 2>/dev/null || { say "rtotemd exited"; tail -20 "$RXE_OUT/rtotemd.log"; exit 1; }
    sleep 0.2
  done
  say "no ring of [$want] after $2 s: $(ctl status 2>&1 | grep -E '^(state|members):' | tr '\n' ' ')"
  return 1
}

start_listener() {  # start_listener FILE: a listener on "orders", until it is in the group (60 s)
  "$rtotemctl" listen orders >"$1" 2>&1 &
  listener=$!
  for ((t = 0; t < 300; t++)); do  # its first line says it joined
    grep -q '^group orders: ' "$1" && return 0
    sleep 0.2
  done
  say "the listener did not join: $(cat "$1")"
  return 1
}

wait_listeners() {  # until every node's listener is in group "orders" (60 s)
  for ((t = 0; t < 300; t++)); do
    [[ "$(ctl members orders 2>/dev/null | grep -o 'nodeid' | wc -l)" == "$RXE_NODES" ]] && return 0
    sleep 0.2
  done
  say "not every node's listener is in the group: $(ctl members orders 2>&1 | tr '\n' ' ')"
  return 1
}

delivered() {  # delivered FILE PATTERN: the listener's messages whose text matches PATTERN
  grep -cE "^[0-9]+ [0-9]+:[0-9]+ $2" "$1" || true
}

wait_delivered() {  # wait_delivered FILE PATTERN COUNT: until that many were delivered (120 s)
  for ((t = 0; t < 600; t++)); do
    [[ "$(delivered "$1" "$2")" -ge "$3" ]] && break
    sleep 0.2
  done
  say "delivered $(delivered "$1" "$2") of $3 /$2/"
  [[ "$(delivered "$1" "$2")" -ge "$3" ]]
}
