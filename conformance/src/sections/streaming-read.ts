/**
 * Streaming reads: chunking, offsets, `read(n)`, seek, position and size,
 * close and disposal, error mapping, reader stability across writes, every
 * byte value, and a large file hashed end to end.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, text, utf8 } from '../context.ts';

const DIGITS = '0123456789';
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Deterministic pseudo-random bytes (xorshift), cheap to regenerate for comparison. */
export function patternBytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export function streamingReadSection(ctx: SuiteContext): void {
  const timeout = ctx.target.timeout;

  it.each([1, 3, 4, 7, 10, 11, 64])('chunkSize %i is respected and chunks concatenate to the content', async (chunkSize) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const chunks = await collect(await fs.openRead('d.txt', { chunkSize }));
    for (const c of chunks) {
      expect(c.byteLength).toBeGreaterThan(0);
      expect(c.byteLength).toBeLessThanOrEqual(chunkSize);
    }
    expect(text(concat(chunks))).toBe(DIGITS);
    expect(chunks.length).toBe(Math.ceil(DIGITS.length / chunkSize));
  });

  it('the default chunk size is fs.limits.chunkSize', async () => {
    const fs = await ctx.make();
    const size = fs.limits.chunkSize * 2 + 5;
    await fs.writeBytes('big.bin', patternBytes(size));
    const chunks = await collect(await fs.openRead('big.bin'));
    expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThanOrEqual(fs.limits.chunkSize);
    expect(concat(chunks)).toEqual(patternBytes(size));
  });

  it('an empty file yields no chunk', async () => {
    const fs = await ctx.make({ files: { 'empty.txt': '' } });
    const reader = await fs.openRead('empty.txt');
    expect(reader.size).toBe(0);
    expect(await collect(reader)).toEqual([]);
    expect((await reader.read()).byteLength).toBe(0);
    await reader.close();
  });

  it.each([
    [0, DIGITS],
    [3, '3456789'],
    [9, '9'],
    [10, ''],
    [25, ''],
  ])('offset %i starts the stream there', async (offset, expected) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt', { offset, chunkSize: 4 });
    expect(reader.position).toBe(offset);
    expect(reader.size).toBe(10);
    expect(text(concat(await collect(reader)))).toBe(expected);
  });

  it.each([
    ['negative offset', { offset: -1 }],
    ['fractional offset', { offset: 1.5 }],
    ['zero chunk size', { chunkSize: 0 }],
    ['negative chunk size', { chunkSize: -4 }],
  ])('%s is EINVAL', async (_label, options) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    expect(await codeOf(fs.openRead('d.txt', options))).toBe('EINVAL');
  });

  it('read(n) returns at most n bytes and advances the position', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    expect(text(await reader.read(3))).toBe('012');
    expect(reader.position).toBe(3);
    expect(text(await reader.read(4))).toBe('3456');
    expect(reader.position).toBe(7);
    expect(text(await reader.read(100))).toBe('789');
    expect(reader.position).toBe(10);
    expect((await reader.read(5)).byteLength).toBe(0);
    expect((await reader.read(0)).byteLength).toBe(0);
  });

  it('read() without a length reads at most one chunk', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt', { chunkSize: 4 });
    const first = await reader.read();
    expect(first.byteLength).toBeGreaterThan(0);
    expect(first.byteLength).toBeLessThanOrEqual(4);
  });

  it('read with a negative length is EINVAL', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    expect(await codeOf(reader.read(-1))).toBe('EINVAL');
  });

  it.each([
    ['start', 4, 'start', 4, '4567'],
    ['current', 2, 'current', 5, '5678'],
    ['end', -3, 'end', 7, '789'],
    ['end zero', 0, 'end', 10, ''],
    ['current backwards', -3, 'current', 0, '0123'],
  ] as const)('seek %s', async (_label, offset, whence, position, next) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    await reader.read(3);
    expect(reader.seek(offset, whence)).toBe(position);
    expect(reader.position).toBe(position);
    expect(text(await reader.read(4))).toBe(next);
  });

  it('seek defaults to start and can go backwards', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    await reader.read(8);
    expect(reader.seek(1)).toBe(1);
    expect(text(await reader.read(2))).toBe('12');
  });

  it('seek past end of file is allowed and reads nothing', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    expect(reader.seek(50)).toBe(50);
    expect((await reader.read(4)).byteLength).toBe(0);
    expect(await collect(reader)).toEqual([]);
    expect(reader.seek(5)).toBe(5);
    expect(text(await reader.read(2))).toBe('56');
  });

  it.each([
    ['start', -1, 'start'],
    ['current', -4, 'current'],
    ['end', -11, 'end'],
  ] as const)('seek to a negative offset (%s) is EINVAL and keeps the position', async (_label, offset, whence) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    await reader.read(3);
    let err: unknown;
    try {
      reader.seek(offset, whence);
    } catch (e) {
      err = e;
    }
    expect(isFsError(err, 'EINVAL')).toBe(true);
    expect(reader.position).toBe(3);
  });

  it('iteration continues from the position after seek', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt', { chunkSize: 3 });
    reader.seek(-4, 'end');
    expect(text(concat(await collect(reader)))).toBe('6789');
    expect(reader.position).toBe(10);
  });

  it('path and size describe the file at open', async () => {
    const fs = await ctx.make({ files: { 'a/b.txt': 'hello' } });
    await using reader = await fs.openRead('./a//b.txt');
    expect(reader.path).toBe('a/b.txt');
    expect(reader.size).toBe(5);
    expect(reader.position).toBe(0);
  });

  it('close is idempotent and later reads are ECLOSED', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt');
    await reader.close();
    await reader.close();
    expect(await codeOf(reader.read(1))).toBe('ECLOSED');
    const err = await reader.read().catch((e: unknown) => e);
    expect(isFsError(err, 'ECLOSED') && err.hint.length > 0).toBe(true);
  });

  it('seek after close is ECLOSED', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt');
    await reader.close();
    expect(() => reader.seek(0)).toThrow(expect.objectContaining({ code: 'ECLOSED' }));
  });

  it('closing mid-iteration ends the loop', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt', { chunkSize: 2 });
    const seen: string[] = [];
    for await (const chunk of reader) {
      seen.push(text(chunk));
      await reader.close();
    }
    expect(seen.length).toBe(1);
  });

  it('await using disposes the reader', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    let escaped: Awaited<ReturnType<typeof fs.openRead>> | undefined;
    {
      await using reader = await fs.openRead('d.txt');
      escaped = reader;
      expect(text(await reader.read(2))).toBe('01');
    }
    expect(await codeOf(escaped.read(1))).toBe('ECLOSED');
  });

  it.each([
    ['a directory', 'dir', 'EISDIR'],
    ['the root', '', 'EISDIR'],
    ['a missing file', 'missing.txt', 'ENOENT'],
    ['a file in a missing directory', 'nope/missing.txt', 'ENOENT'],
    ['a child of a file', 'file.txt/child', 'ENOTDIR'],
    ['a file with a trailing slash', 'file.txt/', 'ENOTDIR'],
    ['a directory with a trailing slash', 'dir/', 'EISDIR'],
  ])('opening %s is %s', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'file.txt': 'x' }, dirs: ['dir'] });
    const err = await fs.openRead(path).catch((e: unknown) => e);
    expect(isFsError(err)).toBe(true);
    if (!isFsError(err)) return;
    expect(err.code).toBe(code);
    expect(err.op).toBe('openRead');
    expect(err.hint.length).toBeGreaterThan(0);
  });

  it('a reader opened before an overwrite reads the old or the new content entirely', async () => {
    const fs = await ctx.make();
    const before = 'A'.repeat(4096);
    const after = 'B'.repeat(4096);
    await fs.write('f.txt', before);
    const reader = await fs.openRead('f.txt', { chunkSize: 512 });
    const first = await reader.read(512);
    await fs.write('f.txt', after);
    const rest = await collect(reader);
    const got = text(concat([first, ...rest]));
    expect([before, after]).toContain(got);
    expect(text(await fs.readBytes('f.txt'))).toBe(after);
  });

  it('a reader opened before an append never sees a torn mix', async () => {
    const fs = await ctx.make();
    await fs.write('log.txt', 'one\n');
    const reader = await fs.openRead('log.txt');
    await fs.write('log.txt', 'two\n', { mode: 'append' });
    const got = text(concat(await collect(reader)));
    expect(['one\n', 'one\ntwo\n']).toContain(got);
  });

  it('all 256 byte values round-trip through openWrite and openRead', async () => {
    const fs = await ctx.make();
    const w = await fs.openWrite('bytes.bin');
    await w.write(ALL_BYTES);
    await w.write(ALL_BYTES.slice().reverse());
    await w.close();
    const chunks = await collect(await fs.openRead('bytes.bin', { chunkSize: 100 }));
    expect(concat(chunks)).toEqual(concat([ALL_BYTES, ALL_BYTES.slice().reverse()]));
  });

  it('a seeded binary file reads back byte for byte', async () => {
    const fs = await ctx.make({ files: { 'seeded.bin': ALL_BYTES } });
    expect(concat(await collect(await fs.openRead('seeded.bin', { chunkSize: 7 })))).toEqual(ALL_BYTES);
  });

  it(
    'a large file streams with the right bytes',
    async () => {
      const fs = await ctx.make();
      const total = ctx.target.largeFileBytes ?? 8 * 1024 * 1024;
      const piece = 256 * 1024;
      const w = await fs.openWrite('large.bin');
      const expected = createHash('sha256');
      for (let at = 0, i = 0; at < total; at += piece, i++) {
        const chunk = patternBytes(Math.min(piece, total - at), i + 1);
        expected.update(chunk);
        await w.write(chunk);
      }
      expect((await w.close()).bytesWritten).toBe(total);
      const reader = await fs.openRead('large.bin', { chunkSize: 100_000 });
      expect(reader.size).toBe(total);
      const actual = createHash('sha256');
      let n = 0;
      for await (const chunk of reader) {
        expect(chunk.byteLength).toBeLessThanOrEqual(100_000);
        actual.update(chunk);
        n += chunk.byteLength;
      }
      expect(n).toBe(total);
      expect(actual.digest('hex')).toBe(expected.digest('hex'));
      expect((await fs.stat('large.bin')).size).toBe(total);
    },
    Math.max(ctx.target.timeout ?? 0, 60_000),
  );

  it('two readers of one file are independent', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using a = await fs.openRead('d.txt');
    await using b = await fs.openRead('d.txt');
    expect(text(await a.read(3))).toBe('012');
    expect(text(await b.read(2))).toBe('01');
    expect(text(await a.read(2))).toBe('34');
    expect(b.position).toBe(2);
  });

  it(
    'a reader outlives the deletion of its file or fails cleanly',
    async () => {
      const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
      const reader = await fs.openRead('d.txt');
      await fs.delete('d.txt');
      const result = await collect(reader).then(
        (chunks) => text(concat(chunks)),
        (err: unknown) => (isFsError(err) ? err.code : 'non-FsError'),
      );
      expect([DIGITS, 'ENOENT']).toContain(result);
      await reader.close();
    },
    timeout,
  );

  it('a reader sees the bytes written by utf8 helpers exactly', async () => {
    const fs = await ctx.make({ files: { 'u.txt': 'héllo wörld 😀' } });
    const chunks = await collect(await fs.openRead('u.txt', { chunkSize: 1 }));
    expect(chunks.every((c) => c.byteLength === 1)).toBe(true);
    expect(concat(chunks)).toEqual(utf8('héllo wörld 😀'));
  });

  it('readInto fills the buffer it is given, moves the position, and returns 0 at the end', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt');
    const buffer = new Uint8Array(4);
    const seen: string[] = [];
    for (let n = await reader.readInto(buffer); n > 0; n = await reader.readInto(buffer)) seen.push(text(buffer.subarray(0, n)));
    expect(seen.join('')).toBe(DIGITS);
    expect(seen.every((s) => s.length <= 4)).toBe(true);
    expect(reader.position).toBe(DIGITS.length);
    expect(await reader.readInto(buffer)).toBe(0);
  });

  it('readInto writes only into the view it is given, and agrees with read() and seek()', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    await using reader = await fs.openRead('d.txt', { offset: 2 });
    const backing = new Uint8Array(10).fill(0xee);
    expect(await reader.readInto(backing.subarray(3, 6))).toBe(3);
    expect([...backing]).toEqual([0xee, 0xee, 0xee, 0x32, 0x33, 0x34, 0xee, 0xee, 0xee, 0xee]);
    expect(text(await reader.read(2))).toBe('56');
    reader.seek(-1, 'end');
    const one = new Uint8Array(8);
    expect(await reader.readInto(one)).toBe(1);
    expect(text(one.subarray(0, 1))).toBe('9');
    expect(await reader.readInto(new Uint8Array(0))).toBe(0);
    expect(reader.position).toBe(DIGITS.length);
  });

  it(
    'one reused buffer carries a file larger than it, byte for byte',
    async () => {
      const size = 300_000 + 7;
      const fs = await ctx.make();
      await fs.writeBytes('big.bin', patternBytes(size, 11));
      await using reader = await fs.openRead('big.bin');
      const buffer = new Uint8Array(64 * 1024);
      const hash = createHash('sha256');
      let total = 0;
      for (let n = await reader.readInto(buffer); n > 0; n = await reader.readInto(buffer)) {
        hash.update(buffer.subarray(0, n));
        total += n;
      }
      expect(total).toBe(size);
      expect(hash.digest('hex')).toBe(createHash('sha256').update(patternBytes(size, 11)).digest('hex'));
    },
    timeout,
  );

  it('readInto after close is ECLOSED; a non-Uint8Array target is EINVAL', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    const reader = await fs.openRead('d.txt');
    expect(await codeOf(reader.readInto([1, 2, 3] as unknown as Uint8Array))).toBe('EINVAL');
    await reader.close();
    expect(await codeOf(reader.readInto(new Uint8Array(4)))).toBe('ECLOSED');
  });
}
