#!/usr/bin/env bash
# Instructions the protocol spends per delivered message, counted by callgrind (repeatable whatever
# the machine is doing): the inclusive cost of the Node's entry points (on_packets, on_timer,
# submit, with the transport calls they make), minus the simulator's delivery callback (the
# checker's byte-by-byte verification), divided by the deliveries at all nodes.
# usage: bench/sim_instructions.sh [BUILD_DIR] [VIRTUAL_MS]   (rows: 3 and 8 nodes, 64 B and 1 KiB)
set -euo pipefail
build=${1:-build}
virtual_ms=${2:-200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }

inclusive() {  # inclusive Ir of functions matching $2 in callgrind file $1
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk -v pat="$2" '$0 ~ pat { gsub(",", "", $1); sum += $1 } END { printf "%.0f\n", sum }'
}

echo "| nodes | payload B | deliveries | Node instructions | instructions / delivery |"
echo "|---:|---:|---:|---:|---:|"
for row in "3 64" "3 1024" "8 64" "8 1024"; do
  set -- $row
  file="$out/cg.$1.$2"
  deliveries=$(valgrind --tool=callgrind --callgrind-out-file="$file" \
      "$build/bench/rtotem-bench-sim" "$virtual_ms" "$1" "$2" 2>/dev/null | awk -F'|' 'NR==3 { gsub(" ", "", $5); print $5 }')
  node=$(( $(inclusive "$file" 'rtotem::membership::Node::(on_packets|on_timer|submit)\(') \
         - $(inclusive "$file" 'rtotem::sim::SimCluster::on_deliver\(') ))
  echo "| $1 | $2 | $deliveries | $node | $(( node / deliveries )) |"
done
