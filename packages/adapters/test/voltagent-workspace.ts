/**
 * VoltAgent's `WorkspaceFilesystem` driving a ctxfs backend through
 * `toVoltAgentBackend`: run by deepagents-backend.test.ts in plain Node
 * (`node --conditions=ctxfs-source voltagent-workspace.ts <backend>`).
 */

import assert from 'node:assert/strict';
import { type FilesystemBackend, WorkspaceFilesystem } from '@voltagent/core';
import { CtxfsBackend, toVoltAgentBackend } from '../src/deepagents/index.ts';
import { type BackendName, cleanUp, openWorkspace } from './workspaces.ts';

const backend = (process.argv[2] ?? 'memory') as BackendName;
const ws = await openWorkspace(backend, { 'src/a.ts': 'const a = 1;\nconst b = 2;\n', 'docs/x.md': 'x\n' });
const utf8 = (b: Uint8Array): string => new TextDecoder().decode(b);
let checks = 0;
const check = async (fn: () => unknown): Promise<void> => {
  await fn();
  checks++;
};
try {
  const volt: FilesystemBackend = toVoltAgentBackend(new CtxfsBackend({ context: ws.context }));
  const workspace = new WorkspaceFilesystem({ backend: volt });
  await check(async () => assert.equal(await workspace.read('/src/a.ts', { offset: 1, limit: 1 }), '     2\tconst b = 2;'));
  await check(async () => {
    assert.equal((await workspace.write('/v/new.md', '# hi\n')).error, undefined);
    assert.equal(utf8(await ws.fs.readBytes('v/new.md')), '# hi\n');
  });
  await check(async () => assert.equal((await workspace.edit('/v/new.md', 'hi', 'there')).occurrences, 1));
  await check(async () => assert.deepEqual((await workspace.readRaw('/v/new.md')).content, ['# there', '']));
  await check(async () => assert.deepEqual(await workspace.grepRaw('there', { path: '/v' }), [{ path: '/v/new.md', line: 1, text: '# there' }]));
  await check(async () => assert.deepEqual((await workspace.globInfo('**/*.md', '/')).map((f) => f.path).sort(), ['docs/x.md', 'v/new.md']));
  await check(async () =>
    assert.deepEqual(
      (await workspace.lsInfo('/v')).map((f) => f.path),
      ['/v/new.md'],
    ),
  );
  await check(async () => assert.equal(await workspace.exists('/v/new.md'), true));
  await check(async () => assert.equal((await workspace.mkdir('/made/here', true)).error, undefined));
  await check(async () => assert.equal((await workspace.rmdir('/made', true)).error, undefined));
  await check(async () => {
    assert.equal((await workspace.delete('/v/new.md')).error, undefined);
    assert.equal(await ws.fs.exists('v/new.md'), false);
  });
  // The writes VoltAgent made are versions in ctxfs's history: created, edited, deleted.
  await check(async () => assert.ok((await ws.context.history('v/new.md')).length >= 3));
  console.log(`voltagent workspace: ${checks} checks passed`);
} finally {
  await ws.close();
  await cleanUp();
}
process.exit(0);
