/**
 * Limits: the documented defaults of `fs.limits`, the convenience cap on all
 * four convenience calls (refused with `ETOOLARGE` and a hint pointing at
 * streaming or paging, while streaming still works), the grep match default,
 * and the path-shape limits the backend reports.
 *
 * @module
 */

import { type Filesystem, isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext } from '../context.ts';

const MiB = 1024 * 1024;

/** Streams `size` bytes of 'x' (newline every 64 KiB) to `path` without holding them in one buffer. */
async function streamFile(fs: Filesystem, path: string, size: number): Promise<void> {
  const piece = new Uint8Array(MiB).fill(0x78);
  for (let i = 65535; i < piece.length; i += 65536) piece[i] = 0x0a;
  const w = await fs.openWrite(path);
  try {
    for (let at = 0; at < size; at += piece.length) {
      await w.write(piece.subarray(0, Math.min(piece.length, size - at)));
    }
    await w.close();
  } finally {
    await w.abort();
  }
}

async function tooLarge(run: () => Promise<unknown>, op: string): Promise<void> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isFsError(err, 'ETOOLARGE'), `${op} must refuse with ETOOLARGE`).toBe(true);
  if (!isFsError(err)) return;
  expect(err.op).toBe(op);
  expect(err.hint).toMatch(/openRead|openText|openWrite|stream|page|offset|limit|chunk/i);
}

