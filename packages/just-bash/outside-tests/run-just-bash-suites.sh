#!/usr/bin/env bash
# Runs just-bash's own filesystem tests (cross-fs-security, cross-fs-no-symlinks,
# cp-mv-cycle.security and the IFileSystem contract) against CtxfsBashFs over the
# host backend. Their code is never copied into this repository: the script takes
# a just-bash git checkout (a bare mirror works), copies the four test files into a
# throwaway directory outside the repository, substitutes ctxfs for the
# filesystems they construct (shims/), and runs them with vitest.
#
#   packages/just-bash/outside-tests/run-just-bash-suites.sh /path/to/just-bash[.git] [vitest args...]
#
# CTXFS_CONTRACT_BACKEND=memory points the contract tests at the memory backend instead.
set -euo pipefail
src="${1:?usage: $0 <just-bash git checkout or mirror> [vitest args...]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
pkg="$(cd "$here/.." && pwd)"
repo="$(cd "$pkg/../.." && pwd)"
git_dir="$src"
[ -d "$src/.git" ] && git_dir="$src/.git"
work="$(mktemp -d "${TMPDIR:-/tmp}/ctxfs-just-bash-suites.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/fs/overlay-fs" "$work/src/fs/read-write-fs" "$work/src/fs/in-memory-fs" "$work/node_modules"
for t in cross-fs-security cross-fs-no-symlinks cp-mv-cycle.security interface.contract; do
  git --git-dir="$git_dir" show "HEAD:packages/just-bash/src/fs/$t.test.ts" >"$work/src/fs/$t.test.ts"
done
echo "just-bash tests from $(git --git-dir="$git_dir" log -1 --format='%h %s')"
cp "$here/shims/ctxfs-factory.ts" "$work/src/fs/ctxfs-factory.ts"
cp "$here/shims/overlay-fs.ts" "$work/src/fs/overlay-fs/overlay-fs.ts"
cp "$here/shims/read-write-fs.ts" "$work/src/fs/read-write-fs/read-write-fs.ts"
cp "$here/shims/in-memory-fs.ts" "$work/src/fs/in-memory-fs/in-memory-fs.ts"
echo "export type * from 'just-bash';" >"$work/src/fs/interface.ts"
echo "export { Bash } from 'just-bash';" >"$work/src/Bash.ts"
ln -s "$pkg/node_modules/just-bash" "$work/node_modules/just-bash"
mkdir -p "$work/node_modules/@ctxfs"
for p in "$pkg"/node_modules/@ctxfs/*; do ln -s "$(cd "$p" && pwd -P)" "$work/node_modules/@ctxfs/$(basename "$p")"; done
ln -s "$pkg" "$work/node_modules/@ctxfs/just-bash"
echo '{ "type": "module" }' >"$work/package.json"
ln -s "$repo/node_modules/vitest" "$work/node_modules/vitest"
cat >"$work/vitest.config.ts" <<'CONFIG'
import { defineConfig } from 'vitest/config';
const conditions = ['ctxfs-source', 'import', 'module', 'node', 'default'];
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: { include: ['src/**/*.test.ts'], testTimeout: 30_000 },
});
CONFIG
cd "$work"
"$repo/node_modules/.bin/vitest" run "$@"
