import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compilePathPatterns, ignoredNames, isIgnored, parseGitignore } from '../src/gitignore.ts';

// Each entry is one pattern list (the lines of a `.gitignore`), chosen for
// the places where a glob library reads a pattern otherwise than git does.
const PATTERN_LISTS: readonly (readonly string[])[] = [
  // Escapes: `\!` and `\#` are literal, `\` before a plain character is that character.
  ['\\!imp.txt'],
  ['\\!important.md'],
  ['\\#hash'],
  ['#hash'],
  ['\\*star'],
  ['a\\tb'],
  ['foo\\'],
  ['a\\\\b'],
  // Classes: `!` and `^` negate; ranges, `]` first, reversed ranges, POSIX names.
  ['[!a].txt'],
  ['[^a].txt'],
  ['config/[!p]*.json'],
  ['[ab].txt'],
  ['[]a].txt'],
  ['[z-a].txt'],
  ['[a-c-e].txt'],
  ['[[:digit:]].txt'],
  ['[[:alpha:][:digit:]]?'],
  ['[[:space:]]x'],
  ['[[:bogus:]]'],
  ['[!]'],
  ['*['],
  ['?.txt'],
  // Braces, extended globs, parentheses and bars are literal in git.
  ['*.{pem,key}'],
  ['+(a|b).txt'],
  ['@(x).txt'],
  ['!(x).txt'],
  ['(x).txt'],
  ['x(1).txt'],
  ['x|y'],
  ['$x'],
  ['a.b'],
  // `**` only as a whole segment (and git's first-wildcard case), `*` stops at `/`.
  ['foo/**'],
  ['**/x/**'],
  ['**/foo'],
  ['a/**/b'],
  ['a/**b'],
  ['a**b'],
  ['/x**/y'],
  ['**\\/x'],
  ['**/b*c'],
  ['*a*a*b'],
  ['a/*.txt'],
  ['sub/*'],
  ['*'],
  ['**'],
  ['**/'],
  // Anchoring, directories, trailing spaces.
  ['/x'],
  ['x/'],
  ['dir/'],
  ['a/b/'],
  ['doc/frotz'],
  ['frotz/'],
  ['foo//'],
  ['/'],
  ['file\\ '],
  ['file '],
  ['Secret.txt'],
  ['.env*'],
  ['*.env'],
  // Negation re-includes, but not inside an ignored directory.
  ['*.log', '!keep.log'],
  ['logs/', '!logs/keep.txt'],
  ['/sub/*', '!/sub/a'],
  ['*', '!*/', '!*.txt'],
  ['secrets/', '*.pem', '!public.pem', '/build'],
];

const PATHS: readonly string[] = [
  'x',
  'a/x',
  'x/y',
  'dir',
  'dir/f',
  'a/dir/f',
  'foo',
  'a/b/foo',
  'foo/a',
  'foo/a/b',
  'a/b',
  'a/x/b',
  'a/x/y/b',
  'a/xb',
  'a/x/yb',
  'a/b/c',
  '.env',
  'a/.env',
  'prod.env',
  '.env.local',
  'a.log',
  'keep.log',
  'd/keep.log',
  'logs/keep.txt',
  'logs/a',
  'a.txt',
  'b.txt',
  'c.txt',
  'd.txt',
  'f.txt',
  ']',
  ']a',
  '].txt',
  'z.txt',
  '-.txt',
  '1.txt',
  'é.txt',
  'a/z.txt',
  'file ',
  'file',
  '!imp.txt',
  'imp.txt',
  '!important.md',
  'important.md',
  'id_rsa',
  '#hash',
  'hash',
  'k.pem',
  'k.key',
  '{pem,key}',
  '*.{pem,key}',
  'public.pem',
  'certs/public.pem',
  'secrets',
  'secrets/db.txt',
  'build',
  'src/build',
  'config/db.json',
  'config/public.json',
  'config/sub/db.json',
  'abc',
  'doc/frotz',
  'a/doc/frotz',
  'frotz/x',
  'secret.txt',
  'Secret.txt',
  '(x).txt',
  'x.txt',
  'y.txt',
  'x(1).txt',
  'x1.txt',
  '$x',
  'x|y',
  'a.b',
  'axb',
  'ab',
  'axxb',
  'a/xxb',
  '*star',
  'xstar',
  'atb',
  'a\\tb',
  'a\tb',
  'a\\b',
  'foo\\',
  ' x',
  '\tx',
  'xy',
  'xq/y',
  'xq/z/y',
  'b/bxc',
  'bxc',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac',
  'sub/a',
  'sub/b',
  'sub/a/b',
  'q/x/r',
  '[',
  'x[',
  'a9',
  'aé',
];

// git alone, without the user's or the system's configuration and ignore files.
const home = mkdtempSync(join(tmpdir(), 'ctxfs-git-home-'));
const gitEnv = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: home,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};
const hasGit = spawnSync('git', ['--version'], { env: gitEnv }).status === 0;

function gitInit(): string {
  const repo = mkdtempSync(join(home, 'repo-'));
  const init = spawnSync('git', ['init', '-q', repo], { env: gitEnv });
  if (init.status !== 0) throw new Error(init.stderr.toString());
  return repo;
}

