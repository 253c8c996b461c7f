#!/usr/bin/env bash
# Resource exhaustion, measured: a 3-node rtotemd cluster on this host (127.0.0.1-3, UDP unicast)
# under one attack at a time, aimed at node 1, while a probe (rtotem-bench --mode latency on node
# 1, 200 messages/s) checks that the ring still orders messages. For each attack: what the attacker
# did, node 1's memory (resident, of which heap and shared memory, and /dev/shm in use: the largest
# sample, every 0.2 s),
# its token rotations per second, the probe's deliveries and latency, rings formed meanwhile, and
# the counters that say what was dropped. Prints a markdown table (BENCHMARKS.md, "Resource
# exhaustion") with the command that made it. Root (the forged-source flood uses a raw socket).
#
# Environment: RTOTEM_BUILD_DIR (default build), RTOTEM_EXHAUSTION_SECONDS (per attack, default 10).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
# shellcheck source=scripts/lib/cluster.sh
source scripts/lib/cluster.sh

build_dir="${RTOTEM_BUILD_DIR:-build}"
seconds="${RTOTEM_EXHAUSTION_SECONDS:-10}"
bench="$build_dir/bench/rtotem-bench"
flood="$build_dir/tests/rtotem-flood"
ctl="$build_dir/src/client/rtotemctl"
for f in "$bench" "$flood" "$ctl" "$build_dir/src/daemon/rtotemd" "$build_dir/src/tools/rtotem-keygen"; do
  [[ -x "$f" ]] || { echo "exhaustion: $f is missing: build $build_dir first" >&2; exit 1; }
done
((EUID == 0)) || { echo "exhaustion: needs root (a raw socket forges a member's source address)" >&2; exit 1; }

CLUSTER_BIN="$build_dir"
CLUSTER_DIR="$(mktemp -d)"
CLUSTER_NAME="rtotem-exh-$$"
ATTACK_PIDS=()
# shellcheck disable=SC2317  # reached through the trap
finish() {
  stop_attack
  cluster_cleanup
  rm -rf "$CLUSTER_DIR"
}
trap finish EXIT
fail() { echo "exhaustion: FAIL: $*" >&2; exit 1; }

# shellcheck disable=SC2317
stop_attack() {
  local pid
  for pid in "${ATTACK_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${ATTACK_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ATTACK_PIDS=()
}

port=$((30000 + $$ % 20000))
cluster_name="exh$$"
# cluster CRYPTO MAX_MESSAGE_SIZE: a fresh cluster of three with this run's port and name.
cluster() {
  local crypto=$1 max_message=$2 node
  cluster_cleanup
  CLUSTER_CONF="$CLUSTER_DIR/exhaustion.conf"
  sed -e "s/^\(\s*mcastport:\).*/\1 $port/" -e "s/^\(\s*cluster_name:\).*/\1 $cluster_name/" \
    -e "s|^totem {|totem {\n\tcrypto: $crypto\n\tkeyfile: $CLUSTER_DIR/authkey\n\tmax_message_size: $max_message|" \
    conf/demo-3node.conf >"$CLUSTER_CONF"
  printf 'ipc {\n\tmax_clients: 1100\n}\n' >>"$CLUSTER_CONF"
  [[ -f "$CLUSTER_DIR/authkey" ]] || "$build_dir/src/tools/rtotem-keygen" -k "$CLUSTER_DIR/authkey" >/dev/null
  for node in 1 2 3; do cluster_start "$node"; done
  for node in 1 2 3; do cluster_wait_members "$node" "1 2 3" 30 || fail "no ring of 3 (logs: $CLUSTER_DIR)"; done
}

stats() { "$ctl" --ipc-name "$(cluster_ipc "$1")" --json stats; }
shm_kib() { df -k --output=used /dev/shm | tail -1 | tr -d ' '; }  # libqb's rings, allocated whole

