#!/usr/bin/env bash
# The C and C++ sources follow .clang-format (the root's, and the C headers' own beside them):
# clang-format would change nothing. Prints each file it would change. Usage: check_format.sh SRCDIR
set -euo pipefail
cd "$1"
format=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$format" ] || { echo "no clang-format installed: not checked"; exit 77; }
mapfile -t files < <(find base transport membership src include tests bench \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) -not -path 'tests/fuzz/corpus/*' | sort)
if ! "$format" --dry-run --Werror --style=file "${files[@]}" 2>/tmp/rtotem-format.$$; then
  grep -o '^[^:]*:[0-9]*:[0-9]*: error' /tmp/rtotem-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not formatted: /'
  echo "run: $format -i --style=file FILE..."
  rm -f /tmp/rtotem-format.$$
  exit 1
fi
rm -f /tmp/rtotem-format.$$
echo "${#files[@]} files follow .clang-format"
