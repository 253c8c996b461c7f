# shellcheck shell=bash
# Sourced by the rdmavm tests. lab_run LABEL ARGS...: `rxe-vm run ARGS...`; when the Soft-RoCE lab
# cannot start here (rxe-vm's exit 3), prints LABEL: SKIP with where to find the reason and exits
# 77, meson's SKIP. Otherwise returns rxe-vm's status (callers judge the nodes' results).
lab_run() {
  local label=$1 rc=0
  shift
  "$(dirname "${BASH_SOURCE[0]}")/../rdmalab/rxe-vm" run "$@" || rc=$?
  if [[ $rc == 3 ]]; then
    echo "$label: SKIP: the Soft-RoCE lab cannot start here (tests/rdmalab/rxe-vm doctor says why)"
    exit 77
  fi
  return "$rc"
}

# lab_node_done OUT LOG...: prints node OUT's exit status and its stdout and stderr; if it did not
# exit 0, the tails of its LOGs too (files in OUT), and returns 1.
lab_node_done() {
  local out=$1 log
  shift
  echo "--- $(basename "$out"): exit $(cat "$out/exit_code" 2>/dev/null || echo none)"
  cat "$out/stdout" "$out/stderr" 2>/dev/null || true
  [[ "$(cat "$out/exit_code" 2>/dev/null)" == 0 ]] && return 0
  for log in "$@"; do tail -30 "$out/$log" 2>/dev/null; done
  return 1
}

# lab_one_order WHAT COUNT FILE...: node deliveries, one per line, a file per node named DIR/X.k
# for node k. The first FILE has COUNT lines and every other one the same lines in the same
# order; otherwise says what differs (each line led by WHAT) and returns 1.
lab_one_order() {
  local what=$1 count=$2 first=$3 file rc=0
  shift 3
  [[ "$(wc -l <"$first")" == "$count" ]] || { echo "$what: node${first##*.} delivered $(wc -l <"$first") of $count"; rc=1; }
  for file in "$@"; do
    cmp -s "$first" "$file" && continue
    echo "$what: node${file##*.} delivered another order than node${first##*.}"
    diff "$first" "$file" | head
    rc=1
  done
  return $rc
}
