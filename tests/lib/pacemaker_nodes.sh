# shellcheck shell=bash
# Pacemaker nodes in namespaces, for the Pacemaker tests. Node N is network namespace `ns N` (see
# netns_switch.sh) plus its own PID, mount and UTS namespaces: its own /run, /dev/shm,
# /var/lib/pacemaker, /var/log/pacemaker, /var/lib/corosync (its state dir) and hostname nodeN.
# Pacemaker panics by reboot(2): it runs without CAP_SYS_BOOT, with /proc/sysrq-trigger masked.
# Killing a node's PID 1 kills the whole node; the cleanup does that for every node and deletes
# the namespaces, on failure too, and fails a run whose mounts showed on the host.
#
# Sourced; the caller sets name, prefix, subnet, repo and started (its $SECONDS), then calls
# pcmk_begin. RTOTEMD, RTOTEMCTL and RTOTEM_DROPIN name rtotem's side (default: build/src/...). A node's extra mounts come from the caller's node_mounts N, if it defines one (shell
# lines run in the node). What Pacemaker and its tools run with is the array pcmk_env, the
# caller's to change (the drop-ins' LD_LIBRARY_PATH, say). RTOTEM_PCMK_KEEP=1 keeps the scratch
# dir $dir; RTOTEM_PCMK_DEBUG (PCMK_debug) adds those daemons' debug lines to their logs.

# shellcheck source=tests/lib/netns_switch.sh
source "$repo/tests/lib/netns_switch.sh"

# rtotem's side: RTOTEMD, RTOTEMCTL and RTOTEM_DROPIN, by default the build tree's.
rtotemd="${RTOTEMD:-$repo/build/src/daemon/rtotemd}"
rtotemctl="${RTOTEMCTL:-$repo/build/src/client/rtotemctl}"
dropin="${RTOTEM_DROPIN:-$repo/build/src/corosync}"

ns() { echo "$prefix-$1"; }  # ns 1..N | ns sw
namespaces=()
declare -A holder=()   # node -> pid (on the host) of the node's PID 1
declare -A unshared=() # node -> pid of the unshare process that made it (reaped on exit)
nodes_booted=0
pcmk_env=(PATH=/usr/sbin:/usr/bin:/sbin:/bin)
[[ -n "${RTOTEM_PCMK_DEBUG:-}" ]] && pcmk_env+=("PCMK_debug=$RTOTEM_PCMK_DEBUG")

skip() { echo "$name: SKIP: $*"; exit 77; }
fail() {
  echo "$name: FAIL: $* (after $((SECONDS - started)) s)"
  show_logs || true
  exit 1
}
step() { echo; echo "== $* ($((SECONDS - started)) s) =="; }

wait_for() {  # wait_for SECONDS CMD...: until CMD succeeds, polling every 0.5 s
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}

pcmk_preflight() {  # skips where the test cannot run: not root, no Pacemaker, no namespace tools
  local f
  [[ $EUID -eq 0 ]] || skip "needs root (namespaces, mounts)"
  for f in /usr/sbin/pacemakerd /usr/sbin/crm_mon /usr/sbin/cibadmin /usr/sbin/crm_resource \
           /usr/lib/ocf/resource.d/pacemaker/Dummy; do
    [[ -x "$f" ]] || skip "$f missing (apt-get install pacemaker pacemaker-cli-utils resource-agents)"
  done
  id hacluster >/dev/null 2>&1 || skip "no user hacluster (package pacemaker-common)"
  for f in nsenter unshare setpriv; do command -v "$f" >/dev/null || skip "no $f (util-linux)"; done
}

pcmk_need_rtotem() {  # fails (not skips) where the build's rtotemd, rtotemctl or drop-ins are missing
  local f
  for f in "$rtotemd" "$rtotemctl" "$dropin/libcpg.so.4"; do
    [[ -e "$f" ]] || { echo "$name: FAIL: no $f (set RTOTEMD / RTOTEMCTL / RTOTEM_DROPIN)"; exit 1; }
  done
}

# start_clusterd STACK N CONF: node N's cluster daemon from CONF, rtotemd (its state dir the
# node's) or Debian's corosync; its pid file is the node's /run/clusterd.pid.
start_clusterd() {
  local stack=$1 n=$2 conf=$3
  if [[ "$stack" == rtotem ]]; then
    in_node "$n" sh -c 'echo $$ >/run/clusterd.pid; exec "$0" -f -c "$1" --state-dir "$2"' \
      "$rtotemd" "$conf" "$dir/node$n/state" >>"$dir/node$n/clusterd.log" 2>&1 &
  else
    in_node "$n" sh -c 'echo $$ >/run/clusterd.pid; exec /usr/sbin/corosync -f -c "$0"' \
      "$conf" >>"$dir/node$n/clusterd.log" 2>&1 &
  fi
}

# Nothing a node mounts may show on the host. The host's mount points, but for the netns ones:
host_mounts() { awk '$5 !~ /^\/run\/netns/ { print $5 }' /proc/self/mountinfo | sort; }
unmount() {  # unmount WHY MOUNT_POINT...: lazily, from the host, saying so
  local why=$1 m; shift
  for m; do echo "$name: $why: $m; unmounted"; umount -l "$m" 2>/dev/null; done
}

