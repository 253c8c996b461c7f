#!/usr/bin/env bash
# Instructions the protocol spends per delivered message, counted by callgrind (repeatable whatever
# the machine is doing). Collection is on only inside the Node's entry points (on_packets,
# on_timer, submit, with the transport calls they make) and off again inside the simulator's
# delivery callback (the checker's byte-by-byte verification): callgrind's toggles nest, so the
# run's total is exactly the Node's own cost. Divided by the deliveries at all nodes.
# usage: bench/sim_instructions.sh [BUILD_DIR] [VIRTUAL_MS]   (rows: 3 and 8 nodes, 64 B and 1 KiB)
set -euo pipefail
build=${1:-build}
virtual_ms=${2:-100}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }

echo "| nodes | payload B | deliveries | Node instructions | instructions / delivery |"
echo "|---:|---:|---:|---:|---:|"
for row in "3 64" "3 1024" "8 64" "8 1024"; do
  read -r nodes size <<<"$row"
  file="$out/cg.$nodes.$size"
  deliveries=$(valgrind --tool=callgrind --callgrind-out-file="$file" \
      --toggle-collect='rtotem::membership::Node::on_packets*' \
      --toggle-collect='rtotem::membership::Node::on_timer*' \
      --toggle-collect='rtotem::membership::Node::submit*' \
      --toggle-collect='rtotem::sim::SimCluster::on_deliver*' \
      "$build/bench/rtotem-bench-sim" "$virtual_ms" "$nodes" "$size" 2>/dev/null |
    awk -F'|' 'NR==3 { gsub(" ", "", $5); print $5 }')
  node=$(awk '/^totals:/ { print $2 }' "$file")
  echo "| $nodes | $size | $deliveries | $node | $(( node / deliveries )) |"
done
