/**
 * Mastra's WorkspaceFilesystem over ctxfs on memory, host and container:
 * every operation with Mastra's own error classes, `expectedMtime` decided
 * by content, bad input refused without a host path, and Mastra's own
 * workspace tools (read, write, edit) running on it.
 */

import { symlink, utimes, writeFile as writeHostFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DirectoryNotEmptyError,
  DirectoryNotFoundError,
  editFileTool,
  FileExistsError,
  FileNotFoundError,
  FilesystemError,
  IsDirectoryError,
  NotDirectoryError,
  PermissionError,
  readFileTool,
  StaleFileError,
  UnsupportedGrepPatternError,
  Workspace,
  type WorkspaceFilesystem,
  writeFileTool,
} from '@mastra/core/workspace';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { backends, cleanUp, hex, NON_UTF8_TEXT, openWorkspace, type TestWorkspace, UTF8_PAYLOAD } from './workspaces.ts';

afterAll(cleanUp);

const tree = { 'src/a.ts': 'const a = 1;\n', 'src/lib/b.py': 'print(1)\n', 'docs/r.md': '# r\n', 'bin.dat': new Uint8Array([0, 1, 2]) };
const utf8 = (b: Uint8Array): string => new TextDecoder().decode(b);

for (const backend of await backends()) {
  describe(`Mastra WorkspaceFilesystem on ${backend}`, { timeout: 60_000 }, () => {
    const withFs = async (fn: (m: CtxfsWorkspaceFilesystem, ws: TestWorkspace) => Promise<void>) => {
      const ws = await openWorkspace(backend, tree);
      try {
        await fn(new CtxfsWorkspaceFilesystem({ context: ws.context }), ws);
      } finally {
        await ws.close();
      }
    };

    it('is a WorkspaceFilesystem with instructions naming what ctxfs adds', () =>
      withFs(async (m) => {
        const typed: WorkspaceFilesystem = m;
        expect(typed.provider).toBe('ctxfs');
        const text = m.getInstructions();
        for (const word of ['version', 'undone', 'history', 'budgets', 'expectedMtime', 'audited']) expect(text).toContain(word);
        expect(m.getInfo()).toMatchObject({ id: 'ctxfs', status: 'ready', readOnly: false });
        expect(m.isReady()).toBe(true);
      }));

    it('readFile: a Buffer, or a string with an encoding; Mastra errors for a missing file and a directory', () =>
      withFs(async (m) => {
        expect(await m.readFile('/src/a.ts', { encoding: 'utf8' })).toBe('const a = 1;\n');
        expect(Buffer.isBuffer(await m.readFile('/bin.dat'))).toBe(true);
        expect(Array.from((await m.readFile('bin.dat')) as Buffer)).toEqual([0, 1, 2]);
        await expect(m.readFile('/nope')).rejects.toBeInstanceOf(FileNotFoundError);
        await expect(m.readFile('/src')).rejects.toBeInstanceOf(IsDirectoryError);
      }));

    it('writeFile: parents by default, recursive: false and overwrite: false refused the Mastra way', () =>
      withFs(async (m, ws) => {
        await m.writeFile('/new/deep/x.txt', 'x');
        expect(utf8(await ws.fs.readBytes('new/deep/x.txt'))).toBe('x');
        await expect(m.writeFile('/none/y.txt', 'y', { recursive: false })).rejects.toBeInstanceOf(DirectoryNotFoundError);
        await expect(m.writeFile('/src/a.ts/y.txt', 'y', { recursive: false })).rejects.toBeInstanceOf(NotDirectoryError);
        await expect(m.writeFile('/src/a.ts', 'y', { overwrite: false })).rejects.toBeInstanceOf(FileExistsError);
        await expect(m.writeFile('/src', 'y')).rejects.toBeInstanceOf(IsDirectoryError);
        await m.writeFile('/bin2.dat', Buffer.from([0, 9]));
        expect(Array.from(await ws.fs.readBytes('bin2.dat'))).toEqual([0, 9]);
      }));

    it('appendFile, deleteFile (force), copyFile, moveFile', () =>
      withFs(async (m, ws) => {
        await m.appendFile('/src/a.ts', 'const b = 2;\n');
        await m.appendFile('/log.txt', 'one\n');
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 1;\nconst b = 2;\n');
        expect(utf8(await ws.fs.readBytes('log.txt'))).toBe('one\n');
        await m.deleteFile('/log.txt');
        await expect(m.deleteFile('/log.txt')).rejects.toBeInstanceOf(FileNotFoundError);
        await m.deleteFile('/log.txt', { force: true });
        await expect(m.deleteFile('/src')).rejects.toBeInstanceOf(IsDirectoryError);
        await m.copyFile('/src/a.ts', '/copy/a.ts');
        expect(utf8(await ws.fs.readBytes('copy/a.ts'))).toContain('const b');
        await expect(m.copyFile('/src/a.ts', '/copy/a.ts', { overwrite: false })).rejects.toBeInstanceOf(FileExistsError);
        await expect(m.copyFile('/src', '/src2')).rejects.toBeInstanceOf(IsDirectoryError);
        await m.copyFile('/src', '/src2', { recursive: true });
        expect(utf8(await ws.fs.readBytes('src2/lib/b.py'))).toBe('print(1)\n');
        // Empty directories are copied too, and an empty directory is copied as one, as Mastra's LocalFilesystem does.
        await m.mkdir('/src/empty/deeper');
        await m.mkdir('/only-empty');
        await m.copyFile('/src', '/src3', { recursive: true });
        await m.copyFile('/only-empty', '/only-empty2', { recursive: true });
        expect((await m.stat('/src3/empty/deeper')).type).toBe('directory');
        expect((await m.stat('/only-empty2')).type).toBe('directory');
        await m.moveFile('/copy/a.ts', '/moved/here/a.ts');
        expect(await ws.fs.exists('copy/a.ts')).toBe(false);
        expect(await ws.fs.exists('moved/here/a.ts')).toBe(true);
        await expect(m.moveFile('/missing', '/x')).rejects.toBeInstanceOf(FileNotFoundError);
        await expect(m.moveFile('/docs/r.md', '/src/a.ts', { overwrite: false })).rejects.toBeInstanceOf(FileExistsError);
      }));

    it('mkdir, rmdir, readdir (recursive, extension, maxDepth), exists, stat', () =>
      withFs(async (m) => {
        await m.mkdir('/made/a/b');
        await m.mkdir('/made/a/b');
        await expect(m.mkdir('/src/a.ts')).rejects.toBeInstanceOf(FileExistsError);
        await expect(m.mkdir('/x/y', { recursive: false })).rejects.toBeInstanceOf(DirectoryNotFoundError);
        await expect(m.rmdir('/made')).rejects.toBeInstanceOf(DirectoryNotEmptyError);
        await m.rmdir('/made', { recursive: true });
        await expect(m.rmdir('/made')).rejects.toBeInstanceOf(DirectoryNotFoundError);
        await m.rmdir('/made', { force: true });
        await expect(m.rmdir('/src/a.ts')).rejects.toBeInstanceOf(NotDirectoryError);
        expect((await m.readdir('/src')).map((e) => `${e.name}:${e.type}`).sort()).toEqual(['a.ts:file', 'lib:directory']);
        expect((await m.readdir('/src', { recursive: true })).map((e) => e.name).sort()).toEqual(['a.ts', 'lib', 'lib/b.py']);
        expect((await m.readdir('/src', { recursive: true, maxDepth: 0 })).map((e) => e.name).sort()).toEqual(['a.ts', 'lib']);
        expect((await m.readdir('/src', { recursive: true, extension: '.py' })).map((e) => e.name).sort()).toEqual(['lib', 'lib/b.py']);
        expect((await m.readdir('/src')).find((e) => e.name === 'a.ts')?.size).toBe(13);
        await expect(m.readdir('/none')).rejects.toBeInstanceOf(DirectoryNotFoundError);
        await expect(m.readdir('/src/a.ts')).rejects.toBeInstanceOf(NotDirectoryError);
        expect(await m.exists('/src/a.ts')).toBe(true);
        expect(await m.exists('/nope')).toBe(false);
        expect(await m.stat('/src/a.ts')).toMatchObject({ name: 'a.ts', path: '/src/a.ts', type: 'file', size: 13 });
        expect((await m.stat('/src')).type).toBe('directory');
        await expect(m.stat('/nope')).rejects.toBeInstanceOf(FileNotFoundError);
      }));

    it('writeFile with a Buffer or bytes stores exactly those bytes, over any file', () =>
      withFs(async (m, ws) => {
        for (const [name, before] of Object.entries(NON_UTF8_TEXT)) {
          await ws.fs.writeBytes(`buffer-${name}`, before);
          await ws.fs.writeBytes(`bytes-${name}`, before);
          await m.writeFile(`/buffer-${name}`, Buffer.from(UTF8_PAYLOAD));
          await m.writeFile(`/bytes-${name}`, UTF8_PAYLOAD);
          expect(hex(await ws.fs.readBytes(`buffer-${name}`)), name).toBe(hex(UTF8_PAYLOAD));
          expect(hex(await ws.fs.readBytes(`bytes-${name}`)), name).toBe(hex(UTF8_PAYLOAD));
        }
      }));

    it('rmdir recursive: every file decided by the policy first, each removed as a version undo restores', () =>
      withFs(async (m, ws) => {
        await ws.fs.writeBytes('cfg/.env', new TextEncoder().encode('TOKEN=x\n'), { createParents: true });
        await ws.fs.writeBytes('cfg/app.json', new TextEncoder().encode('{}\n'));
        await expect(m.rmdir('/cfg', { recursive: true })).rejects.toBeInstanceOf(PermissionError);
        for (const path of ['cfg/.env', 'cfg/app.json']) expect(await ws.fs.exists(path)).toBe(true);
        await m.rmdir('/src', { recursive: true });
        expect(await ws.fs.exists('src')).toBe(false);
        expect((await ws.context.undo('src/lib/b.py')).success).toBe(true);
        expect(utf8(await ws.fs.readBytes('src/lib/b.py'))).toBe('print(1)\n');
      }));

    it("a directory's rename is decided for every file below it, under its old name and its new one", async () => {
      const ws = await openWorkspace(
        backend,
        { ...tree, 'secrets/db.txt': 'pw=swordfish42\n', 'vendor/lib.js': 'frozen\n' },
        {
          safety: { policyFiles: false, policy: { readOnly: ['vendor/'], rules: [{ effect: 'deny', paths: ['secrets/'] }] } },
        },
      );
      try {
        const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
        // A rule naming a directory names the directory itself; and no file leaves a directory it guards by its rename.
        await expect(m.moveFile('/secrets', '/open')).rejects.toBeInstanceOf(PermissionError);
        await expect(m.moveFile('/vendor', '/vendor2')).rejects.toBeInstanceOf(PermissionError);
        await expect(m.moveFile('/docs', '/secrets')).rejects.toBeInstanceOf(PermissionError);
        for (const path of ['secrets/db.txt', 'vendor/lib.js', 'docs/r.md']) expect(await ws.fs.exists(path), path).toBe(true);
        for (const path of ['open', 'vendor2']) expect(await ws.fs.exists(path), path).toBe(false);
        await m.moveFile('/docs', '/manual');
        expect(utf8(await ws.fs.readBytes('manual/r.md'))).toBe('# r\n');
      } finally {
        await ws.close();
      }
    });

    it('deleteFile and rmdir recursive of a symlink remove the link itself, never what it leads to', () =>
      withFs(async (m, ws) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('a.ts', join(ws.hostRoot, 'src/to-file'));
        await symlink('lib', join(ws.hostRoot, 'src/to-dir'));
        await m.deleteFile('/src/to-file');
        await m.rmdir('/src/to-dir', { recursive: true });
        expect((await m.readdir('/src', { recursive: true })).map((e) => e.name).sort()).toEqual(['a.ts', 'lib', 'lib/b.py']);
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe(tree['src/a.ts']);
      }));

    it('readdir lists a self-referencing or dangling symlink as a link, and the rest of the directory', () =>
      withFs(async (m, ws) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('self', join(ws.hostRoot, 'src/self'));
        await symlink('missing', join(ws.hostRoot, 'src/dangling'));
        const entries = await m.readdir('/src');
        expect(entries.map((e) => `${e.name}:${e.type}${e.isSymlink ? ':link' : ''}`).sort()).toEqual([
          'a.ts:file',
          'dangling:file:link',
          'lib:directory',
          'self:file:link',
        ]);
        // A link in a loop cannot be followed: stat fails as readFile does, never a file sized by the name it holds.
        await expect(m.stat('/src/self')).rejects.toMatchObject({ code: 'ELOOP' });
      }));

    it('grep caps each file before the total, so a file with many matches leaves room for the files after it', () =>
      withFs(async (m, ws) => {
        await ws.fs.writeBytes('g/a.txt', new TextEncoder().encode('TODO 1\nTODO 2\nTODO 3\nTODO 4\n'), { createParents: true });
        await ws.fs.writeBytes('g/b.txt', new TextEncoder().encode('TODO b\n'));
        await ws.fs.writeBytes('g/c.txt', new TextEncoder().encode('TODO c\n'));
        const options = { pattern: 'TODO', path: '/g', caseSensitive: true, includeHidden: false };
        const each = await m.grep({ ...options, maxCountPerFile: 1, maxTotalMatches: 3 });
        expect(each.map((f) => `${f.path}:${f.matches.length}`)).toEqual(['a.txt:1', 'b.txt:1', 'c.txt:1']);
        const total = await m.grep({ ...options, maxCountPerFile: 2, maxTotalMatches: 3 });
        expect(total.map((f) => `${f.path}:${f.matches.length}`)).toEqual(['a.txt:2', 'b.txt:1']);
      }));

    it('walk and grep: the optional capabilities Mastra’s tools prefer, answered natively', () =>
      withFs(async (m, ws) => {
        await ws.fs.writeBytes('src/.note', new TextEncoder().encode('hidden\n'));
        await ws.fs.writeBytes('src/u.txt', new TextEncoder().encode('one\n😀 const x\nthree\n'));
        const all = await m.walk('/src');
        expect(all.map((e) => `${e.path}:${e.type}`).sort()).toEqual(['a.ts:file', 'lib/b.py:file', 'lib:directory', 'u.txt:file']);
        expect((await m.walk('/src', { includeHidden: true })).map((e) => e.path)).toContain('.note');
        expect((await m.walk('/src', { maxDepth: 1 })).map((e) => e.path).sort()).toEqual(['a.ts', 'lib', 'u.txt']);
        await expect(m.walk('/src/a.ts')).rejects.toBeInstanceOf(NotDirectoryError);
        const hits = await m.grep({ pattern: 'const', path: '/src', caseSensitive: true, includeHidden: false, contextLines: 1 });
        const u = hits.find((h) => h.path === 'u.txt');
        expect(u?.matches).toEqual([{ line: 2, column: 3, text: '😀 const x', before: ['one'], after: ['three'] }]);
        expect(hits.map((h) => h.path).sort()).toEqual(['a.ts', 'u.txt']);
        expect(await m.grep({ pattern: 'CONST', path: '/src', caseSensitive: false, includeHidden: false, maxCountPerFile: 1 })).toHaveLength(2);
        expect(await m.grep({ pattern: 'hidden', path: '/src', caseSensitive: true, includeHidden: true })).toEqual([
          { path: '.note', matches: [{ line: 1, column: 0, text: 'hidden' }] },
        ]);
        await expect(m.grep({ pattern: 'a(?=b)', path: '/src', caseSensitive: true, includeHidden: false })).rejects.toBeInstanceOf(
          UnsupportedGrepPatternError,
        );
      }));

    it('expectedMtime by content: unchanged since the read passes, changed is stale, a plain mtime is compared as one', () =>
      withFs(async (m, ws) => {
        await m.readFile('/src/a.ts');
        const seen = (await m.stat('/src/a.ts')).modifiedAt;
        await m.writeFile('/src/a.ts', 'const a = 2;\n', { expectedMtime: seen });
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 2;\n');
        await m.readFile('/src/a.ts');
        const again = (await m.stat('/src/a.ts')).modifiedAt;
        await ws.fs.writeBytes('src/a.ts', new TextEncoder().encode('const a = 3; // someone else\n'));
        const err = await m.writeFile('/src/a.ts', 'const a = 4;\n', { expectedMtime: again }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StaleFileError);
        expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 3; // someone else\n');
        await expect(m.writeFile('/src/a.ts', 'x', { expectedMtime: new Date(0) })).rejects.toBeInstanceOf(StaleFileError);
        // A new file has no mtime to be stale against.
        await m.writeFile('/fresh.txt', 'f', { expectedMtime: new Date(0) });
      }));

    /**
     * Writes each of `contents` over `path` with the mtime just served while
     * `other` acts on the file right after the freshness check's read (the
     * next whole read of the backend), and hands `check` what the write threw.
     */
    const writeRacing = async (
      m: CtxfsWorkspaceFilesystem,
      ws: TestWorkspace,
      path: string,
      base: string,
      contents: ReadonlyArray<string | Buffer>,
      other: () => Promise<unknown>,
      check: (err: unknown) => Promise<void>,
    ) => {
      const read = ws.fs.readBytes.bind(ws.fs);
      let armed = false;
      ws.fs.readBytes = async (...args: Parameters<typeof read>) => {
        const bytes = await read(...args);
        if (armed) {
          armed = false;
          await other();
        }
        return bytes;
      };
      try {
        for (const content of contents) {
          await ws.fs.writeBytes(path, new TextEncoder().encode(base));
          await m.readFile(`/${path}`);
          const seen = (await m.stat(`/${path}`)).modifiedAt;
          armed = true;
          await check(
            await m.writeFile(`/${path}`, content, { expectedMtime: seen }).then(
              () => undefined,
              (e: unknown) => e,
            ),
          );
        }
      } finally {
        ws.fs.readBytes = read;
      }
    };

    it('expectedMtime: a change landing between the check and the commit is refused too, never merged', () =>
      withFs(async (m, ws) => {
        const base = 'line1\nline2\nline3\nline4\nline5\nline6\n';
        const theirs = base.replace('line6', 'OTHER6');
        const contents = [base.replace('line1', 'AGENT1'), Buffer.from(base.replace('line1', 'BYTES1'))];
        await writeRacing(
          m,
          ws,
          'race.txt',
          base,
          contents,
          () => ws.fs.writeBytes('race.txt', new TextEncoder().encode(theirs)),
          async (err) => {
            expect(err).toBeInstanceOf(StaleFileError);
            expect(utf8(await ws.fs.readBytes('race.txt'))).toBe(theirs);
          },
        );
      }));

    it('expectedMtime: a file deleted between the check and the commit stays deleted, the write refused as not found', () =>
      withFs(async (m, ws) => {
        // Text (the editor), UTF-8 bytes (the editor), binary bytes (the byte path).
        const contents = ['AGENT1\nline2\n', Buffer.from('BYTES1\nline2\n'), Buffer.from([0, 1, 2, 255])];
        await writeRacing(
          m,
          ws,
          'gone.txt',
          'line1\nline2\n',
          contents,
          () => ws.fs.delete('gone.txt'),
          async (err) => {
            // Gone, not changed: Mastra's own "not found", which a re-read confirms.
            expect(err, String(err)).toBeInstanceOf(FileNotFoundError);
            expect(await ws.fs.exists('gone.txt')).toBe(false);
          },
        );
      }));

    if (backend === 'host') {
      it('expectedMtime by content on the host: touched but unchanged is no conflict; changed within the same mtime is', () =>
        withFs(async (m, ws) => {
          const file = join(ws.hostRoot as string, 'src/a.ts');
          await m.readFile('/src/a.ts');
          const seen = (await m.stat('/src/a.ts')).modifiedAt;
          await utimes(file, new Date(), new Date(Date.now() + 60_000)); // touched: a new mtime, the same bytes
          await m.writeFile('/src/a.ts', 'const a = 5;\n', { expectedMtime: seen });
          expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 5;\n');
          await m.readFile('/src/a.ts');
          const now = (await m.stat('/src/a.ts')).modifiedAt;
          await writeHostFile(file, 'const a = 6;\n'); // changed, then given back the same mtime
          await utimes(file, now, now);
          await expect(m.writeFile('/src/a.ts', 'const a = 7;\n', { expectedMtime: now })).rejects.toBeInstanceOf(StaleFileError);
          expect(utf8(await ws.fs.readBytes('src/a.ts'))).toBe('const a = 6;\n');
        }));
    }

    it('bad input: outside the root, a symlink out, binary kept as bytes; no host path in any error', () =>
      withFs(async (m, ws) => {
        for (const path of ['/../x', '../../etc/passwd', '/src/../../x']) {
          const errors = await Promise.all(
            [m.readFile(path), m.writeFile(path, 'x'), m.deleteFile(path), m.readdir(path), m.stat(path)].map((p) => p.catch((e: unknown) => e)),
          );
          for (const e of errors) {
            expect(e).toBeInstanceOf(PermissionError);
            expect((e as Error).message).not.toMatch(/\/tmp\/|\/work\//);
          }
        }
        if (ws.hostRoot !== undefined) {
          const outside = join(ws.hostRoot, '..', `mastra-outside-${process.pid}.txt`);
          await writeHostFile(outside, 'secret');
          await symlink(outside, join(ws.hostRoot, 'link.txt'));
          // stat too: the backend reports the link unfollowed, sized by the host path it names, which is not the agent's to see.
          for (const e of await Promise.all(
            [m.readFile('/link.txt'), m.writeFile('/link.txt', 'y'), m.stat('/link.txt')].map((p) => p.catch((x: unknown) => x)),
          )) {
            expect(e).toBeInstanceOf(PermissionError);
            expect((e as Error).message).not.toContain(ws.hostRoot);
          }
        }
      }));

    it('what ctxfs adds: writes are versions with undo; a write after someone else’s change is merged', () =>
      withFs(async (m, ws) => {
        await ws.fs.writeBytes('notes.md', new TextEncoder().encode('a\nb\nc\nd\n'));
        await m.readFile('/notes.md');
        await ws.fs.writeBytes('notes.md', new TextEncoder().encode('a\nb\nc\nD\n'));
        await m.writeFile('/notes.md', 'A\nb\nc\nd\n');
        expect(utf8(await ws.fs.readBytes('notes.md'))).toBe('A\nb\nc\nD\n');
        expect((await ws.context.undo('notes.md')).success).toBe(true);
        expect(utf8(await ws.fs.readBytes('notes.md'))).toBe('a\nb\nc\nD\n');
      }));

    it('a readFile is one audited readBytes: a file’s succeeds with its bytes, a directory’s fails EISDIR (the caller gets IsDirectoryError)', () =>
      withFs(async (m, ws) => {
        await m.readFile('/docs/r.md');
        await expect(m.readFile('/docs')).rejects.toBeInstanceOf(IsDirectoryError);
        const records = (await ws.context.store.auditLog()).filter((r) => r.path === 'docs/r.md' || r.path === 'docs');
        expect(records.map((r) => `${r.op} ${r.path} ${r.result}`).sort()).toEqual(['readBytes docs error', 'readBytes docs/r.md ok']);
      }));

    it('the policy’s budgets apply to its calls: one past them is refused', async () => {
      const ws = await openWorkspace(backend, tree, { safety: { policy: { budgets: { operations: 1 } } } }); // a readFile is one operation
      try {
        const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
        await m.readFile('/docs/r.md');
        const err = await m.readFile('/docs/r.md').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FilesystemError);
        expect((err as FilesystemError).code).toBe('ELIMIT');
      } finally {
        await ws.close();
      }
    });

    it('Mastra’s own workspace tools read, write and edit through it', () =>
      withFs(async (m, ws) => {
        const workspace = new Workspace({ filesystem: m });
        await workspace.init();
        const context = { workspace } as never;
        const read = (await readFileTool.execute?.({ path: '/src/a.ts' }, context)) as { content?: string };
        expect(JSON.stringify(read)).toContain('const a = 1;');
        await writeFileTool.execute?.({ path: '/tool/new.ts', content: 'export const x = 1;\n' }, context);
        expect(utf8(await ws.fs.readBytes('tool/new.ts'))).toBe('export const x = 1;\n');
        await readFileTool.execute?.({ path: '/tool/new.ts' }, context);
        await editFileTool.execute?.({ path: '/tool/new.ts', old_string: 'x = 1', new_string: 'x = 2' }, context);
        expect(utf8(await ws.fs.readBytes('tool/new.ts'))).toBe('export const x = 2;\n');
        expect((await ws.context.history('tool/new.ts')).length).toBeGreaterThanOrEqual(2);
      }));
  });
}
