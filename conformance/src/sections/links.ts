/**
 * Symbolic links, on a backend that declares them: a loop of links is
 * refused with `ELOOP` under the path the caller asked for (not the link
 * the resolver was on when it gave up, which is not the caller's name for
 * anything), and a link in a loop is still an entry that stats as the link.
 * A backend without links never reports one.
 *
 * @module
 */

import { type FsError, isFsError } from '@ctxfs/core';
import { expect } from 'vitest';
import { itWhen, type SuiteContext } from '../context.ts';

/** `loop1 -> loop2 -> loop1`, a link into the loop, a link to itself, and a file beside them. */
const LOOP = {
  files: { 'd/x.txt': 'x' },
  links: { loop1: 'loop2', loop2: 'loop1', via: 'loop1', 'd/self': 'self' },
};

async function refusal(call: () => Promise<unknown>): Promise<FsError> {
  let answer: unknown;
  try {
    answer = await call();
  } catch (err) {
    if (isFsError(err)) return err;
    throw err;
  }
  throw new Error(`expected a refusal of ${String(call)}, it answered ${JSON.stringify(answer)}`);
}

export function linksSection(ctx: SuiteContext): void {
  const withLinks = itWhen(ctx.caps.symlinks);
  const withoutLinks = itWhen(!ctx.caps.symlinks);

  withLinks('a loop of links is ELOOP under the path asked for, not the link the loop closed on', async () => {
    const fs = await ctx.make(LOOP);
    const calls: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
      ['loop1', () => fs.realpath('loop1')],
      ['loop2', () => fs.realpath('loop2')],
      ['via', () => fs.realpath('via')],
      ['d/self', () => fs.realpath('d/self')],
      ['loop1/x.txt', () => fs.realpath('loop1/x.txt')],
      ['loop1', () => fs.readBytes('loop1')],
      ['via', () => fs.readBytes('via')],
      ['loop1/x.txt', () => fs.read('loop1/x.txt')],
      ['loop1', () => fs.list('loop1')],
      ['loop1/x.txt', () => fs.exists('loop1/x.txt')],
      ['loop1', () => fs.write('loop1', 'x')],
    ];
    for (const [path, call] of calls) {
      const err = await refusal(call);
      expect(err.code, `${err.op} ${path}: ${err.message}`).toBe('ELOOP');
      expect(err.path, `${err.op} ${path}: ${err.message}`).toBe(path);
      expect(err.message).toContain(`'${path}'`);
    }
  });

  withLinks('the refusal of a loop says which link leads back into it', async () => {
    const fs = await ctx.make(LOOP);
    expect((await refusal(() => fs.realpath('via'))).message).toContain("'loop2' leads back to 'loop1'");
    expect((await refusal(() => fs.readBytes('loop1'))).message).toContain("'loop2' leads back to 'loop1'");
    expect((await refusal(() => fs.readBytes('d/self'))).message).toContain("'d/self' leads back to itself");
  });

  withLinks('a link in a loop is an entry: it stats as the link, under its own name, and is listed', async () => {
    const fs = await ctx.make(LOOP);
    expect(await fs.stat('loop1')).toMatchObject({ path: 'loop1', kind: 'symlink' });
    expect(await fs.exists('loop1')).toBe(true);
    expect((await fs.list('', { stat: true })).map((e) => [e.name, e.kind, e.stat?.kind])).toEqual([
      ['d', 'directory', 'directory'],
      ['loop1', 'symlink', 'symlink'],
      ['loop2', 'symlink', 'symlink'],
      ['via', 'symlink', 'symlink'],
    ]);
  });

  withoutLinks('a backend without symlinks reports none: every entry is a file or a directory', async () => {
    const fs = await ctx.make({ files: { 'd/x.txt': 'x' }, dirs: ['e'] });
    for (const e of await fs.list('', { stat: true })) expect(e.stat?.kind, e.path).not.toBe('symlink');
    expect(await fs.realpath('d/x.txt')).toBe('d/x.txt');
  });
}
