#!/usr/bin/env bash
# A running Pacemaker cluster moved from Debian's Corosync to rtotem without changing a file, as
# the README's "Moving a Corosync cluster to rtotem" says, then grown and shrunk while it runs:
#   1. pcs writes the cluster's files: corosync.conf (`pcs cluster setup --corosync_conf`, the
#      file pcs sends every node: knet, aes256/sha256, a cluster_uuid) and the authkey (pcs's own
#      generator, as `pcs cluster setup` makes it for every node: 256 bytes, 0400). Every node's
#      /etc/corosync holds them, with the uidgid.d of Debian's Pacemaker package.
#   2. Corosync and Pacemaker run, with a Dummy resource; what pcs and crmsh show is recorded.
#   3. Pacemaker, then Corosync, stop on every node (SIGTERM, as systemctl stop); rtotemd starts
#      with no -c, so it reads /etc/corosync/corosync.conf and its authkey, and Pacemaker starts
#      on the drop-in libraries. The files' checksums are the same before and after.
#   4. 3 nodes online, quorate, the resource running on one node; pcs and crmsh show the same
#      facts as on Corosync.
#   5. A fourth node is added as `pcs cluster node add` does it where pcsd cannot run (the
#      namespaces share one host's /var/lib/pcsd): the new file on every node, then
#      `corosync-cfgtool -R` on one. The three keep their ring until node4 starts; crm_mon shows
#      4 online.
#   6. It is removed as `pcs cluster node remove` does: its cluster stopped, the file without it
#      on the others, a reload, `crm_node --force -R`. Expected votes follow; no ring change but
#      its leave.
#
# Usage: switch_netns_test.sh
# Environment: RTOTEMD, RTOTEMCTL, RTOTEM_DROPIN (default build/src/...); those of
# tests/lib/pacemaker_nodes.sh (RTOTEM_PCMK_KEEP, RTOTEM_PCMK_DEBUG).
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, Pacemaker, Corosync or pcs missing).
set -euo pipefail

repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
name="pacemaker-switch"
prefix="rsw$$"
subnet="10.77.16"
started=$SECONDS
unset LD_LIBRARY_PATH LD_PRELOAD  # which libraries Pacemaker loads is pcmk_env's choice

# shellcheck source=tests/lib/pacemaker_nodes.sh
source "$repo/tests/lib/pacemaker_nodes.sh"
pcmk_preflight
for f in /usr/sbin/corosync /usr/sbin/corosync-cfgtool /usr/sbin/pcs /usr/sbin/crm /usr/bin/python3; do
  [[ -x "$f" ]] || skip "$f missing (apt-get install corosync pcs crmsh)"
done
pcmk_need_rtotem
pcmk_begin
pcmk_copy_dropins
# The nodes have no systemd. crmsh asks it whether corosync.service is active before it shows the
# ring (rtotemd.service is also corosync.service, by Alias=): this stand-in, first in the tools'
# PATH on both stacks, answers `systemctl is-active UNIT` from the node's pid files, and refuses
# anything else.
install -d "$dir/bin"
cat >"$dir/bin/systemctl" <<'END'
#!/bin/sh
for unit; do :; done
case "$1 $unit" in
  "is-active corosync.service") pidfile=/run/clusterd.pid ;;
  "is-active pacemaker.service") pidfile=/run/pacemakerd.pid ;;
  *) echo "systemctl: only is-active corosync.service or pacemaker.service here (no systemd)" >&2; exit 1 ;;
esac
if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then echo active; exit 0; fi
echo inactive; exit 3
END
chmod 755 "$dir/bin/systemctl"
pcmk_env=("PATH=$dir/bin:/usr/sbin:/usr/bin:/sbin:/bin" "${pcmk_env[@]:1}")

# ---------------------------------------------------------------- the files pcs writes

