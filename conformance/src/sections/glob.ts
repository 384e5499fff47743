/**
 * glob: picomatch syntax relative to `cwd`, files and directories, sorted
 * depth-first (a parent before its children, siblings by UTF-16 code unit),
 * dotfiles only with `dot` or an explicitly dotted segment, lazy.
 *
 * @module
 */

import type { GlobOptions } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext } from '../context.ts';

/** One tree shared by most tests; each test still gets its own instance. */
const TREE: Record<string, string> = {
  'a.txt': 'a',
  'b.txt': 'b',
  'c.md': 'c',
  'file1.txt': '1',
  'file2.txt': '2',
  'file3.txt': '3',
  'src/index.ts': 'i',
  'src/util.ts': 'u',
  'src/readme.md': 'r',
  'src/.secret.ts': 's',
  'src/lib/deep.ts': 'd',
  'src/lib/deeper/x.ts': 'x',
  'subdir.txt': 'st',
  'subdir/x': 'sx',
  'subdir/y.txt': 'sy',
  'subdirectory/z': 'sz',
  '.hidden': 'h',
  '.github/workflows/ci.yml': 'ci',
  'docs/guide.md': 'g',
};
const DIRS = ['empty'];

/** Every non-dot entry of TREE in the protocol's order. */
const ALL_VISIBLE = [
  'a.txt',
  'b.txt',
  'c.md',
  'docs',
  'docs/guide.md',
  'empty',
  'file1.txt',
  'file2.txt',
  'file3.txt',
  'src',
  'src/index.ts',
  'src/lib',
  'src/lib/deep.ts',
  'src/lib/deeper',
  'src/lib/deeper/x.ts',
  'src/readme.md',
  'src/util.ts',
  'subdir',
  'subdir/x',
  'subdir/y.txt',
  'subdir.txt',
  'subdirectory',
  'subdirectory/z',
];

