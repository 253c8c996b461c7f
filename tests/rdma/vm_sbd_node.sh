#!/usr/bin/env bash
# What each VM of vm_sbd_test.sh runs: rtotemd (UDP) with the drop-in Corosync libraries, or Debian's
# Corosync (knet) as the reference, then Debian's sbd in watchdog-only mode on softdog (no shared disk; -P: Pacemaker's quorum and health), and
# Pacemaker on top, all unmodified, with stonith-watchdog-timeout set so that the others may take
# a node that lost quorum as fenced once its watchdog has had time to reset it. Once 3 nodes are
# online and quorate, the last node cuts itself off (nftables drops all it exchanges with the
# others): it loses quorum, and sbd stops feeding the watchdog, which resets the VM within
# SBD_WATCHDOG_TIMEOUT (the VM powers off: qemu runs with -no-reboot). The others must see it
# gone, stay quorate, take it as fenced (crm_mon: OFFLINE) and run its Dummy resource. Every
# wait is bounded.
# Usage (inside rxe-vm): vm_sbd_node.sh BUILD_DIR WATCHDOG_TIMEOUT_S rtotem|corosync
set -euo pipefail
build=${1:?build dir}
watchdog_s=${2:?SBD_WATCHDOG_TIMEOUT in seconds}
stack=${3:?rtotem or corosync}
# shellcheck source=tests/rdma/vm_node_lib.sh
source "$(dirname "$(readlink -f "$0")")/vm_node_lib.sh"
trap stop_node EXIT
last=$([[ $node == "$RXE_NODES" ]] && echo yes || echo no)
# The cluster layer's libraries: the drop-ins, or Debian's own.
libs=$([[ $stack == rtotem ]] && echo "$build/src/corosync" || echo "")
me=rxe-node$((node - 1))
# What sbd and Pacemaker read from /etc/default/sbd under systemd, given here.
sbd_env=(SBD_PACEMAKER=yes SBD_WATCHDOG_DEV=/dev/watchdog "SBD_WATCHDOG_TIMEOUT=$watchdog_s"
  SBD_STARTMODE=always SBD_SYNC_RESOURCE_STARTUP=no "SBD_TIMEOUT_ACTION=flush,reboot")
pcmk() { timeout 60 env LD_LIBRARY_PATH="$libs" "$@"; }

modprobe softdog
[[ -c /dev/watchdog ]] || { say "no /dev/watchdog after modprobe softdog"; exit 1; }

conf=$RXE_OUT/corosync.conf
if [[ $stack == rtotem ]]; then
  write_udp_conf "$conf" vmsbd
  start_daemon "$conf"
  wait_ring "$all_nodes" 120
else
  write_udp_conf "$conf" vmsbd knet
  printf 'logging {\n  to_stderr: yes\n  to_syslog: no\n  timestamp: on\n}\n' >>"$conf"
  /usr/sbin/corosync -f -c "$conf" >>"$RXE_OUT/corosync.log" 2>&1 &
  daemon=$!
  for ((t = 0; t < 600; t++)); do  # 120 s: quorate with every node's vote
    timeout 10 corosync-quorumtool -s 2>/dev/null | grep -qE "^Total votes: +$RXE_NODES\$" && break
    kill -0 "$daemon" 2>/dev/null || { say "corosync exited"; tail -20 "$RXE_OUT/corosync.log"; exit 1; }
    sleep 0.2
  done
  timeout 10 corosync-quorumtool -s >/dev/null 2>&1 || { say "corosync not quorate after 120 s"; exit 1; }
fi

install -d -o hacluster -g haclient /var/lib/pacemaker/cib /var/lib/pacemaker/pengine /var/log/pacemaker
# sbd logs to syslog only: a syslogd writes it, with Pacemaker's lines, where the host reads it.
busybox syslogd -n -O "$RXE_OUT/syslog.txt" &
env LD_LIBRARY_PATH="$libs" "${sbd_env[@]}" sbd -W -w /dev/watchdog -P -n "$me" -p /run/sbd.pid watch \
  >>"$RXE_OUT/sbd.log" 2>&1
for ((t = 0; t < 150; t++)); do [[ -s /run/sbd.pid ]] && break; sleep 0.2; done
[[ -s /run/sbd.pid ]] || { say "sbd wrote no pid file"; tail -20 "$RXE_OUT/sbd.log"; exit 1; }
env LD_LIBRARY_PATH="$libs" "${sbd_env[@]}" PCMK_logfile=/var/log/pacemaker/pacemaker.log \
  PCMK_logfacility=daemon /usr/sbin/pacemakerd >>"$RXE_OUT/pacemakerd.out" 2>&1 &