# node_files NODES...: pcs's corosync.conf for those nodes, in $dir/pcs/corosync.conf. pcs makes a
# new cluster_uuid each time; node add and remove keep the cluster's, and so does this.
node_files() {
  local args=() n uuid=""
  for n; do args+=("node$n" "addr=$subnet.$n"); done
  [[ ! -e "$dir/pcs/corosync.conf" ]] || uuid="$(sed -n 's/^ *cluster_uuid: *//p' "$dir/pcs/corosync.conf")"
  rm -f "$dir/pcs/corosync.conf"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin pcs cluster setup pcmk "${args[@]}" totem token=1000 \
    --corosync_conf "$dir/pcs/corosync.conf" >"$dir/pcs/setup.out" 2>&1 ||
    fail "pcs cluster setup: $(cat "$dir/pcs/setup.out")"
  [[ -z "$uuid" ]] || sed -i "s/^\( *cluster_uuid: *\).*/\1$uuid/" "$dir/pcs/corosync.conf"
}
# install_files N: node N's /etc/corosync gets pcs's file (0644, as pcs writes it) and the key
install_files() {
  install -m 0644 "$dir/pcs/corosync.conf" "$dir/node$1/etc-corosync/corosync.conf"
}

install -d "$dir/pcs"
node_files 1 2 3
# The key as pcs cluster setup makes it (pcs.lib.tools.generate_binary_key, the size of its settings).
/usr/bin/python3 -c 'import sys; from pcs import settings; from pcs.lib.tools import generate_binary_key
sys.stdout.buffer.write(generate_binary_key(random_bytes_count=settings.corosync_authkey_bytes))' >"$dir/pcs/authkey"
[[ "$(stat -c %s "$dir/pcs/authkey")" -ge 128 ]] || fail "pcs made no key"
# The cluster_uuid, the crypto and the knet transport are what makes this a pcs file, not rtotem's.
{ grep -q 'cluster_uuid:' "$dir/pcs/corosync.conf" && grep -q 'crypto_cipher: aes256' "$dir/pcs/corosync.conf"; } ||
  fail "pcs wrote no cluster_uuid or crypto_cipher: $(cat "$dir/pcs/corosync.conf")"

node_dirs() {  # node_dirs N: the node's /etc/corosync and /var/log/corosync
  local n=$1
  install -d -m 0755 "$dir/node$n/etc-corosync" "$dir/node$n/log-corosync" "$dir/node$n/state-rtotem"
  [[ ! -d /etc/corosync/uidgid.d ]] || cp -a /etc/corosync/uidgid.d "$dir/node$n/etc-corosync/"
  install -m 0400 "$dir/pcs/authkey" "$dir/node$n/etc-corosync/authkey"
  install_files "$n"
}
# shellcheck disable=SC2317  # called by node_up
# /etc/ld.so.cache: rtotem's, once installed (the switch below)
node_mounts() {
  cat <<EOF
mount --bind '$dir/node$1/etc-corosync' /etc/corosync
if [ -d /var/log/corosync ]; then mount --bind '$dir/node$1/log-corosync' /var/log/corosync; fi
if [ -e /dev/log ]; then mount --bind /dev/null /dev/log; fi
if [ -e '$dir/ld.so.cache' ]; then mount --bind '$dir/ld.so.cache' /etc/ld.so.cache; fi
EOF
}

checksums() {  # checksums N: of everything in node N's /etc/corosync, as the node sees it
  in_node "$1" sh -c 'cd /etc/corosync && find . -type f | sort | xargs sha256sum'
}

# ---------------------------------------------------------------- the two stacks

