/**
 * The AI SDK sandbox session's file members, checked against the semantics
 * its type documents (no conformance suite for sessions is published), on
 * memory, host and container; then what ctxfs adds through the session.
 */

import { readFile as readHostFile, symlink, writeFile as writeHostFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditDraft } from '@ctxfs/context';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxSession } from '../src/ai-sdk/index.ts';
import { backends, cleanUp, hex, NON_UTF8_TEXT, openWorkspace, shellRunner, type TestWorkspace, UTF8_PAYLOAD } from './workspaces.ts';

afterAll(cleanUp);

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));
const streamOf = (...parts: string[]): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });
const rejection = async (p: PromiseLike<unknown>): Promise<Error & { code?: string }> => {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
};

for (const backend of await backends()) {
  describe(`AI SDK sandbox session on ${backend}`, { timeout: 60_000 }, () => {
    const open = async (files: Record<string, string | Uint8Array> = {}) => {
      const ws = await openWorkspace(backend, { 'src/a.ts': 'one\ntwo\nthree\n', 'dir/inner.txt': 'x', ...files });
      return { ws, sandbox: createSandboxSession({ context: ws.context }) };
    };
    const withWs = async (
      fn: (ws: TestWorkspace, sandbox: ReturnType<typeof createSandboxSession>) => Promise<void>,
      files?: Record<string, string | Uint8Array>,
    ) => {
      const { ws, sandbox } = await open(files);
      try {
        await fn(ws, sandbox);
      } finally {
        await ws.close();
      }
    };

    it('readFile streams the bytes, null when missing, rejects a directory', () =>
      withWs(async (_ws, s) => {
        const stream = await s.readFile({ path: 'src/a.ts' });
        expect(stream).not.toBeNull();
        expect(await new Response(stream).text()).toBe('one\ntwo\nthree\n');
        expect(await s.readFile({ path: 'missing.txt' })).toBeNull();
        expect(await s.readFile({ path: '/workspace/src/a.ts' })).not.toBeNull();
        expect((await rejection(s.readFile({ path: 'dir' }).then((r) => r && new Response(r).text()))).code).toBe('EISDIR');
      }));

    it('readFile streams a file past the read-ahead buffer byte-exact, however long the reader holds its chunks', () => {
      // 3 MiB of non-repeating bytes: a chunk the stream hands on must not change when the next is read.
      const big = new Uint8Array(3 * 1024 * 1024 + 17);
      for (let i = 0, x = 1; i < big.length; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        big[i] = x >>> 24;
      }
      return withWs(
        async (_ws, s) => {
          const stream = await s.readFile({ path: 'big.bin' });
          expect(new Uint8Array(await new Response(stream).arrayBuffer())).toEqual(big);
        },
        { 'big.bin': big },
      );
    });

    it('readBinaryFile gives the exact bytes, null when missing', () =>
      withWs(
        async (_ws, s) => {
          expect(Array.from((await s.readBinaryFile({ path: 'bin.dat' })) ?? [])).toEqual([0, 1, 2, 255, 0]);
          expect(await s.readBinaryFile({ path: 'nope/x' })).toBeNull();
        },
        { 'bin.dat': new Uint8Array([0, 1, 2, 255, 0]) },
      ));

    it('readTextFile: whole text, 1-based inclusive ranges, through EOF without error, null when missing', () =>
      withWs(
        async (_ws, s) => {
          expect(await s.readTextFile({ path: 'src/a.ts' })).toBe('one\ntwo\nthree\n');
          expect(await s.readTextFile({ path: 'src/a.ts', startLine: 2, endLine: 2 })).toBe('two');
          expect(await s.readTextFile({ path: 'src/a.ts', startLine: 1, endLine: 2 })).toBe('one\ntwo');
          expect(await s.readTextFile({ path: 'src/a.ts', startLine: 2 })).toBe('two\nthree\n');
          expect(await s.readTextFile({ path: 'src/a.ts', startLine: 3, endLine: 99 })).toBe('three\n');
          expect(await s.readTextFile({ path: 'src/a.ts', endLine: 1 })).toBe('one');
          expect(await s.readTextFile({ path: 'src/a.ts', startLine: 9, endLine: 12 })).toBe('');
          expect(await s.readTextFile({ path: 'crlf.txt', startLine: 1, endLine: 2 })).toBe('a\r\nb');
          expect(await s.readTextFile({ path: 'crlf.txt', startLine: 2, endLine: 5 })).toBe('b\r\nc\r\n');
          expect(await s.readTextFile({ path: 'latin1.txt', encoding: 'latin1' })).toBe('café');
          expect(await s.readTextFile({ path: 'missing.md' })).toBeNull();
        },
        { 'crlf.txt': 'a\r\nb\r\nc\r\n', 'latin1.txt': new Uint8Array([0x63, 0x61, 0x66, 0xe9]) },
      ));

    it('writeFile from a stream creates parents, overwrites, rejects a directory', () =>
      withWs(async (ws, s) => {
        await s.writeFile({ path: 'new/deep/f.txt', content: streamOf('hel', 'lo\n') });
        expect(text(await ws.fs.readBytes('new/deep/f.txt'))).toBe('hello\n');
        await s.writeFile({ path: 'new/deep/f.txt', content: streamOf('bye\n') });
        expect(text(await ws.fs.readBytes('new/deep/f.txt'))).toBe('bye\n');
        expect((await rejection(s.writeFile({ path: 'dir', content: streamOf('x') }))).code).toBe('EISDIR');
        expect(text(await ws.fs.readBytes('dir/inner.txt'))).toBe('x');
      }));

    it('writeFile streams content past the editable size at constant memory', () =>
      withWs(async (ws, s) => {
        const chunk = new Uint8Array(1024 * 1024).fill(0x61);
        let sent = 0;
        const big = new ReadableStream<Uint8Array>({
          pull(c) {
            if (sent++ < 12) c.enqueue(chunk);
            else c.close();
          },
        });
        await s.writeFile({ path: 'big/a.txt', content: big });
        expect((await ws.fs.stat('big/a.txt')).size).toBe(12 * 1024 * 1024);
      }));

    it('writeBinaryFile and writeTextFile: parents, overwrite, encodings, a directory refused', () =>
      withWs(async (ws, s) => {
        await s.writeBinaryFile({ path: 'b/c.bin', content: new Uint8Array([0, 159, 146, 150]) });
        expect(Array.from(await ws.fs.readBytes('b/c.bin'))).toEqual([0, 159, 146, 150]);
        await s.writeBinaryFile({ path: 'b/c.bin', content: new Uint8Array([7]) });
        expect(Array.from(await ws.fs.readBytes('b/c.bin'))).toEqual([7]);
        await s.writeTextFile({ path: 't/x.txt', content: 'héllo' });
        expect(text(await ws.fs.readBytes('t/x.txt'))).toBe('héllo');
        await s.writeTextFile({ path: 't/u16.txt', content: 'hi', encoding: 'utf-16le' });
        expect(Array.from(await ws.fs.readBytes('t/u16.txt'))).toEqual([0x68, 0, 0x69, 0]);
        expect((await rejection(s.writeTextFile({ path: 'dir', content: 'x' }))).code).toBe('EISDIR');
        expect((await rejection(s.writeBinaryFile({ path: 'dir', content: new Uint8Array([0]) }))).code).toBe('EISDIR');
      }));

    it('writeTextFile with an encoding refuses text it cannot hold, as the editor does, writes nothing, and the refusal is audited', async () => {
      const audit: AuditDraft[] = [];
      const ws = await openWorkspace(backend, {}, { safety: { audit: (r) => void audit.push(r) } });
      try {
        const s = createSandboxSession({ context: ws.context });
        await s.writeTextFile({ path: 'koi8.txt', content: 'Привет\n', encoding: 'koi8-r' });
        expect(hex(await ws.fs.readBytes('koi8.txt'))).toBe(hex(NON_UTF8_TEXT.koi8));
        const refused = await rejection(s.writeTextFile({ path: 'koi8.txt', content: 'Привет\n日本 €\n', encoding: 'koi8-r' }));
        expect(refused.code).toBe('EINVAL');
        expect(refused.message).toContain(
          'which has no "日" (U+65E5, line 2 of the new text): written, it would turn into another character. Nothing was written.',
        );
        expect(hex(await ws.fs.readBytes('koi8.txt'))).toBe(hex(NON_UTF8_TEXT.koi8));
        expect((await rejection(s.writeTextFile({ path: 'latin1.txt', content: 'café Привет', encoding: 'latin1' }))).code).toBe('EINVAL');
        expect(await ws.fs.exists('latin1.txt')).toBe(false);
        expect(audit.filter((r) => r.op === 'write').map((r) => `${r.result}:${r.code}`)).toEqual(['error:EINVAL', 'error:EINVAL']);
      } finally {
        await ws.close();
      }
    });

    it('stat: type and size, null when missing', () =>
      withWs(async (_ws, s) => {
        expect(await s.stat({ path: 'src/a.ts' })).toEqual({ type: 'file', size: 14 });
        expect((await s.stat({ path: 'dir' }))?.type).toBe('directory');
        expect((await s.stat({ path: '/workspace' }))?.type).toBe('directory');
        expect(await s.stat({ path: 'nothing' })).toBeNull();
      }));

    it('listDirectory: names and types one level down, null when missing, rejects a file', () =>
      withWs(async (_ws, s) => {
        const entries = await s.listDirectory({ path: '.' });
        expect(entries?.map((e) => `${e.name}:${e.type}`).sort()).toEqual(['dir:directory', 'src:directory']);
        expect(await s.listDirectory({ path: 'src' })).toEqual([{ name: 'a.ts', type: 'file' }]);
        expect(await s.listDirectory({ path: 'no/such' })).toBeNull();
        expect((await rejection(s.listDirectory({ path: 'src/a.ts' }))).code).toBe('ENOTDIR');
      }));

    it('a doubled slash below the mount names the same file; a line number that is not one is EINVAL', () =>
      withWs(async (_ws, s) => {
        expect(await s.readTextFile({ path: '/workspace//src/a.ts' })).toBe('one\ntwo\nthree\n');
        await s.writeTextFile({ path: '/workspace//new.txt', content: 'n\n' });
        expect(await s.readTextFile({ path: 'new.txt' })).toBe('n\n');
        for (const range of [{ startLine: Number.NaN }, { startLine: -1 }, { startLine: 0 }, { endLine: 1.5 }, { startLine: 1, endLine: Number.NaN }])
          expect((await rejection(s.readTextFile({ path: 'src/a.ts', ...range }))).code, JSON.stringify(range)).toBe('EINVAL');
      }));

    it('an absolute path whose .. comes back under the mount names the file there; one that leaves it is refused, disclosing nothing', () =>
      withWs(async (ws, s) => {
        expect(await s.readTextFile({ path: '/workspace/../workspace/src/a.ts' })).toBe('one\ntwo\nthree\n');
        expect(await s.readTextFile({ path: '/workspace/src/../../workspace/src/a.ts', startLine: 2, endLine: 2 })).toBe('two');
        await s.writeTextFile({ path: '/workspace/../workspace/x.txt', content: 'x\n' });
        expect(text(await ws.fs.readBytes('x.txt'))).toBe('x\n');
        expect(await s.stat({ path: '/workspace/../workspace/x.txt' })).toEqual({ type: 'file', size: 2 });
        expect(await s.listDirectory({ path: '/workspace/dir/../../workspace/dir/' })).toEqual([{ name: 'inner.txt', type: 'file' }]);
        expect(await s.deleteFile({ path: '/workspace/../workspace/x.txt' })).toBe(true);
        expect(await ws.fs.exists('x.txt')).toBe(false);
        for (const path of ['/workspace/../etc/passwd', '/workspace/../workspace-other/a', '/workspace/..', '/workspace/../../workspace/../etc']) {
          const err = await rejection(s.readTextFile({ path }));
          expect(err.code, path).toBe('EPATHESCAPE');
          expect(err.message).not.toMatch(/root:|\/tmp\//);
          expect((await rejection(s.writeTextFile({ path, content: 'x' }))).code, path).toBe('EPATHESCAPE');
        }
      }));

    it('listDirectory lists a self-referencing or dangling symlink as a symlink, and the rest of the directory', () =>
      withWs(async (ws, s) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('self', join(ws.hostRoot, 'src/self'));
        await symlink('missing', join(ws.hostRoot, 'src/dangling'));
        expect(await s.listDirectory({ path: 'src' })).toEqual([
          { name: 'a.ts', type: 'file' },
          { name: 'dangling', type: 'symlink' },
          { name: 'self', type: 'symlink' },
        ]);
        // Its stat tells nothing of where it leads: not even the length of the target's name.
        await symlink('/etc/hostname-of-a-long-outside-target', join(ws.hostRoot, 'src/out'));
        for (const name of ['self', 'out']) expect(await s.stat({ path: `src/${name}` }), name).toEqual({ type: 'other', size: 0 });
      }));

    it('deleteFile: true when deleted, false when missing, rejects a directory', () =>
      withWs(async (ws, s) => {
        expect(await s.deleteFile({ path: 'src/a.ts' })).toBe(true);
        expect(await ws.fs.exists('src/a.ts')).toBe(false);
        expect(await s.deleteFile({ path: 'src/a.ts' })).toBe(false);
        expect((await rejection(s.deleteFile({ path: 'dir' }))).code).toBe('EISDIR');
        expect(await ws.fs.exists('dir/inner.txt')).toBe(true);
      }));

    it('deleteFile removes a symlink itself, never what it leads to: a link to a file, to a directory, out of the root', () =>
      withWs(async (ws, s) => {
        if (ws.hostRoot === undefined) return; // only the host test can make links behind the backend
        await symlink('a.ts', join(ws.hostRoot, 'src/to-file'));
        await symlink('../dir', join(ws.hostRoot, 'src/to-dir'));
        await symlink('/etc/hostname', join(ws.hostRoot, 'src/out'));
        for (const name of ['to-file', 'to-dir', 'out']) expect(await s.deleteFile({ path: `src/${name}` }), name).toBe(true);
        expect(await s.listDirectory({ path: 'src' })).toEqual([{ name: 'a.ts', type: 'file' }]);
        expect(await readHostFile(join(ws.hostRoot, 'src/a.ts'), 'utf8')).toBe('one\ntwo\nthree\n');
        expect(await readHostFile(join(ws.hostRoot, 'dir/inner.txt'), 'utf8')).toBe('x');
      }));

    it('an aborted signal stops a call before it acts', () =>
      withWs(async (ws, s) => {
        const abortSignal = AbortSignal.abort(new Error('stop'));
        expect((await rejection(s.writeTextFile({ path: 'aborted.txt', content: 'x', abortSignal }))).message).toBe('stop');
        expect(await ws.fs.exists('aborted.txt')).toBe(false);
      }));

    it('description: the mount, what ctxfs keeps, and that commands are unavailable without a runner; spawn and run refuse', () =>
      withWs(async (_ws, s) => {
        expect(s.description).toContain('/workspace');
        expect(s.description).toContain('undone');
        expect(s.description).toContain('Commands are not available');
        expect((await rejection(s.run({ command: 'ls' }))).code).toBe('EUNSUPPORTED');
        expect((await rejection(s.spawn({ command: 'ls' }))).code).toBe('EUNSUPPORTED');
      }));

    it('bad input: absolute paths outside the mount, .., a directory for a file, binary through text; nothing disclosed', () =>
      withWs(
        async (ws, s) => {
          for (const path of ['/etc/passwd', '../outside.txt', 'src/../../x', '/workspace/../etc/passwd']) {
            const err = await rejection(s.readTextFile({ path }));
            expect(err.code).toBe('EPATHESCAPE');
            expect((await rejection(s.writeTextFile({ path, content: 'x' }))).code).toBe('EPATHESCAPE');
            expect((await rejection(s.deleteFile({ path }))).code).toBe('EPATHESCAPE');
          }
          expect((await rejection(s.readTextFile({ path: 'dir' }))).code).toBe('EISDIR');
          expect((await rejection(s.readTextFile({ path: 'img.bin' }))).code).toBe('EBINARY');
          if (ws.hostRoot !== undefined) {
            const outside = join(ws.hostRoot, '..', `outside-${process.pid}.txt`);
            await writeHostFile(outside, 'secret');
            await symlink(outside, join(ws.hostRoot, 'link.txt'));
            await symlink(join(ws.hostRoot, '..'), join(ws.hostRoot, 'up'));
            for (const err of [
              await rejection(s.readTextFile({ path: 'link.txt' })),
              await rejection(s.readBinaryFile({ path: 'up/outside.txt' })),
              await rejection(s.writeTextFile({ path: 'link.txt', content: 'overwritten' })),
              await rejection(s.writeTextFile({ path: `up/outside-${process.pid}.txt`, content: 'overwritten' })),
            ]) {
              expect(err.code).toBe('EPATHESCAPE');
              expect(err.message).not.toContain(ws.hostRoot);
            }
            expect(await readHostFile(outside, 'utf8')).toBe('secret');
            expect(await s.listDirectory({ path: '.' })).toContainEqual({ name: 'link.txt', type: 'symlink' });
            expect(await s.deleteFile({ path: 'link.txt' })).toBe(true);
            expect(await readHostFile(outside, 'utf8')).toBe('secret');
          }
        },
        { 'img.bin': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2]) },
      ));

    it('writeBinaryFile and writeFile store exactly the bytes given, over any file; over UTF-8 text they stay versions with undo', () =>
      withWs(async (ws, s) => {
        for (const [name, before] of Object.entries(NON_UTF8_TEXT)) {
          await ws.fs.writeBytes(`binary-${name}`, before);
          await ws.fs.writeBytes(`stream-${name}`, before);
          await s.writeBinaryFile({ path: `binary-${name}`, content: UTF8_PAYLOAD });
          await s.writeFile({ path: `stream-${name}`, content: streamOf(new TextDecoder().decode(UTF8_PAYLOAD)) });
          expect(hex(await ws.fs.readBytes(`binary-${name}`)), `writeBinaryFile over ${name}`).toBe(hex(UTF8_PAYLOAD));
          expect(hex(await ws.fs.readBytes(`stream-${name}`)), `writeFile over ${name}`).toBe(hex(UTF8_PAYLOAD));
          expect(hex(await s.readBinaryFile({ path: `binary-${name}` }))).toBe(hex(UTF8_PAYLOAD));
        }
        await s.writeBinaryFile({ path: 'src/a.ts', content: UTF8_PAYLOAD });
        expect(hex(await ws.fs.readBytes('src/a.ts'))).toBe(hex(UTF8_PAYLOAD));
        expect((await ws.context.undo('src/a.ts')).success).toBe(true);
        expect(text(await ws.fs.readBytes('src/a.ts'))).toBe('one\ntwo\nthree\n');
      }));

    it('a ranged readTextFile is the agent’s read too: a change made since is merged or refused, never overwritten', () => {
      const small = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('');
      // Past the 1 MiB kept as a merge base: streamed, recorded by the backend's hash alone.
      const large = Array.from({ length: 80_000 }, (_, i) => `line ${i + 1}\n`).join('');
      const put = (ws: TestWorkspace, path: string, content: string) => ws.fs.writeBytes(path, new TextEncoder().encode(content));
      return withWs(
        async (ws, s) => {
          expect(await s.readTextFile({ path: 'small.txt', startLine: 1, endLine: 3 })).toBe('line 1\nline 2\nline 3');
          await put(ws, 'small.txt', small.replace('line 29\n', 'line 29 by another agent\n'));
          await s.writeTextFile({ path: 'small.txt', content: small.replace('line 1\n', 'line 1 by this agent\n') });
          expect(text(await ws.fs.readBytes('small.txt'))).toBe(
            small.replace('line 1\n', 'line 1 by this agent\n').replace('line 29\n', 'line 29 by another agent\n'),
          );

          expect(await s.readTextFile({ path: 'large.txt', startLine: 2, endLine: 2 })).toBe('line 2');
          const theirs = large.replace('line 79999\n', 'line 79999 by another agent\n');
          await put(ws, 'large.txt', theirs);
          const written = await s.writeTextFile({ path: 'large.txt', content: large.replace('line 2\n', 'line 2 by this agent\n') }).then(
            () => 'merged',
            (err: { code?: string }) => err.code,
          );
          // Merged where the editor finds the version read in the history, else refused: the other agent's change stays either way.
          const now = text(await ws.fs.readBytes('large.txt')) as string;
          expect(now).toContain('line 79999 by another agent\n');
          if (written === 'merged') expect(now).toBe(theirs.replace('line 2\n', 'line 2 by this agent\n'));
          else expect(written).toBe('ECONFLICT');
        },
        { 'small.txt': small, 'large.txt': large },
      );
    });

    it('a whole readTextFile or readFile is the agent’s read: a change made since is merged or refused, never overwritten', () => {
      const base = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('');
      const changed = base.replace('line 2\n', 'line 2 by the user\n');
      const put = (ws: TestWorkspace, path: string, content: string) => ws.fs.writeBytes(path, new TextEncoder().encode(content));
      return withWs(
        async (ws, s) => {
          const seen = (await s.readTextFile({ path: 'text.txt' })) as string;
          await put(ws, 'text.txt', changed);
          await s.writeTextFile({ path: 'text.txt', content: seen.replace('line 29', 'line 29 by the agent') });
          expect(text(await ws.fs.readBytes('text.txt'))).toBe(changed.replace('line 29', 'line 29 by the agent'));

          const streamed = await new Response(await s.readFile({ path: 'stream.txt' })).text();
          await put(ws, 'stream.txt', changed);
          await s.writeTextFile({ path: 'stream.txt', content: streamed.replace('line 29', 'line 29 by the agent') });
          expect(text(await ws.fs.readBytes('stream.txt'))).toBe(changed.replace('line 29', 'line 29 by the agent'));

          // Bytes are not merged: a byte write over a file changed since the read is refused, the change kept.
          const read = await new Response(await s.readFile({ path: 'bytes.txt' })).text();
          await put(ws, 'bytes.txt', changed);
          const refused = await rejection(s.writeFile({ path: 'bytes.txt', content: streamOf(read.replace('line 29', 'x')) }));
          expect(refused.code).toBe('ECONFLICT');
          expect(text(await ws.fs.readBytes('bytes.txt'))).toBe(changed);

          // The newest read is the base: an older readBinaryFile does not bring back what the agent saw and undid.
          await s.readBinaryFile({ path: 'newest.txt' });
          await put(ws, 'newest.txt', base.replace('line 2\n', 'line 2 BROKEN\n'));
          const now = (await s.readTextFile({ path: 'newest.txt' })) as string;
          const wanted = now.replace('line 2 BROKEN\n', 'line 2\n').replace('line 29', 'line 29 by the agent');
          await s.writeTextFile({ path: 'newest.txt', content: wanted });
          expect(text(await ws.fs.readBytes('newest.txt'))).toBe(wanted);
        },
        { 'text.txt': base, 'stream.txt': base, 'bytes.txt': base, 'newest.txt': base },
      );
    });

    it('the byte budget counts a readFile stream as it counts readBinaryFile: one past it is refused before a byte is served', async () => {
      const ws = await openWorkspace(backend, { 'big.txt': 'z'.repeat(100_000) }, { safety: { policy: { budgets: { bytes: 150_000 } } } });
      try {
        const s = createSandboxSession({ context: ws.context });
        let served = 0;
        for (let i = 0; i < 2; i++) served += (await new Response(await s.readFile({ path: 'big.txt' })).arrayBuffer()).byteLength;
        expect(served).toBe(200_000);
        expect((await rejection(s.readFile({ path: 'big.txt' }))).code).toBe('ELIMIT');
        expect((await rejection(s.readBinaryFile({ path: 'big.txt' }))).code).toBe('ELIMIT');
      } finally {
        await ws.close();
      }
    });

    it('what ctxfs adds: versions with undo, a stale write merged by content, policy and audit on every call', async () => {
      const audit: AuditDraft[] = [];
      const ws = await openWorkspace(
        backend,
        { 'notes.md': 'a\nb\nc\nd\ne\n', 'secrets/key.txt': 'k' },
        { safety: { audit: (r) => void audit.push(r), policy: { rules: [{ effect: 'deny', paths: ['secrets/'], reason: 'keys stay private' }] } } },
      );
      try {
        const s = createSandboxSession({ context: ws.context });
        await s.writeTextFile({ path: 'notes.md', content: 'A\nb\nc\nd\ne\n' });
        expect((await ws.context.history('notes.md')).length).toBeGreaterThanOrEqual(2);
        expect((await ws.context.undo('notes.md')).success).toBe(true);
        expect(await s.readTextFile({ path: 'notes.md' })).toBe('a\nb\nc\nd\ne\n');
        // Someone else changes the last line after the agent read the file; the agent's whole-file write is merged with it.
        await ws.fs.writeBytes('notes.md', new TextEncoder().encode('a\nb\nc\nd\nE\n'));
        await s.writeTextFile({ path: 'notes.md', content: 'A\nb\nc\nd\ne\n' });
        expect(text(await ws.fs.readBytes('notes.md'))).toBe('A\nb\nc\nd\nE\n');
        // A binary overwrite of a file changed since the agent read it is refused by compare-and-swap.
        await s.writeBinaryFile({ path: 'pic.bin', content: new Uint8Array([0, 1]) });
        await s.readBinaryFile({ path: 'pic.bin' });
        await ws.fs.writeBytes('pic.bin', new Uint8Array([0, 2]));
        expect((await rejection(s.writeBinaryFile({ path: 'pic.bin', content: new Uint8Array([0, 3]) }))).code).toBe('ECONFLICT');
        expect(Array.from(await ws.fs.readBytes('pic.bin'))).toEqual([0, 2]);
        const denied = await rejection(s.readTextFile({ path: 'secrets/key.txt' }));
        expect(denied.code).toBe('EDENIED');
        expect(denied.message).toContain('keys stay private');
        await rejection(s.readTextFile({ path: '/etc/shadow' }));
        const ops = audit.map((r) => `${r.op}:${r.result}`);
        expect(ops).toContain('readLines:ok');
        expect(ops).toContain('readLines:denied');
        expect(ops).toContain('readLines:error');
        expect(ops).toContain('writeFile:ok');
        expect(ops).toContain('writeBytes:error');
      } finally {
        await ws.close();
      }
    });
  });
}