pcmk_begin() {  # the scratch dir $dir and the cleanup trap
  # An earlier run's leaked bind mounts (over /var/lib/pacemaker, say) would fail this one's.
  local stale
  mapfile -t stale < <(awk 'index($4, "/tmp/rtotem-pcmk.") == 1 { print $5 }' /proc/self/mountinfo)
  unmount "an earlier run's mount is still on the host" "${stale[@]}"
  host_mounts_before="$(host_mounts)"
  dir="$(mktemp -d /tmp/rtotem-pcmk.XXXXXX)"  # not under /run: each node mounts its own /run
  chmod 755 "$dir"
  trap pcmk_cleanup EXIT
  trap 'exit 130' INT TERM
}

# Pacemaker's daemons run as hacluster, which may not be able to traverse the checkout (a CI clone
# under a 0700 directory, say): they load copies from the scratch dir, which it can read. Prints
# the copies' directory. Checked, so that a loader that falls back to Debian's libraries (it skips
# a directory it cannot read, silently) fails here, not later.
pcmk_copy_dropins() {  # pcmk_copy_dropins: copies $dropin's libraries and points $dropin at them
  install -d "$dir/dropin"
  cp -L "$dropin"/lib*.so.[0-9] "$dir/dropin/"
  [[ ! -e "$dropin/../client/librtotem.so.0" ]] || cp -L "$dropin/../client/librtotem.so.0" "$dir/dropin/"
  chmod -R a+rX "$dir/dropin"
  dropin="$dir/dropin"
  runuser -u hacluster -- env LD_LIBRARY_PATH="$dropin" ldd /usr/lib/pacemaker/pacemaker-controld |
    grep -q "$dropin/libcpg.so.4" ||
    fail "user hacluster does not load the drop-in libraries from $dropin (a directory it cannot read?)"
}

node_down() {  # node_down N: kills every process of node N (SIGKILL to its PID 1)
  local n=$1
  [[ -n "${unshared[$n]:-}" ]] || return 0
  # unshare --kill-child: its death kills the node's PID 1 too, should it not have a holder yet.
  [[ -n "${holder[$n]:-}" ]] && kill -KILL "${holder[$n]}" 2>/dev/null
  kill -KILL "${unshared[$n]}" 2>/dev/null
  wait "${unshared[$n]}" 2>/dev/null || true
  unset "holder[$n]" "unshared[$n]"
}

