#!/usr/bin/env bash
# What each VM of vm_dlm_test.sh runs: rtotemd (UDP on the lab's network) with the drop-in Corosync
# libraries, and Debian's dlm_controld on them, unmodified (fencing off: no fence agent here). Once
# dlm_controld sees a quorate cluster of every node, `dlm_tool join` makes lockspace "rtotem" on
# every node, and `dlm_tool ls` must show all of them as its members (ls.txt). Then the last node's
# rtotemd is killed with kill -9: on the others the lockspace must recover with the remaining
# members (ls-after.txt), and dlm_controld must keep running. Every wait is bounded.
# Usage (inside rxe-vm): vm_dlm_node.sh BUILD_DIR
set -euo pipefail
build=${1:?build dir}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
controld=""
cleanup() {
  if [[ -n "$controld" ]]; then kill -TERM "$controld" 2>/dev/null || true; fi  # gone already on the killed node
  stop_node
}
trap cleanup EXIT
last=$([[ $node == "$RXE_NODES" ]] && echo yes || echo no)
dropin=$build/src/corosync
tool() { timeout 30 env LD_LIBRARY_PATH="$dropin" dlm_tool "$@"; }

# The kernel's DLM: its module and configfs, where dlm_controld sets up the nodes and lockspaces.
modprobe dlm
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
# libdlm opens its misc devices (dlm-control, then one per lockspace) where udev's rule puts them,
# /dev/misc/; the VM has no udev, but devtmpfs makes each in /dev as the kernel adds it.
[[ -e /dev/misc ]] || ln -s /dev /dev/misc

conf=$RXE_OUT/corosync.conf
write_udp_conf "$conf" vmdlm
start_daemon "$conf"
wait_ring "$all_nodes" 120

# Fencing off, and no startup fencing: the lab has no fence agent. dlm_controld logs to stderr (-D).
LD_LIBRARY_PATH="$dropin" dlm_controld -D --enable_fencing 0 --enable_startup_fencing 0 \
  >>"$RXE_OUT/dlm_controld.log" 2>&1 &
controld=$!
for ((t = 0; t < 300; t++)); do  # 60 s: dlm_controld sees the cluster, quorate, every node a member
  status=$(tool status 2>/dev/null || true)
  if grep -q 'quorate 1' <<<"$status" && [[ "$(grep -c '^node [0-9]* M' <<<"$status")" == "$RXE_NODES" ]]; then break; fi
  kill -0 "$controld" 2>/dev/null || { say "dlm_controld exited"; tail -30 "$RXE_OUT/dlm_controld.log"; exit 1; }
  sleep 0.2
done
tool status >"$RXE_OUT/status.txt" 2>&1 || true
say "dlm_controld: $(head -1 "$RXE_OUT/status.txt")"
"$RXE_VM" barrier controld 180

tool join rtotem >"$RXE_OUT/join.txt" 2>&1 || { say "dlm_tool join failed: $(cat "$RXE_OUT/join.txt")"; exit 1; }
members_are() {  # members_are "1 2 3": dlm_tool ls shows lockspace rtotem with exactly those members
  local ls
  ls=$(tool ls 2>/dev/null || true)
  [[ "$(awk '/^name/ { ls = $2 } ls == "rtotem" && /^members/ { $1 = ""; print substr($0, 2) }' <<<"$ls" |
    tr -s ' ' | sed 's/ $//')" == "$1" ]]
}
for ((t = 0; t < 600; t++)); do  # 120 s
  members_are "$all_nodes" && break
  sleep 0.2
done
tool ls >"$RXE_OUT/ls.txt" 2>&1 || true
members_are "$all_nodes" || { say "lockspace rtotem: not every node a member: $(cat "$RXE_OUT/ls.txt")"; exit 1; }
say "lockspace rtotem: members $all_nodes"
"$RXE_VM" barrier joined 180

survivors=$(seq -s ' ' 1 $((RXE_NODES - 1)))
if [[ $last == yes ]]; then
  kill -KILL "$daemon"
  wait "$daemon" 2>/dev/null || true
  daemon=""
  "$RXE_VM" barrier killed 60
  "$RXE_VM" barrier recovered 300 || true
  exit 0
fi
"$RXE_VM" barrier killed 60
for ((t = 0; t < 900; t++)); do  # 180 s: the token timeout, then the lockspace's recovery
  members_are "$survivors" && break
  sleep 0.2
done
tool ls >"$RXE_OUT/ls-after.txt" 2>&1 || true
tool status >"$RXE_OUT/status-after.txt" 2>&1 || true
members_are "$survivors" || { say "lockspace rtotem did not recover to [$survivors]: $(cat "$RXE_OUT/ls-after.txt")"; exit 1; }
kill -0 "$controld" 2>/dev/null || { say "dlm_controld exited after the kill"; exit 1; }
say "lockspace rtotem recovered: members $survivors"
"$RXE_VM" barrier recovered 300
