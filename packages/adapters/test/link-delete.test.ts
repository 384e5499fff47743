/**
 * Deleting a symbolic link through each adapter removes the link and leaves
 * what it leads to, whatever it leads to: nothing (dangling), a file, a
 * directory. On every backend with links (memory has none).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxSession } from '../src/ai-sdk/index.ts';
import { CtxfsBackend, toVoltAgentBackend } from '../src/deepagents/index.ts';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { backends, cleanUp, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

const files = { 'a.txt': 'kept\n', 'real/kept.txt': 'kept too\n' };
const links = { dangling: 'nowhere.txt', 'to-file': 'a.txt', 'to-dir': 'real' } as const;
type LinkName = keyof typeof links;

/** Each adapter's call that deletes a file (or, for Mastra's rmdir, a directory), failing when the adapter reports a failure. */
const adapters: Record<string, (ws: Awaited<ReturnType<typeof openWorkspace>>, name: LinkName) => Promise<unknown>> = {
  'AI SDK deleteFile': async (ws, name) => expect(await createSandboxSession({ context: ws.context }).deleteFile({ path: `/workspace/${name}` })).toBe(true),
  'deepagents delete': async (ws, name) =>
    expect(await new CtxfsBackend({ context: ws.context }).delete(`/${name}`)).toEqual({ path: `/${name}`, filesUpdate: null }),
  'VoltAgent delete': async (ws, name) =>
    expect(await toVoltAgentBackend(new CtxfsBackend({ context: ws.context })).delete(`/${name}`, {})).toMatchObject({ path: `/${name}` }),
  'Mastra deleteFile': (ws, name) => new CtxfsWorkspaceFilesystem({ context: ws.context }).deleteFile(`/${name}`),
};

for (const backend of (await backends()).filter((b) => b !== 'memory')) {
  describe(`deleting a symlink through each adapter on ${backend}`, { timeout: 60_000 }, () => {
    for (const [adapter, remove] of Object.entries(adapters)) {
      for (const name of Object.keys(links) as LinkName[]) {
        it(`${adapter} of a link ${name === 'dangling' ? 'that leads nowhere' : name}: the link goes, what it leads to stays`, async () => {
          const ws = await openWorkspace(backend, files);
          try {
            await ws.link?.(links[name], name);
            expect((await ws.fs.list('')).map((e) => e.name)).toContain(name);
            await remove(ws, name);
            expect((await ws.fs.list('')).map((e) => `${e.name}:${e.kind}`).sort()).toEqual(['a.txt:file', 'real:directory']);
            expect(new TextDecoder().decode(await ws.fs.readBytes('a.txt'))).toBe('kept\n');
            expect(new TextDecoder().decode(await ws.fs.readBytes('real/kept.txt'))).toBe('kept too\n');
          } finally {
            await ws.close();
          }
        });
      }
    }

    it('Mastra rmdir, recursive, of a link to a directory: the link goes, the directory and what it holds stay', async () => {
      const ws = await openWorkspace(backend, files);
      try {
        await ws.link?.('real', 'to-dir');
        await new CtxfsWorkspaceFilesystem({ context: ws.context }).rmdir('/to-dir', { recursive: true });
        expect((await ws.fs.list('')).map((e) => e.name).sort()).toEqual(['a.txt', 'real']);
        expect(new TextDecoder().decode(await ws.fs.readBytes('real/kept.txt'))).toBe('kept too\n');
      } finally {
        await ws.close();
      }
    });
  });
}
