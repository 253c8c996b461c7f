#!/usr/bin/env bash
# What `meson install` puts on a machine, used as a user would: installs into a scratch DESTDIR,
# checks every file is there, runs the installed rtotemd on a one-node config, and builds a C and
# a C++ client against the installed headers and library through pkg-config, which must join,
# multicast and deliver their own message. Usage: install_check.sh BUILD_DIR
set -euo pipefail
build=$(readlink -f "${1:?usage: install_check.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "$0")")
work=$(mktemp -d)
daemon_pid=""
cleanup() {
  [[ -n "$daemon_pid" ]] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install check: FAIL: $*" >&2; [[ -f "$work/rtotemd.log" ]] && tail -20 "$work/rtotemd.log" >&2; exit 1; }

DESTDIR="$work/root" meson install -C "$build" --no-rebuild --quiet
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
root="$work/root$prefix"
libdir=$(dirname "$(find "$root" -name librtotem.pc -print -quit)")
libdir=${libdir%/pkgconfig}
for f in sbin/rtotemd sbin/rtotem-keygen bin/rtotemctl include/rtotem/rtotem.h include/rtotem/rtotem.hpp \
         etc/rtotem/rtotem.conf.example share/doc/rtotem/README.md lib/systemd/system/rtotemd.service \
         share/man/man8/rtotemd.8 share/man/man8/rtotemctl.8 share/man/man8/rtotem-keygen.8 \
         share/man/man5/rtotem.conf.5 share/man/man3/librtotem.3; do
  [[ -e "$root/$f" ]] || fail "not installed: $prefix/$f"
done
[[ -L "$libdir/librtotem.so.0" ]] || fail "no librtotem.so.0 (soname link)"
objdump -p "$libdir/librtotem.so" | grep -q 'SONAME *librtotem.so.0' || fail "librtotem's soname is not librtotem.so.0"
# Only the C API is exported.
exported=$(nm -D --defined-only "$libdir/librtotem.so" | awk '$2 == "T" {print $3}' | grep -v '^rtotem_' || true)
[[ -z "$exported" ]] || fail "librtotem exports more than rtotem_*: $exported"
"$root/sbin/rtotem-keygen" -k "$work/authkey" >/dev/null || fail "rtotem-keygen"
[[ $(stat -c %a "$work/authkey") == 400 ]] || fail "rtotem-keygen: the key is not mode 0400"
corosync_libdir="$libdir/rtotem/corosync"
for f in libcpg.so.4 libcmap.so.4 libquorum.so.5 libvotequorum.so.8 libcfg.so.7 libcorosync_common.so.4 \
         pkgconfig/libcmap.pc pkgconfig/libquorum.pc; do
  [[ -e "$corosync_libdir/$f" ]] || fail "not installed: the drop-in Corosync library file $f"
done
for h in corotypes cpg cmap quorum votequorum cfg; do
  [[ -e "$root/include/rtotem/corosync/corosync/$h.h" ]] || fail "not installed: corosync/$h.h"
done
ldconf="$root/share/rtotem/ld.so.conf.d/rtotem-corosync.conf"
[[ -f "$ldconf" ]] || fail "not installed: share/rtotem/ld.so.conf.d/rtotem-corosync.conf"
grep -qx "$prefix/${corosync_libdir#"$root/"}" "$ldconf" || fail "rtotem-corosync.conf does not name the drop-in directory"
echo "installed: rtotemd, rtotem-keygen, rtotemctl, librtotem (soname 0, rtotem_* only), headers, pkg-config, unit, example config, man pages, the drop-in Corosync libraries"

export LD_LIBRARY_PATH="$libdir:$corosync_libdir"
pc() { PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --define-variable=prefix="$root" "$@" librtotem; }
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
cc -std=c11 -Wall -Wextra -Werror -o "$work/client_c" "$here/client_c.c" $(pc --cflags --libs)
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Wextra -Werror -o "$work/client_cpp" "$here/client_cpp.cpp" $(pc --cflags --libs)
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$work/cmap_client" "$here/cmap_client.c" \
  $(PKG_CONFIG_PATH="$corosync_libdir/pkgconfig:$libdir/pkgconfig" pkg-config --define-variable=prefix="$root" --cflags --libs libcmap libquorum libcorosync_common)

"$root/sbin/rtotemd" -t -c "$root/etc/rtotem/rtotem.conf.example" --nodeid 1 >/dev/null ||
  fail "the installed example config does not check"
port=$((30000 + $$ % 20000))
cat >"$work/one.conf" <<CONF
totem {
  cluster_name: install-check
  token: 1000
  interface {
    mcastport: $port
  }
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: 127.0.0.1
  }
}
CONF
ipc="rtotem-install-$$"
"$root/sbin/rtotemd" -f -c "$work/one.conf" --ipc-name "$ipc" --state-dir "$work/state" \
  >"$work/rtotemd.log" 2>&1 &
