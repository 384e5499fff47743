/**
 * rename: the POSIX rename(2) rows (checked against node:fs) plus what the
 * platform cannot say — `overwrite: false`, the protected root, error shape,
 * and that a move keeps bytes and whole trees intact.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext } from '../context.ts';
import { readTree } from '../posix/filesystem-runner.ts';
import { describePosixScenarios } from '../posix/section.ts';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

export function renameSection(ctx: SuiteContext): void {
  describePosixScenarios(ctx, 'rename');

  it('moves every byte value unchanged', async () => {
    const fs = await ctx.make({ files: { 'bin/all.bin': ALL_BYTES } });
    await fs.rename('bin/all.bin', 'moved.bin');
    expect(await fs.readBytes('moved.bin')).toEqual(ALL_BYTES);
    expect(await fs.exists('bin/all.bin')).toBe(false);
  });

  it('moves a directory with many entries, all of them', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`src/${i % 3}/f${i}.txt`] = `content ${i}`;
    const fs = await ctx.make({ files });
    const before = await readTree(fs);
    await fs.rename('src', 'dst');
    const expected = Object.fromEntries(Object.entries(before).map(([k, v]) => [k.replace(/^src/, 'dst'), v]));
    expect(await readTree(fs)).toEqual(expected);
  });

  it('keeps the size and kind of what it moves', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'hello' }, dirs: ['e'] });
    await fs.rename('a.txt', 'e/b.txt');
    const st = await fs.stat('e/b.txt');
    expect([st.path, st.kind, st.size]).toEqual(['e/b.txt', 'file', 5]);
  });

  it('reports errors with op rename, the source path and the destination', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' }, dirs: ['e'] });
    const err = await fs.rename('a.txt', 'e').catch((e: unknown) => e);
    expect(isFsError(err, 'EISDIR')).toBe(true);
    if (!isFsError(err)) return;
    expect([err.op, err.path, err.dest]).toEqual(['rename', 'a.txt', 'e']);
    expect(err.hint.length).toBeGreaterThan(0);
  });

  it('with overwrite false, a free destination is an ordinary move', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await fs.rename('a.txt', 'b.txt', { overwrite: false });
    expect(await readTree(fs)).toEqual({ 'b.txt': 'a' });
  });

  it('with overwrite false, a failed move leaves both files as they were', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a', 'd/b.txt': 'b' } });
    expect(await codeOf(fs.rename('a.txt', 'd/b.txt', { overwrite: false }))).toBe('EEXIST');
    expect(await readTree(fs)).toEqual({ 'a.txt': 'a', d: null, 'd/b.txt': 'b' });
  });

  it('a file moved away can be replaced at its old path', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    await fs.rename('a.txt', 'b.txt');
    await fs.write('a.txt', 'new');
    expect(await readTree(fs)).toEqual({ 'a.txt': 'new', 'b.txt': 'old' });
  });
}