start_corosync() {
  in_node "$1" sh -c 'echo $$ >/run/clusterd.pid; exec /usr/sbin/corosync -f' >>"$dir/node$1/clusterd.log" 2>&1 &
}
# --state-dir is the unit's (systemd/rtotemd.service: --state-dir ${STATE_DIRECTORY}); no -c.
start_rtotemd() {
  in_node "$1" sh -c 'echo $$ >/run/clusterd.pid; exec "$0" -f --state-dir "$1"' \
    "$rtotemd" "$dir/node$1/state-rtotem" >>"$dir/node$1/clusterd.log" 2>&1 &
}
quorate() { in_node "$1" env -i "${pcmk_env[@]}" corosync-quorumtool -s >/dev/null 2>&1; }
ring_of() {  # ring_of N: node N's ring id (representative/seq), as rtotemctl status says
  in_node "$1" "$rtotemctl" --json status | grep -o '"ring": {"rep": [0-9]*, "seq": [0-9]*}' | tr -dc '0-9 ' |
    awk '{ print $1 "/" $2 }'
}
# the_ring NODES...: the one ring id all of NODES report, the same again a second later
the_ring() {
  local n id first=""
  for n; do
    id="$(ring_of "$n")" || return 1
    [[ -n "$id" && ( -z "$first" || "$id" == "$first" ) ]] || return 1
    first=$id
  done
  sleep 1
  for n; do id="$(ring_of "$n")" && [[ "$id" == "$first" ]] || return 1; done
  echo "$first"
}
settle() {  # settle NODES...: waits up to 60 s for the_ring; it is then in $ring
  local end=$((SECONDS + 60))
  until ring="$(the_ring "$@")"; do
    ((SECONDS < end)) || fail "nodes $*: no ring they all report, settled"
    sleep 0.5
  done
}
expected_votes() {  # expected_votes N: votequorum's expected votes at node N
  in_node "$1" env -i "${pcmk_env[@]}" corosync-quorumtool -s | sed -n 's/^Expected votes: *//p'
}

# ---------------------------------------------------------------- what pcs and crmsh show

# tool N CMD...: CMD's output at node N, and its exit status where that is not 0
tool() { in_node "$1" timeout 60 env -i "${pcmk_env[@]}" "${@:2}" 2>&1 || echo "(exit $?)"; }

# pick PREFIX EREGEX: the lines of stdin matching EREGEX, and an "(exit N)" line (tool's), trimmed,
# without what may differ from one start of the cluster to the next (who is DC, Pacemaker's
# version, "(local)"), as "PREFIX: LINE"
pick() {
  { grep -E "$2|^\(exit [0-9]+\)$" || true; } |
    sed -E 's/^[[:space:]]+//; s/[[:space:]]+/ /g; s/ $//; s/Current DC: [^ ]+ \(version [^)]*\) /Current DC: /; s/ \(local\)//' |
    sed "s/^/$1: /"
}

# ask N FILE EREGEX CMD...: CMD's output at node N kept in $dir/tools.STACK/FILE; its facts (pick)
ask() {
  local n=$1 file=$2 regex=$3 out
  shift 3
  out="$(tool "$n" "$@")"
  echo "$out" >"$dir/tools.$stack/$file"
  pick "$*" "$regex" <<<"$out"
}

# facts N: what pcs and crmsh say on node N that does not depend on the cluster layer, one per
# line. Every command must give some.
crm_mon_facts='Stack:|Current DC:|nodes configured|\* (Online|OFFLINE):|ocf:pacemaker:Dummy'
quorum_facts='^(Nodes|Quorate|Expected votes|Highest expected|Total votes|Quorum|Flags):|^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+([A-Z]+[[:space:]]+)?node[0-9]'
facts() {
  local n=$1 out
  mkdir -p "$dir/tools.$stack"
  ask "$n" pcs-status "^Cluster name:|resource instance|$crm_mon_facts" pcs status
  ask "$n" pcs-status-corosync '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+node[0-9]' pcs status corosync
  ask "$n" pcs-quorum-status "$quorum_facts" pcs quorum status
  out="$(tool "$n" pcs cluster corosync)"
  echo "$out" >"$dir/tools.$stack/pcs-cluster-corosync"
  if diff -q <(echo "$out") "$dir/node$n/etc-corosync/corosync.conf" >/dev/null; then
    echo "pcs cluster corosync: /etc/corosync/corosync.conf as it is"
  else
    echo "pcs cluster corosync: NOT /etc/corosync/corosync.conf"
  fi
  ask "$n" crm-status "$crm_mon_facts" crm status
  # crmsh's ring status is corosync-cfgtool -s: the transport's name differs (rtotem has no knet),
  # what each node's link is does not.
  ask "$n" crm-corosync-status '^Local node ID [0-9]+|addr[[:space:]]*=|nodeid:[[:space:]]*[0-9]+:[[:space:]]*[a-z]+' \
    crm corosync status | sed -E 's/(Local node ID [0-9]+).*/\1/'
  ask "$n" crm-corosync-status-quorum "$quorum_facts|^node[0-9]" crm corosync status quorum
  ask "$n" crm-status-quorum "$crm_mon_facts" crm status quorum
}
# commands FACTS_FILE: the commands that gave facts in it, one per line
commands() { sed 's/: .*//' "$1" | sort -u; }

