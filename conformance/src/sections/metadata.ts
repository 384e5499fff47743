/**
 * exists, stat, list: the POSIX rows (checked against node:fs) plus the
 * fields the platform cannot compare — normalized paths, exact sizes, mtime,
 * mode — and the listing rules (code-unit order, names kept as given).
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, itWhen, type SuiteContext, text, utf8 } from '../context.ts';
import { describePosixScenarios } from '../posix/section.ts';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const Y2K = Date.UTC(2000, 0, 1);

/** Names that must survive write → list → stat → read unchanged. */
const ODD_NAMES: readonly string[] = [
  'with space.txt',
  ' leading space',
  'trailing space ',
  'dots...',
  '..double-dot-prefix',
  '.hidden',
  '#hash',
  '100%',
  '%20encoded',
  'a+b=c&d',
  "quote'single",
  'brackets[1]{2}(3)',
  'star*question?',
  'emoji 🚀🎉',
  'caf\u00e9 (NFC)',
  'cafe\u0301 (NFD)',
  '日本語のファイル',
  'ملف',
  '-dash-first',
  '~tilde',
];

export function metadataSection(ctx: SuiteContext): void {
  describePosixScenarios(ctx, 'stat', 'exists', 'list');

  describe('stat fields', () => {
    it.each([
      ['./d//x.txt', 'd/x.txt'],
      ['d/', 'd'],
      ['d\\x.txt', 'd/x.txt'],
      ['d/sub/../x.txt', 'd/x.txt'],
      ['', ''],
      ['.', ''],
      ['./', ''],
    ])('stat(%j).path is %j', async (input, path) => {
      const fs = await ctx.make({ files: { 'd/x.txt': 'x' }, dirs: ['d/sub'] });
      expect((await fs.stat(input)).path).toBe(path);
    });

    it.each([
      ['d/x.txt', 'd/x.txt'],
      ['./d//x.txt', 'd/x.txt'],
      ['d/sub/../x.txt', 'd/x.txt'],
      ['d\\x.txt', 'd/x.txt'],
      ['d/sub', 'd/sub'],
      ['', ''],
      ['d/new/not-yet.txt', 'd/new/not-yet.txt'],
    ])('realpath(%j) is %j: the path itself where no link is in it, existing or not', async (input, path) => {
      const fs = await ctx.make({ files: { 'd/x.txt': 'x' }, dirs: ['d/sub'] });
      expect(await fs.realpath(input)).toBe(path);
    });

    it('realpath refuses a path out of the root as every operation does', async () => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' } });
      for (const input of ['..', '../a.txt', '/etc/passwd', 'a/../../x']) expect(await codeOf(fs.realpath(input)), input).toBe('EPATHESCAPE');
    });

    it.each([
      ['an empty file', new Uint8Array(0)],
      ['a one-byte file', utf8('x')],
      ['multi-byte UTF-8 text (bytes, not characters)', utf8('é🚀')],
      ['every byte value', ALL_BYTES],
      ['NUL bytes only', new Uint8Array(17)],
    ])('size is exact for %s', async (_label, bytes) => {
      const fs = await ctx.make({ files: { 'f.bin': bytes } });
      const st = await fs.stat('f.bin');
      expect([st.kind, st.size]).toEqual(['file', bytes.byteLength]);
    });

    it('size is exact for a large file', async () => {
      const size = (ctx.target.largeFileBytes ?? 8 << 20) + 1;
      const fs = await ctx.make({ files: { 'big.bin': new Uint8Array(size).fill(0x61) } });
      expect((await fs.stat('big.bin')).size).toBe(size);
    });

    it('size follows writes: overwrite shrinks, append grows', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'hello world' } });
      await fs.write('f.txt', 'hi');
      expect((await fs.stat('f.txt')).size).toBe(2);
      await fs.write('f.txt', '!!!', { mode: 'append' });
      expect((await fs.stat('f.txt')).size).toBe(5);
    });

    it('a directory has kind directory and size 0', async () => {
      const fs = await ctx.make({ files: { 'd/x.txt': 'x'.repeat(100) } });
      const st = await fs.stat('d');
      expect([st.path, st.kind, st.size]).toEqual(['d', 'directory', 0]);
    });

    it('mtime is a valid Date, on files and directories', async () => {
      const fs = await ctx.make({ files: { 'd/x.txt': 'x' } });
      for (const p of ['d/x.txt', 'd', '']) {
        const { mtime } = await fs.stat(p);
        expect(mtime).toBeInstanceOf(Date);
        expect(mtime.getTime()).toBeGreaterThan(Y2K);
      }
    });

    it('mtime never moves back on write', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'one' } });
      const first = (await fs.stat('f.txt')).mtime.getTime();
      await fs.write('f.txt', 'two');
      const second = (await fs.stat('f.txt')).mtime.getTime();
      await fs.write('f.txt', 'three', { mode: 'append' });
      const third = (await fs.stat('f.txt')).mtime.getTime();
      await fs.write('later.txt', 'later');
      const later = (await fs.stat('later.txt')).mtime.getTime();
      expect(second).toBeGreaterThanOrEqual(first);
      expect(third).toBeGreaterThanOrEqual(second);
      expect(later).toBeGreaterThanOrEqual(first);
    });

    itWhen(ctx.caps.permissions)('mode holds permission bits (declared: permissions)', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'f' }, dirs: ['d'] });
      const file = await fs.stat('f.txt');
      const dir = await fs.stat('d');
      for (const st of [file, dir]) {
        expect(typeof st.mode).toBe('number');
        expect((st.mode ?? -1) & ~0o7777).toBe(0);
        expect((st.mode ?? 0) & 0o400).toBe(0o400); // owner can read what it wrote
      }
      expect((dir.mode ?? 0) & 0o100).toBe(0o100); // owner can enter its directory
    });

    itWhen(!ctx.caps.permissions)('mode is not reported (not declared: permissions)', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'f' } });
      expect((await fs.stat('f.txt')).mode).toBeUndefined();
    });

    it('stat errors carry op stat, the path and a hint', async () => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' } });
      const err = await fs.stat('a.txt/child').catch((e: unknown) => e);
      expect(isFsError(err, 'ENOTDIR')).toBe(true);
      if (!isFsError(err)) return;
      expect([err.op, err.path]).toEqual(['stat', 'a.txt/child']);
      expect(err.hint.length).toBeGreaterThan(0);
    });
  });

  describe('list entries', () => {
    it('entries carry name, normalized path and kind', async () => {
      const fs = await ctx.make({ files: { 'd/x.txt': 'x' }, dirs: ['d/sub'] });
      const expected = [
        { name: 'sub', path: 'd/sub', kind: 'directory' },
        { name: 'x.txt', path: 'd/x.txt', kind: 'file' },
      ];
      expect(await fs.list('d')).toEqual(expected);
      expect(await fs.list('./d//')).toEqual(expected);
      expect(await fs.list('d/sub/..')).toEqual(expected);
    });

    it('root entries have paths without a prefix', async () => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' }, dirs: ['d'] });
      expect(await fs.list()).toEqual([
        { name: 'a.txt', path: 'a.txt', kind: 'file' },
        { name: 'd', path: 'd', kind: 'directory' },
      ]);
    });

    it('sorts by UTF-16 code unit, not locale (B < a < b, Z < _ < a)', async () => {
      const names = ['b', 'a', 'B', 'Z', '_', 'a1', 'a10', 'a2', 'A'];
      const fs = await ctx.make({ files: Object.fromEntries(names.map((n) => [n, n])) });
      expect((await fs.list('')).map((e) => e.name)).toEqual(['A', 'B', 'Z', '_', 'a', 'a1', 'a10', 'a2', 'b']);
    });

    it('sorts astral characters by code unit (surrogates of U+1F680 before U+FF5E)', async () => {
      const fs = await ctx.make({ files: { '🚀': 'r', '～': 't', z: 'z' } });
      expect((await fs.list('')).map((e) => e.name)).toEqual(['z', '🚀', '～']);
    });

    it('keeps subdir and subdir.txt apart in list, stat and exists', async () => {
      const fs = await ctx.make({ files: { 'subdir/inner.txt': 'i', 'subdir.txt': 's' } });
      expect(await fs.list('')).toEqual([
        { name: 'subdir', path: 'subdir', kind: 'directory' },
        { name: 'subdir.txt', path: 'subdir.txt', kind: 'file' },
      ]);
      expect(await fs.list('subdir')).toEqual([{ name: 'inner.txt', path: 'subdir/inner.txt', kind: 'file' }]);
      expect(await codeOf(fs.list('subdir.txt'))).toBe('ENOTDIR');
      expect(await fs.exists('subdir.txt/')).toBe(false);
    });

    it('reflects a write and a delete immediately', async () => {
      const fs = await ctx.make({ dirs: ['d'] });
      await fs.write('d/new.txt', 'n');
      expect((await fs.list('d')).map((e) => e.name)).toEqual(['new.txt']);
      await fs.delete('d/new.txt');
      expect(await fs.list('d')).toEqual([]);
    });

    it('list errors carry op list and the path', async () => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' } });
      const err = await fs.list('a.txt').catch((e: unknown) => e);
      expect(isFsError(err, 'ENOTDIR')).toBe(true);
      if (isFsError(err)) expect([err.op, err.path]).toEqual(['list', 'a.txt']);
    });

    it('NFC and NFD spellings are two files, each with its own content', async () => {
      const nfc = 'caf\u00e9.txt';
      const nfd = 'cafe\u0301.txt';
      const fs = await ctx.make({ files: { [nfc]: 'composed', [nfd]: 'decomposed' } });
      expect((await fs.list('')).map((e) => e.name)).toEqual([nfd, nfc]);
      expect(text(await fs.readBytes(nfc))).toBe('composed');
      expect(text(await fs.readBytes(nfd))).toBe('decomposed');
      expect((await fs.stat(nfd)).path).toBe(nfd);
    });
  });

  describe('names kept as given', () => {
    it.each(ODD_NAMES)('%j round-trips through write, list, stat, exists and read', async (name) => {
      const fs = await ctx.make({ dirs: ['d'] });
      const path = `d/${name}`;
      await fs.write(path, name);
      expect(await fs.list('d')).toEqual([{ name, path, kind: 'file' }]);
      const st = await fs.stat(path);
      expect([st.path, st.kind, st.size]).toEqual([path, 'file', utf8(name).byteLength]);
      expect(await fs.exists(path)).toBe(true);
      expect(text(await fs.readBytes(path))).toBe(name);
    });

    it('a directory with an odd name lists its children with full paths', async () => {
      const fs = await ctx.make({ files: { 'dir #1 🚀/100% done.txt': 'x' } });
      expect(await fs.list('dir #1 🚀')).toEqual([{ name: '100% done.txt', path: 'dir #1 🚀/100% done.txt', kind: 'file' }]);
    });
  });

  it('list with { stat: true } gives each entry the metadata stat reports', async () => {
    const fs = await ctx.make({ files: { 'd/a.txt': 'aaa', 'd/b.bin': new Uint8Array([0, 1, 2, 3, 4]), 'd/sub/c.txt': 'c' }, dirs: ['d/empty'] });
    const entries = await fs.list('d', { stat: true });
    expect(entries.map((e) => e.name)).toEqual(['a.txt', 'b.bin', 'empty', 'sub']);
    for (const entry of entries) {
      const expected = await fs.stat(entry.path);
      expect(entry.stat, entry.path).toBeDefined();
      expect(entry.stat?.path).toBe(entry.path);
      expect(entry.stat?.kind).toBe(expected.kind);
      expect(entry.stat?.size).toBe(expected.size);
      expect(entry.stat?.mtime.getTime()).toBe(expected.mtime.getTime());
      if (ctx.caps.permissions) expect(entry.stat?.mode).toBe(expected.mode);
    }
    expect(entries.find((e) => e.name === 'b.bin')?.stat?.size).toBe(5);
  });

  it('list without { stat: true } leaves stat out', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const [entry] = await fs.list('');
    expect(entry?.stat).toBeUndefined();
  });
}
