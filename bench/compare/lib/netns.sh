# shellcheck shell=bash
# N "hosts" on one machine: network namespaces $CMP_PREFIX-1..N, each with lo and a veth cb0
# (198.18.0.i/24, the RFC 2544 benchmarking range, MTU CMP_MTU) whose peer p<i> sits on bridge br0 in
# namespace $CMP_PREFIX-sw, and a second network for configs with two links: cb1 (198.18.1.i/24),
# its peer q<i> on bridge br1. Nothing is connected to the host's own interfaces. Multicast is routed
# out of cb0 (there is no default route) and the bridge floods it (no IGMP snooping, no querier).
# Sourced by compare.sh; defines only. Every namespace made is listed in CMP_NAMESPACES so that
# netns_down can delete exactly those.

CMP_SUBNET=198.18.0
CMP_SUBNET1=198.18.1  # link 1's network
CMP_NAMESPACES=()
CMP_NODES=0  # hosts up now

netns_node() { echo "$CMP_PREFIX-$1"; }
netns_addr() { echo "$CMP_SUBNET.$1"; }
netns_addr1() { echo "$CMP_SUBNET1.$1"; }

netns_up() {  # netns_up N
  local n=$1 i ns sw="$CMP_PREFIX-sw"
  CMP_NODES=$n
  ip netns add "$sw" && CMP_NAMESPACES+=("$sw")
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge mcast_snooping 0
  ip -n "$sw" link set br0 up
  ip -n "$sw" link add br1 type bridge mcast_snooping 0
  ip -n "$sw" link set br1 up
  for ((i = 1; i <= n; i++)); do
    ns=$(netns_node "$i")
    ip netns add "$ns" && CMP_NAMESPACES+=("$ns")
    ip -n "$ns" link set lo up
    ip -n "$ns" link add cb0 mtu "$CMP_MTU" type veth peer name "p$i" netns "$sw" mtu "$CMP_MTU"
    ip -n "$ns" addr add "$(netns_addr "$i")/24" dev cb0
    ip -n "$ns" link set cb0 up
    ip -n "$ns" route add 224.0.0.0/4 dev cb0
    ip -n "$sw" link set "p$i" master br0
    ip -n "$sw" link set "p$i" up
    ip -n "$ns" link add cb1 mtu "$CMP_MTU" type veth peer name "q$i" netns "$sw" mtu "$CMP_MTU"
    ip -n "$ns" addr add "$(netns_addr1 "$i")/24" dev cb1
    ip -n "$ns" link set cb1 up
    ip -n "$sw" link set "q$i" master br1
    ip -n "$sw" link set "q$i" up
  done
}

netns_link0() {  # netns_link0 NODE up|down: node NODE's link 0 (its port on br0), both ways
  ip -n "$CMP_PREFIX-sw" link set "p$1" "$2"
}

# Kills whatever still runs in our namespaces (only ours: the names carry this run's prefix), then
# deletes them.
netns_down() {
  local ns pid
  for ns in "${CMP_NAMESPACES[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  CMP_NAMESPACES=()
CMP_NODES=0  # hosts up now
}
