/** The one trailing-slash rule in the calls that missed it: copy and rename onto a slashed name, realpath and grep of one (helper 66's campaign). */
import { type FsError, isFsError } from '@ctxfs/core';
import { afterAll, describe, expect, it } from 'vitest';
import { backends, cleanUp, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

async function errorOf(call: () => Promise<unknown>): Promise<FsError | string> {
  return call().then(
    (v) => `resolved ${JSON.stringify(v)}`,
    (e: unknown) => (isFsError(e) ? e : String(e)),
  );
}

for (const backend of await backends()) {
  describe(`trailing slash, the calls the rule misses, on ${backend}`, { timeout: 60_000 }, () => {
    it('copy and rename of a file onto "new/" say the slash is what is wrong and give the fix, not "is a directory" of the source file', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n' });
      try {
        for (const [label, call] of [
          ['copy', () => ws.fs.copy('a.txt', 'new/')],
          ['rename', () => ws.fs.rename('a.txt', 'new/')],
        ] as const) {
          const err = await errorOf(call);
          // The error names the source as path and the destination as dest (node:fs's convention); its words are the rule's.
          expect(err, label).toMatchObject({ dest: 'new/', hint: 'drop the trailing "/" from the destination to name the file' });
          expect((err as FsError).reason, label).toMatch(/the destination "new\/" ends in "\/", which names a directory/);
        }
        expect((await ws.fs.list('')).map((e) => e.path)).toEqual(['a.txt']);
      } finally {
        await ws.close();
      }
    });

    it('the context layer: listFiles and grep of "a.txt/" are ENOTDIR, as core list is; of "d/" they list and search the directory', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n', 'd/x.txt': 'a\n' });
      try {
        expect(await errorOf(() => ws.context.listFiles('a.txt/'))).toMatchObject({ code: 'ENOTDIR', path: 'a.txt/' });
        expect(await errorOf(() => ws.context.grep('a', { path: 'a.txt/' }))).toMatchObject({ code: 'ENOTDIR' });
        expect((await ws.context.listFiles('d/')).items.map((f) => f.path)).toEqual(['d/x.txt']);
        expect((await ws.context.grep('a', { path: 'd/' })).items.map((m) => m.path)).toEqual(['d/x.txt']);
      } finally {
        await ws.close();
      }
    });

    it('realpath and grep of "a.txt/" are ENOTDIR, as stat and list are', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n' });
      try {
        expect(await errorOf(() => ws.fs.realpath('a.txt/'))).toMatchObject({ code: 'ENOTDIR', path: 'a.txt/' });
        const grep = async () => {
          const out = [];
          for await (const m of ws.fs.grep('a', { path: 'a.txt/' })) out.push(m);
          return out;
        };
        expect(await errorOf(grep)).toMatchObject({ code: 'ENOTDIR' });
      } finally {
        await ws.close();
      }
    });
  });
}
