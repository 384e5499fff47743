/**
 * Symbolic links, on a backend that declares them: a loop of links is
 * refused with `ELOOP` under the path the caller asked for (not the link
 * the resolver was on when it gave up, which is not the caller's name for
 * anything), and a link in a loop is still an entry that stats as the link.
 * A link that leads out of the root is refused in core's one wording
 * (`linkOutsideRoot`), whichever call meets it, and the refusal never says
 * where the link leads: a model learns one refusal on every backend. A path
 * that climbs above the root by itself is refused as core refuses it, on
 * every backend, links or not. A backend without links never reports one.
 *
 * @module
 */

import { type FsError, type FsOperation, isFsError, linkOutsideRoot, resolvePath } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { itWhen, type SuiteContext, text } from '../context.ts';

/** `loop1 -> loop2 -> loop1`, a link into the loop, a link to itself, and a file beside them. */
const LOOP = {
  files: { 'd/x.txt': 'x' },
  links: { loop1: 'loop2', loop2: 'loop1', via: 'loop1', 'd/self': 'self' },
};

/**
 * Links out of the root, to places every backend's system has (the host's
 * disk, a container's): `/dev/null` for a file that exists, `/dev` for a
 * directory, `/tmp` for one a new file would be made in, a name nowhere,
 * a relative link that climbs out to the root's parent (no higher: an
 * engine's archive upload refuses a link that climbs out of the directory
 * it unpacks in) and a link inside that leads to one of them. A write that
 * wrongly went through would land in `/dev/null` or a stray file in `/tmp`,
 * never over a file that matters.
 */
const OUT = {
  files: { 'ok.txt': 'ok\n' },
  links: {
    out: '/dev/null',
    outdir: '/dev',
    outtmp: '/tmp',
    'out-missing': '/ctxfs-conformance-nowhere/missing.txt',
    hop: 'out',
    'sub/up': '../..',
  },
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

  withLinks("a link out of the root is refused in core's one wording, whichever call meets it, and never says where it leads", async () => {
    const fs = await ctx.make(OUT);
    const calls: ReadonlyArray<readonly [FsOperation, string, () => Promise<unknown>]> = [
      ['readBytes', 'out', () => fs.readBytes('out')],
      ['read', 'hop', () => fs.read('hop')],
      ['read', 'sub/up', () => fs.read('sub/up')],
      ['list', 'sub/up', () => fs.list('sub/up')],
      ['read', 'out-missing', () => fs.read('out-missing')],
      ['read', 'outdir/null', () => fs.read('outdir/null')],
      ['list', 'out', () => fs.list('out')],
      ['list', 'hop', () => fs.list('hop')],
      ['list', 'outdir', () => fs.list('outdir')],
      ['stat', 'outdir/null', () => fs.stat('outdir/null')],
      ['exists', 'outdir/null', () => fs.exists('outdir/null')],
      ['realpath', 'out', () => fs.realpath('out')],
      ['write', 'out', () => fs.write('out', 'x')],
      ['write', 'outtmp/ctxfs-conformance-new.txt', () => fs.write('outtmp/ctxfs-conformance-new.txt', 'x')],
    ];
    for (const [op, path, call] of calls) {
      const err = await refusal(call);
      const expected = linkOutsideRoot(op, path);
      expect({ code: err.code, op: err.op, path: err.path, reason: err.reason, hint: err.hint }, `${op} ${path}: ${err.message}`).toEqual({
        code: expected.code,
        op,
        path,
        reason: expected.reason,
        hint: expected.hint,
      });
      for (const where of ['/dev', '/tmp', 'nowhere']) expect(err.message, `${op} ${path}`).not.toContain(where);
    }
    // A link out is still an entry of the root (it stats as the link), and the root around it still answers.
    expect(await fs.stat('out')).toMatchObject({ path: 'out', kind: 'symlink' });
    expect(text(await fs.readBytes('ok.txt'))).toBe('ok\n');
  });

  it('a path that climbs above the root is refused as core refuses it', async () => {
    const fs = await ctx.make({ files: { 'ok.txt': 'ok\n' } });
    for (const [path, call] of [
      ['../x', () => fs.read('../x')],
      ['..', () => fs.list('..')],
    ] as const) {
      const err = await refusal(call);
      let expected: unknown;
      try {
        resolvePath(path, 'read');
      } catch (e) {
        expected = e;
      }
      if (!isFsError(expected)) throw new Error(`core's resolvePath took '${path}'`);
      expect([err.code, err.reason, err.hint], path).toEqual([expected.code, expected.reason, expected.hint]);
    }
  });
}
