#!/usr/bin/env bash
# sbd on rtotem, in 3 lab VMs (their kernel has softdog; this host's has no watchdog): rtotemd with
# the drop-in libraries, Debian's sbd in watchdog-only mode and Pacemaker, unmodified
# (vm_sbd_node.sh). The last node cuts itself off: PASS when its watchdog resets it within
# stonith-watchdog-timeout (2 x SBD_WATCHDOG_TIMEOUT) of losing quorum (its VM powers off, the
# kernel's last line saying so, its script never outliving the reset), and the other two stay
# quorate, take it as fenced only after that reset, and start the Dummy resource it ran.
# With `corosync`, the same on Debian's Corosync (knet): the reference for every figure.
# Usage: vm_sbd_test.sh BUILD_DIR [rtotem|corosync]. Exit 77 (SKIP, with the reason) when the lab cannot start or
# sbd or Pacemaker is not installed.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/rdma/lab.sh
source "$here/lab.sh"
build=$(readlink -f "${1:?usage: vm_sbd_test.sh BUILD_DIR [rtotem|corosync]}")
stack=${2:-rtotem}
case $stack in
  rtotem) log=rtotemd.log lost_line='quorum: NOT quorate' ;;
  corosync) log=corosync.log lost_line='non-primary component' ;;
  *) echo "usage: vm_sbd_test.sh BUILD_DIR [rtotem|corosync]" >&2; exit 2 ;;
esac
name="rdma vm sbd ($stack)"
for f in /usr/sbin/sbd /usr/sbin/pacemakerd $([[ $stack == corosync ]] && echo /usr/sbin/corosync); do
  [[ -x "$f" ]] || { echo "$name: SKIP: no $f (apt-get install sbd pacemaker)"; exit 77; }
done
nodes=3
watchdog_s=10  # SBD_WATCHDOG_TIMEOUT: an emulated CPU is slow; sbd warns past a third of it
work=$(mktemp -d /tmp/rtotem-vm-sbd.XXXXXX)
# rxe-vm kills its VMs itself, on timeout and on INT/TERM. RTOTEM_VM_KEEP=1 keeps the nodes' files.
if [[ "${RTOTEM_VM_KEEP:-}" == 1 ]]; then echo "$name: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

lab_run "$name" --quiet --nodes "$nodes" --mem 1536 --timeout 900 --workdir "$work/vm" -- \
  "$here/vm_sbd_node.sh" "$build" "$watchdog_s" "$stack" || true
status=0
fenced_seen=0
gone=rxe-node$((nodes - 1))
fail() { echo "$name: FAIL: $*"; status=1; }
for ((n = 0; n < nodes - 1; n++)); do
  out="$work/vm/node$n"
  lab_node_done "$out" "$log" syslog.txt console.log || { fail "node$n"; continue; }
  echo "node$n after the cut: $(grep -E 'Online|OFFLINE|quorum' "$out/mon-after.txt" | tr -s ' ' | tr '\n' ' ') d on $(cat "$out/d-after.txt")"
  if grep -q "reboot of $gone successful" "$out/fencing.txt"; then fenced_seen=1; fi
done
((fenced_seen)) || fail "no survivor's fencing history has $gone's watchdog reboot: $(cat "$work/vm/node0/fencing.txt")"
cut="$work/vm/node$((nodes - 1))"
[[ -s "$cut/cut_at" ]] || fail "node$((nodes - 1)) never cut itself off: $(cat "$cut/stdout" "$cut/stderr" 2>/dev/null | tail -5)"
[[ ! -e "$cut/survived.txt" ]] || fail "node$((nodes - 1)) was not reset: $(cat "$cut/survived.txt")"
# softdog's reset (the console's kernel timestamp) against the quorum loss (the daemon's log, wall
# clock to the second) and the others' fencing (their history, to the second), all on one clock by
# the cut's pair of readings. sbd's servant sees the loss at its next check, then the watchdog runs
# out: the reset must come within the stonith-watchdog-timeout (2 x SBD_WATCHDOG_TIMEOUT) that the
# others wait, and before they take the node as fenced.
reset_at=$(sed -nE 's/^\[ *([0-9.]+)\] softdog: Initiating system reboot.*/\1/p' "$cut/console.log" | head -1)
lost=$(sed -nE "s/^([A-Z][a-z]{2} [0-9]{2} [0-9:]{8})[.0-9]* .*$lost_line.*/\\1/p" "$cut/$log" | tail -1)
if [[ -z "$reset_at" || ! -s "$cut/cut_at" || -z "$lost" ]]; then
  fail "node$((nodes - 1)): no quorum loss logged, or no softdog reset on its console: $(tail -5 "$cut/console.log")"
else
  read -r cut_uptime cut_wall <"$cut/cut_at"
  lost_uptime=$(awk -v u="$cut_uptime" -v w="$cut_wall" -v l="$(date -d "$lost" +%s)" 'BEGIN { printf "%.1f", u + l - w }')
  after_loss=$(awk -v r="$reset_at" -v l="$lost_uptime" 'BEGIN { printf "%.1f", r - l }')
  after_cut=$(awk -v r="$reset_at" -v c="$cut_uptime" 'BEGIN { printf "%.1f", r - c }')
  echo "node$((nodes - 1)): quorum lost $(awk -v a="$lost_uptime" -v c="$cut_uptime" 'BEGIN { printf "%.1f", a - c }') s after the cut; softdog reset it $after_loss s later (SBD_WATCHDOG_TIMEOUT $watchdog_s s), $after_cut s after the cut"
  awk -v s="$after_loss" -v w="$watchdog_s" 'BEGIN { exit !(s > 0 && s <= 2 * w + 1) }' ||
    fail "node$((nodes - 1)): reset $after_loss s after it lost quorum, past stonith-watchdog-timeout ($((2 * watchdog_s)) s)"
  fenced=$(sed -nE "s/.*last-successful='([0-9-]+ [0-9:]+)Z'.*/\1/p" "$work/vm/node0/fencing.txt" | head -1)
  if [[ -n "$fenced" ]]; then
    reset_wall=$(awk -v r="$reset_at" -v u="$cut_uptime" -v w="$cut_wall" 'BEGIN { printf "%.1f", w + r - u }')
    margin=$(awk -v f="$(date -u -d "$fenced" +%s)" -v r="$reset_wall" 'BEGIN { printf "%.1f", f - r }')
    echo "node$((nodes - 1)): taken as fenced $margin s after its reset"
    awk -v m="$margin" 'BEGIN { exit !(m >= -1) }' || fail "node$((nodes - 1)) was taken as fenced before its watchdog reset it"
  fi
fi
[[ $status == 0 ]] && echo "$name: PASS: sbd (watchdog only, softdog) and Pacemaker on $stack in $nodes VMs; the node cut off lost quorum and its watchdog reset it; the other two stayed quorate, took it as fenced and run its resource"
exit $status