# attack NAME DESCRIPTION COMMAND...: runs COMMAND (an attacker, in the background) for the
# attack's span while the probe runs on node 1, samples node 1's memory, and prints a table row.
# An empty COMMAND is the baseline; a COMMAND may also be a function that starts its own
# processes into ATTACK_PIDS and returns.
attack() {
  local name=$1 description=$2 pid=${CLUSTER_PIDS[1]}
  shift 2
  stats 1 >"$CLUSTER_DIR/$name.before.json"
  { grep -E '^(VmRSS|RssAnon|RssShmem):' "/proc/$pid/status"; echo "shm: $(shm_kib)"; } >"$CLUSTER_DIR/$name.mem-before"
  if (($# > 0)); then
    if [[ $(type -t "$1") == function ]]; then "$@"; else "$@" >"$CLUSTER_DIR/$name.attack.json" 2>&1 & ATTACK_PIDS+=("$!"); fi
  fi
  timeout --kill-after=5 $((seconds + 60)) "$bench" --ipc-name "$(cluster_ipc 1)" --group "probe-$name" --mode latency \
    --rate 200 --duration "$seconds" --json >"$CLUSTER_DIR/$name.probe.json" 2>"$CLUSTER_DIR/$name.probe.err" &
  local probe=$! sample
  : >"$CLUSTER_DIR/$name.mem"
  while kill -0 "$probe" 2>/dev/null; do
    sample=$(grep -E '^(VmRSS|RssAnon|RssShmem):' "/proc/$pid/status" | awk '{printf "%s ", $2}')
    echo "$sample $(shm_kib)" >>"$CLUSTER_DIR/$name.mem"
    sleep 0.2
  done
  wait "$probe" || echo "exhaustion: the probe of $name exited non-zero: $(tail -2 "$CLUSTER_DIR/$name.probe.err")" >&2
  stats 1 >"$CLUSTER_DIR/$name.after.json"  # while the attack's clients are still connected
  stop_attack
  python3 - "$CLUSTER_DIR" "$name" "$description" "$seconds" <<'PY'
import json, sys
d, name, description, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def flat(doc, prefix=""):
    out = {}
    for k, v in doc.items():
        if isinstance(v, dict): out.update(flat(v, f"{k}."))
        elif isinstance(v, (int, float)) and not isinstance(v, bool): out[prefix + k] = v
    return out
before = flat(json.load(open(f"{d}/{name}.before.json")))
after = flat(json.load(open(f"{d}/{name}.after.json")))
delta = {k: after[k] - before.get(k, 0) for k in after}
mem0 = [int(line.split()[1]) for line in open(f"{d}/{name}.mem-before")]
samples = [list(map(int, line.split())) for line in open(f"{d}/{name}.mem") if line.strip()]
peak = [max(s[i] for s in samples) for i in range(4)] if samples else mem0
mib = lambda kib: f"{kib / 1024:.0f}"
try:
    probe = json.load(open(f"{d}/{name}.probe.json"))
    expected = int(200 * seconds)
    probe_text = (f"{probe['samples']}/{expected} | {probe['p50_us']:.0f} | {probe['p99_us']:.0f} | "
                  f"{probe['max_us'] / 1000:.0f}")
except Exception:
    probe_text = "failed | - | - | -"
sent = ""
try:
    sent = f" ({json.load(open(f'{d}/{name}.attack.json'))['pps'] / 1000:.0f}k packets/s)"
except Exception:
    pass
drops = [k.split(".", 1)[1] + " " + f"{v:,}" for k, v in sorted(delta.items())
         if v > 0 and (k.startswith("link.drop_") or k in ("ipc.clients_evicted", "ipc.clients_refused",
                                                            "protocol.submit_backpressure", "link.rx_ring_empty"))]
print(f"| {name} | {description}{sent} | {after['ipc.clients']} | {mib(mem0[0])} → {mib(peak[0])} | {mib(peak[1])} / {mib(peak[2])} | "
      f"{mib(mem0[3])} → {mib(peak[3])} | "
      f"{delta['protocol.tokens_received'] / seconds:.0f} | {probe_text} | {delta['protocol.rings_installed']} | "
      f"{', '.join(drops) or '-'} |")
PY
}

flood_at_node1() {  # flood_at_node1 ARGS...: rtotem-flood at node 1 for the attack's span
  echo "$flood" --to "127.0.0.1:$port" --cluster "$cluster_name" --seconds "$seconds" "$@"
}

# Clients that never read: rtotemctl listen on node 1, stopped once they have joined.
silent_clients() {
  local i pids=()
  for ((i = 0; i < $1; i++)); do
    "$ctl" --ipc-name "$(cluster_ipc 1)" listen silent >/dev/null 2>&1 &
    pids+=("$!")
  done
  sleep 2
  kill -STOP "${pids[@]}"
  ATTACK_PIDS+=("${pids[@]}")
  # ...and someone who talks to them: 16 KiB messages as fast as the ring takes them.
  "$bench" --ipc-name "$(cluster_ipc 2)" --group silent --size 16384 --duration "$seconds" >/dev/null 2>&1 &
  ATTACK_PIDS+=("$!")
}

# many_clients N: N rtotemctl listen processes on node 1, each in a group of its own; started 50
# at a time, as libqb's listening socket holds 128 connections waiting to be accepted (past that a
# connect gets -EAGAIN, and rtotemctl gives up).
many_clients() {
  local i
  for ((i = 0; i < $1; i++)); do
    "$ctl" --ipc-name "$(cluster_ipc 1)" listen "many-$i" >/dev/null 2>&1 &
    ATTACK_PIDS+=("$!")
    ((i % 50 == 49)) && sleep 0.5
  done
  sleep 2
}

full_speed_sender() {
  "$bench" --ipc-name "$(cluster_ipc 1)" --group fast --size "$1" --duration "$seconds" >/dev/null 2>&1 &
  ATTACK_PIDS+=("$!")
}

echo "load before: $(uptime)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' + uncommitted changes'); $(nproc) CPUs; ${seconds} s an attack"
echo "| attack | what | clients at node 1 after | node 1 resident MiB, before → peak | heap / shared MiB at peak | /dev/shm MiB, before → peak | token rotations/s | probe delivered | p50 µs | p99 µs | max ms | rings formed | dropped, refused |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
cluster off 1048576
attack baseline "nothing"
attack junk "random bytes at node 1's port, full speed" $(flood_at_node1 --kind junk)
attack in-2s-name "joins, merges, tokens of a foreign ring in node 2's name, from another address, full speed" \
  $(flood_at_node1 --kind foreign-ring --as 2 --from 127.0.0.9)
attack silent-50 "50 clients that never read, and 16 KiB messages to them at full speed" silent_clients 50
attack fast-sender "a client sending 64 KiB messages at full speed" full_speed_sender 65536
attack clients-200 "200 connected clients, 1 MiB messages (3 rings of 1.06 MiB each)" many_clients 200
cluster off 65536
attack clients-1000 "1,000 connected clients, 64 KiB messages (3 rings of 128 KiB each)" many_clients 1000
cluster on 1048576
attack sealed-baseline "nothing, crypto on"
attack forged-sealed "crypto on: forged sealed packets from node 2's own address (spoofed), full speed" \
  $(flood_at_node1 --kind forged-sealed --as 2 --from "127.0.0.2:$port" --spoof)
attack forged-ring "crypto on: foreign-ring packets in the clear from node 2's own address (spoofed), full speed" \
  $(flood_at_node1 --kind foreign-ring --as 2 --from "127.0.0.2:$port" --spoof)
cluster off 1048576
attack spoofed-clear "crypto off: foreign-ring packets from node 2's own address (spoofed), full speed" \
  $(flood_at_node1 --kind foreign-ring --as 2 --from "127.0.0.2:$port" --spoof)
grep -h -i -e warning -e error "$CLUSTER_DIR"/node-*.log | grep -v -e 'is not ready' -e 'crypto is off' |
  sed 's/^/daemon: /' | sort | uniq -c | sort -rn | head -20 || true
echo "load after: $(uptime)"
