/**
 * Lifecycle: `close()` is idempotent (a close while one is under way waits
 * for it), every later call is refused with `ECLOSED` naming the operation,
 * and `await using` closes the instance.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, utf8 } from '../context.ts';

/** One call of every public operation, on `a.txt` of a fixture that holds it. */
export const OPERATIONS: ReadonlyArray<readonly [string, (fs: Filesystem) => Promise<unknown>]> = [
  ['openRead', (fs) => fs.openRead('a.txt')],
  ['openWrite', (fs) => fs.openWrite('a.txt')],
  ['openText', (fs) => fs.openText('a.txt')],
  ['readBytes', (fs) => fs.readBytes('a.txt')],
  ['read', (fs) => fs.read('a.txt')],
  ['writeBytes', (fs) => fs.writeBytes('a.txt', utf8('x'))],
  ['write', (fs) => fs.write('a.txt', 'x')],
  ['exists', (fs) => fs.exists('a.txt')],
  ['stat', (fs) => fs.stat('a.txt')],
  ['list', (fs) => fs.list()],
  ['walk', (fs) => collect(fs.walk())],
  ['glob', (fs) => collect(fs.glob('**'))],
  ['grep', (fs) => collect(fs.grep('a'))],
  ['delete', (fs) => fs.delete('a.txt')],
  ['mkdir', (fs) => fs.mkdir('d')],
  ['rename', (fs) => fs.rename('a.txt', 'b.txt')],
  ['copy', (fs) => fs.copy('a.txt', 'b.txt')],
  ['snapshot', (fs) => fs.snapshot()],
  ['restore', (fs) => fs.restore('id')],
  ['listSnapshots', (fs) => fs.listSnapshots()],
  ['dropSnapshot', (fs) => fs.dropSnapshot('id')],
];

export function lifecycleSection(ctx: SuiteContext): void {
  describe('after close', () => {
    it.each(OPERATIONS)('%s is ECLOSED', async (op, run) => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' } });
      await fs.close();
      const err = await run(fs).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ECLOSED', op });
    });
  });

  it('close is idempotent', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await fs.close();
    await expect(fs.close()).resolves.toBeUndefined();
    await Promise.all([fs.close(), fs.close()]);
  });

  it('concurrent closes both resolve', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await expect(Promise.all([fs.close(), fs.close()])).resolves.toEqual([undefined, undefined]);
    expect(await codeOf(fs.exists('a.txt'))).toBe('ECLOSED');
  });

  it('a close called while one is under way settles only after it (a second closer never goes on while the backend is still closing)', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    let firstDone = false;
    const first = fs.close().then(() => {
      firstDone = true;
    });
    await fs.close();
    expect(firstDone).toBe(true);
    await first;
  });

  it('await using closes the instance at the end of the block', async () => {
    let escaped: Filesystem | undefined;
    {
      await using fs = await ctx.make({ files: { 'a.txt': 'a' } });
      expect(await fs.exists('a.txt')).toBe(true);
      escaped = fs;
    }
    expect(await codeOf(escaped.exists('a.txt'))).toBe('ECLOSED');
  });

  it('Symbol.asyncDispose closes', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await fs[Symbol.asyncDispose]();
    expect(await codeOf(fs.stat('a.txt'))).toBe('ECLOSED');
  });

  it('an iterator created before close and started after is ECLOSED', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const globbing = fs.glob('**');
    const grepping = fs.grep('a');
    await fs.close();
    expect(await codeOf(collect(globbing))).toBe('ECLOSED');
    expect(await codeOf(collect(grepping))).toBe('ECLOSED');
  });

  it('close resolves while a reader and a writer are still open', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const reader = await fs.openRead('a.txt');
    const writer = await fs.openWrite('b.txt');
    await expect(fs.close()).resolves.toBeUndefined();
    await reader.close();
    await writer.abort();
  });
}