# ---------------------------------------------------------------- the scenario

step "pcs's files on 3 nodes; Debian's Corosync, then Pacemaker"
stack=corosync
switch_up 1 2 3
for n in 1 2 3; do node_dirs "$n"; node_up "$n"; start_corosync "$n"; done
for n in 1 2 3; do wait_for 60 quorate "$n" || fail "node$n: Corosync is not quorate"; done
for n in 1 2 3; do start_pacemaker "$n"; done
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online with quorum"
done
add_dummy 1
wait_for 90 d_on_one_of 1 node1 node2 node3 || fail "d never started on Corosync"
for n in 1 2 3; do checksums "$n" >"$dir/node$n/sums.before"; done
wait_for 30 d_on_one_of 3 node1 node2 node3 || fail "node3 does not see d running once"
facts 3 >"$dir/facts.corosync"
grep -q "pcs status: \* Online: \[ node1 node2 node3 \]" "$dir/facts.corosync" ||
  fail "pcs status on Corosync does not show 3 online: $(cat "$dir/tools.corosync/pcs-status")"
[[ "$(commands "$dir/facts.corosync" | wc -l)" == 8 ]] ||
  fail "not every pcs and crmsh command gave facts on Corosync: $(commands "$dir/facts.corosync" | tr '\n' ',')"
! grep -q '(exit ' "$dir/facts.corosync" || fail "a pcs or crmsh command failed on Corosync: $(grep '(exit ' "$dir/facts.corosync")"
echo "check: Corosync runs Pacemaker from pcs's files; d on $(where_d 1); $(wc -l <"$dir/facts.corosync") facts from pcs and crmsh"

step "stop Pacemaker, then Corosync, on every node"
for n in 1 2 3; do stop_daemon "$n" pacemakerd.pid pacemakerd; done
for n in 1 2 3; do stop_daemon "$n" clusterd.pid corosync; done

