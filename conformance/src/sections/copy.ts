/**
 * copy: the `fs.cp` rows (checked against node:fs) plus what a tree
 * comparison cannot show — bytes are exact, and the copy is independent of
 * its source afterwards (backends that share buffers must not leak writes).
 * A recursive copy drops nothing: a link inside the tree is copied as a
 * link with the same text (as `cp -R` does), and a link that leads, or
 * would lead from the copy's place, out of the root refuses the whole copy
 * before anything is written, naming the link but never where it leads.
 *
 * @module
 */

import { type FsError, isFsError } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, itWhen, type SuiteContext, text, utf8 } from '../context.ts';
import { readTree } from '../posix/filesystem-runner.ts';
import { describePosixScenarios } from '../posix/section.ts';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

/** A tree holding a link to a file in it, one to a directory in it, and one from a subdirectory back up to a file. */
const LINKED = {
  files: { 'lib/a.txt': 'a', 'lib/sub/b.txt': 'b' },
  links: { 'lib/to-file': 'a.txt', 'lib/to-dir': 'sub', 'lib/sub/up': '../a.txt' },
};

async function refusal(call: Promise<unknown>): Promise<FsError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFsError(err)) throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
}

/** The refusal names the link by its own path, says what to do, and nothing of where the link leads. */
function expectLinkOut(err: FsError, link: string): void {
  expect({ code: err.code, op: err.op, path: err.path }, err.message).toEqual({ code: 'EPATHESCAPE', op: 'copy', path: link });
  expect(err.hint, err.message).toBeTruthy();
  for (const where of ['/dev', 'null', '/tmp']) expect(err.message).not.toContain(where);
}

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

  const withLinks = itWhen(ctx.caps.symlinks);
  const withoutLinks = itWhen(!ctx.caps.symlinks);

  withLinks('a recursive copy copies the links inside the tree as links with the same text', async () => {
    const fs = await ctx.make(LINKED);
    await fs.copy('lib', 'lc', { recursive: true });
    const kinds = async (dir: string) => (await fs.list(dir)).map((e) => [e.name, e.kind]);
    expect(await kinds('lc')).toEqual([
      ['a.txt', 'file'],
      ['sub', 'directory'],
      ['to-dir', 'symlink'],
      ['to-file', 'symlink'],
    ]);
    expect(await kinds('lc/sub')).toEqual([
      ['b.txt', 'file'],
      ['up', 'symlink'],
    ]);
    // The same text: each copied link leads to the copy's own entry, not back into the source.
    expect(await fs.realpath('lc/to-file')).toBe('lc/a.txt');
    expect(await fs.realpath('lc/to-dir')).toBe('lc/sub');
    expect(await fs.realpath('lc/sub/up')).toBe('lc/a.txt');
    expect(text(await fs.readBytes('lc/to-dir/up'))).toBe('a');
    await fs.write('lc/to-file', 'through the copy');
    expect([text(await fs.readBytes('lc/a.txt')), text(await fs.readBytes('lib/a.txt'))]).toEqual(['through the copy', 'a']);
  });

  withLinks('merging into an existing tree copies the links as links too', async () => {
    const fs = await ctx.make({ ...LINKED, files: { ...LINKED.files, 'lc/keep.txt': 'k' } });
    await fs.copy('lib', 'lc', { recursive: true });
    expect((await fs.list('lc')).map((e) => [e.name, e.kind])).toEqual([
      ['a.txt', 'file'],
      ['keep.txt', 'file'],
      ['sub', 'directory'],
      ['to-dir', 'symlink'],
      ['to-file', 'symlink'],
    ]);
    expect(await fs.realpath('lc/sub/up')).toBe('lc/a.txt');
  });

  withLinks('a link out of the root refuses the whole copy before anything is written, and never says where it leads', async () => {
    const fs = await ctx.make({ ...LINKED, links: { ...LINKED.links, 'lib/sub/out': '/dev/null' }, dirs: ['merge'] });
    expectLinkOut(await refusal(fs.copy('lib', 'lc', { recursive: true })), 'lib/sub/out');
    expect(await fs.exists('lc')).toBe(false);
    expectLinkOut(await refusal(fs.copy('lib', 'merge', { recursive: true })), 'lib/sub/out');
    expect(await fs.list('merge')).toEqual([]);
  });

  withLinks('a relative link that climbs out of the root from the copy refuses it, though it stays inside where it is', async () => {
    // deep/er/up leads to top.txt; the same text in a copy one level up would lead out of the root.
    const fs = await ctx.make({ files: { 'top.txt': 't', 'deep/er/x.txt': 'x' }, links: { 'deep/er/up': '../../top.txt', 'deep/er/dots': '../..' } });
    expect(text(await fs.readBytes('deep/er/up'))).toBe('t');
    const err = await refusal(fs.copy('deep/er', 'er', { recursive: true }));
    expectLinkOut(err, 'deep/er/dots');
    expect(await fs.exists('er')).toBe(false);
    // Copied as deep as it was, the link still leads inside: the copy is made.
    await fs.copy('deep/er', 'deep/er2', { recursive: true });
    expect(await fs.realpath('deep/er2/up')).toBe('top.txt');
  });

  withoutLinks('a backend without links copies every entry of a tree, which holds only files and directories', async () => {
    const fs = await ctx.make({ files: { 'lib/a.txt': 'a', 'lib/sub/b.txt': 'b' }, dirs: ['lib/empty'] });
    await fs.copy('lib', 'lc', { recursive: true });
    expect(await readTree(fs)).toMatchObject({ 'lc/a.txt': 'a', 'lc/empty': null, 'lc/sub': null, 'lc/sub/b.txt': 'b' });
  });

  it('copying a missing source creates nothing at the destination', async () => {
    const fs = await ctx.make();
    expect(await codeOf(fs.copy('missing', 'm/n/out', { recursive: true }))).toBe('ENOENT');
    expect(await fs.list('')).toEqual([]);
  });
}
