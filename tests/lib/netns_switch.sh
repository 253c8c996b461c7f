# shellcheck shell=bash
# A switch for the namespace tests: namespace `ns sw` holds bridge br0; each node N gets namespace
# `ns N` with lo up and veth rt0 = $subnet.N/24, whose peer pN is a port of br0 (cut a node off
# with `ip -n "$(ns sw)" link set pN down`). Sourced; defines only. Uses the caller's ns, subnet,
# skip and the array namespaces (every namespace made is appended, for the caller's cleanup).
# IPv4 has no DAD and the bridge runs no STP: ports forward at once.

switch_up() {  # switch_up NODE...
  local node
  ip netns add "$(ns sw)" 2>/dev/null || skip "ip netns add failed (no network namespaces here?)"
  namespaces+=("$(ns sw)")
  ip -n "$(ns sw)" link set lo up
  ip -n "$(ns sw)" link add br0 type bridge 2>/dev/null || skip "no bridge support (ip link add type bridge)"
  ip -n "$(ns sw)" link set br0 up
  for node; do
    ip netns add "$(ns "$node")"
    namespaces+=("$(ns "$node")")
    ip -n "$(ns "$node")" link set lo up
    ip -n "$(ns "$node")" link add rt0 type veth peer name "p$node" netns "$(ns sw)"
    ip -n "$(ns "$node")" addr add "$subnet.$node/24" dev rt0
    ip -n "$(ns "$node")" link set rt0 up
    ip -n "$(ns sw)" link set "p$node" master br0
    ip -n "$(ns sw)" link set "p$node" up
  done
}