export function limitsSection(ctx: SuiteContext): void {
  const slow = Math.max(ctx.target.timeout ?? 0, 120_000);

  it.each([
    ['chunkSize', 64 * 1024],
    ['maxConvenienceBytes', 32 * MiB],
    ['maxGrepMatches', 1000],
    ['maxDepth', 256],
    ['maxSegmentBytes', 255],
    ['maxPathBytes', 4096],
  ] as const)('fs.limits.%s defaults to %i', async (key, value) => {
    const fs = await ctx.make();
    expect(fs.limits[key]).toBe(value);
  });

  it(
    'readBytes of a file over the cap is ETOOLARGE; streaming and ranges still work',
    async () => {
      const fs = await ctx.make();
      const cap = fs.limits.maxConvenienceBytes;
      await streamFile(fs, 'big.bin', cap + 1);
      expect((await fs.stat('big.bin')).size).toBe(cap + 1);
      await tooLarge(() => fs.readBytes('big.bin'), 'readBytes');
      expect(await codeOf(fs.readBytes('big.bin', { limit: cap + 1 }))).toBe('ETOOLARGE');
      expect((await fs.readBytes('big.bin', { offset: cap - 9, limit: 100 })).byteLength).toBe(10);
      expect((await fs.readBytes('big.bin', { limit: 16 })).byteLength).toBe(16);
      // The remaining bytes after offset 1 are exactly the cap: allowed.
      expect((await fs.readBytes('big.bin', { offset: 1 })).byteLength).toBe(cap);
      await using reader = await fs.openRead('big.bin');
      expect(reader.size).toBe(cap + 1);
      reader.seek(-1, 'end');
      expect(Array.from(await reader.read())).toEqual([0x78]);
    },
    slow,
  );

  it('readBytes with a limit above the cap is ETOOLARGE even for a small file', async () => {
    const fs = await ctx.make({ files: { 's.txt': 'small' } });
    await tooLarge(() => fs.readBytes('s.txt', { limit: fs.limits.maxConvenienceBytes + 1 }), 'readBytes');
  });

  it(
    'read of a page over the cap is ETOOLARGE; smaller pages work',
    async () => {
      const fs = await ctx.make();
      const cap = fs.limits.maxConvenienceBytes;
      await streamFile(fs, 'lines.txt', cap + 65536);
      await tooLarge(() => fs.read('lines.txt'), 'read');
      const page = await fs.read('lines.txt', { limit: 2 });
      expect(page.lines.length).toBe(2);
      expect(page.lines[0]?.length).toBe(65535);
      expect(page.hasMore).toBe(true);
    },
    slow,
  );

  it(
    'writeBytes of cap + 1 bytes is ETOOLARGE and writes nothing',
    async () => {
      const fs = await ctx.make();
      const data = new Uint8Array(fs.limits.maxConvenienceBytes + 1);
      await tooLarge(() => fs.writeBytes('w.bin', data), 'writeBytes');
      expect(await fs.exists('w.bin')).toBe(false);
    },
    slow,
  );

  it(
    'writeBytes of exactly the cap succeeds',
    async () => {
      const fs = await ctx.make();
      const cap = fs.limits.maxConvenienceBytes;
      const result = await fs.writeBytes('w.bin', new Uint8Array(cap).fill(7));
      expect(result.bytesWritten).toBe(cap);
      expect((await fs.stat('w.bin')).size).toBe(cap);
    },
    slow,
  );

  it(
    'write of text over the cap is ETOOLARGE and leaves the old content',
    async () => {
      const fs = await ctx.make({ files: { 't.txt': 'old' } });
      await tooLarge(() => fs.write('t.txt', 'a'.repeat(fs.limits.maxConvenienceBytes + 1)), 'write');
      expect(new TextDecoder().decode(await fs.readBytes('t.txt'))).toBe('old');
    },
    slow,
  );

  it(
    'write counts the cap in encoded bytes, not characters',
    async () => {
      const fs = await ctx.make();
      const cap = fs.limits.maxConvenienceBytes;
      // Half as many characters as the cap, but one byte more once encoded.
      const value = `${'é'.repeat(cap / 2)}a`;
      expect(value.length).toBeLessThan(cap);
      await tooLarge(() => fs.write('t.txt', value), 'write');
      expect(await fs.exists('t.txt')).toBe(false);
    },
    slow,
  );

  it(
    'streaming writes are not capped',
    async () => {
      const fs = await ctx.make();
      const cap = fs.limits.maxConvenienceBytes;
      await streamFile(fs, 's.bin', cap + 3);
      expect((await fs.stat('s.bin')).size).toBe(cap + 3);
    },
    slow,
  );

  it('grep stops at fs.limits.maxGrepMatches by default', async () => {
    const fs = await ctx.make();
    const max = fs.limits.maxGrepMatches;
    const lines = Array.from({ length: max + 7 }, (_, i) => `hit ${i}`);
    await fs.write('many.txt', `${lines.join('\n')}\n`);
    const matches = await collect(fs.grep('hit'));
    expect(matches.length).toBe(max);
    expect(matches[max - 1]?.line).toBe(max);
  });

  it('grep maxMatches overrides the default both ways', async () => {
    const fs = await ctx.make();
    const max = fs.limits.maxGrepMatches;
    await fs.write('many.txt', `${Array.from({ length: max + 7 }, (_, i) => `hit ${i}`).join('\n')}\n`);
    expect((await collect(fs.grep('hit', { maxMatches: 3 }))).length).toBe(3);
    expect((await collect(fs.grep('hit', { maxMatches: max + 100 }))).length).toBe(max + 7);
    expect((await collect(fs.grep('hit', { maxMatches: 0 }))).length).toBe(0);
  });

  it('a segment of exactly maxSegmentBytes is legal; one byte more is ENAMETOOLONG', async () => {
    const fs = await ctx.make();
    const n = fs.limits.maxSegmentBytes;
    await fs.write('s'.repeat(n), 'ok');
    expect(await fs.exists('s'.repeat(n))).toBe(true);
    expect(await codeOf(fs.write('s'.repeat(n + 1), 'no'))).toBe('ENAMETOOLONG');
  });

  it('depth of exactly maxDepth is legal; one more is ENAMETOOLONG', async () => {
    const fs = await ctx.make();
    const depth = fs.limits.maxDepth;
    expect(await codeOf(fs.stat(`${'d/'.repeat(depth - 1)}f`))).toBe('ENOENT');
    expect(await codeOf(fs.stat(`${'d/'.repeat(depth)}f`))).toBe('ENAMETOOLONG');
  });

  it('a path over maxPathBytes is ENAMETOOLONG', async () => {
    const fs = await ctx.make();
    const seg = 'p'.repeat(100);
    const count = Math.ceil(fs.limits.maxPathBytes / 101) + 1;
    expect(await codeOf(fs.stat(Array.from({ length: count }, () => seg).join('/')))).toBe('ENAMETOOLONG');
  });
}
