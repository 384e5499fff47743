#!/usr/bin/env bash
# After a failed test run: the native stack of every core a crashed process
# left since the marker file $1 was made, so a crash nobody could reproduce
# by hand (session 30's SIGSEGV in a vitest worker) says where it happened.
# Cores follow the kernel's core_pattern; with its default ("core", in the
# crashed process's working directory) they land in the repository.
set -uo pipefail
cd "$(dirname "$0")/.."
marker="${1:?the marker file made before the run}"
mapfile -t cores < <(find . /tmp -maxdepth 3 -type f \( -name core -o -name 'core.[0-9]*' \) -newer "$marker" 2>/dev/null)
if [ "${#cores[@]}" -eq 0 ]; then
  echo "ctxfs: no core file (core_pattern: $(cat /proc/sys/kernel/core_pattern 2>/dev/null))"
  exit 0
fi
for core in "${cores[@]}"; do
  exe="$(file -b "$core" 2>/dev/null | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p")"
  [ -n "$exe" ] || exe="$(command -v node)"
  echo "ctxfs: core $core of $exe"
  if command -v gdb >/dev/null 2>&1; then
    gdb -batch -nx -ex 'info threads' -ex 'thread apply all bt 30' "$exe" "$core" 2>&1 | grep -v -e '^warning:' -e '^$' -e '^\[New LWP' | head -400
  else
    echo "ctxfs: gdb is not installed; the core is kept at $core"
  fi
done
