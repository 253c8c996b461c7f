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