daemon_pid=$!
"$work/client_c" "$ipc" || fail "the C client"
"$work/client_cpp" "$ipc" || fail "the C++ client"
RTOTEM_IPC="$ipc" "$work/cmap_client" || fail "a Corosync cmap/quorum client on the drop-in libraries"
"$root/bin/rtotemctl" --ipc-name "$ipc" status | grep -qx 'state: operational' || fail "rtotemctl status"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "rtotemd did not exit cleanly on SIGTERM"
daemon_pid=""
# Corosync software on rtotem without LD_LIBRARY_PATH: the loader config, in this machine's
# /etc/ld.so.conf.d beside the system's own files, makes Debian's corosync-quorumtool load the
# drop-ins. Checked with a cache of its own, seen in a private mount namespace only.
if [[ -x /usr/sbin/corosync-quorumtool && $EUID -eq 0 ]] && unshare -m true 2>/dev/null; then
  mkdir "$work/ld.so.conf.d"
  cp /etc/ld.so.conf.d/*.conf "$work/ld.so.conf.d/"
  sed "s|^$prefix/|$root/|" "$ldconf" >"$work/ld.so.conf.d/rtotem-corosync.conf"
  echo "include $work/ld.so.conf.d/*.conf" >"$work/ld.so.conf"
  ldconfig -f "$work/ld.so.conf" -C "$work/ld.so.cache"
  loaded=$(unshare -m sh -c 'mount --bind "$1" /etc/ld.so.cache && ldd /usr/sbin/corosync-quorumtool' sh "$work/ld.so.cache")
  for lib in libcmap.so.4 libquorum.so.5 libvotequorum.so.8 libcfg.so.7 libcorosync_common.so.4; do
    grep -q "$lib => $corosync_libdir/$lib" <<<"$loaded" || fail "with rtotem-corosync.conf, corosync-quorumtool does not load the drop-in $lib"
  done
  echo "loader config: Debian's corosync-quorumtool loads the drop-in libraries"
else
  echo "loader config: not checked (needs root, unshare -m and Debian's corosync-quorumtool)"
fi

# The unit starts rtotemd without -c, so that rtotemd chooses its file: rtotem's own, else Corosync's.
unit="$root/lib/systemd/system/rtotemd.service"
grep -qx "ConditionPathExists=|/etc/corosync/corosync.conf" "$unit" && ! grep -E '^Exec' "$unit" | grep -q -- ' -c ' ||
  fail "rtotemd.service does not start from /etc/corosync/corosync.conf where rtotem's own file is absent"

# Enabling the unit makes corosync.service an alias of it, so Pacemaker's Requires=corosync.service
# starts rtotemd. systemctl --root works on the scratch tree, without a running systemd.
if command -v systemctl >/dev/null; then
  systemctl --root="$work/root" enable rtotemd.service >/dev/null 2>&1 || fail "systemctl --root enable rtotemd.service"
  [[ "$(readlink "$work/root/etc/systemd/system/corosync.service")" == "$prefix/lib/systemd/system/rtotemd.service" ]] ||
    fail "enabling rtotemd.service does not make corosync.service its alias"
  if [[ -f /lib/systemd/system/pacemaker.service ]] && command -v systemd-analyze >/dev/null; then
    install -D -m 644 /lib/systemd/system/pacemaker.service "$work/root/usr/lib/systemd/system/pacemaker.service"
    # At debug level verify prints the loaded unit, dependencies resolved (it also fails on what
    # the scratch tree lacks, hence || true).
    loaded=$(SYSTEMD_LOG_LEVEL=debug systemd-analyze --root="$work/root" verify \
      "$work/root/usr/lib/systemd/system/pacemaker.service" 2>&1 || true)
    grep -q 'Requires: rtotemd.service' <<<"$loaded" ||
      fail "Debian's pacemaker.service does not require rtotemd.service through the alias"
    echo "systemd: enabling rtotemd.service aliases corosync.service; Debian's pacemaker.service requires rtotemd.service"
  else
    echo "systemd: enabling rtotemd.service aliases corosync.service"
  fi
fi
echo "install check: PASS"
