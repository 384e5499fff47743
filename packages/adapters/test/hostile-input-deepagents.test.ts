/**
 * deepagents' backend (and VoltAgent's over it) given what a model may
 * send: paths through links out of the root or in a loop, whose answers
 * are deepagents' values and name no host path; a trailing slash on a
 * file or on a name to write; text with a lone
 * surrogate; and a careful agent's own uploads and writes in turn, none of
 * which is taken for another's change.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBackend, toVoltAgentBackend } from '../src/deepagents/index.ts';
import { answerOf, expectNoHostPath, makeHostileLinks, THROUGH_LINKS } from './hostile-links.ts';
import { backends, cleanUp, hex, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

for (const backend of await backends()) {
  describe(`deepagents backend, hostile input on ${backend}`, { timeout: 60_000 }, () => {
    it.skipIf(backend === 'memory')('no answer about a path through a link names a host path', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n' });
      try {
        expect(await makeHostileLinks(ws)).toBe(true);
        const b = new CtxfsBackend({ context: ws.context });
        const volt = toVoltAgentBackend(b);
        for (const name of THROUGH_LINKS) {
          const path = `/${name}`;
          const calls: Record<string, () => unknown> = {
            ls: () => b.ls(path),
            read: () => b.read(path),
            readRaw: () => b.readRaw(path),
            edit: () => b.edit(path, 'a', 'b'),
            write: () => b.write(path, 'x\n'),
            glob: () => b.glob('*', path),
            grep: () => b.grep('root', path),
            download: () => b.downloadFiles([path]),
            upload: () => b.uploadFiles([[path, new Uint8Array([0, 1])]]),
            'VoltAgent read': () => volt.read(path),
            'VoltAgent mkdir': () => volt.mkdir(`${path}/d`),
            'VoltAgent rmdir': () => volt.rmdir(path),
            'VoltAgent delete': () => volt.delete(path),
            delete: () => b.delete(path),
          };
          for (const [member, call] of Object.entries(calls)) expectNoHostPath(ws, `${member} ${path}`, await answerOf(call));
        }
      } finally {
        await ws.close();
      }
    });

    it("the agent's own upload is its version: its next write, edit and delete are not refused as another's change", async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n' });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        expect((await b.read('/a.txt')).error).toBeUndefined();
        expect(await b.uploadFiles([['/a.txt', new Uint8Array([0, 1, 2])]])).toEqual([{ path: '/a.txt', error: null }]);
        expect(await b.write('/a.txt', 'two\n')).toEqual({ path: '/a.txt', filesUpdate: null });
        // A BOM keeps an upload on the byte path; the edit after it is based on what the agent uploaded.
        expect(await b.uploadFiles([['/a.txt', new TextEncoder().encode('\ufeffthree\n')]])).toEqual([{ path: '/a.txt', error: null }]);
        expect(await b.edit('/a.txt', 'three', 'four')).toMatchObject({ occurrences: 1 });
        expect(hex(await ws.fs.readBytes('a.txt'))).toBe(hex(new TextEncoder().encode('\ufefffour\n')));
        expect(await b.uploadFiles([['/a.txt', new Uint8Array([0, 9])]])).toEqual([{ path: '/a.txt', error: null }]);
        expect(await b.delete('/a.txt')).toEqual({ path: '/a.txt', filesUpdate: null });
        expect(await ws.fs.exists('a.txt')).toBe(false);
      } finally {
        await ws.close();
      }
    });

    it('a trailing slash names a directory: no file is read, written, edited or deleted through it', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n', 'd/x.txt': 'x\n' });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        expect((await b.write('/a.txt/', 'two\n')).error).toMatch(/ENOTDIR/);
        expect((await b.write('/notes/', '# notes\n')).error).toMatch(/EISDIR/);
        expect((await b.edit('/a.txt/', 'one', 'two')).error).toBeDefined();
        expect((await b.delete('/a.txt/')).error).toBeDefined();
        expect(await b.uploadFiles([['/notes/', new Uint8Array([1])]])).toMatchObject([{ error: 'is_directory' }]);
        expect(hex(await ws.fs.readBytes('a.txt'))).toBe(hex(new TextEncoder().encode('one\n')));
        expect(await ws.fs.exists('notes')).toBe(false);
        expect((await b.ls('/d/')).files?.map((f) => f.path)).toEqual(['/d/x.txt']);
        expect(await toVoltAgentBackend(b).write('/v/', 'x')).toMatchObject({ error: expect.stringMatching(/EISDIR/) });
      } finally {
        await ws.close();
      }
    });

    it('a write or edit with a lone surrogate is an error value, and the file keeps its text', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n' });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        expect((await b.write('/a.txt', 'x \ud83d\n')).error).toMatch(/EINVAL.*U\+D83D/);
        expect((await b.edit('/a.txt', 'one', '\ude00')).error).toMatch(/EINVAL.*U\+DE00/);
        expect((await toVoltAgentBackend(b).write('/b.txt', '\ud800')).error).toMatch(/EINVAL/);
        expect(hex(await ws.fs.readBytes('a.txt'))).toBe(hex(new TextEncoder().encode('one\n')));
        expect(await ws.fs.exists('b.txt')).toBe(false);
      } finally {
        await ws.close();
      }
    });

    it.skipIf(backend === 'memory')(
      "VoltAgent's stat and exists of a link that cannot be followed: nothing there, never a file sized by the name the link holds",
      async () => {
        const ws = await openWorkspace(backend, { 'a.txt': 'a\n' });
        try {
          expect(await makeHostileLinks(ws)).toBe(true);
          const volt = toVoltAgentBackend(new CtxfsBackend({ context: ws.context }));
          for (const name of ['loop.lnk', 'host.lnk']) {
            expect(await volt.stat(`/${name}`), name).toBeNull();
            expect(await volt.exists(`/${name}`), name).toBe(false);
          }
          expect(await volt.stat('/a.txt')).toMatchObject({ is_dir: false, size: 2 });
        } finally {
          await ws.close();
        }
      },
    );

    it("VoltAgent's read numbers a page from the line it starts at, whatever offset a model sends", async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\ntwo\nthree\n' });
      try {
        const volt = toVoltAgentBackend(new CtxfsBackend({ context: ws.context }));
        expect(await volt.read('/a.txt', -1, 1)).toBe('     1\tone');
        expect(await volt.read('/a.txt', 1.5, 1)).toBe('     2\ttwo');
        expect(await volt.read('/a.txt', Number.NaN, 1)).toBe('     1\tone');
        expect(await volt.read('/a.txt', 2, 1)).toBe('     3\tthree');
      } finally {
        await ws.close();
      }
    });

    it('an upload over a file changed on disk since the agent uploaded it is refused, not written over it', async () => {
      const ws = await openWorkspace(backend, { 'a.bin': new Uint8Array([0, 1]) });
      try {
        const b = new CtxfsBackend({ context: ws.context });
        expect(await b.uploadFiles([['/a.bin', new Uint8Array([0, 2])]])).toEqual([{ path: '/a.bin', error: null }]);
        await ws.fs.writeBytes('a.bin', new Uint8Array([0, 9]));
        const [r] = await b.uploadFiles([['/a.bin', new Uint8Array([0, 3])]]);
        expect(r?.error).not.toBeNull();
        expect(r?.message).toMatch(/ECONFLICT/);
        expect([...(await ws.fs.readBytes('a.bin'))]).toEqual([0, 9]);
      } finally {
        await ws.close();
      }
    });
  });
}
