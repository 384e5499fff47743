#!/usr/bin/env bash
# Runs deepagents' own standard sandbox tests (libs/standard-tests in
# langchain-ai/deepagentsjs: 93 tests, not published to npm) against
# CtxfsBackend on memory, host and container, from a throwaway copy outside
# this repository; none of their code is kept here.
#
#   packages/adapters/scripts/deepagents-standard-tests.sh <deepagentsjs: a checkout or a bare git dir> [runner]
#
# runner: 'ctxfs' (default: execute runs through @ctxfs/commands'
# frameworkRunner — bubblewrap on the host, the container's shell, just-bash
# in memory — which shows the workspace at the backend's mount path, as the
# tests' absolute paths expect) or 'none' (execute answers "commands
# unavailable"; the tests that set up or check files with it fail).
set -euo pipefail
src="${1:?path to a deepagentsjs checkout or git directory}"
runner="${2:-ctxfs}"
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
work="$(mktemp -d /tmp/ctxfs-deepagents-standard-tests.XXXXXX)"
trap 'rm -rf "$work"' EXIT

if [ -d "$src/libs/standard-tests" ]; then cp -r "$src/libs/standard-tests/src" "$work/src"
else git --git-dir="$src" archive HEAD libs/standard-tests/src | tar -x -C "$work" && mv "$work/libs/standard-tests/src" "$work/src"; fi
sed -i 's/from "\(\.[^"]*\)\.js"/from "\1.ts"/' "$work"/src/*.ts "$work"/src/tests/*.ts

mkdir -p "$work/node_modules/@ctxfs" "$work/mnt"
for p in deepagents vitest dockerode; do ln -s "$repo/packages/adapters/node_modules/$p" "$work/node_modules/$p" 2>/dev/null || ln -s "$repo/node_modules/$p" "$work/node_modules/$p"; done
for p in adapters commands context core memory host container just-bash; do ln -s "$repo/packages/$p" "$work/node_modules/@ctxfs/$p"; done

cat > "$work/vitest.config.ts" <<'CONFIG'
const conditions = ['ctxfs-source', 'import', 'module', 'node', 'default'];
export default { resolve: { conditions }, ssr: { resolve: { conditions, externalConditions: conditions } }, test: { include: ['ctxfs.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 } };
CONFIG

cat > "$work/ctxfs.test.ts" <<TEST
import { afterAll } from 'vitest';
import { CtxfsBackend } from '@ctxfs/adapters/deepagents';
import { frameworkRunner } from '@ctxfs/commands';
import { sandboxStandardTests } from './src/vitest.ts';
import { backends, cleanUp, openWorkspace } from '$repo/packages/adapters/test/workspaces.ts';

afterAll(cleanUp);
const mount = '$work/mnt';
for (const backend of await backends()) {
  const closers = new Map<CtxfsBackend, () => Promise<void>>();
  sandboxStandardTests<CtxfsBackend>({
    name: \`ctxfs \${backend}\`,
    sequential: true,
    timeout: 60_000,
    createSandbox: async (options) => {
      const ws = await openWorkspace(backend, {}, {}, { ownContainer: true });
      const runner = '$runner' === 'ctxfs' ? frameworkRunner(ws.context) : undefined;
      const sandbox = new CtxfsBackend({ context: ws.context, runner, mountPath: mount });
      closers.set(sandbox, () => ws.close());
      const files = Object.entries(options?.initialFiles ?? {}).map(([p, c]): [string, Uint8Array] => [p, typeof c === 'string' ? new TextEncoder().encode(c) : c]);
      if (files.length > 0) await sandbox.uploadFiles(files);
      return sandbox;
    },
    createUninitializedSandbox: () => {
      const sandbox: CtxfsBackend = new CtxfsBackend({
        mountPath: mount,
        open: async () => {
          const ws = await openWorkspace(backend, {}, {}, { ownContainer: true });
          closers.set(sandbox, () => ws.close());
          return { context: ws.context };
        },
      });
      return sandbox;
    },
    closeSandbox: async (sandbox) => {
      await sandbox.close();
      await closers.get(sandbox)?.();
    },
    resolvePath: (name) => \`\${mount}/\${name}\`,
  });
}
TEST

cd "$work"
"$repo/node_modules/.bin/vitest" run --root "$work" --config "$work/vitest.config.ts" --reporter=default "${@:3}"
