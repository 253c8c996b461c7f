# shellcheck shell=bash
# A cluster of rtotemd processes on this host, for the demo and the integration tests: node N
# listens on 127.0.0.N, serves clients at IPC name "$CLUSTER_NAME-N", keeps its state in
# "$CLUSTER_DIR/state-N" and logs to "$CLUSTER_DIR/node-N.log". Defines only, runs nothing.
# Everything started is recorded by pid and stopped by cluster_cleanup (call it from a trap).
#
# Needs: CLUSTER_BIN (build dir), CLUSTER_CONF (config file), CLUSTER_DIR (a scratch dir),
# CLUSTER_NAME (IPC name prefix, unique per run).

declare -A CLUSTER_PIDS=()  # node -> daemon pid
CLUSTER_HELPERS=()          # other processes (listeners)

cluster_ipc() { echo "$CLUSTER_NAME-$1"; }

cluster_ctl() {  # cluster_ctl NODE ARGS...: rtotemctl against node NODE's daemon
  local node=$1; shift
  timeout 10 "$CLUSTER_BIN/src/client/rtotemctl" --ipc-name "$(cluster_ipc "$node")" "$@"
}

cluster_listen() {  # cluster_listen NODE GROUP FILE: a listener in the background until cleanup
  "$CLUSTER_BIN/src/client/rtotemctl" --ipc-name "$(cluster_ipc "$1")" listen "$2" >"$3" 2>&1 &
  CLUSTER_HELPERS+=("$!")
}

cluster_start() {  # cluster_start NODE: starts node NODE's daemon in the background
  local node=$1
  mkdir -p "$CLUSTER_DIR/state-$node"
  "$CLUSTER_BIN/src/daemon/rtotemd" -f -c "$CLUSTER_CONF" --nodeid "$node" \
    --ipc-name "$(cluster_ipc "$node")" --state-dir "$CLUSTER_DIR/state-$node" \
    >>"$CLUSTER_DIR/node-$node.log" 2>&1 &
  CLUSTER_PIDS[$node]=$!
}

cluster_kill() {  # cluster_kill NODE SIGNAL: signals node NODE's daemon and waits for it
  local node=$1 sig=$2 pid=${CLUSTER_PIDS[$1]:-}
  [[ -n "$pid" ]] || return 0
  kill "-$sig" "$pid" 2>/dev/null || true
  timeout 10 tail --pid="$pid" -f /dev/null || kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "CLUSTER_PIDS[$node]"
}

# cluster_wait_members NODE "1 2 3" SECONDS: until node NODE is operational on a ring of exactly
# those members; 1 if the time runs out (its status is printed).
cluster_wait_members() {
  local node=$1 want=$2 limit=$3 deadline status
  deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    status=$(cluster_ctl "$node" status 2>/dev/null || true)
    if grep -qx "state: operational" <<<"$status" &&
       [[ "$(sed -n 's/^members: //p' <<<"$status" | tr -d ',')" == "$want" ]]; then
      return 0
    fi
    sleep 0.2
  done
  echo "node $node: not on a ring of [$want] after ${limit}s:" >&2
  cluster_ctl "$node" status >&2 || true
  return 1
}

cluster_cleanup() {
  local node pid
  for pid in "${CLUSTER_HELPERS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for node in "${!CLUSTER_PIDS[@]}"; do cluster_kill "$node" TERM; done
  CLUSTER_HELPERS=()
}