pacemakerd=$!

# crm_mon's output is read whole first: grep -q would close the pipe early (pipefail: SIGPIPE).
mon() { pcmk crm_mon -1 2>/dev/null || true; }
all=$(seq -f 'rxe-node%g' -s ' ' 0 $((RXE_NODES - 1)))
online_all() { local out; out=$(mon); grep -qF "Online: [ $all ]" <<<"$out" && grep -q 'partition with quorum' <<<"$out"; }
for ((t = 0; t < 600; t++)); do  # 240 s: Pacemaker starts slowly on an emulated CPU
  online_all && break
  sleep 0.4
done
mon >"$RXE_OUT/mon-start.txt"
online_all || { say "not every node online: $(cat "$RXE_OUT/mon-start.txt")"; exit 1; }
say "pacemaker: $(grep -E 'Online|quorum' "$RXE_OUT/mon-start.txt" | tr -s ' ' | tr '\n' ' ')"
gone=rxe-node$((RXE_NODES - 1))
# A Dummy resource that prefers the node to be cut off: Pacemaker fences only with something to
# manage, and the resource must move once that node is taken as fenced.
if ((node == 1)); then
  pcmk crm_attribute --type crm_config --name stonith-watchdog-timeout --update "$((2 * watchdog_s))s"
  pcmk crm_attribute --type crm_config --name stonith-enabled --update true
  pcmk cibadmin --create --scope resources --xml-text \
    '<primitive id="d" class="ocf" provider="pacemaker" type="Dummy"><operations><op id="d-monitor-10s" name="monitor" interval="10s" timeout="60s"/></operations></primitive>'
  pcmk cibadmin --create --scope constraints --xml-text \
    "<rsc_location id=\"d-prefers\" rsc=\"d\" node=\"$gone\" score=\"100\"/>"
fi
where_d() { pcmk crm_resource --locate --resource d --quiet 2>/dev/null | tr '\n' ' ' | sed 's/ $//' || true; }
for ((t = 0; t < 450; t++)); do  # 180 s
  [[ "$(where_d)" == "$gone" ]] && break
  sleep 0.4
done
[[ "$(where_d)" == "$gone" ]] || { say "d does not run on $gone: '$(where_d)'"; exit 1; }
"$RXE_VM" barrier online 300

if [[ $last == yes ]]; then
  # The kernel's clock (the console's timestamps) and the wall clock (the daemon's log), at once.
  echo "$(cut -d' ' -f1 /proc/uptime) $(date +%s.%N)" >"$RXE_OUT/cut_at"
  nft -f - <<NFT
table inet rtcut {
	chain in { type filter hook input priority 0; udp dport 5405 drop; }
	chain out { type filter hook output priority 0; udp dport 5405 drop; }
}
NFT
  say "cut off from the others"
  sleep $((watchdog_s * 6))  # the watchdog resets the VM before this ends
  echo "still running $((watchdog_s * 6)) s after the cut" >"$RXE_OUT/survived.txt"
  mon >"$RXE_OUT/mon-cut.txt"
  exit 1
fi
others=$(seq -f 'rxe-node%g' -s ' ' 0 $((RXE_NODES - 2)))
for ((t = 0; t < 750; t++)); do  # 300 s: the token, the watchdog's time, then the fencing's
  now=$(mon)
  grep -qF "Online: [ $others ]" <<<"$now" && grep -qF "OFFLINE: [ $gone ]" <<<"$now" &&
    grep -q 'partition with quorum' <<<"$now" && [[ " $others " == *" $(where_d) "* ]] && break
  sleep 0.4
done
mon >"$RXE_OUT/mon-after.txt"
pcmk stonith_admin --history "$gone" >"$RXE_OUT/fencing.txt" 2>&1 || true
grep -qF "OFFLINE: [ $gone ]" "$RXE_OUT/mon-after.txt" ||
  { say "$gone not taken as fenced: $(cat "$RXE_OUT/mon-after.txt")"; exit 1; }
where_d >"$RXE_OUT/d-after.txt"
[[ " $others " == *" $(cat "$RXE_OUT/d-after.txt") "* ]] || { say "d did not move to one of $others: '$(where_d)'"; exit 1; }
say "after the cut: $(grep -E 'Online|OFFLINE|quorum' "$RXE_OUT/mon-after.txt" | tr -s ' ' | tr '\n' ' ')"
kill -TERM "$pacemakerd" 2>/dev/null || true
