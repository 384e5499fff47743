#!/usr/bin/env bash
# Runs deepagents' own standard sandbox tests (libs/standard-tests in
# langchain-ai/deepagentsjs: 93 tests, not published to npm) against
# CtxfsBackend on memory, host and container, from a throwaway copy outside
# this repository; none of their code is kept here.
#
#   packages/adapters/scripts/deepagents-standard-tests.sh <deepagentsjs: a checkout or a bare git dir> [runner]
#
# runner: 'none' (default: execute answers "commands unavailable") or
# 'host-bwrap' (the host workspace gets `sh -c` under bubblewrap: the system
# read-only, the workspace root bound at the backend's mount path; a
# test-only stand-in for ctxfs's command runner, so the tests that set up or
# check files with `execute` can run there).
set -euo pipefail
src="${1:?path to a deepagentsjs checkout or git directory}"
runner="${2:-none}"
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
work="$(mktemp -d /tmp/ctxfs-deepagents-standard-tests.XXXXXX)"
trap 'rm -rf "$work"' EXIT

if [ -d "$src/libs/standard-tests" ]; then cp -r "$src/libs/standard-tests/src" "$work/src"
else git --git-dir="$src" archive HEAD libs/standard-tests/src | tar -x -C "$work" && mv "$work/libs/standard-tests/src" "$work/src"; fi
sed -i 's/from "\(\.[^"]*\)\.js"/from "\1.ts"/' "$work"/src/*.ts "$work"/src/tests/*.ts

mkdir -p "$work/node_modules/@ctxfs" "$work/mnt"
for p in deepagents vitest dockerode; do ln -s "$repo/packages/adapters/node_modules/$p" "$work/node_modules/$p" 2>/dev/null || ln -s "$repo/node_modules/$p" "$work/node_modules/$p"; done
for p in adapters context core memory host container; do ln -s "$repo/packages/$p" "$work/node_modules/@ctxfs/$p"; done

cat > "$work/vitest.config.ts" <<'CONFIG'
const conditions = ['ctxfs-source', 'import', 'module', 'node', 'default'];
export default { resolve: { conditions }, ssr: { resolve: { conditions, externalConditions: conditions } }, test: { include: ['ctxfs.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 } };
CONFIG

cat > "$work/ctxfs.test.ts" <<TEST
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll } from 'vitest';
import { CtxfsBackend, type CommandRunner } from '@ctxfs/adapters/deepagents';
import { sandboxStandardTests } from './src/vitest.ts';
import { backends, cleanUp, openWorkspace } from '$repo/packages/adapters/test/workspaces.ts';

afterAll(cleanUp);
const mount = '$work/mnt';
const hostBwrap = (root: string): CommandRunner => ({
  run: async (command, { cwd }) => {
    const args = ['--ro-bind', '/', '/', '--bind', root, mount, '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--chdir', join(mount, cwd), 'sh', '-c', command];
    const child = spawn('bwrap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    return {
      stdout: Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
      stderr: Readable.toWeb(child.stderr) as ReadableStream<Uint8Array>,
      exitCode: new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1))),
      kill: async () => void child.kill('SIGKILL'),
    };
  },
});
for (const backend of await backends()) {
  const closers = new Map<CtxfsBackend, () => Promise<void>>();
  sandboxStandardTests<CtxfsBackend>({
    name: \`ctxfs \${backend}\`,
    sequential: true,
    timeout: 60_000,
    createSandbox: async (options) => {
      const ws = await openWorkspace(backend);
      const runner = '$runner' === 'host-bwrap' && ws.hostRoot !== undefined ? hostBwrap(ws.hostRoot) : undefined;
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
          const ws = await openWorkspace(backend);
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