/** Runs `git check-ignore` on `queries`; the ones it ignores. */
async function checkIgnore(repo: string, queries: readonly string[], config: readonly string[] = []): Promise<string[]> {
  const child = spawn('git', [...config.flatMap((c) => ['-c', c]), '-c', 'core.ignorecase=false', '-C', repo, 'check-ignore', '--no-index', '-z', '--stdin'], {
    env: gitEnv,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.end(queries.map((q) => `${q}\0`).join(''));
  const [status] = (await once(child, 'close')) as [number | null];
  // 0: some ignored, 1: none; anything else is git failing.
  if (status !== 0 && status !== 1) throw new Error(Buffer.concat(err).toString());
  return Buffer.concat(out)
    .toString()
    .split('\0')
    .filter((q) => q !== '');
}

/**
 * What git ignores of PATHS as files, one set per pattern list. Each list is
 * the `.gitignore` of a directory of its own (`l0/`, `l1/`, …), which git
 * reads for the paths below it as it reads a root `.gitignore` for the
 * root, so one call answers for every list. No path exists: git reads a
 * path it cannot find as a file.
 */
async function gitIgnoresFiles(): Promise<Set<string>[]> {
  const repo = gitInit();
  const queries: string[] = [];
  for (const [i, patterns] of PATTERN_LISTS.entries()) {
    mkdirSync(join(repo, `l${i}`));
    writeFileSync(join(repo, `l${i}`, '.gitignore'), `${patterns.join('\n')}\n`);
    for (const p of PATHS) queries.push(`l${i}/${p}`);
  }
  const sets = PATTERN_LISTS.map(() => new Set<string>());
  for (const q of await checkIgnore(repo, queries)) {
    const slash = q.indexOf('/');
    sets[Number(q.slice(1, slash))]?.add(q.slice(slash + 1));
  }
  return sets;
}

/**
 * What git ignores of PATHS as directories, one set per pattern list: every
 * path exists as a directory (git asks the disk), once, and each list is
 * the repository's excludes file (read as a root `.gitignore`) in a call of
 * its own — a tree per list would cost more to make and remove than the calls.
 */
async function gitIgnoresDirectories(): Promise<Set<string>[]> {
  const repo = gitInit();
  for (const p of PATHS) mkdirSync(join(repo, p), { recursive: true });
  return Promise.all(
    PATTERN_LISTS.map(async (patterns, i) => {
      const excludes = join(home, `excludes-${i}`);
      writeFileSync(excludes, `${patterns.join('\n')}\n`);
      return new Set(await checkIgnore(repo, PATHS, [`core.excludesFile=${excludes}`]));
    }),
  );
}

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe.skipIf(!hasGit)('gitignore patterns agree with git check-ignore', () => {
  it(`${PATTERN_LISTS.length} pattern lists × ${PATHS.length} paths, each as a file and as a directory`, async () => {
    expect(PATTERN_LISTS.length).toBeGreaterThanOrEqual(40);
    expect(PATHS.length).toBeGreaterThanOrEqual(60);
    const disagreements: string[] = [];
    let cells = 0;
    let ignoredByGit = 0;
    const [asFiles, asDirectories] = await Promise.all([gitIgnoresFiles(), gitIgnoresDirectories()]);
    for (const [i, patterns] of PATTERN_LISTS.entries()) {
      const ours = compilePathPatterns(patterns);
      for (const asDirectory of [false, true]) {
        const git = (asDirectory ? asDirectories : asFiles)[i] as Set<string>;
        ignoredByGit += git.size;
        for (const path of PATHS) {
          cells++;
          const mine = ours(path, asDirectory);
          const theirs = git.has(path);
          if (mine !== theirs)
            disagreements.push(`${JSON.stringify(patterns)} ${JSON.stringify(path)}${asDirectory ? ' (dir)' : ''}: git ${theirs}, ours ${mine}`);
        }
      }
    }
    expect(cells).toBeGreaterThanOrEqual(40 * 60 * 2);
    // git answered: a table where it ignores nothing (or everything) would prove nothing.
    expect(ignoredByGit).toBeGreaterThan(cells / 20);
    expect(ignoredByGit).toBeLessThan(cells / 2);
    expect(disagreements).toEqual([]);
  });
});

describe('gitignore matching', () => {
  it('a .gitignore below the root applies to its directory, as git reads it', () => {
    const rules = parseGitignore('*.log\n!keep.log\n/build\n', 'pkg');
    expect(isIgnored(rules, 'pkg/a/x.log', false)).toBe(true);
    expect(isIgnored(rules, 'pkg/keep.log', false)).toBe(false);
    expect(isIgnored(rules, 'pkg/build', true)).toBe(true);
    expect(isIgnored(rules, 'pkg/a/build', true)).toBe(false);
    expect(isIgnored(rules, 'x.log', false)).toBe(false);
  });

  it('the directory flag decides a directory-only rule for the path itself, not below it', () => {
    const m = compilePathPatterns(['secrets/']);
    expect(m('secrets')).toBe(false);
    expect(m('secrets', true)).toBe(true);
    expect(m('secrets/db.txt')).toBe(true);
  });

  it('stays linear on patterns that make a backtracking glob blow up', () => {
    const m = compilePathPatterns(['*a*a*a*a*a*a*a*a*b', '**/a/**/a/**/a/**/a/**/b']);
    const name = 'a'.repeat(5000);
    const deep = Array.from({ length: 400 }, () => 'a').join('/');
    const started = performance.now();
    expect(m(name)).toBe(false);
    expect(m(deep)).toBe(false);
    expect(m(`${deep}/b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('names a walk may skip: bare names that no later negation could bring back', () => {
    expect(ignoredNames(parseGitignore('dist\n*.log\n!keep.log\nbuild/\n/out\n\\#notes\n', ''))).toEqual(['dist', 'build', '#notes']);
    expect(ignoredNames(parseGitignore('dist\ncache\n!dist\n!src/cach?\n', ''))).toEqual([]);
    expect(ignoredNames(parseGitignore('dist\n!a/**/x\n', ''))).toEqual([]);
    expect(ignoredNames(parseGitignore('dist\n!dist/keep\n', ''))).toEqual(['dist']);
  });
});