export function globSection(ctx: SuiteContext): void {
  const tree = () => ctx.make({ files: TREE, dirs: DIRS });
  const paths = async (pattern: string, options?: GlobOptions) => {
    const fs = await tree();
    return (await collect(fs.glob(pattern, options))).map((m) => m.path);
  };

  describe('pattern syntax', () => {
    it.each<[string, string[]]>([
      ['*.txt', ['a.txt', 'b.txt', 'file1.txt', 'file2.txt', 'file3.txt', 'subdir.txt']],
      ['file?.txt', ['file1.txt', 'file2.txt', 'file3.txt']],
      ['file[1-2].txt', ['file1.txt', 'file2.txt']],
      ['file[!1].txt', ['file2.txt', 'file3.txt']],
      ['file[^3].txt', ['file1.txt', 'file2.txt']],
      ['{a,c}.*', ['a.txt', 'c.md']],
      ['*.{md,ts}', ['c.md']],
      ['a.txt', ['a.txt']],
      ['./a.txt', ['a.txt']],
      ['src/*.ts', ['src/index.ts', 'src/util.ts']],
      ['*/*.md', ['docs/guide.md', 'src/readme.md']],
      ['**/*.ts', ['src/index.ts', 'src/lib/deep.ts', 'src/lib/deeper/x.ts', 'src/util.ts']],
      ['**/*.md', ['c.md', 'docs/guide.md', 'src/readme.md']],
      ['src/**/index.ts', ['src/index.ts']],
      ['src/**/deep.ts', ['src/lib/deep.ts']],
      ['src/**/x.ts', ['src/lib/deeper/x.ts']],
      ['**/lib', ['src/lib']],
      ['**/deeper/*', ['src/lib/deeper/x.ts']],
      ['subdir*', ['subdir', 'subdir.txt', 'subdirectory']],
      ['subdir/*', ['subdir/x', 'subdir/y.txt']],
      ['subdir.*', ['subdir.txt']],
      ['subdir', ['subdir']],
      ['subdir?*', ['subdir.txt', 'subdirectory']],
      ['*.MD', []],
      ['nothing-*', []],
      ['src/nope/**', []],
    ])('%s', async (pattern, expected) => {
      expect(await paths(pattern)).toEqual(expected);
    });

    it('** alone yields every visible file and directory in depth-first order', async () => {
      expect(await paths('**')).toEqual(ALL_VISIBLE);
    });

    it('src/** yields everything below src (not src itself)', async () => {
      expect(await paths('src/**')).toEqual([
        'src/index.ts',
        'src/lib',
        'src/lib/deep.ts',
        'src/lib/deeper',
        'src/lib/deeper/x.ts',
        'src/readme.md',
        'src/util.ts',
      ]);
    });

    it('an empty directory is matched', async () => {
      const fs = await tree();
      expect(await collect(fs.glob('emp*'))).toEqual([{ path: 'empty', kind: 'directory' }]);
    });

    it('reports the kind of every match', async () => {
      const fs = await tree();
      expect(await collect(fs.glob('subdir*'))).toEqual([
        { path: 'subdir', kind: 'directory' },
        { path: 'subdir.txt', kind: 'file' },
        { path: 'subdirectory', kind: 'directory' },
      ]);
    });
  });

  describe('dotfiles', () => {
    it('* and ** skip dotfiles and dot directories by default', async () => {
      const all = await paths('**');
      expect(all.some((p) => p.split('/').some((s) => s.startsWith('.')))).toBe(false);
    });

    it('dot: true includes them', async () => {
      expect(await paths('*', { dot: true, kind: 'file' })).toEqual(['.hidden', 'a.txt', 'b.txt', 'c.md', 'file1.txt', 'file2.txt', 'file3.txt', 'subdir.txt']);
      expect(await paths('**/*.ts', { dot: true })).toEqual(['src/.secret.ts', 'src/index.ts', 'src/lib/deep.ts', 'src/lib/deeper/x.ts', 'src/util.ts']);
      expect(await paths('**/*.yml', { dot: true })).toEqual(['.github/workflows/ci.yml']);
    });

    it('an explicitly dotted pattern matches without dot', async () => {
      expect(await paths('.github/**')).toEqual(['.github/workflows', '.github/workflows/ci.yml']);
      expect(await paths('.hidden')).toEqual(['.hidden']);
      expect(await paths('.h*')).toEqual(['.hidden']);
    });

    it('a dotted segment below ** matches without dot', async () => {
      expect(await paths('**/.secret.ts')).toEqual(['src/.secret.ts']);
    });
  });

  describe('options', () => {
    it('cwd: the pattern is relative to it, results stay root-relative', async () => {
      expect(await paths('*.ts', { cwd: 'src' })).toEqual(['src/index.ts', 'src/util.ts']);
      expect(await paths('**/*.ts', { cwd: 'src/lib' })).toEqual(['src/lib/deep.ts', 'src/lib/deeper/x.ts']);
    });

    it('cwd accepts ./ and trailing slash forms', async () => {
      expect(await paths('*', { cwd: './subdir/' })).toEqual(['subdir/x', 'subdir/y.txt']);
    });

    it('cwd that does not exist yields nothing', async () => {
      expect(await paths('**', { cwd: 'missing' })).toEqual([]);
    });

    it('cwd that is a file yields nothing', async () => {
      expect(await paths('*', { cwd: 'a.txt' })).toEqual([]);
    });

    it('cwd escaping the root is EPATHESCAPE', async () => {
      const fs = await tree();
      expect(await codeOf(collect(fs.glob('*', { cwd: '..' })))).toBe('EPATHESCAPE');
    });

    it('ignore as a string', async () => {
      expect(await paths('**/*.ts', { ignore: '**/util.ts' })).toEqual(['src/index.ts', 'src/lib/deep.ts', 'src/lib/deeper/x.ts']);
    });

    it('ignore as an array', async () => {
      expect(await paths('*.txt', { ignore: ['a.txt', 'file*'] })).toEqual(['b.txt', 'subdir.txt']);
    });

    it('ignoring a directory prunes its whole subtree', async () => {
      expect(await paths('**/*.ts', { ignore: 'src/lib' })).toEqual(['src/index.ts', 'src/util.ts']);
      const all = await paths('**', { ignore: ['src', 'subdir*'] });
      expect(all).toEqual(['a.txt', 'b.txt', 'c.md', 'docs', 'docs/guide.md', 'empty', 'file1.txt', 'file2.txt', 'file3.txt']);
    });

    it('ignore is relative to cwd', async () => {
      expect(await paths('**/*.ts', { cwd: 'src', ignore: 'lib/**' })).toEqual(['src/index.ts', 'src/util.ts']);
    });

    it.each<[number, string[]]>([
      [1, ['a.txt', 'b.txt', 'c.md', 'docs', 'empty', 'file1.txt', 'file2.txt', 'file3.txt', 'src', 'subdir', 'subdir.txt', 'subdirectory']],
      [2, ALL_VISIBLE.filter((p) => p.split('/').length <= 2)],
      [3, ALL_VISIBLE.filter((p) => p.split('/').length <= 3)],
      [100, ALL_VISIBLE],
    ])('maxDepth %i', async (maxDepth, expected) => {
      expect(await paths('**', { maxDepth })).toEqual(expected);
    });

    it('maxDepth counts from cwd', async () => {
      expect(await paths('**', { cwd: 'src', maxDepth: 1 })).toEqual(['src/index.ts', 'src/lib', 'src/readme.md', 'src/util.ts']);
    });

    it('kind: file', async () => {
      const fs = await tree();
      const all = await collect(fs.glob('**', { kind: 'file' }));
      expect(all.every((m) => m.kind === 'file')).toBe(true);
      expect(all.map((m) => m.path)).toEqual(ALL_VISIBLE.filter((p) => Object.hasOwn(TREE, p)));
    });

    it('kind: directory', async () => {
      expect(await paths('**', { kind: 'directory' })).toEqual(['docs', 'empty', 'src', 'src/lib', 'src/lib/deeper', 'subdir', 'subdirectory']);
    });

    it('kind: any is the default', async () => {
      expect(await paths('**', { kind: 'any' })).toEqual(ALL_VISIBLE);
    });
  });

  describe('order, duplicates, laziness', () => {
    it('siblings sort by code unit and a directory is followed by its children', async () => {
      const fs = await ctx.make({ files: { 'a/b': '', 'a-b': '', 'a.b': '', B: '', _x: '', Z: '', 'a/A': '' } });
      expect((await collect(fs.glob('**'))).map((m) => m.path)).toEqual(['B', 'Z', '_x', 'a', 'a/A', 'a/b', 'a-b', 'a.b']);
    });

    it('the order is the same on every call', async () => {
      const fs = await tree();
      const one = await collect(fs.glob('**', { dot: true }));
      const two = await collect(fs.glob('**', { dot: true }));
      expect(two).toEqual(one);
    });

    it('overlapping alternatives yield each path once', async () => {
      expect(await paths('{src,src/lib}/**/*.ts')).toEqual(['src/index.ts', 'src/lib/deep.ts', 'src/lib/deeper/x.ts', 'src/util.ts']);
      expect(await paths('{a,a,*}.txt')).toEqual(['a.txt', 'b.txt', 'file1.txt', 'file2.txt', 'file3.txt', 'subdir.txt']);
    });

    it('is lazy: breaking early works and a second iteration is independent', async () => {
      const fs = await tree();
      let first: string | undefined;
      for await (const m of fs.glob('**')) {
        first = m.path;
        break;
      }
      expect(first).toBe('a.txt');
      expect((await collect(fs.glob('**'))).map((m) => m.path)).toEqual(ALL_VISIBLE);
    });

    it('two iterations can interleave', async () => {
      const fs = await tree();
      const a = fs.glob('*.txt');
      const b = fs.glob('*.txt');
      expect((await a.next()).value?.path).toBe('a.txt');
      expect((await b.next()).value?.path).toBe('a.txt');
      expect((await a.next()).value?.path).toBe('b.txt');
      await a.return?.();
      expect((await collect(b)).map((m) => m.path)).toEqual(['b.txt', 'file1.txt', 'file2.txt', 'file3.txt', 'subdir.txt']);
    });

    it('sees files created after an earlier glob', async () => {
      const fs = await tree();
      expect(await collect(fs.glob('new*'))).toEqual([]);
      await fs.write('new.txt', 'n');
      expect(await collect(fs.glob('new*'))).toEqual([{ path: 'new.txt', kind: 'file' }]);
    });
  });

  describe('errors', () => {
    it.each([
      ['../x', 'EPATHESCAPE'],
      ['src/../../x', 'EPATHESCAPE'],
      ['**/../*', 'EPATHESCAPE'],
      ['/etc/*', 'EPATHESCAPE'],
      ['/', 'EPATHESCAPE'],
      ['', 'EBADPATTERN'],
    ])('%j → %s', async (pattern, code) => {
      const fs = await tree();
      expect(await codeOf(collect(fs.glob(pattern)))).toBe(code);
    });

    it('errors carry op glob', async () => {
      const fs = await tree();
      const err = await collect(fs.glob('../x')).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EPATHESCAPE', op: 'glob' });
    });
  });

  describe('names', () => {
    const SPECIAL = {
      'with space.txt': '',
      'br[a]ck.txt': '',
      'paren(1).txt': '',
      'brace{x}.txt': '',
      a: '',
    };

    it('names with spaces match literally', async () => {
      const fs = await ctx.make({ files: SPECIAL });
      expect((await collect(fs.glob('with space.txt'))).map((m) => m.path)).toEqual(['with space.txt']);
      expect((await collect(fs.glob('with *'))).map((m) => m.path)).toEqual(['with space.txt']);
    });

    it('escaped brackets, parentheses and braces match literally', async () => {
      const fs = await ctx.make({ files: SPECIAL });
      expect((await collect(fs.glob('br\\[a\\]ck.txt'))).map((m) => m.path)).toEqual(['br[a]ck.txt']);
      expect((await collect(fs.glob('*\\[a\\]*'))).map((m) => m.path)).toEqual(['br[a]ck.txt']);
      expect((await collect(fs.glob('paren\\(1\\).txt'))).map((m) => m.path)).toEqual(['paren(1).txt']);
      expect((await collect(fs.glob('brace\\{x\\}.txt'))).map((m) => m.path)).toEqual(['brace{x}.txt']);
    });

    it('unicode names', async () => {
      const fs = await ctx.make({ files: { 'café.txt': '', '日本/語.txt': '', '😀.md': '', 'zz.txt': '' } });
      expect((await collect(fs.glob('*.txt'))).map((m) => m.path)).toEqual(['café.txt', 'zz.txt']);
      expect((await collect(fs.glob('日本/*'))).map((m) => m.path)).toEqual(['日本/語.txt']);
      expect((await collect(fs.glob('**/*.txt'))).map((m) => m.path)).toEqual(['café.txt', 'zz.txt', '日本/語.txt']);
      expect((await collect(fs.glob('*.md'))).map((m) => m.path)).toEqual(['😀.md']);
      expect((await collect(fs.glob('caf?.txt'))).map((m) => m.path)).toEqual(['café.txt']);
    });
  });
}
