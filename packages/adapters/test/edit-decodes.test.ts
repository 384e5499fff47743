/**
 * An adapter's edit reads the file (deepagents counts what it replaces;
 * Mastra's edit is a read, a stat and a write) and the editor then loads the
 * same bytes under its lock: the text is decoded once for both, through the
 * context's memo of the backend's last decoding (`decodeBytes`), and a
 * content changed in between is decoded anew, never served from the memo.
 */

import type { Filesystem } from '@ctxfs/core';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBackend } from '../src/deepagents/index.ts';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { cleanUp, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

/** Counts the backend's own decodings (the real `decodeText`, called through). */
function countDecodes(fs: Filesystem): { readonly n: number } {
  const real = fs.decodeText.bind(fs);
  const counter = { n: 0 };
  (fs as { decodeText: Filesystem['decodeText'] }).decodeText = (bytes, options) => {
    counter.n++;
    return real(bytes, options);
  };
  return counter;
}

const text = (fs: Filesystem, path: string) => fs.readBytes(path).then((b) => new TextDecoder().decode(b));

for (const backend of ['memory', 'host'] as const) {
  describe(`an adapter's edit on ${backend}`, () => {
    it('deepagents: the edit decodes the file once, and a content changed since is decoded anew', async () => {
      const ws = await openWorkspace(backend, { 'a.ts': 'const a = 1;\n' });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        const decodes = countDecodes(ws.fs);
        expect(await b.edit('/a.ts', 'a = 1', 'a = 2')).toMatchObject({ occurrences: 1 });
        expect(decodes.n).toBe(1);
        // Changed behind the adapter's back: its next edit reads and decodes the new bytes.
        await ws.fs.write('a.ts', 'const b = 1;\n');
        expect(await b.edit('/a.ts', 'b = 1', 'b = 3')).toMatchObject({ occurrences: 1 });
        expect(await text(ws.fs, 'a.ts')).toBe('const b = 3;\n');
        expect(await b.edit('/a.ts', 'a = 2', 'a = 4')).toMatchObject({ error: expect.stringContaining('String not found') });
      } finally {
        await ws.close();
      }
    });

    it('Mastra: read, stat and write with expectedMtime decode the file once', async () => {
      const ws = await openWorkspace(backend, { 'a.ts': 'const a = 1;\n' });
      try {
        const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
        const decodes = countDecodes(ws.fs);
        const read = (await m.readFile('a.ts', { encoding: 'utf8' })) as string;
        const { modifiedAt } = await m.stat('a.ts');
        await m.writeFile('a.ts', read.replace('a = 1', 'a = 2'), { expectedMtime: modifiedAt });
        expect(decodes.n).toBe(1);
        expect(await text(ws.fs, 'a.ts')).toBe('const a = 2;\n');
      } finally {
        await ws.close();
      }
    });
  });
}
