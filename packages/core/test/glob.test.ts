import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { compileFileFilter, compileGlob } from '../src/glob.ts';

describe('compileGlob: base and depth', () => {
  it.each<[string, string, number]>([
    ['*.ts', '', 1],
    ['a.txt', '', 1],
    ['src/*.ts', 'src', 1],
    ['src/lib/*.ts', 'src/lib', 1],
    ['src/*/x.ts', 'src', 2],
    ['src/**/*.ts', 'src', Number.POSITIVE_INFINITY],
    ['**', '', Number.POSITIVE_INFINITY],
    ['src/lib/index.ts', 'src/lib', 1],
    ['./src/*.ts', 'src', 1],
    ['src//lib/*.ts', 'src/lib', 1],
    ['{a,b}/*.ts', '', 2],
    ['src/file[12].ts', 'src', 1],
    ['src/\\[x\\].ts', 'src', 1],
  ])('%s → base %j, depth %d', (pattern, base, depth) => {
    const plan = compileGlob(pattern);
    expect(plan.base).toBe(base);
    expect(plan.maxDepth).toBe(depth);
  });

  it('maxDepth bounds the walk relative to the cwd, minus the static base', () => {
    expect(compileGlob('**', { maxDepth: 2 }).maxDepth).toBe(2);
    expect(compileGlob('src/**', { maxDepth: 3 }).maxDepth).toBe(2);
    expect(compileGlob('src/lib/**', { maxDepth: 1 }).maxDepth).toBe(0);
    expect(compileGlob('*/*', { maxDepth: 5 }).maxDepth).toBe(2);
    expect(compileGlob('a/b/c/*', { maxDepth: 0 }).maxDepth).toBe(0);
  });
});

describe('compileGlob: matching', () => {
  it.each<[string, string, boolean]>([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'a/b/c.ts', true],
    ['src/**', 'src/a/b', true],
    ['src/**/x.ts', 'src/x.ts', true],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['file[1-2].txt', 'file2.txt', true],
    ['file[1-2].txt', 'file3.txt', false],
    ['file[!1].txt', 'file2.txt', true],
    ['file[!1].txt', 'file1.txt', false],
    ['{a,b}.md', 'b.md', true],
    ['{a,b}.md', 'c.md', false],
    ['subdir*', 'subdir.txt', true],
    ['subdir/*', 'subdir.txt', false],
    ['subdir.*', 'subdir', false],
    ['*', '.hidden', false],
    ['**', 'a/.hidden', false],
    ['.github/**', '.github/workflows/ci.yml', true],
    ['br\\[a\\]ck', 'br[a]ck', true],
    ['br\\[a\\]ck', 'bra', false],
  ])('%s matches %j: %s', (pattern, path, expected) => {
    expect(compileGlob(pattern).matches(path)).toBe(expected);
  });

  it('dot lets wildcards match dotfiles', () => {
    expect(compileGlob('*', { dot: true }).matches('.hidden')).toBe(true);
    expect(compileGlob('**/*.ts', { dot: true }).matches('.a/.b.ts')).toBe(true);
  });

  it('nocase', () => {
    expect(compileGlob('*.TS', { nocase: true }).matches('a.ts')).toBe(true);
    expect(compileGlob('*.TS').matches('a.ts')).toBe(false);
  });

  it('ignore (string or array) removes matches and prunes directories with their subtrees', () => {
    const plan = compileGlob('**', { ignore: ['node_modules', 'dist/**'] });
    expect(plan.ignored('node_modules')).toBe(true);
    expect(plan.matches('node_modules')).toBe(false);
    expect(plan.matches('dist/a.js')).toBe(false);
    expect(plan.ignored('dist')).toBe(true);
    expect(plan.matches('src/a.ts')).toBe(true);
    const single = compileGlob('*.ts', { ignore: 'b.ts' });
    expect(single.matches('a.ts')).toBe(true);
    expect(single.matches('b.ts')).toBe(false);
  });

  it('ignore matches dotted names too', () => {
    expect(compileGlob('**', { dot: true, ignore: '.git' }).ignored('.git')).toBe(true);
  });

  it('names ignored at any depth (`**/name`, looked up by last segment) decide as picomatch does', () => {
    const ignore = ['**/node_modules', '**/.git', '**/a.b', '**/x+y', 'dist/**'];
    const plan = compileGlob('**', { dot: true, ignore });
    const reference = picomatch(ignore, { dot: true, posix: true });
    const paths = [
      'node_modules',
      'node_modules/',
      'src/node_modules',
      '.hidden/node_modules',
      'node_modules/pkg',
      'node_modulesx',
      'xnode_modules',
      '.git',
      'a/.git',
      '.github',
      'a.b',
      'a/a.b',
      'aXb',
      'x+y',
      'xxy',
      'dist',
      'dist/a.js',
      'src/dist',
      'src/a.ts',
    ];
    for (const p of paths) expect([p, plan.ignored(p)]).toEqual([p, reference(p) || reference(`${p}/`)]);
  });

  it('`**` with dot matches every path, dotted ones included; without dot it leaves dotted segments out', () => {
    const dotted = compileGlob('**', { dot: true });
    for (const p of ['a', '.env', 'a/.b/c', 'a/b/c.ts']) expect(dotted.matches(p)).toBe(true);
    const plain = compileGlob('**');
    expect(plain.matches('a/b/c.ts')).toBe(true);
    expect(plain.matches('a/.b/c')).toBe(false);
  });

  it('without ignore nothing is ignored', () => {
    expect(compileGlob('**').ignored('anything')).toBe(false);
  });
});

describe('compileGlob: errors', () => {
  it.each([
    ['', 'EBADPATTERN'],
    ['/abs/*', 'EPATHESCAPE'],
    ['../*', 'EPATHESCAPE'],
    ['a/../../*', 'EPATHESCAPE'],
    ['a/**/../b', 'EPATHESCAPE'],
  ])('%j → %s', (pattern, code) => {
    expect(() => compileGlob(pattern)).toThrow(expect.objectContaining({ code, op: 'glob' }));
  });

  it('a non-string pattern is EBADPATTERN', () => {
    expect(() => compileGlob(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'EBADPATTERN' }));
  });

  it('errors carry a hint', () => {
    try {
      compileGlob('../x');
      expect.unreachable();
    } catch (err) {
      expect((err as { hint?: string }).hint).toMatch(/cwd/);
    }
  });
});

describe('compileFileFilter', () => {
  it.each<[string, string, boolean]>([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'deep/dir/a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/*.ts', 'other/src/a.ts', false],
    ['./src/*.ts', 'src/a.ts', true],
    ['**/test/*.ts', 'a/test/x.ts', true],
    ['*.{md,txt}', 'x/y.txt', true],
    ['[!a]*.ts', 'b.ts', true],
    ['[!a]*.ts', 'a.ts', false],
    ['*', '.env', true],
  ])('%s on %j: %s', (pattern, path, expected) => {
    expect(compileFileFilter(pattern)(path)).toBe(expected);
  });

  it('dot false leaves dotfiles out', () => {
    expect(compileFileFilter('*', false)('.env')).toBe(false);
  });
});
