# shellcheck shell=bash
# The systems under test, behind the same few functions, so that compare.sh treats them alike:
# rtotem (the build in CMP_BUILD), rtotem-cpg (the same daemon, measured with Corosync's row's own
# client binary, cpg-bench, on the drop-in libcpg: the whole client path a Corosync application
# gets), rtotem-base (another rtotem build, CMP_BASELINE: a same-run A/B against an older commit)
# and corosync.
#   sys_prepare SYSTEM TRANSPORT CRYPTO SCHED N DIR   write node i's config to DIR/n<i>/
#   sys_start SYSTEM I DIR                            start node I in its namespace; sets SYS_PID
#   sys_after_kill SYSTEM PID                         remove what a killed daemon leaves in /dev/shm
#   sys_client SYSTEM I                               the bench client command for node I (words)
#   sys_version SYSTEM                                one line: the exact build measured
# Both get the same timeouts: token 1000 ms, consensus 1200 ms (token_coefficient 0 on both, so
# the token does not grow with the node count). Sourced by compare.sh; defines only.
# Inputs: CMP_BUILD (rtotem's build dir), CMP_BASELINE (the baseline's, or empty), CMP_PREFIX, and
# netns.sh's functions.

CMP_TOKEN_MS=1000
CMP_CONSENSUS_MS=1200

rtotem_build() {  # rtotem_build SYSTEM: the build dir whose binaries SYSTEM's rows run
  if [[ $1 == rtotem-base ]]; then echo "$CMP_BASELINE"; else echo "$CMP_BUILD"; fi
}

# Each build's daemons get their own IPC names, so that a client or rtotemctl of one build never
# reaches the other's daemon, nor its leftovers in /dev/shm.
rtotem_ipc_name() {  # rtotem_ipc_name SYSTEM I
  if [[ $1 == rtotem-base ]]; then echo "$CMP_PREFIX-base-$2"; else echo "$CMP_PREFIX-$2"; fi
}

# One line for a build: its source's git describe (build-baseline.sh's stamp, else the source dir
# meson recorded), else the build dir itself.
rtotem_describe() {  # rtotem_describe BUILD_DIR
  local dir=$1 src
  if [[ -f $dir/rtotem-baseline.txt ]]; then
    awk -F': ' '/^describe:/{print $2; exit}' "$dir/rtotem-baseline.txt"
    return
  fi
  src=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
    "$dir/meson-info/meson-info.json" 2>/dev/null) || src=""
  if [[ -n $src ]] && git -C "$src" describe --always --dirty 2>/dev/null; then return; fi
  echo "$dir"
}

sys_nodelist() {  # sys_nodelist N [LINKS]: the nodelist section both systems read
  local n=$1 links=${2:-1} i
  echo "nodelist {"
  for ((i = 1; i <= n; i++)); do
    printf '\tnode {\n\t\tnodeid: %d\n\t\tname: n%d\n\t\tring0_addr: %s\n' "$i" "$i" "$(netns_addr "$i")"
    if ((links > 1)); then printf '\t\tring1_addr: %s\n' "$(netns_addr1 "$i")"; fi
    printf '\t}\n'
  done
  echo "}"
}

sys_prepare() {
  local system=$1 transport=$2 crypto=$3 sched=$4 n=$5 dir=$6 i nd
  for ((i = 1; i <= n; i++)); do
    nd="$dir/n$i"
    mkdir -p "$nd/run" "$nd/state"
    case "$system" in
      rtotem | rtotem-cpg | rtotem-base) rtotem_config "$system" "$transport" "$crypto" "$n" "$dir" >"$nd/rtotem.conf" ;;
      corosync) corosync_config "$transport" "$crypto" "$sched" "$n" "$nd" "$dir" >"$nd/corosync.conf" ;;
    esac
  done
}

# Crypto on: one key for the run's nodes, made by the build's rtotem-keygen (mode 0400).
# TRANSPORT udpu-2links-active (or -passive): two udpu links, on cb0 and cb1, in that link mode.
rtotem_config() {  # rtotem_config SYSTEM TRANSPORT CRYPTO N RUNDIR
  local system=$1
  shift
  local links=1 link1_lines=""
  if [[ $1 =~ ^(udpu)-2links-(active|passive)$ ]]; then
    links=2
    link1_lines=$'\tlink_mode: '"${BASH_REMATCH[2]}"$'\n\tinterface {\n\t\tlinknumber: 1\n\t\tmcastport: 5406\n\t}\n'
    set -- "${BASH_REMATCH[1]}" "${@:2}"
  fi
  local crypto_lines=$'\tcrypto: off'
  if [[ $2 == on ]]; then
    [[ -s $4/rtotem-authkey ]] || "$(rtotem_build "$system")/src/tools/rtotem-keygen" -k "$4/rtotem-authkey" >/dev/null
    crypto_lines=$'\tcrypto: on\n\tkeyfile: '"$4/rtotem-authkey"
  fi
  cat <<EOF
totem {
	version: 2
	cluster_name: $CMP_PREFIX
	transport: $1
	token: $CMP_TOKEN_MS
	token_coefficient: 0
	consensus: $CMP_CONSENSUS_MS
$crypto_lines
${CMP_NETMTU:+	netmtu: $CMP_NETMTU
}${CMP_SEND_JOIN:+	send_join: $CMP_SEND_JOIN
}	interface {
		linknumber: 0
		mcastaddr: 239.192.77.1
		mcastport: 5405
	}
${link1_lines}}
logging {
	to_stderr: yes
	to_syslog: no
	timestamp: hires
}
EOF
  sys_nodelist "$3" "$links"
}