describe('AI SDK sandbox session: spawn and run go to the runner given', () => {
  it('run collects stdout, stderr and the exit code in the working directory; spawn streams and takes stdin', async () => {
    const ws = await openWorkspace('host', { 'sub/f.txt': 'in sub\n' });
    try {
      const s = createSandboxSession({ context: ws.context, runner: shellRunner(ws.hostRoot as string) });
      expect(s.description).toContain('test runner');
      expect(await s.run({ command: 'cat f.txt; echo err >&2; exit 3', workingDirectory: '/workspace/sub' })).toEqual({
        exitCode: 3,
        stdout: 'in sub\n',
        stderr: 'err\n',
      });
      const p = await s.spawn({ command: 'cat', stdin: true });
      const w = p.stdin.getWriter();
      await w.write(new TextEncoder().encode('piped'));
      await w.close();
      expect(await new Response(p.stdout).text()).toBe('piped');
      expect((await p.wait()).exitCode).toBe(0);
      const long = await s.spawn({ command: 'sleep 30' });
      await long.kill();
      expect((await long.wait()).exitCode).not.toBe(0);
      expect((await rejection(s.run({ command: 'true', workingDirectory: '/etc' }))).code).toBe('EPATHESCAPE');
    } finally {
      await ws.close();
    }
  });
});
