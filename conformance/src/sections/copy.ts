/**
 * copy: the `fs.cp` rows (checked against node:fs) plus what a tree
 * comparison cannot show — bytes are exact, and the copy is independent of
 * its source afterwards (backends that share buffers must not leak writes).
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext, text, utf8 } from '../context.ts';
import { readTree } from '../posix/filesystem-runner.ts';
import { describePosixScenarios } from '../posix/section.ts';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

export function copySection(ctx: SuiteContext): void {
  describePosixScenarios(ctx, 'copy');

  it('copies every byte value exactly', async () => {
    const fs = await ctx.make({ files: { 'all.bin': ALL_BYTES } });
    await fs.copy('all.bin', 'copy/all.bin');
    expect(await fs.readBytes('copy/all.bin')).toEqual(ALL_BYTES);
    expect(await fs.readBytes('all.bin')).toEqual(ALL_BYTES);
  });

  it('a copy does not change when the source is overwritten or appended to', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'base' } });
    await fs.copy('a.txt', 'b.txt');
    await fs.write('a.txt', '+src', { mode: 'append' });
    expect(text(await fs.readBytes('b.txt'))).toBe('base');
    await fs.write('a.txt', 'replaced');
    expect(text(await fs.readBytes('b.txt'))).toBe('base');
  });

  it('appends to a copy and to its source stay separate', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'base' } });
    await fs.copy('a.txt', 'b.txt');
    await fs.write('b.txt', '+copy', { mode: 'append' });
    await fs.write('a.txt', '+src', { mode: 'append' });
    await fs.writeBytes('b.txt', utf8('!'), { mode: 'append' });
    expect(text(await fs.readBytes('a.txt'))).toBe('base+src');
    expect(text(await fs.readBytes('b.txt'))).toBe('base+copy!');
  });

  it('a recursive copy is independent of its source tree', async () => {
    const fs = await ctx.make({ files: { 'p/a.txt': 'a', 'p/q/b.txt': 'b' } });
    await fs.copy('p', 'z', { recursive: true });
    await fs.write('p/q/b.txt', 'changed');
    await fs.delete('p/a.txt');
    await fs.write('z/q/b.txt', '+z', { mode: 'append' });
    expect(await readTree(fs)).toEqual({ p: null, 'p/q': null, 'p/q/b.txt': 'changed', z: null, 'z/a.txt': 'a', 'z/q': null, 'z/q/b.txt': 'b+z' });
  });

  it('copies a file of many chunks exactly', async () => {
    const size = Math.min(ctx.target.largeFileBytes ?? 8 << 20, 1 << 20) + 7;
    const big = Uint8Array.from({ length: size }, (_, i) => (i * 31 + 7) & 0xff);
    const fs = await ctx.make({ files: { 'big.bin': big } });
    await fs.copy('big.bin', 'big2.bin');
    expect((await fs.stat('big2.bin')).size).toBe(size);
    expect(await fs.readBytes('big2.bin')).toEqual(big);
  });

  it('reports errors with op copy, the source path and the destination', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    const err = await fs.copy('d', 'e').catch((e: unknown) => e);
    expect(isFsError(err, 'EISDIR')).toBe(true);
    if (!isFsError(err)) return;
    expect([err.op, err.path, err.dest]).toEqual(['copy', 'd', 'e']);
    expect(err.hint).toMatch(/recursive/);
  });

  it('copying a missing source creates nothing at the destination', async () => {
    const fs = await ctx.make();
    expect(await codeOf(fs.copy('missing', 'm/n/out', { recursive: true }))).toBe('ENOENT');
    expect(await fs.list('')).toEqual([]);
  });
}