step "rtotemd from the same /etc/corosync, then Pacemaker on the drop-ins"
stack=rtotem
# Installing rtotem puts the drop-ins first in the loader's path (README: rtotem-corosync.conf in
# /etc/ld.so.conf.d, then ldconfig): here, each node's own /etc/ld.so.cache. Every program then
# loads them, whatever environment it runs in (pcs runs its tools in one of its own).
install -d "$dir/ld.so.conf.d"
cp /etc/ld.so.conf.d/*.conf "$dir/ld.so.conf.d/"
echo "$dropin" >"$dir/ld.so.conf.d/00-rtotem-corosync.conf"
echo "include $dir/ld.so.conf.d/*.conf" >"$dir/ld.so.conf"
ldconfig -X -f "$dir/ld.so.conf" -C "$dir/ld.so.cache"  # -X: no links made in the host's library dirs
for n in 1 2 3; do in_node "$n" mount --bind "$dir/ld.so.cache" /etc/ld.so.cache; done
in_node 1 ldd /usr/sbin/corosync-quorumtool | grep -q "$dropin/libcmap.so.4" ||
  fail "node1: corosync-quorumtool does not load the drop-ins through /etc/ld.so.cache"
for n in 1 2 3; do start_rtotemd "$n"; done
for n in 1 2 3; do wait_for 60 quorate "$n" || fail "node$n: rtotemd is not quorate"; done
for n in 1 2 3; do
  grep -q "/etc/corosync/corosync.conf" "$dir/node$n/clusterd.log" ||
    fail "node$n: rtotemd's log does not name /etc/corosync/corosync.conf"
  in_node "$n" "$rtotemctl" --json status | grep -q '"crypto": "on"' || fail "node$n: rtotemd does not seal its packets"
done
echo "check: rtotemd read /etc/corosync/corosync.conf; its packets are sealed, with the key from pcs's authkey"
for n in 1 2 3; do start_pacemaker "$n"; done
for n in 1 2 3; do
  wait_for 240 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: not 3 nodes online with quorum on rtotem"
done
for n in 1 2 3; do
  wait_for 90 d_on_one_of "$n" node1 node2 node3 || fail "node$n: d is not running on exactly one node"
done
for n in 1 2 3; do
  checksums "$n" | diff "$dir/node$n/sums.before" - >/dev/null || fail "node$n: /etc/corosync changed"
done
echo "check: 3 nodes online, quorate, d on $(where_d 1) only; /etc/corosync unchanged on every node"

step "pcs and crmsh show what they showed on Corosync"
facts 3 >"$dir/facts.rtotem"
if ! diff -u "$dir/facts.corosync" "$dir/facts.rtotem"; then
  # Where d runs may differ after the restart: the only line allowed to.
  diff <(grep -v Dummy "$dir/facts.corosync") <(grep -v Dummy "$dir/facts.rtotem") >/dev/null ||
    fail "pcs or crmsh show other facts on rtotem (above; outputs in $dir/tools.*)"
fi
echo "check: $(wc -l <"$dir/facts.rtotem") facts the same from: $(commands "$dir/facts.rtotem" | paste -sd, | sed 's/,/, /g')"

step "add node4: the new file on every node, then corosync-cfgtool -R on node1"
settle 1 2 3
before=$ring
switch_add_node 4
node_files 1 2 3 4
node_dirs 4
for n in 1 2 3; do install_files "$n"; done
reload="$(tool 1 corosync-cfgtool -R)"
[[ "$reload" != *"(exit "* ]] || fail "corosync-cfgtool -R: $reload"
echo "$reload"
sleep 2  # a ring change the reload made would be under way by now
settle 1 2 3
[[ "$ring" == "$before" ]] || fail "the reload changed the ring ($before -> $ring)"
node_up 4
start_rtotemd 4
wait_for 60 quorate 4 || fail "node4: rtotemd did not join"
start_pacemaker 4
for n in 1 2 3 4; do
  wait_for 240 cluster_is "$n" "node1 node2 node3 node4" quorate || fail "node$n: crm_mon does not show 4 online"
done
for n in 1 2 3 4; do [[ "$(expected_votes "$n")" == 4 ]] || fail "node$n: expected votes $(expected_votes "$n"), not 4"; done
echo "check: the three kept ring $before until node4 started; crm_mon shows 4 online; expected votes 4"

step "remove node4: stop its cluster, the file without it on the others, a reload, crm_node -R"
stop_daemon 4 pacemakerd.pid pacemakerd
for n in 1 2 3; do
  wait_for 120 cluster_is "$n" "node1 node2 node3" quorate || fail "node$n: did not see node4's Pacemaker stop"
done
settle 1 2 3 4
before=$ring
stop_daemon 4 clusterd.pid rtotemd
settle 1 2 3
[[ "$ring" != "$before" ]] || fail "no ring change after node4 stopped"
before=$ring
node_files 1 2 3
for n in 1 2 3; do install_files "$n"; done
reload="$(tool 1 corosync-cfgtool -R)"
[[ "$reload" != *"(exit "* ]] || fail "corosync-cfgtool -R: $reload"
echo "$reload"
out="$(tool 1 crm_node --force -R node4)"
[[ "$out" != *"(exit "* ]] || fail "crm_node --force -R node4: $out"
sleep 2
settle 1 2 3
[[ "$ring" == "$before" ]] || fail "the reload changed the ring ($before -> $ring)"
for n in 1 2 3; do
  [[ "$(expected_votes "$n")" == 3 ]] || fail "node$n: expected votes $(expected_votes "$n") after the removal, not 3"
done
three_configured() { cluster_is "$1" "node1 node2 node3" quorate && mon "$1" | grep -q '3 nodes configured'; }
for n in 1 2 3; do
  wait_for 120 three_configured "$n" || fail "node$n: not 3 nodes configured and online after the removal"
done
echo "check: node4 gone from the ring and the CIB; no ring change but its leave; expected votes 3"

echo
echo "$name: PASS in $((SECONDS - started)) s"
