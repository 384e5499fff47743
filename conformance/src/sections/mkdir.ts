/**
 * mkdir: the POSIX rows (checked against node:fs, with `parents` as
 * `mkdir -p`) plus `existOk`, which the platform has no flag for.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext } from '../context.ts';
import { readTree } from '../posix/filesystem-runner.ts';
import { describePosixScenarios } from '../posix/section.ts';

export function mkdirSection(ctx: SuiteContext): void {
  describePosixScenarios(ctx, 'mkdir');

  it('a new directory is empty, stats as a directory and takes files', async () => {
    const fs = await ctx.make();
    await fs.mkdir('n');
    expect(await fs.list('n')).toEqual([]);
    expect((await fs.stat('n')).kind).toBe('directory');
    await fs.write('n/f.txt', 'f');
    expect(await fs.list('n')).toEqual([{ name: 'f.txt', path: 'n/f.txt', kind: 'file' }]);
  });

  it('reports EEXIST as an FsError with op mkdir, the path and a hint', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    const err = await fs.mkdir('d').catch((e: unknown) => e);
    expect(isFsError(err, 'EEXIST')).toBe(true);
    if (!isFsError(err)) return;
    expect([err.op, err.path]).toEqual(['mkdir', 'd']);
    expect(err.hint.length).toBeGreaterThan(0);
  });

  it('reports a missing parent with a hint about parents', async () => {
    const fs = await ctx.make();
    const err = await fs.mkdir('m/n').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOENT')).toBe(true);
    if (isFsError(err)) expect(err.hint).toMatch(/parents/);
  });

  it.each([
    ['', { existOk: true }],
    ['.', { existOk: true }],
    ['./', { parents: true }],
    ['d/..', { parents: true, existOk: true }],
  ] as const)('mkdir of the root %j with %o succeeds and changes nothing', async (root, options) => {
    const fs = await ctx.make({ files: { 'd/x.txt': 'x' } });
    expect(await codeOf(fs.mkdir(root, options))).toBe('OK');
    expect(await readTree(fs)).toEqual({ d: null, 'd/x.txt': 'x' });
  });

  it('existOk with parents creates missing ancestors and accepts existing ones', async () => {
    const fs = await ctx.make({ dirs: ['a'] });
    await fs.mkdir('a/b/c', { parents: true, existOk: true });
    await fs.mkdir('a/b/c', { parents: true, existOk: true });
    expect(await readTree(fs)).toEqual({ a: null, 'a/b': null, 'a/b/c': null });
  });

  it('mkdir with parents leaves no partial directories when a file blocks the way', async () => {
    const fs = await ctx.make({ files: { 'a/f': 'f' } });
    expect(await codeOf(fs.mkdir('a/f/g/h', { parents: true }))).toBe('ENOTDIR');
    expect(await readTree(fs)).toEqual({ a: null, 'a/f': 'f' });
  });
}
