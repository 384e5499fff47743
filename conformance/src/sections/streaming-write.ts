/**
 * Streaming writes: the three modes, commit on close and nothing before it,
 * abort and disposal, the writer's state machine, buffer ownership, parent
 * handling and error mapping, and many small or unawaited writes.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext, text, utf8 } from '../context.ts';

export function streamingWriteSection(ctx: SuiteContext): void {
  const timeout = ctx.target.timeout;

  it('create makes a new file', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('new.txt', { mode: 'create' });
    await w.write(utf8('hello'));
    const result = await w.close();
    expect(result).toEqual({ path: 'new.txt', bytesWritten: 5, mode: 'create' });
    expect(text(await fs.readBytes('new.txt'))).toBe('hello');
  });

  it('create on an existing file is EEXIST and leaves it alone', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    const outcome = await (async () => {
      const w = await fs.openWrite('a.txt', { mode: 'create' });
      await w.write(utf8('new'));
      await w.close();
    })().then(
      () => 'OK',
      (err: unknown) => (isFsError(err) ? err.code : 'non-FsError'),
    );
    expect(outcome).toBe('EEXIST');
    expect(text(await fs.readBytes('a.txt'))).toBe('old');
  });

  it('create on an existing directory is EISDIR or EEXIST', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    expect(['EISDIR', 'EEXIST']).toContain(await codeOf(fs.openWrite('d', { mode: 'create' })));
  });

  it('overwrite replaces the content (default mode)', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a much longer old content' } });
    const w = await fs.openWrite('a.txt');
    expect(w.mode).toBe('overwrite');
    await w.write(utf8('short'));
    expect(await w.close()).toEqual({ path: 'a.txt', bytesWritten: 5, mode: 'overwrite' });
    expect(text(await fs.readBytes('a.txt'))).toBe('short');
  });

  it('overwrite creates a missing file', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('fresh.txt', { mode: 'overwrite' });
    await w.write(utf8('x'));
    await w.close();
    expect(text(await fs.readBytes('fresh.txt'))).toBe('x');
  });

  it('append adds to the end', async () => {
    const fs = await ctx.make({ files: { 'log.txt': 'one\n' } });
    const w = await fs.openWrite('log.txt', { mode: 'append' });
    await w.write(utf8('two\n'));
    expect(await w.close()).toEqual({ path: 'log.txt', bytesWritten: 4, mode: 'append' });
    expect(text(await fs.readBytes('log.txt'))).toBe('one\ntwo\n');
  });

  it('append creates a missing file', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('log.txt', { mode: 'append' });
    await w.write(utf8('first'));
    await w.close();
    expect(text(await fs.readBytes('log.txt'))).toBe('first');
  });

  it('an unknown mode is EINVAL', async () => {
    const fs = await ctx.make();
    expect(await codeOf(fs.openWrite('x.txt', { mode: 'truncate' as never }))).toBe('EINVAL');
    expect(await fs.exists('x.txt')).toBe(false);
  });

  it('bytesWritten counts accepted bytes', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('c.bin');
    expect(w.bytesWritten).toBe(0);
    await w.write(new Uint8Array(3));
    expect(w.bytesWritten).toBe(3);
    await w.write(new Uint8Array(0));
    expect(w.bytesWritten).toBe(3);
    await w.write(new Uint8Array(10));
    expect(w.bytesWritten).toBe(13);
    expect((await w.close()).bytesWritten).toBe(13);
    expect((await fs.stat('c.bin')).size).toBe(13);
  });

  it('a writer with no writes creates an empty file on close', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('empty.txt', { mode: 'create' });
    expect((await w.close()).bytesWritten).toBe(0);
    expect((await fs.stat('empty.txt')).size).toBe(0);
  });

  it.each(['create', 'overwrite', 'append'] as const)('%s: nothing is visible before close', async (mode) => {
    const fs = await ctx.make(mode === 'create' ? {} : { files: { 'f.txt': 'old' } });
    const w = await fs.openWrite('f.txt', { mode });
    await w.write(utf8('new'));
    if (mode === 'create') expect(await fs.exists('f.txt')).toBe(false);
    else expect(text(await fs.readBytes('f.txt'))).toBe('old');
    await w.close();
    expect(text(await fs.readBytes('f.txt'))).toBe(mode === 'append' ? 'oldnew' : 'new');
  });

  it.each(['create', 'overwrite', 'append'] as const)('%s: abort leaves the target as it was', async (mode) => {
    const fs = await ctx.make(mode === 'create' ? {} : { files: { 'f.txt': 'old' } });
    const w = await fs.openWrite('f.txt', { mode });
    await w.write(utf8('new'));
    await w.abort();
    if (mode === 'create') expect(await fs.exists('f.txt')).toBe(false);
    else expect(text(await fs.readBytes('f.txt'))).toBe('old');
    expect((await fs.list('')).map((e) => e.name)).toEqual(mode === 'create' ? [] : ['f.txt']);
  });

  it.each(['create', 'overwrite', 'append'] as const)('%s: disposal without close aborts', async (mode) => {
    const fs = await ctx.make(mode === 'create' ? {} : { files: { 'f.txt': 'old' } });
    {
      await using w = await fs.openWrite('f.txt', { mode });
      await w.write(utf8('new'));
    }
    if (mode === 'create') expect(await fs.exists('f.txt')).toBe(false);
    else expect(text(await fs.readBytes('f.txt'))).toBe('old');
  });

  it('disposal after close keeps the committed content', async () => {
    const fs = await ctx.make();
    {
      await using w = await fs.openWrite('f.txt');
      await w.write(utf8('kept'));
      await w.close();
    }
    expect(text(await fs.readBytes('f.txt'))).toBe('kept');
  });

  it('write after close is ECLOSED', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    await w.close();
    expect(await codeOf(w.write(utf8('x')))).toBe('ECLOSED');
    expect(text(await fs.readBytes('f.txt'))).toBe('');
  });

  it('write after abort is ECLOSED', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    await w.abort();
    expect(await codeOf(w.write(utf8('x')))).toBe('ECLOSED');
    expect(await fs.exists('f.txt')).toBe(false);
  });

  it('close after abort is ECLOSED', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    await w.write(utf8('x'));
    await w.abort();
    expect(await codeOf(w.close())).toBe('ECLOSED');
    expect(await fs.exists('f.txt')).toBe(false);
  });

  it('close is idempotent and returns the same result', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt', { mode: 'append' });
    await w.write(utf8('abc'));
    const first = await w.close();
    const second = await w.close();
    expect(second).toEqual(first);
    expect(text(await fs.readBytes('f.txt'))).toBe('abc');
  });

  it('abort after close is a no-op', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    await w.write(utf8('stays'));
    await w.close();
    await w.abort();
    await w.abort();
    expect(text(await fs.readBytes('f.txt'))).toBe('stays');
  });

  it('abort is idempotent', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    await w.abort();
    await w.abort();
    expect(await fs.exists('f.txt')).toBe(false);
  });

  it('the caller may reuse its buffer once write resolves', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    const buf = utf8('aaaa');
    await w.write(buf);
    buf.fill(0x62); // 'b'
    await w.write(buf);
    buf.fill(0x63); // 'c'
    await w.close();
    expect(text(await fs.readBytes('f.txt'))).toBe('aaaabbbb');
  });

  it('a chunk that is a view into a larger buffer writes only the view', async () => {
    const fs = await ctx.make();
    const big = utf8('0123456789');
    const w = await fs.openWrite('f.txt');
    await w.write(big.subarray(3, 6));
    await w.close();
    expect(text(await fs.readBytes('f.txt'))).toBe('345');
  });

  it('a non-Uint8Array chunk is EINVAL', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('f.txt');
    expect(await codeOf(w.write('text' as unknown as Uint8Array))).toBe('EINVAL');
    await w.abort();
  });

  it('createParents makes missing directories', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('a/b/c/f.txt', { createParents: true });
    await w.write(utf8('deep'));
    await w.close();
    expect(text(await fs.readBytes('a/b/c/f.txt'))).toBe('deep');
    expect((await fs.stat('a/b')).kind).toBe('directory');
  });

  it('createParents through a file is ENOTDIR', async () => {
    const fs = await ctx.make({ files: { a: 'file' } });
    expect(await codeOf(fs.openWrite('a/b/f.txt', { createParents: true }))).toBe('ENOTDIR');
    expect(text(await fs.readBytes('a'))).toBe('file');
  });

  it('a missing parent is ENOENT by default', async () => {
    const fs = await ctx.make();
    const err = await fs.openWrite('nope/f.txt').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOENT')).toBe(true);
    if (isFsError(err)) {
      expect(err.op).toBe('openWrite');
      expect(err.hint).toMatch(/createParents|parents/);
    }
    expect(await fs.exists('nope')).toBe(false);
  });

  it.each([
    ['parent is a file', 'file.txt/child', 'ENOTDIR'],
    ['grandparent is a file', 'file.txt/a/child', 'ENOTDIR'],
    ['target is a directory', 'dir', 'EISDIR'],
    ['target is the root', '', 'EISDIR'],
    ['target is the root as dot', '.', 'EISDIR'],
    ['trailing slash on a directory', 'dir/', 'EISDIR'],
    ['trailing slash on a missing name', 'newdir/', 'EISDIR'],
    ['trailing slash on a file', 'file.txt/', 'ENOTDIR'],
  ])('%s is %s', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'file.txt': 'x' }, dirs: ['dir'] });
    const err = await fs.openWrite(path).catch((e: unknown) => e);
    expect(isFsError(err)).toBe(true);
    if (!isFsError(err)) return;
    expect(err.code).toBe(code);
    expect(err.op).toBe('openWrite');
    expect(text(await fs.readBytes('file.txt'))).toBe('x');
    expect((await fs.list('dir')).length).toBe(0);
  });

  it(
    '1,000 appends of 10 bytes come out in order',
    async () => {
      const fs = await ctx.make();
      const n = 1000;
      for (let i = 0; i < n; i++) {
        await fs.write('log.txt', `${String(i).padStart(9, '0')}\n`, { mode: 'append' });
      }
      const got = text(await fs.readBytes('log.txt'));
      expect(got.length).toBe(n * 10);
      const lines = got.split('\n').slice(0, -1);
      expect(lines.length).toBe(n);
      expect(lines.every((l, i) => Number(l) === i)).toBe(true);
    },
    Math.max(timeout ?? 0, 60_000),
  );

  it('many chunks in one writer', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('many.txt');
    let expected = '';
    for (let i = 0; i < 500; i++) {
      const piece = `${i},`;
      expected += piece;
      await w.write(utf8(piece));
    }
    expect(w.bytesWritten).toBe(expected.length);
    await w.close();
    expect(text(await fs.readBytes('many.txt'))).toBe(expected);
  });

  it('unawaited writes stay ordered', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('order.txt');
    const pending: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) pending.push(w.write(utf8(`${String(i).padStart(2, '0')} `)));
    await Promise.all(pending);
    await w.close();
    expect(text(await fs.readBytes('order.txt'))).toBe(Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')} `).join(''));
  });

  it('close without awaiting the writes still commits all of them', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('order.txt');
    const a = w.write(utf8('a'));
    const b = w.write(utf8('b'));
    const result = await w.close();
    await Promise.all([a, b]);
    expect(result.bytesWritten).toBe(2);
    expect(text(await fs.readBytes('order.txt'))).toBe('ab');
  });

  it('an overwrite writer does not disturb a reader opened before it', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'original' } });
    const reader = await fs.openRead('f.txt');
    const w = await fs.openWrite('f.txt');
    await w.write(utf8('replacement'));
    await w.close();
    const chunks: Uint8Array[] = [];
    for await (const c of reader) chunks.push(c.slice());
    expect(['original', 'replacement']).toContain(chunks.map((c) => text(c)).join(''));
  });

  it('the writer reports the normalized path', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    const w = await fs.openWrite('./d//x\\..\\f.txt');
    expect(w.path).toBe('d/f.txt');
    expect((await w.close()).path).toBe('d/f.txt');
    expect(await fs.exists('d/f.txt')).toBe(true);
  });
}
