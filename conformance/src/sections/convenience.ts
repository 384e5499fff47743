/**
 * The bounded convenience layer: `readBytes` ranges, `read` line paging,
 * `writeBytes` / `write` with modes, parents and encodings, and the fields of
 * their results. Errors carry the convenience method's own name.
 *
 * @module
 */

import { isFsError, type WriteOptions } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext, text, utf8 } from '../context.ts';

const DIGITS = '0123456789';

export function convenienceSection(ctx: SuiteContext): void {
  // readBytes ------------------------------------------------------------

  it.each([
    ['whole file', {}, DIGITS],
    ['offset', { offset: 4 }, '456789'],
    ['limit', { limit: 3 }, '012'],
    ['offset and limit', { offset: 2, limit: 5 }, '23456'],
    ['limit past end', { offset: 8, limit: 100 }, '89'],
    ['offset at end', { offset: 10 }, ''],
    ['offset past end', { offset: 99 }, ''],
    ['limit zero', { limit: 0 }, ''],
  ] as const)('readBytes: %s', async (_label, options, expected) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const bytes = await fs.readBytes('d.txt', options);
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(text(bytes)).toBe(expected);
  });

  it.each([
    ['negative offset', { offset: -1 }],
    ['negative limit', { limit: -1 }],
    ['fractional offset', { offset: 0.5 }],
    ['NaN limit', { limit: Number.NaN }],
  ])('readBytes: %s is EINVAL', async (_label, options) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    expect(await codeOf(fs.readBytes('d.txt', options))).toBe('EINVAL');
  });

  it.each([
    ['a missing file', 'nope.txt', 'ENOENT'],
    ['a directory', 'dir', 'EISDIR'],
    ['a child of a file', 'd.txt/x', 'ENOTDIR'],
    ['a file with a trailing slash', 'd.txt/', 'ENOTDIR'],
  ])('readBytes on %s is %s, reported as readBytes', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS }, dirs: ['dir'] });
    const err = await fs.readBytes(path).catch((e: unknown) => e);
    expect(isFsError(err)).toBe(true);
    if (!isFsError(err)) return;
    expect(err.code).toBe(code);
    expect(err.op).toBe('readBytes');
  });

  it('readBytes returns a copy the caller may mutate', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const bytes = await fs.readBytes('d.txt');
    bytes.fill(0);
    expect(text(await fs.readBytes('d.txt'))).toBe(DIGITS);
  });

  it('readBytes of an empty file is empty', async () => {
    const fs = await ctx.make({ files: { 'e.txt': '' } });
    expect((await fs.readBytes('e.txt')).byteLength).toBe(0);
  });

  // read (line paging) ---------------------------------------------------

  const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i}`);

  it('read returns every line with no paging needed', async () => {
    const fs = await ctx.make({ files: { 'l.txt': `${TEN_LINES.join('\n')}\n` } });
    const page = await fs.read('l.txt');
    expect(page.lines).toEqual(TEN_LINES);
    expect(page.text).toBe(TEN_LINES.join('\n'));
    expect(page.offset).toBe(0);
    expect(page.hasMore).toBe(false);
    expect(page.nextOffset).toBeUndefined();
    expect(page.path).toBe('l.txt');
    expect(page.encoding).toBe('utf-8');
  });

  it.each([
    [0, 3, ['line 0', 'line 1', 'line 2'], true, 3],
    [3, 3, ['line 3', 'line 4', 'line 5'], true, 6],
    [7, 3, ['line 7', 'line 8', 'line 9'], false, undefined],
    [8, 5, ['line 8', 'line 9'], false, undefined],
    [10, 5, [], false, undefined],
    [50, 5, [], false, undefined],
    [0, 10, TEN_LINES, false, undefined],
    [2, 0, [], true, 2],
  ] as const)('read offset %i limit %i', async (offset, limit, lines, hasMore, nextOffset) => {
    const fs = await ctx.make({ files: { 'l.txt': `${TEN_LINES.join('\n')}\n` } });
    const page = await fs.read('l.txt', { offset, limit });
    expect(page.lines).toEqual(lines);
    expect(page.offset).toBe(offset);
    expect(page.hasMore).toBe(hasMore);
    expect(page.nextOffset).toBe(nextOffset);
  });

  it('walking a file page by page reassembles it exactly', async () => {
    const lines = Array.from({ length: 103 }, (_, i) => (i % 5 === 0 ? '' : `l${i} ${'x'.repeat(i % 9)}`));
    const fs = await ctx.make({ files: { 'p.txt': lines.join('\r\n') } });
    const got: string[] = [];
    let offset: number | undefined = 0;
    let pages = 0;
    while (offset !== undefined) {
      const page = await fs.read('p.txt', { offset, limit: 10 });
      expect(page.offset).toBe(offset);
      got.push(...page.lines);
      offset = page.hasMore ? page.nextOffset : undefined;
      pages++;
      expect(pages).toBeLessThan(20);
    }
    expect(pages).toBe(11);
    expect(got).toEqual(lines);
  });

  it('read decodes with a named encoding and reports it', async () => {
    const fs = await ctx.make({ files: { 'u.txt': Uint8Array.from([0xff, 0xfe, 0x68, 0x00, 0x0a, 0x00, 0x69, 0x00]) } });
    const page = await fs.read('u.txt');
    expect(page.lines).toEqual(['h', 'i']);
    expect(page.encoding).toBe('utf-16le');
  });

  it('read of an empty file is an empty page', async () => {
    const fs = await ctx.make({ files: { 'e.txt': '' } });
    const page = await fs.read('e.txt');
    expect(page.lines).toEqual([]);
    expect(page.text).toBe('');
    expect(page.hasMore).toBe(false);
  });

  it('read of a binary file is EBINARY, reported as read', async () => {
    const fs = await ctx.make({ files: { 'b.bin': Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0xff, 0x00]) } });
    const err = await fs.read('b.bin').catch((e: unknown) => e);
    expect(isFsError(err, 'EBINARY')).toBe(true);
    if (isFsError(err)) expect(err.op).toBe('read');
  });

  it.each([
    ['negative offset', { offset: -1 }],
    ['negative limit', { limit: -2 }],
    ['fractional limit', { limit: 1.5 }],
  ])('read: %s is EINVAL', async (_label, options) => {
    const fs = await ctx.make({ files: { 'l.txt': 'a\nb' } });
    expect(await codeOf(fs.read('l.txt', options))).toBe('EINVAL');
  });

  it.each([
    ['a missing file', 'nope.txt', 'ENOENT'],
    ['a directory', 'dir', 'EISDIR'],
  ])('read on %s is %s, reported as read', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'l.txt': 'x' }, dirs: ['dir'] });
    const err = await fs.read(path).catch((e: unknown) => e);
    expect(isFsError(err)).toBe(true);
    if (!isFsError(err)) return;
    expect(err.code).toBe(code);
    expect(err.op).toBe('read');
  });

  // writeBytes / write ---------------------------------------------------

  it('writeBytes creates a file and returns its WriteResult', async () => {
    const fs = await ctx.make();
    const result = await fs.writeBytes('new.bin', Uint8Array.from([1, 2, 3]));
    expect(result).toEqual({ path: 'new.bin', bytesWritten: 3, mode: 'overwrite' });
    expect(Array.from(await fs.readBytes('new.bin'))).toEqual([1, 2, 3]);
  });

  it.each([
    ['create on a new file', 'create', undefined, 'OK', 'new'],
    ['create on an existing file', 'create', 'old', 'EEXIST', 'old'],
    ['overwrite on a new file', 'overwrite', undefined, 'OK', 'new'],
    ['overwrite on an existing file', 'overwrite', 'old content', 'OK', 'new'],
    ['append on a new file', 'append', undefined, 'OK', 'new'],
    ['append on an existing file', 'append', 'old', 'OK', 'oldnew'],
  ] as const)('write mode %s', async (_label, mode, existing, code, after) => {
    const fs = await ctx.make(existing === undefined ? {} : { files: { 'f.txt': existing } });
    const outcome = await fs.write('f.txt', 'new', { mode }).then(
      (r) => {
        expect(r).toEqual({ path: 'f.txt', bytesWritten: 3, mode });
        return 'OK';
      },
      (err: unknown) => (isFsError(err) ? err.code : 'non-FsError'),
    );
    expect(outcome).toBe(code);
    expect(text(await fs.readBytes('f.txt'))).toBe(after);
  });

  it('writeBytes with createParents makes the directories', async () => {
    const fs = await ctx.make();
    await fs.writeBytes('x/y/z.bin', utf8('z'), { createParents: true });
    expect((await fs.stat('x/y')).kind).toBe('directory');
    expect(text(await fs.readBytes('x/y/z.bin'))).toBe('z');
  });

  it('write without createParents into a missing directory is ENOENT, reported as write', async () => {
    const fs = await ctx.make();
    const err = await fs.write('missing/f.txt', 'x').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOENT')).toBe(true);
    if (isFsError(err)) expect(err.op).toBe('write');
    expect(await fs.exists('missing')).toBe(false);
  });

  it('writeBytes onto a directory is EISDIR, reported as writeBytes', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    const err = await fs.writeBytes('d', utf8('x')).catch((e: unknown) => e);
    expect(isFsError(err, 'EISDIR')).toBe(true);
    if (isFsError(err)) expect(err.op).toBe('writeBytes');
  });

  it('writeBytes with something other than bytes is EINVAL', async () => {
    const fs = await ctx.make();
    expect(await codeOf(fs.writeBytes('f.bin', 'text' as unknown as Uint8Array))).toBe('EINVAL');
    expect(await fs.exists('f.bin')).toBe(false);
  });

  it('write with something other than a string is EINVAL', async () => {
    const fs = await ctx.make();
    expect(await codeOf(fs.write('f.txt', 42 as unknown as string))).toBe('EINVAL');
    expect(await fs.exists('f.txt')).toBe(false);
  });

  it('write encodes as UTF-8 by default; bytesWritten counts bytes', async () => {
    const fs = await ctx.make();
    const result = await fs.write('u.txt', 'é😀');
    expect(result.bytesWritten).toBe(6);
    expect(Array.from(await fs.readBytes('u.txt'))).toEqual([0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]);
  });

  it.each([
    ['latin1', 'café', [0x63, 0x61, 0x66, 0xe9]],
    ['utf-16le', 'hi', [0x68, 0x00, 0x69, 0x00]],
    ['utf-8', 'é', [0xc3, 0xa9]],
  ] as const)('write with encoding %s', async (encoding, value, bytes) => {
    const fs = await ctx.make();
    // `encoding` is accepted by write() but not yet part of WriteOptions.
    const options: WriteOptions & { encoding: string } = { mode: 'overwrite', encoding };
    const result = await fs.write('e.txt', value, options);
    expect(result.bytesWritten).toBe(bytes.length);
    expect(Array.from(await fs.readBytes('e.txt'))).toEqual(bytes);
  });

  it('writeBytes of zero bytes makes an empty file', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'something' } });
    const result = await fs.writeBytes('f.txt', new Uint8Array(0));
    expect(result.bytesWritten).toBe(0);
    expect((await fs.stat('f.txt')).size).toBe(0);
  });

  it('writeBytes copies the data: mutating it afterwards changes nothing', async () => {
    const fs = await ctx.make();
    const data = utf8('keep');
    await fs.writeBytes('f.txt', data);
    data.fill(0x21);
    expect(text(await fs.readBytes('f.txt'))).toBe('keep');
  });

  it('write then read round-trips lines', async () => {
    const fs = await ctx.make();
    await fs.write('r.txt', 'a\r\nb\nc');
    const page = await fs.read('r.txt');
    expect(page.lines).toEqual(['a', 'b', 'c']);
  });

  it('all 256 byte values round-trip through writeBytes and readBytes', async () => {
    const fs = await ctx.make();
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    await fs.writeBytes('all.bin', all);
    // Compare contents, not classes: a Buffer is a Uint8Array too.
    expect(new Uint8Array(await fs.readBytes('all.bin'))).toEqual(all);
    expect(Array.from(await fs.readBytes('all.bin', { offset: 250 }))).toEqual([250, 251, 252, 253, 254, 255]);
  });

  it('readBytes returns a copy: mutating it changes neither the file nor a snapshot', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'hello' } });
    const snap = ctx.caps.snapshots ? await fs.snapshot() : undefined;
    const got = await fs.readBytes('f.txt');
    got.fill(0x4a);
    // A Buffer's slice() shares memory; a copy made with it would fail here.
    got.slice(0, 1).fill(0x4b);
    expect(text(await fs.readBytes('f.txt'))).toBe('hello');
    if (snap) {
      await fs.write('f.txt', 'changed');
      await fs.restore(snap);
      expect(text(await fs.readBytes('f.txt'))).toBe('hello');
    }
  });

  it('openRead chunks are copies: mutating one changes nothing', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'hello world' } });
    const reader = await fs.openRead('f.txt', { chunkSize: 4 });
    for await (const chunk of reader) chunk.fill(0x21);
    expect(text(await fs.readBytes('f.txt'))).toBe('hello world');
  });

  it('writeBytes copies a Buffer too: mutating it afterwards changes nothing', async () => {
    const fs = await ctx.make();
    const data = Buffer.from('keep');
    await fs.writeBytes('f.txt', data);
    data.fill(0x21);
    expect(text(await fs.readBytes('f.txt'))).toBe('keep');
  });
}
