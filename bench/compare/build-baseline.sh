#!/usr/bin/env bash
# Builds rtotem at COMMIT for compare.sh --baseline DIR, so that a change is measured as a same-run
# A/B against the commit before it (config rtotem-base:...): built as compare.sh builds the tree
# under test (release, invariant checks off, no tests), from a git worktree of COMMIT in a temp dir
# that is removed at the end, built or not.
#
# Usage: bench/compare/build-baseline.sh COMMIT [DIR]   (DIR default: build-base-<short hash> in the repo)
#
# The source is not kept: meson's build dir refers back to it (build.ninja names every source
# file and reconfigures from it), but the binaries compare.sh runs (rtotemd, rtotemctl,
# rtotem-bench, rtotem-keygen) do not read it: their libraries come from the build dir ($ORIGIN
# rpaths) and their paths are compiled in. So DIR runs, but cannot be rebuilt: to rebuild, run this
# script again (it replaces a DIR it made; compare.sh never compiles the baseline). DIR gets
# rtotem-baseline.txt (commit, git describe), the name the report gives the baseline's rows.
# Only what compare.sh runs is built: a full build would double the time on a shared machine.
set -euo pipefail

repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
(($# == 1 || $# == 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
commit=$(git -C "$repo" rev-parse --verify --quiet "$1^{commit}") || { echo "build-baseline: '$1' is no commit" >&2; exit 2; }
describe=$(git -C "$repo" describe --always "$commit")
dir=$(readlink -m "${2:-$repo/build-base-${commit:0:7}}")
stamp="$dir/rtotem-baseline.txt"
targets=(src/daemon/rtotemd src/client/rtotemctl bench/rtotem-bench src/tools/rtotem-keygen)

# Replaces only a build dir this script made: anything else in DIR may be someone's work.
if [[ -e $dir ]]; then
  if [[ -f $stamp ]]; then
    rm -rf "$dir"
  elif [[ -n $(ls -A "$dir") ]]; then
    echo "build-baseline: $dir exists and is not a baseline build (no rtotem-baseline.txt); not touching it" >&2
    exit 2
  fi
fi

src="$(mktemp -d /tmp/rtotem-base-src.XXXXXX)"
cleanup() {
  git -C "$repo" worktree remove --force "$src" 2>/dev/null || true
  rm -rf "$src"
  git -C "$repo" worktree prune
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git -C "$repo" worktree add --detach --quiet "$src" "$commit"
# An older commit may not have the options of today's meson_options.txt: pass those it declares.
options=(-Dbuildtype=release)
for opt in invariants=false tests=disabled; do
  grep -q "option('${opt%%=*}'" "$src/meson_options.txt" 2>/dev/null && options+=("-D$opt")
done
echo "build-baseline: $describe ($commit) into $dir (${options[*]})" >&2
# Stamped first, so that a build that fails half-way is still this script's to replace.
mkdir -p "$dir"
printf 'commit: %s\ndescribe: %s\nbuilt: incomplete\n' "$commit" "$describe" >"$stamp"
meson setup "$dir" "$src" "${options[@]}" >/dev/null
ninja -C "$dir" "${targets[@]}" >/dev/null
for t in "${targets[@]}"; do
  [[ -x $dir/$t ]] || { echo "build-baseline: $dir/$t was not built" >&2; exit 1; }
done
printf 'commit: %s\ndescribe: %s\nbuilt: %s (%s; source worktree removed)\n' \
  "$commit" "$describe" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${options[*]}" >"$stamp"
echo "build-baseline: done; use: bench/compare/compare.sh --baseline $dir --configs \"... rtotem-base:udpu:off:other ...\"" >&2
