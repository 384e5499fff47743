/**
 * delete: the POSIX rows (checked against node:fs) plus what the platform
 * cannot say — the workspace root is protected, errors carry op and path,
 * and a deleted path is really gone for every other operation.
 *
 * The rule for a missing path: `ENOENT`, unless `{ force: true }`, as `rm`
 * and `rm -f` do.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext } from '../context.ts';
import { readTree } from '../posix/filesystem-runner.ts';
import { describePosixScenarios } from '../posix/section.ts';

export function deleteSection(ctx: SuiteContext): void {
  describePosixScenarios(ctx, 'delete');

  it.each(['', '.', './', 'd/..', 'd/../.'])('refuses to delete the root spelled %j with EPERM', async (root) => {
    const fs = await ctx.make({ files: { 'd/x.txt': 'x' } });
    expect(await codeOf(fs.delete(root, { recursive: true, force: true }))).toBe('EPERM');
    expect(await readTree(fs)).toEqual({ d: null, 'd/x.txt': 'x' });
  });

  it('reports a missing path as an FsError with op, path and hint', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const err = await fs.delete('no/such.txt').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOENT')).toBe(true);
    if (!isFsError(err)) return;
    expect(err.op).toBe('delete');
    expect(err.path).toBe('no/such.txt');
    expect(err.hint.length).toBeGreaterThan(0);
  });

  it('reports ENOTEMPTY with op delete and the directory path', async () => {
    const fs = await ctx.make({ files: { 'd/x.txt': 'x' } });
    const err = await fs.delete('d').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOTEMPTY')).toBe(true);
    if (isFsError(err)) expect([err.op, err.path]).toEqual(['delete', 'd']);
  });

  it('a deleted file is gone for exists, stat, read and list', async () => {
    const fs = await ctx.make({ files: { 'd/x.txt': 'x', 'd/y.txt': 'y' } });
    await fs.delete('d/x.txt');
    expect(await fs.exists('d/x.txt')).toBe(false);
    expect(await codeOf(fs.stat('d/x.txt'))).toBe('ENOENT');
    expect(await codeOf(fs.readBytes('d/x.txt'))).toBe('ENOENT');
    expect((await fs.list('d')).map((e) => e.name)).toEqual(['y.txt']);
  });

  it('a recursively deleted tree is gone for glob and grep', async () => {
    const files: Record<string, string> = { 'keep.txt': 'needle' };
    for (const a of ['a', 'b', 'c']) for (const b of ['x', 'y']) files[`t/${a}/${b}/f.txt`] = 'needle';
    const fs = await ctx.make({ files });
    await fs.delete('t', { recursive: true });
    expect((await collect(fs.glob('**'))).map((m) => m.path)).toEqual(['keep.txt']);
    expect((await collect(fs.grep('needle'))).map((m) => m.path)).toEqual(['keep.txt']);
  });

  it('a deleted path can be created again, as the other kind', async () => {
    const fs = await ctx.make({ files: { 'p/q.txt': 'q', 'f.txt': 'f' } });
    await fs.delete('p', { recursive: true });
    await fs.write('p', 'now a file');
    await fs.delete('f.txt');
    await fs.mkdir('f.txt');
    expect(await readTree(fs)).toEqual({ p: 'now a file', 'f.txt': null });
  });

  it('deleting twice: the second is ENOENT, or succeeds with force', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await fs.delete('a.txt');
    expect(await codeOf(fs.delete('a.txt'))).toBe('ENOENT');
    expect(await codeOf(fs.delete('a.txt', { force: true }))).toBe('OK');
  });
}
