/**
 * Concurrency: operations started together must each take effect whole —
 * nothing lost, nothing mixed. The suite never assumes an interleaving; it
 * only checks outcomes that every interleaving must produce.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, type SuiteContext, text, utf8 } from '../context.ts';

const read = async (fs: Filesystem, path: string) => text(await fs.readBytes(path));

export function concurrencySection(ctx: SuiteContext): void {
  it('parallel writes of 100 files into one directory lose nothing', async () => {
    const fs = await ctx.make({ dirs: ['d'] });
    const n = 100;
    await Promise.all(Array.from({ length: n }, (_, i) => fs.write(`d/f${i}.txt`, `content ${i}`)));
    const names = (await fs.list('d')).map((e) => e.name);
    expect(names.length).toBe(n);
    expect(new Set(names)).toEqual(new Set(Array.from({ length: n }, (_, i) => `f${i}.txt`)));
    const contents = await Promise.all(Array.from({ length: n }, (_, i) => read(fs, `d/f${i}.txt`)));
    expect(contents).toEqual(Array.from({ length: n }, (_, i) => `content ${i}`));
  });

  it('parallel writes with createParents into one new tree lose nothing', async () => {
    const fs = await ctx.make({});
    await Promise.all(Array.from({ length: 20 }, (_, i) => fs.write(`x/y/${i % 3}/f${i}`, `${i}`, { createParents: true })));
    const counts = await Promise.all([0, 1, 2].map(async (k) => (await fs.list(`x/y/${k}`)).length));
    expect(counts).toEqual([7, 7, 6]);
  });

  it('parallel overwrites of one file end with exactly one of the contents', async () => {
    const fs = await ctx.make({ files: { 'f.txt': 'original' } });
    const contents = Array.from({ length: 10 }, (_, i) => String.fromCharCode(65 + i).repeat(1000 + i * 100));
    await Promise.all(contents.map((c) => fs.write('f.txt', c)));
    expect(contents).toContain(await read(fs, 'f.txt'));
  });

  it('interleaved streaming overwrites of one file never mix', async () => {
    const fs = await ctx.make({ files: { 'f.bin': 'original' } });
    const writers = await Promise.all([0, 1, 2, 3].map(() => fs.openWrite('f.bin')));
    for (let round = 0; round < 3; round++) {
      await Promise.all(writers.map((w, i) => w.write(utf8(`${i}`.repeat(10 + round)))));
    }
    await Promise.all(writers.map((w) => w.close()));
    const expected = [0, 1, 2, 3].map((i) => `${i}`.repeat(10 + 11 + 12));
    expect(expected).toContain(await read(fs, 'f.bin'));
  });

  it('parallel appends through separate writers keep every record whole', async () => {
    const fs = await ctx.make({ files: { 'log.txt': 'start\n' } });
    const records = Array.from({ length: 10 }, (_, i) => `record ${i} ${'.'.repeat(i * 7)}\n`);
    await Promise.all(
      records.map(async (r) => {
        const w = await fs.openWrite('log.txt', { mode: 'append' });
        await w.write(utf8(r));
        await w.close();
      }),
    );
    const lines = (await read(fs, 'log.txt')).split('\n');
    expect(lines[0]).toBe('start');
    expect(lines.slice(1, -1).sort()).toEqual(records.map((r) => r.slice(0, -1)).sort());
  });

  it('parallel convenience appends keep every record', async () => {
    const fs = await ctx.make({});
    await Promise.all(Array.from({ length: 20 }, (_, i) => fs.write('log.txt', `${i}\n`, { mode: 'append' })));
    const got = (await read(fs, 'log.txt')).split('\n').filter(Boolean).map(Number);
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('parallel create of one path: exactly one wins, the rest are EEXIST', async () => {
    const fs = await ctx.make({});
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => codeOf(fs.write('once.txt', `writer ${i}`, { mode: 'create' }))));
    expect(results.filter((r) => r === 'OK').length).toBe(1);
    expect(results.filter((r) => r !== 'OK').every((r) => r === 'EEXIST')).toBe(true);
    const winner = results.indexOf('OK');
    expect(await read(fs, 'once.txt')).toBe(`writer ${winner}`);
  });

  it('parallel mkdir with parents of overlapping trees', async () => {
    const fs = await ctx.make({});
    const dirs = ['a/b/c', 'a/b/d', 'a/b/c/e', 'a/b', 'a/x/y', 'a/b/c/e/f'];
    await Promise.all(dirs.map((d) => fs.mkdir(d, { parents: true })));
    const kinds = await Promise.all(dirs.map(async (d) => (await fs.stat(d)).kind));
    expect(kinds.every((k) => k === 'directory')).toBe(true);
    expect((await fs.list('a/b')).map((e) => e.name)).toEqual(['c', 'd']);
  });

  it('parallel mkdir of one directory: one succeeds, the others EEXIST', async () => {
    const fs = await ctx.make({});
    const results = await Promise.all(Array.from({ length: 4 }, () => codeOf(fs.mkdir('same'))));
    expect(results.filter((r) => r === 'OK').length).toBe(1);
    expect(results.filter((r) => r !== 'OK')).toEqual(['EEXIST', 'EEXIST', 'EEXIST']);
  });

  it('reads concurrent with writes see the old or the new content, never a mix', async () => {
    const oldText = 'o'.repeat(100_000);
    const newText = 'n'.repeat(150_000);
    const fs = await ctx.make({ files: { 'f.txt': oldText } });
    const [, ...reads] = await Promise.all([fs.write('f.txt', newText), ...Array.from({ length: 5 }, () => read(fs, 'f.txt'))]);
    for (const r of reads) expect(r === oldText || r === newText).toBe(true);
    expect(await read(fs, 'f.txt')).toBe(newText);
  });

  it('parallel renames of distinct files all land', async () => {
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`src/f${i}`, `${i}`]));
    const fs = await ctx.make({ files, dirs: ['dst'] });
    await Promise.all(Array.from({ length: 20 }, (_, i) => fs.rename(`src/f${i}`, `dst/g${i}`)));
    expect(await fs.list('src')).toEqual([]);
    expect((await fs.list('dst')).length).toBe(20);
    expect(await read(fs, 'dst/g7')).toBe('7');
  });

  it('parallel deletes and copies of distinct files', async () => {
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, `${i}`]));
    const fs = await ctx.make({ files });
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? fs.delete(`f${i}`) : fs.copy(`f${i}`, `c/f${i}`))));
    expect((await fs.list()).map((e) => e.name)).toEqual(['c', 'f1', 'f3', 'f5', 'f7', 'f9']);
    expect((await fs.list('c')).map((e) => e.name)).toEqual(['f1', 'f3', 'f5', 'f7', 'f9']);
  });
}
