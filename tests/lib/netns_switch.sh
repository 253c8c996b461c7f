# shellcheck shell=bash
# A switch for the namespace tests: namespace `ns sw` holds bridge br0; each node N gets namespace
# `ns N` with lo up and veth rt0 = $subnet.N/24, whose peer pN is a port of br0 (cut a node off
# with `ip -n "$(ns sw)" link set pN down`). A second network, for a second link, is switch_link.
# Sourced; defines only. Uses the caller's ns, subnet, skip and the array namespaces (every
# namespace made is appended, for the caller's cleanup).
# IPv4 has no DAD and the bridge runs no STP: ports forward at once.

switch_up() {  # switch_up NODE...: the switch's and the nodes' namespaces, and network 0
  local node
  ip netns add "$(ns sw)" 2>/dev/null || skip "ip netns add failed (no network namespaces here?)"
  namespaces+=("$(ns sw)")
  ip -n "$(ns sw)" link set lo up
  for node; do
    ip netns add "$(ns "$node")"
    namespaces+=("$(ns "$node")")
    ip -n "$(ns "$node")" link set lo up
  done
  switch_link 0 "$subnet" "$@"
}

switch_port() {  # switch_port L NODE: node NODE's port on network L's bridge: pN, then pL-N
  if (($1 == 0)); then echo "p$2"; else echo "p$1-$2"; fi
}

switch_link() {  # switch_link L SUBNET NODE...: bridge brL in the switch, veth rtL = SUBNET.N/24
  local link=$1 net=$2 node
  shift 2
  ip -n "$(ns sw)" link add "br$link" type bridge 2>/dev/null || skip "no bridge support (ip link add type bridge)"
  ip -n "$(ns sw)" link set "br$link" up
  for node; do switch_plug "$link" "$net" "$node"; done
}

switch_plug() {  # switch_plug L SUBNET NODE: node NODE's veth rtL = SUBNET.NODE/24 into brL
  local link=$1 net=$2 node=$3 port
  port=$(switch_port "$link" "$node")
  ip -n "$(ns "$node")" link add "rt$link" type veth peer name "$port" netns "$(ns sw)"
  ip -n "$(ns "$node")" addr add "$net.$node/24" dev "rt$link"
  ip -n "$(ns "$node")" link set "rt$link" up
  ip -n "$(ns sw)" link set "$port" master "br$link"
  ip -n "$(ns sw)" link set "$port" up
}

switch_add_node() {  # switch_add_node NODE: a node more on network 0 of a running switch
  ip netns add "$(ns "$1")"
  namespaces+=("$(ns "$1")")
  ip -n "$(ns "$1")" link set lo up
  switch_plug 0 "$subnet" "$1"
}
