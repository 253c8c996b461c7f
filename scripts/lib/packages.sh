# shellcheck shell=bash
# The Debian 12 packages rtotem needs to build, test and demo, and the one function that installs
# those missing. Sourced by scripts/demo and scripts/test; defines only, runs nothing.

RTOTEM_PACKAGES=(
  build-essential g++ meson ninja-build pkg-config ccache
  libfmt-dev libqb-dev libsystemd-dev libibverbs-dev librdmacm-dev
  libqb-tools  # qb-blackbox: corosync-blackbox reads rtotemd's flight data with it
  libsodium-dev  # the cluster key and packet sealing (totem.crypto)
  libgtest-dev libgmock-dev
  libcpg-dev  # cpg-bench: the Corosync side of bench/compare, built by CI so it cannot rot
  corosync  # its tools, unmodified, run on the drop-in libraries (corosync-tools); its daemon never runs
  pacemaker pacemaker-cli-utils resource-agents  # the Pacemaker test, unmodified, on the drop-ins
  pcs crmsh  # the switch test: pcs writes the cluster's files; both tools' status commands are checked
  corosync-qdevice corosync-qnetd  # the quorum device test: two nodes and qnetd, unmodified
  dlm-controld sbd  # the rdmavm-ha suite: DLM and sbd on rtotem, in the lab's VMs (their kernel has dlm, softdog)
  clang-14 libclang-rt-14-dev  # the fuzz targets (scripts/fuzz): clang with libFuzzer
  clang-format-14  # the tree follows .clang-format (tests/docs/check_format.sh)
  iproute2 nftables  # nftables: the netns test's packet loss where the kernel has no netem
  groff-base  # the man pages' test (man/check_pages.py renders each one with groff)
  # tests/rdmalab: Soft-RoCE VMs for the RDMA tests (qemu, the host's rdma-core seen inside them)
  rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  qemu-system-x86 busybox-static cpio kmod util-linux procps iputils-ping xz-utils
)

# Installs the packages of RTOTEM_PACKAGES not installed yet, with apt-get, as root or via sudo.
# Does nothing (and needs no root) when all are there.
rtotem_install_packages() {
  local missing=() pkg status
  for pkg in "${RTOTEM_PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    if [[ "$status" != "install ok installed" ]]; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  local as_root=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "rtotem: need root or sudo to install: ${missing[*]}" >&2
      return 1
    fi
    as_root=(sudo)
  fi
  echo "rtotem: installing ${missing[*]}"
  "${as_root[@]}" apt-get update
  # Packages with a daemon (corosync, pacemaker, pcsd, qdevice, qnetd, dlm, sbd: tests start what they use themselves) must not start it: a policy-rc.d
  # forbids starts during the install (unless the machine has its own), and the unit is disabled.
  local policy=/usr/sbin/policy-rc.d own_policy=0
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    own_policy=1
  fi
  local rc=0
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" || rc=$?
  ((own_policy)) && "${as_root[@]}" rm -f "$policy"
  # systemctl disables offline too (it edits links): a machine without systemd running, a CI
  # container say, must not boot into them either.
  if command -v systemctl >/dev/null 2>&1; then
    local -A units=([corosync]=corosync.service [pacemaker]=pacemaker.service [pcs]="pcsd.service pcsd-ruby.service"
      [corosync-qdevice]=corosync-qdevice.service [corosync-qnetd]=corosync-qnetd.service
      [dlm-controld]=dlm.service [sbd]=sbd.service)
    for pkg in "${!units[@]}"; do
      if [[ " ${missing[*]} " == *" $pkg "* ]]; then
        # shellcheck disable=SC2086  # a list of units
        "${as_root[@]}" systemctl disable ${units[$pkg]} >/dev/null 2>&1 || true
      fi
    done
  fi
  return $rc
}