# shellcheck disable=SC2317  # reached through the trap
pcmk_cleanup() {
  local status=$? n leaked
  trap - EXIT
  set +e
  for n in "${!unshared[@]}"; do node_down "$n"; done
  # A job's nsenter stops itself when its child in the node stops, and then never reaps it: on.
  local job
  for job in $(jobs -p); do pkill -CONT -P "$job" nsenter; done
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null; done
  mapfile -t leaked < <(comm -13 <(echo "$host_mounts_before") <(host_mounts) | tac)
  if ((${#leaked[@]} > 0)); then
    unmount "a node's mount showed on the host" "${leaked[@]}"
    ((status != 0)) || { echo "$name: FAIL: the nodes' mounts showed on the host"; status=1; }
  fi
  if [[ "${RTOTEM_PCMK_KEEP:-0}" == 1 ]]; then echo "$name: kept $dir"; else rm -rf "$dir"; fi
  exit "$status"
}

in_node() { local n=$1; shift; nsenter -t "${holder[$n]}" -m -u -n -p --wd=/ -- "$@"; }

show_logs() {
  local n
  for n in $(find "$dir" -maxdepth 1 -name 'node*' -printf '%f\n' | sed 's/^node//' | sort -n); do
    echo "--- node$n: cluster daemon (tail) ---"
    tail -n 15 "$dir/node$n/clusterd.log" 2>/dev/null
    echo "--- node$n: pacemaker.log, errors (tail) ---"
    grep -E 'error|crit|warning|authentic|evicted|duplicate local pid|quorum is not configured|Lost connection' \
      "$dir/node$n/log-pacemaker/pacemaker.log" 2>/dev/null | tail -n 15
    if [[ -n "${holder[$n]:-}" ]]; then
      echo "--- node$n: crm_mon -1 ---"
      in_node "$n" timeout 10 env -i "${pcmk_env[@]}" crm_mon -1 2>&1 | head -n 20
    fi
  done
}

node_up() {  # node_up N: the node's PID 1 and its mounts; a node that was down boots afresh
  local n=$1 init="" _
  install -d "$dir/node$n/state" "$dir/node$n/lib-pacemaker"
  install -d -o hacluster -g haclient -m 0770 "$dir/node$n/log-pacemaker"
  nsenter --net="/run/netns/$(ns "$n")" -- \
    unshare --mount --uts --pid --fork --kill-child --mount-proc --propagation private -- sleep infinity &
  unshared[$n]=$!
  # The node's PID 1 is ready once it runs sleep: unshare's child makes its mounts private and
  # mounts /proc before that exec, and a mount made earlier could propagate to the host.
  for _ in $(seq 100); do
    init="$(ps -o pid= --ppid "${unshared[$n]}" | tr -d ' ' || true)"
    [[ -n "$init" && "$(cat "/proc/$init/comm" 2>/dev/null)" == sleep ]] && break
    init=""
    kill -0 "${unshared[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  # The first node tells whether this host can make nodes at all; a later one that fails, fails.
  if [[ -z "$init" ]]; then
    ((nodes_booted == 0)) || fail "node$n: its PID 1 did not start (unshare)"
    skip "unshare --pid --mount-proc refused here"
  fi
  nodes_booted=$((nodes_booted + 1))
  [[ "$(readlink "/proc/$init/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]] ||
    fail "node$n: its PID 1 ($init) shares the host's mount namespace"
  holder[$n]=$init
  # /var/run and /var/lock are links into /run on Debian 12. The state bind mount is the cluster
  # daemon's: rtotemd's --state-dir, Corosync's /var/lib/corosync. Private again first, whatever
  # the host's propagation: nothing mounted here may show on the host.
  in_node "$n" sh -ec "
    mount --make-rprivate /
    mount -t tmpfs -o mode=0755 tmpfs /run
    install -d -m 1777 /run/lock
    mount -t tmpfs -o mode=1777 tmpfs /dev/shm
    mount --bind '$dir/node$n/lib-pacemaker' /var/lib/pacemaker
    mount --bind '$dir/node$n/log-pacemaker' /var/log/pacemaker
    if [ -d /var/lib/corosync ]; then mount --bind '$dir/node$n/state' /var/lib/corosync; fi
    if [ -e /proc/sysrq-trigger ]; then mount --bind /dev/null /proc/sysrq-trigger; fi
    hostname node$n"
  if declare -F node_mounts >/dev/null; then in_node "$n" sh -ec "$(node_mounts "$n")"; fi
}

start_pacemaker() {  # start_pacemaker N: pacemakerd, with pcmk_env; its pid file /run/pacemakerd.pid
  local n=$1
  in_node "$n" setpriv --bounding-set -sys_boot -- env -i "${pcmk_env[@]}" \
    PCMK_logfile=/var/log/pacemaker/pacemaker.log PCMK_logfacility=none \
    sh -c 'echo $$ >/run/pacemakerd.pid; exec /usr/sbin/pacemakerd' \
    >>"$dir/node$n/pacemakerd.out" 2>&1 &
}

# stop_daemon N PIDFILE WHAT: SIGTERM to the node's process of PIDFILE (under /run), then waits
# up to 120 s for it to exit, as systemd's stop does.
stop_daemon() {
  local n=$1 pidfile=$2 what=$3
  in_node "$n" sh -c 'kill -TERM "$(cat "$0")"' "/run/$pidfile" || fail "node$n: no $what to stop"
  in_node "$n" timeout 120 sh -c 'while kill -0 "$(cat "$0")" 2>/dev/null; do sleep 0.2; done' "/run/$pidfile" ||
    fail "node$n: $what did not exit within 120 s of SIGTERM"
}

mon() { in_node "$1" timeout 20 env -i "${pcmk_env[@]}" crm_mon -1 2>/dev/null; }

cluster_is() {  # cluster_is N "node1 node2 node3" quorate|not: what node N's crm_mon shows
  local out
  out="$(mon "$1")" || return 1
  if [[ "$3" == quorate ]]; then
    grep -q 'partition with quorum' <<<"$out" || return 1
  else
    grep -q 'partition WITHOUT quorum' <<<"$out" || return 1
  fi
  grep -qF "* Online: [ $2 ]" <<<"$out"
}

dc_of() {  # dc_of N: the DC ("nodeK") as node N's crm_mon shows it; empty if none
  mon "$1" | sed -n 's/^ *\* Current DC: \(node[0-9]*\) .*/\1/p; s/^Current DC: \(node[0-9]*\) .*/\1/p' | head -n 1
}

add_dummy() {  # add_dummy N: stonith off and a Dummy resource d, from node N
  in_node "$1" env -i "${pcmk_env[@]}" crm_attribute --type crm_config --name stonith-enabled --update false
  in_node "$1" env -i "${pcmk_env[@]}" cibadmin --create --scope resources --xml-text \
    '<primitive id="d" class="ocf" provider="pacemaker" type="Dummy"><operations><op id="d-monitor-5s" name="monitor" interval="5s" timeout="20s"/></operations></primitive>'
}

where_d() {  # where_d N: the node(s) running resource d, as node N's CIB says
  in_node "$1" timeout 20 env -i "${pcmk_env[@]}" crm_resource --locate --resource d --quiet 2>/dev/null |
    sort | tr '\n' ' ' | sed 's/ $//'
}
d_on_one_of() {  # d_on_one_of N NODES...: node N's CIB has d running on exactly one of NODES
  local here="$1" at; shift
  at="$(where_d "$here")"
  [[ -n "$at" && "$at" != *" "* && " $* " == *" $at "* ]]
}
d_not_on() {  # d_not_on N NODE: node N's CIB does not have d running on NODE
  [[ " $(where_d "$1") " != *" $2 "* ]]
}
