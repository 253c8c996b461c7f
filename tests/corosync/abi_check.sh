#!/bin/bash
# The drop-in Corosync libraries in $1 against Debian's: the same soname, every function Debian's
# library defines also defined here, in the same symbol version node (none for
# libcorosync_common). A program built against Debian's libraries then loads and links ours.
set -u
dir=$1
system=/usr/lib/x86_64-linux-gnu
if [ ! -e "$system/libcmap.so.4" ]; then
  echo "SKIP: Debian's Corosync libraries are not installed (scripts/test installs them)"
  exit 77
fi
failed=0
# name:soname:version node ("" for none)
for spec in corosync_common:libcorosync_common.so.4: cpg:libcpg.so.4:COROSYNC_CPG_1.0 cmap:libcmap.so.4:COROSYNC_CMAP_1.0 \
            quorum:libquorum.so.5:COROSYNC_QUORUM_1.0 votequorum:libvotequorum.so.8:COROSYNC_VOTEQUORUM_1.0 \
            cfg:libcfg.so.7:COROSYNC_CFG_0.82; do
  IFS=: read -r name soname node <<<"$spec"
  ours="$dir/$soname"
  if [ ! -e "$ours" ]; then echo "FAIL: $ours is missing"; failed=1; continue; fi
  got=$(readelf -d "$ours" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  [ "$got" = "$soname" ] || { echo "FAIL: $ours has soname '$got', not $soname"; failed=1; }
  # Defined functions as "name version" (objdump -T: version column; "Base" or none when unversioned).
  defined() { objdump -T "$1" | awk '$3 == "DF" && $4 == ".text" { print $NF, (NF == 7 ? $6 : "") }' | sort; }
  missing=0
  ours_defined=$(defined "$ours")
  while read -r fn _; do
    line=$(awk -v f="$fn" '$1 == f' <<<"$ours_defined")
    if [ -z "$line" ]; then echo "FAIL: lib$name lacks $fn"; missing=1; continue; fi
    version=$(awk '{print $2}' <<<"$line")
    if [ -n "$node" ] && [ "$version" != "$node" ]; then
      echo "FAIL: lib$name: $fn is in '$version', not $node"; missing=1
    fi
    if [ -z "$node" ] && [ -n "$version" ] && [ "$version" != "Base" ]; then
      echo "FAIL: lib$name: $fn has version '$version'; Debian's has none"; missing=1
    fi
  done < <(defined "$system/$soname")
  if [ -z "$node" ] && readelf -V "$ours" | grep -q "Version definition"; then
    echo "FAIL: lib$name defines symbol versions; Debian's has none"; missing=1
  fi
  [ $missing -eq 0 ] && echo "ok: lib$name: $(defined "$system/$soname" | wc -l) functions${node:+ in $node}, soname $soname"
  failed=$((failed | missing))
done
exit $failed
