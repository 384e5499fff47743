/**
 * The AI SDK sandbox session given what a model may send: paths through
 * links out of the root or in a loop (on every backend with links), whose
 * answers name no host path; a trailing slash on a file or on a name to
 * write; text with a lone surrogate; and a careful
 * agent's own writes in turn (text, bytes, text in another encoding), none
 * of which is taken for another's change.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxSession } from '../src/ai-sdk/index.ts';
import { answerOf, expectNoHostPath, makeHostileLinks, THROUGH_LINKS } from './hostile-links.ts';
import { backends, cleanUp, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

const utf8 = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array());

for (const backend of await backends()) {
  describe(`AI SDK sandbox session, hostile input on ${backend}`, { timeout: 60_000 }, () => {
    it.skipIf(backend === 'memory')('no answer about a path through a link names a host path', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n' });
      try {
        expect(await makeHostileLinks(ws)).toBe(true);
        const sandbox = createSandboxSession({ context: ws.context });
        for (const name of THROUGH_LINKS) {
          const path = `/workspace/${name}`;
          const calls: Record<string, () => unknown> = {
            readTextFile: () => sandbox.readTextFile({ path }),
            readBinaryFile: () => sandbox.readBinaryFile({ path }),
            stat: () => sandbox.stat({ path }),
            listDirectory: () => sandbox.listDirectory({ path }),
            writeTextFile: () => sandbox.writeTextFile({ path, content: 'x\n' }),
            writeBinaryFile: () => sandbox.writeBinaryFile({ path, content: new Uint8Array([0, 1]) }),
            deleteFile: () => sandbox.deleteFile({ path }),
          };
          for (const [member, call] of Object.entries(calls)) expectNoHostPath(ws, `${member} ${path}`, await answerOf(call));
        }
      } finally {
        await ws.close();
      }
    });

    it("the agent's own byte write is its version: its next text write and its delete are not refused as another's change", async () => {
      const ws = await openWorkspace(backend, {});
      try {
        const sandbox = createSandboxSession({ context: ws.context });
        await sandbox.writeTextFile({ path: 'a.txt', content: 'one\n' });
        await sandbox.writeBinaryFile({ path: 'a.txt', content: new Uint8Array([0, 1, 2]) });
        await sandbox.writeTextFile({ path: 'a.txt', content: 'two\n' });
        expect(await sandbox.readTextFile({ path: 'a.txt' })).toBe('two\n');
        // Text the editor does not take (a NUL) goes by the byte path too.
        await sandbox.writeTextFile({ path: 'a.txt', content: 'x\0y\n' });
        await sandbox.writeTextFile({ path: 'a.txt', content: 'three\n' });
        expect(utf8(await ws.fs.readBytes('a.txt'))).toBe('three\n');
        await sandbox.writeTextFile({ path: 'b.txt', content: 'x\n', encoding: 'windows-1251' });
        await sandbox.writeTextFile({ path: 'b.txt', content: 'я\n', encoding: 'windows-1251' });
        expect(await sandbox.deleteFile({ path: 'b.txt' })).toBe(true);
        await sandbox.writeBinaryFile({ path: 'c.bin', content: new Uint8Array([0, 1]) });
        await sandbox.writeBinaryFile({ path: 'c.bin', content: new Uint8Array([0, 2]) });
        expect(await sandbox.deleteFile({ path: 'c.bin' })).toBe(true);
        expect(await ws.fs.exists('b.txt')).toBe(false);
      } finally {
        await ws.close();
      }
    });

    it('a trailing slash names a directory: on a file ENOTDIR, a file written there EISDIR, and nothing changes', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n', 'd/x.txt': 'x\n' });
      try {
        const sandbox = createSandboxSession({ context: ws.context });
        const code = async (p: PromiseLike<unknown>): Promise<unknown> =>
          await Promise.resolve(p).then(
            () => 'resolved',
            (err: { code?: string }) => err.code,
          );
        expect(await code(sandbox.readTextFile({ path: 'a.txt/' }))).toBe('ENOTDIR');
        expect(await code(sandbox.readBinaryFile({ path: '/workspace/a.txt/' }))).toBe('ENOTDIR');
        expect(await code(sandbox.stat({ path: 'a.txt/' }))).toBe('ENOTDIR');
        expect(await code(sandbox.writeTextFile({ path: 'a.txt/', content: 'two\n' }))).toBe('ENOTDIR');
        expect(await code(sandbox.deleteFile({ path: 'a.txt/' }))).toBe('ENOTDIR');
        expect(await code(sandbox.writeTextFile({ path: 'notes/', content: '# notes\n' }))).toBe('EISDIR');
        expect(await code(sandbox.writeBinaryFile({ path: 'notes/', content: new Uint8Array([1]) }))).toBe('EISDIR');
        expect(utf8(await ws.fs.readBytes('a.txt'))).toBe('one\n');
        expect(await ws.fs.exists('notes')).toBe(false);
        // A directory named with its slash is the directory.
        expect(await sandbox.listDirectory({ path: 'd/' })).toEqual([{ name: 'x.txt', type: 'file' }]);
        expect(await sandbox.stat({ path: '/workspace/d/' })).toMatchObject({ type: 'directory' });
        expect(await sandbox.readTextFile({ path: 'nope/' })).toBeNull();
      } finally {
        await ws.close();
      }
    });

    it('text with a lone surrogate is refused (EINVAL), not stored as U+FFFD', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n' });
      try {
        const sandbox = createSandboxSession({ context: ws.context });
        await expect(sandbox.writeTextFile({ path: 'a.txt', content: 'smile \ud83d\n' })).rejects.toMatchObject({ code: 'EINVAL' });
        await expect(sandbox.writeTextFile({ path: 'new.txt', content: '\udc00' })).rejects.toMatchObject({ code: 'EINVAL' });
        expect(utf8(await ws.fs.readBytes('a.txt'))).toBe('one\n');
        expect(await ws.fs.exists('new.txt')).toBe(false);
        await sandbox.writeTextFile({ path: 'a.txt', content: 'smile \ud83d\ude00\n' });
        expect(utf8(await ws.fs.readBytes('a.txt'))).toBe('smile 😀\n');
      } finally {
        await ws.close();
      }
    });

    it('a byte write over a file another agent changed since the read is still refused', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'one\n' });
      try {
        const sandbox = createSandboxSession({ context: ws.context });
        await sandbox.writeBinaryFile({ path: 'a.txt', content: new Uint8Array([0, 1]) });
        await ws.fs.writeBytes('a.txt', new Uint8Array([0, 9]));
        await expect(sandbox.writeBinaryFile({ path: 'a.txt', content: new Uint8Array([0, 2]) })).rejects.toMatchObject({ code: 'ECONFLICT' });
        expect([...(await ws.fs.readBytes('a.txt'))]).toEqual([0, 9]);
      } finally {
        await ws.close();
      }
    });
  });
}
