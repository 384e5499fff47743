/**
 * Mastra's WorkspaceFilesystem given what a model may send: paths through
 * links out of the root or in a loop (answers in Mastra's error classes,
 * naming no host path), a copy or move onto a directory or below a file
 * (the error names the path that is wrong), a trailing slash on a file or
 * on a name to write, a recursive listing through a link to a parent,
 * `exists` of a name no file
 * can have (false, not an error), text with a lone surrogate (refused,
 * never stored as U+FFFD), and a careful agent's own
 * Buffer writes in turn, none of which is taken for another's change.
 */

import { FileNotFoundError, FilesystemError, IsDirectoryError, NotDirectoryError, PermissionError } from '@mastra/core/workspace';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { answerOf, expectNoHostPath, makeHostileLinks, THROUGH_LINKS } from './hostile-links.ts';
import { backends, cleanUp, openWorkspace, type TestWorkspace } from './workspaces.ts';

afterAll(cleanUp);

for (const backend of await backends()) {
  describe(`Mastra WorkspaceFilesystem, hostile input on ${backend}`, { timeout: 60_000 }, () => {
    const withFs = async (files: Record<string, string | Uint8Array>, fn: (m: CtxfsWorkspaceFilesystem, ws: TestWorkspace) => Promise<void>) => {
      const ws = await openWorkspace(backend, files);
      try {
        await fn(new CtxfsWorkspaceFilesystem({ context: ws.context }), ws);
      } finally {
        await ws.close();
      }
    };

    it.skipIf(backend === 'memory')('no answer about a path through a link names a host path', () =>
      withFs({ 'a.txt': 'a\n' }, async (m, ws) => {
        expect(await makeHostileLinks(ws)).toBe(true);
        for (const name of THROUGH_LINKS) {
          const path = `/${name}`;
          const calls: Record<string, () => unknown> = {
            readFile: () => m.readFile(path, { encoding: 'utf8' }),
            stat: () => m.stat(path),
            readdir: () => m.readdir(path),
            walk: () => m.walk(path),
            grep: () => m.grep({ pattern: 'root', path, caseSensitive: true, includeHidden: false }),
            writeFile: () => m.writeFile(path, 'x\n'),
            appendFile: () => m.appendFile(path, 'x\n'),
            copyFile: () => m.copyFile(path, '/copy.txt'),
            'copyFile to': () => m.copyFile('/a.txt', path),
            'moveFile to': () => m.moveFile('/a.txt', `${path}/moved.txt`),
            mkdir: () => m.mkdir(`${path}/d`),
            rmdir: () => m.rmdir(path, { recursive: true }),
            deleteFile: () => m.deleteFile(path),
          };
          for (const [member, call] of Object.entries(calls)) expectNoHostPath(ws, `${member} ${path}`, await answerOf(call));
        }
      }),
    );

    it('exists of a name no file can have is false, as LocalFilesystem answers; of a path out of the root a PermissionError', () =>
      withFs({ 'a.txt': 'a\n' }, async (m) => {
        expect(await m.exists('/a\0.txt')).toBe(false);
        expect(await m.exists(`/${'x'.repeat(300)}.txt`)).toBe(false);
        expect(await m.exists('/a.txt/x')).toBe(false);
        expect(await m.exists('/a.txt')).toBe(true);
        await expect(m.exists('/../a.txt')).rejects.toThrow(PermissionError);
      }));

    it('a write or append of text with a lone surrogate is a FilesystemError EINVAL, and nothing is written', () =>
      withFs({ 'a.txt': 'a\n' }, async (m, ws) => {
        await expect(m.writeFile('/a.txt', 'x\ud83d')).rejects.toMatchObject({ code: 'EINVAL' });
        await expect(m.appendFile('/a.txt', '\udc00\n')).rejects.toMatchObject({ code: 'EINVAL' });
        await expect(m.appendFile('/a.txt', '\udc00\n')).rejects.toThrow(FilesystemError);
        expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('a\n');
        expect(await ws.fs.exists('a.txt')).toBe(true);
      }));

    it.skipIf(backend === 'memory')('exists of a link in a loop is false and of a link out of the root a PermissionError, as its stat', () =>
      withFs({ 'a.txt': 'a\n' }, async (m, ws) => {
        expect(await makeHostileLinks(ws)).toBe(true);
        expect(await m.exists('/loop.lnk')).toBe(false);
        await expect(m.exists('/host.lnk')).rejects.toThrow(PermissionError);
        await expect(m.stat('/host.lnk')).rejects.toThrow(PermissionError);
        expect(await m.exists('/a.txt')).toBe(true);
      }),
    );

    it('a trailing slash names a directory: on a file NotDirectoryError, a file written there IsDirectoryError', () =>
      withFs({ 'a.txt': 'a\n', 'd/x.txt': 'x\n' }, async (m, ws) => {
        await expect(m.readFile('/a.txt/')).rejects.toThrow(NotDirectoryError);
        await expect(m.writeFile('/a.txt/', 'b\n')).rejects.toThrow(NotDirectoryError);
        await expect(m.deleteFile('/a.txt/')).rejects.toThrow(NotDirectoryError);
        await expect(m.writeFile('/notes/', '# notes\n')).rejects.toThrow(IsDirectoryError);
        expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('a\n');
        expect(await ws.fs.exists('notes')).toBe(false);
        expect((await m.readdir('/d/')).map((e) => e.name)).toEqual(['x.txt']);
      }));

    it.skipIf(backend === 'memory')('a recursive readdir lists a link to a parent directory once and does not enter it', () =>
      withFs({ 'a/x.txt': 'x\n', 'b/y.txt': 'y\n' }, async (m, ws) => {
        await ws.link?.('..', 'a/up');
        await ws.link?.('..', 'b/up');
        const started = Date.now();
        const names = (await m.readdir('/', { recursive: true })).map((e) => `${e.name}:${e.type}${e.isSymlink ? ':link' : ''}`);
        expect(names.sort()).toEqual(['a/up:directory:link', 'a/x.txt:file', 'a:directory', 'b/up:directory:link', 'b/y.txt:file', 'b:directory']);
        expect(Date.now() - started).toBeLessThan(5_000);
      }),
    );

    it('a copy or move onto a directory is an IsDirectoryError naming the destination, not the file copied', () =>
      withFs({ 'a.txt': 'a\n', 'd/kept.txt': 'k\n' }, async (m) => {
        await expect(m.copyFile('/a.txt', '/d')).rejects.toThrow(IsDirectoryError);
        await expect(m.copyFile('/a.txt', '/d')).rejects.toMatchObject({ path: '/d' });
        await expect(m.moveFile('/a.txt', '/d')).rejects.toMatchObject({ path: '/d' });
        await expect(m.moveFile('/a.txt', '/d')).rejects.toThrow(IsDirectoryError);
        expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('a\n');
      }));

    it('a copy or move below a file is a NotDirectoryError naming the destination', () =>
      withFs({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (m) => {
        await expect(m.copyFile('/b.txt', '/a.txt/x')).rejects.toThrow(NotDirectoryError);
        await expect(m.copyFile('/b.txt', '/a.txt/x')).rejects.toMatchObject({ path: '/a.txt/x' });
        await expect(m.moveFile('/b.txt', '/a.txt/x')).rejects.toThrow(NotDirectoryError);
        await expect(m.moveFile('/b.txt', '/a.txt/x')).rejects.toMatchObject({ path: '/a.txt/x' });
        expect(await m.readFile('/b.txt', { encoding: 'utf8' })).toBe('b\n');
        await expect(m.copyFile('/nope.txt', '/c.txt')).rejects.toMatchObject({ path: '/nope.txt' });
        await expect(m.copyFile('/nope.txt', '/c.txt')).rejects.toThrow(FileNotFoundError);
      }));

    it("the agent's own Buffer writes and appends are its versions: its delete after them is not refused", () =>
      withFs({ 'a.txt': 'one\n' }, async (m, ws) => {
        await m.readFile('/a.txt');
        await m.writeFile('/a.txt', Buffer.from([0, 1]));
        await m.writeFile('/a.txt', Buffer.from([0, 2]));
        await m.appendFile('/a.txt', Buffer.from([3]));
        expect([...(await ws.fs.readBytes('a.txt'))]).toEqual([0, 2, 3]);
        await m.writeFile('/a.txt', 'text again\n');
        await m.writeFile('/a.txt', Buffer.from([0xcf, 0xf0, 0x0a]));
        await m.deleteFile('/a.txt');
        expect(await ws.fs.exists('a.txt')).toBe(false);
      }));
  });
}