# TRANSPORT knet-2links-passive (or -active): two knet links, on cb0 and cb1, in that link mode.
corosync_config() {  # corosync_config TRANSPORT CRYPTO SCHED N NODEDIR RUNDIR
  local transport=$1 crypto=$2 sched=$3 n=$4 nd=$5 dir=$6 crypto_lines links=1 link_lines=""
  if [[ $transport =~ ^(knet)-2links-(active|passive)$ ]]; then
    transport=${BASH_REMATCH[1]} links=2
    link_lines=$'\tlink_mode: '"${BASH_REMATCH[2]}"$'\n\tinterface {\n\t\tlinknumber: 0\n\t}\n\tinterface {\n\t\tlinknumber: 1\n\t}\n'
  fi
  crypto_lines=$'\tcrypto_cipher: none\n\tcrypto_hash: none'
  if [[ $crypto == on ]]; then
    [[ -s $dir/authkey ]] || { head -c 256 /dev/urandom >"$dir/authkey" && chmod 400 "$dir/authkey"; }
    crypto_lines=$'\tcrypto_cipher: aes256\n\tcrypto_hash: sha256\n\tkeyfile: '"$dir/authkey"
  fi
  cat <<EOF
totem {
	version: 2
	cluster_name: $CMP_PREFIX
	transport: $transport
	ip_version: ipv4
	token: $CMP_TOKEN_MS
	token_coefficient: 0
	consensus: $CMP_CONSENSUS_MS
$crypto_lines
${link_lines}}
logging {
	to_stderr: no
	to_syslog: no
	to_logfile: yes
	logfile: $nd/corosync.log
	timestamp: hires
}
system {
	state_dir: $nd/state
	sched_rr: $([[ $sched == rr ]] && echo yes || echo no)
}
EOF
  sys_nodelist "$n" "$links"
}

# CMP_SCHED rr: rtotemd under SCHED_RR at the top priority, where corosync's sched_rr puts itself
# (rtotemd asks for no real-time class of its own).
sys_start() {
  local system=$1 i=$2 dir=$3 nd="$3/n$2" ns
  local -a rr=()
  ns=$(netns_node "$i")
  [[ ${CMP_SCHED:-other} != rr ]] || rr=(chrt --rr 99)
  case "$system" in
    rtotem | rtotem-cpg | rtotem-base)
      ip netns exec "$ns" "${rr[@]}" "$(rtotem_build "$system")/src/daemon/rtotemd" -f -c "$nd/rtotem.conf" \
        --ipc-name "$(rtotem_ipc_name "$system" "$i")" \
        --state-dir "$nd/state" >>"$nd/daemon.log" 2>&1 &
      ;;
    corosync)
      # corosync takes the fixed lock /run/corosync.pid: each node gets a private /run (ip netns
      # exec already runs the command in its own mount namespace).
      ip netns exec "$ns" sh -c 'mount --bind "$1/run" /run && exec corosync -f -c "$1/corosync.conf"' \
        corosync-node "$nd" >>"$nd/daemon.log" 2>&1 &
      ;;
  esac
  SYS_PID=$!
}

# libqb's per-connection directories /dev/shm/qb-<server pid>-* stay behind a SIGKILLed server.
sys_after_kill() {
  local pid=$2
  rm -rf /dev/shm/qb-"$pid"-* /dev/shm/qb-corosync-"$pid"-* 2>/dev/null || true
}

sys_client() {
  case "$1" in
    rtotem | rtotem-base) echo "$(rtotem_build "$1")/bench/rtotem-bench --ipc-name $(rtotem_ipc_name "$1" "$2")" ;;
    # The drop-ins find the daemon by $RTOTEM_IPC, and librtotem by their rpath.
    rtotem-cpg) echo "env LD_LIBRARY_PATH=$CMP_BUILD/src/corosync RTOTEM_IPC=$(rtotem_ipc_name "$1" "$2") $CMP_BUILD/bench/cpg-bench" ;;
    corosync) echo "$CMP_BUILD/bench/cpg-bench" ;;
    raw) echo "$CMP_BUILD/bench/rtotem-udp-wire --bind $(netns_addr "$2") --peers $(wire_peers "$2")" ;;
  esac
}

wire_peers() {  # wire_peers I: every node's address but node I's, comma-separated
  local i peers=()
  for ((i = 1; i <= CMP_NODES; i++)); do ((i == $1)) || peers+=("$(netns_addr "$i")"); done
  (IFS=,; echo "${peers[*]}")
}

sys_version() {
  case "$1" in
    rtotem | rtotem-cpg | rtotem-base)
      local dir
      dir=$(rtotem_build "$1")
      echo "rtotem $(rtotem_describe "$dir") ($("$dir/src/daemon/rtotemd" -v 2>&1 | head -1))"
      ;;
    corosync)
      echo "$(corosync -v 2>/dev/null | head -1); $(dpkg-query -W -f='${Package} ${Version}' libknet1 2>/dev/null)"
      ;;
  esac
}
