/**
 * Root removed: when the workspace's root directory is removed from outside
 * while the filesystem is open, every call is refused with `EUNAVAILABLE`
 * saying so, under the path asked for. Answering `ENOENT` of each path (or
 * `exists` false, or an empty glob) would send a caller to list or create
 * what cannot be, and every such hint would fail the same way.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import type { SuiteContext } from '../context.ts';
import { OPERATIONS } from './lifecycle.ts';

const SNAPSHOT_OPS = new Set(['snapshot', 'restore', 'listSnapshots', 'dropSnapshot']);

export function rootRemovedSection(ctx: SuiteContext): void {
  const removeRoot = ctx.target.removeRoot?.bind(ctx.target);
  if (removeRoot === undefined) {
    describe.skip('(nothing outside this backend can remove its root)', () => {
      it('is not applicable', () => {});
    });
    return;
  }

  it.each(OPERATIONS.filter(([op]) => !SNAPSHOT_OPS.has(op)))('%s is EUNAVAILABLE, naming the root as gone', async (op, run) => {
    const fs = await ctx.make({ files: { 'a.txt': 'a', 'd/b.txt': 'b' } });
    await removeRoot(fs);
    const err = await run(fs).then(
      (value) => ({ resolved: value }),
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'EUNAVAILABLE', op });
    expect((err as Error).message).toContain("the workspace's root directory no longer exists");
  });

  it('a read in a subdirectory and a write with createParents are refused the same way', async () => {
    const fs = await ctx.make({ files: { 'd/b.txt': 'b' } });
    await removeRoot(fs);
    await expect(fs.read('d/b.txt')).rejects.toMatchObject({ code: 'EUNAVAILABLE', path: 'd/b.txt' });
    await expect(fs.write('n/c.txt', 'c', { createParents: true })).rejects.toMatchObject({ code: 'EUNAVAILABLE' });
  });
}
