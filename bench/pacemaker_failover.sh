#!/usr/bin/env bash
# Pacemaker's failover time on rtotem and on Corosync 3, side by side: the time from a kill -9 of
# the cluster daemon on the node running a Dummy resource to that resource running on another
# node, as tests/pacemaker/pacemaker_netns_test.sh measures it from Pacemaker's log timestamps
# (3 nodes in namespaces, token 1000 ms on both, stonith disabled), and the part of it until
# Pacemaker's controller on a survivor saw the node lost (the cluster layer's detection). The two
# stacks alternate, ROUNDS times each, so that the machine's noise falls on both; prints every
# sample, the medians and rtotem/corosync, over all rounds and apart for the rounds that killed
# the DC and those that did not: Pacemaker elects a new DC first in the former, and which node is
# the DC is Pacemaker's draw.
#
# Usage: bench/pacemaker_failover.sh [ROUNDS]   (default 5; root, Pacemaker and Corosync installed)
# Environment: as the test's (RTOTEMD, RTOTEMCTL, RTOTEM_DROPIN; default the build/ tree).
set -euo pipefail

repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
rounds="${1:-5}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS]" >&2; exit 2; }
test_script="$repo/tests/pacemaker/pacemaker_netns_test.sh"
declare -A samples=([rtotem]="" [corosync]="") lost=([rtotem]="" [corosync]="")
declare -A dc_yes=([rtotem]="" [corosync]="") dc_no=([rtotem]="" [corosync]="")

for ((r = 1; r <= rounds; r++)); do
  for stack in rtotem corosync; do
    log="$(mktemp /tmp/rtotem-failover.XXXXXX)"
    if ! timeout 900 "$test_script" "$stack" >"$log" 2>&1; then
      echo "round $r, $stack: the scenario failed (its output: $log):" >&2
      grep -E "^(==|check:|pacemaker-)" "$log" >&2
      exit 1
    fi
    ms="$(sed -n 's/.*: failover_ms=\([0-9]*\) lost_ms=.*/\1/p' "$log" | head -n 1)"
    lost_ms="$(sed -n 's/.*: failover_ms=[0-9]* lost_ms=\([0-9]*\) .*/\1/p' "$log" | head -n 1)"
    dc_killed="$(sed -n 's/.*: failover_ms=.* dc_killed=\([a-z]*\) .*/\1/p' "$log" | head -n 1)"
    rm -f "$log"
    [[ -n "$ms" && -n "$lost_ms" && -n "$dc_killed" ]] ||
      { echo "round $r, $stack: no failover_ms/lost_ms/dc_killed in the output" >&2; exit 1; }
    echo "round $r: $stack failover_ms=$ms lost_ms=$lost_ms dc_killed=$dc_killed"
    samples[$stack]+="$ms "
    lost[$stack]+="$lost_ms "
    if [[ $dc_killed == yes ]]; then dc_yes[$stack]+="$ms "; else dc_no[$stack]+="$ms "; fi
  done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
count() { wc -w <<<"$1"; }
report() {  # report WHAT RTOTEM_SAMPLES COROSYNC_SAMPLES
  local r c
  if [[ -z "${2// /}" || -z "${3// /}" ]]; then
    echo "$1: rtotem ${2:-none} / corosync ${3:-none}: not both, no ratio"
    return
  fi
  r="$(median "$2")"
  c="$(median "$3")"
  echo "$1, median of $(count "$2") and $(count "$3"):"
  echo "  rtotem    $r ms   (${2% })"
  echo "  corosync  $c ms   (${3% })"
  awk -v r="$r" -v c="$c" 'BEGIN { printf "  rtotem/corosync = %.2f\n", r / c }'
}
echo
report "failover (kill -9 to the resource started elsewhere)" "${samples[rtotem]}" "${samples[corosync]}"
report "node lost (kill -9 to a survivor's controller seeing the node lost)" "${lost[rtotem]}" "${lost[corosync]}"
report "failover, the DC killed" "${dc_yes[rtotem]}" "${dc_yes[corosync]}"
report "failover, another node killed" "${dc_no[rtotem]}" "${dc_no[corosync]}"
