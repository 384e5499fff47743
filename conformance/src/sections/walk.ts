/**
 * walk: every entry below a directory in batches, parents before their
 * children. Sibling order and batch boundaries are not promised (a native
 * walk streams in disk order), so results are compared as sorted sets and
 * only the parent-before-child order is checked.
 *
 * The oracle is `list`: a walk must equal the recursive union of
 * `list(dir, { stat })` with the same `maxDepth`, `exclude` and `enter`
 * applied, entry for entry and stat for stat. A second, independent oracle
 * is the seeded tree itself.
 *
 * Symlinks are not covered here: a fixture cannot seed them yet.
 *
 * @module
 */

import { type FileEntry, type FileStat, type Filesystem, isFsError, type WalkOptions } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, text } from '../context.ts';
import { HOSTILE_PATHS } from '../hostile-paths.ts';

/** Nested directories, dotfiles, names with spaces, unicode, shell and glob characters, a leading dash. */
const FILES: Readonly<Record<string, string | Uint8Array>> = {
  'a.txt': 'alpha\n',
  '.hidden': 'hidden',
  'bin.dat': new Uint8Array([0, 1, 2, 255, 254]),
  'dir/b.txt': 'bravo bravo\n',
  'dir/.dot/inside.txt': 'inside',
  'dir/dir/twin.txt': 'twin',
  'dir/sub/deep/leaf.md': '# leaf\n',
  'dir/sub/deep/deeper/deepest/bottom.txt': 'bottom',
  'name with spaces/é 😀 中文.txt': 'unicode',
  'name with spaces/nested dir/x y.txt': 'x y',
  '-name/q\'uote "dq" $HOME `echo`.txt': 'shell',
  '-name/[ab]*?.txt': 'glob characters',
  'node_modules/pkg/index.js': 'module.exports = 1;\n',
  'src/main.ts': 'main',
  'src/node_modules/x.js': 'x',
  'src/.git/HEAD': 'ref: refs/heads/main\n',
  'src/.git/objects/ab/cdef': 'object',
  '.git/config': '[core]\n',
};
const DIRS: readonly string[] = ['empty', 'dir/sub/empty-inner', 'nested/empty/deeper', 'src/.git/refs'];

const parentOf = (p: string): string => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const nameOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/** The seeded tree as path → kind, built from the fixture alone (not from the backend). */
function seededTree(): Map<string, 'file' | 'directory'> {
  const tree = new Map<string, 'file' | 'directory'>();
  const addDirs = (p: string) => {
    for (let d = p; d !== ''; d = parentOf(d)) tree.set(d, 'directory');
  };
  for (const p of Object.keys(FILES)) {
    tree.set(p, 'file');
    addDirs(parentOf(p));
  }
  for (const d of DIRS) addDirs(d);
  return tree;
}

/** `path kind` lines of the seeded tree below `start`, sorted. */
function seededBelow(start: string): string[] {
  const prefix = start === '' ? '' : `${start}/`;
  return [...seededTree()]
    .filter(([p]) => p.startsWith(prefix))
    .map(([p, kind]) => `${p} ${kind}`)
    .sort();
}

/**
 * Runs a walk to the end and checks what holds for every walk: batches are
 * arrays, no entry twice, `name` is the last segment of `path`, every entry
 * lies below the start, a parent comes before its children, and `stat` is
 * present exactly when asked for.
 */
async function walked(fs: Filesystem, path: string | undefined, options?: WalkOptions): Promise<FileEntry[]> {
  const start = (await fs.stat(path ?? '')).path;
  const prefix = start === '' ? '' : `${start}/`;
  const out: FileEntry[] = [];
  const seen = new Map<string, FileEntry>();
  for await (const batch of fs.walk(path, options)) {
    expect(Array.isArray(batch)).toBe(true);
    for (const entry of batch) {
      expect(seen.has(entry.path), `${entry.path} yielded twice`).toBe(false);
      expect(entry.path.startsWith(prefix) && entry.path !== start, `${entry.path} is not below ${JSON.stringify(start)}`).toBe(true);
      expect(entry.name).toBe(nameOf(entry.path));
      const parent = parentOf(entry.path);
      if (parent !== start) expect(seen.get(parent)?.kind, `${entry.path} came before its parent`).toBe('directory');
      if (options?.stat === true) {
        expect(entry.stat, `${entry.path} has no stat`).toBeDefined();
        expect({ path: entry.stat?.path, kind: entry.stat?.kind }).toEqual({ path: entry.path, kind: entry.kind });
      } else {
        expect(entry.stat).toBeUndefined();
      }
      seen.set(entry.path, entry);
      out.push(entry);
    }
  }
  return out;
}

/** The reference walk: recursive `list` with the same options applied. */
async function listed(fs: Filesystem, path: string | undefined, options: WalkOptions = {}): Promise<FileEntry[]> {
  const start = (await fs.stat(path ?? '')).path;
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const exclude = new Set(options.exclude ?? []);
  const out: FileEntry[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    if (depth > maxDepth) return;
    for (const entry of await fs.list(dir, { stat: options.stat === true })) {
      if (exclude.has(entry.name)) continue;
      out.push(entry);
      if (entry.kind === 'directory' && depth < maxDepth && (options.enter?.(entry) ?? true)) await visit(entry.path, depth + 1);
    }
  };
  await visit(start, 1);
  return out;
}

interface Comparable {
  path: string;
  name: string;
  kind: string;
  stat?: { path: string; kind: string; size: number; mtime: number; mode: number | undefined };
}

function comparable(entry: FileEntry): Comparable {
  const out: Comparable = { path: entry.path, name: entry.name, kind: entry.kind };
  const st: FileStat | undefined = entry.stat;
  if (st !== undefined) out.stat = { path: st.path, kind: st.kind, size: st.size, mtime: st.mtime.getTime(), mode: st.mode };
  return out;
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Asserts two entry sets are equal (paths, names, kinds, and stats where present; ctime only where both know it). */
function expectSameEntries(actual: readonly FileEntry[], expected: readonly FileEntry[]): void {
  expect(actual.map(comparable).sort(byPath)).toEqual(expected.map(comparable).sort(byPath));
  const reference = new Map(expected.map((e) => [e.path, e]));
  for (const entry of actual) {
    const a = entry.stat?.ctime;
    const b = reference.get(entry.path)?.stat?.ctime;
    if (a !== undefined && b !== undefined) expect(a.getTime(), `ctime of ${entry.path}`).toBe(b.getTime());
  }
}

/** The path of a `path kind` line (paths may hold spaces, kinds do not). */
const pathOfLine = (line: string): string => line.slice(0, line.lastIndexOf(' '));

/** `path kind` lines, sorted. */
const lines = (entries: readonly FileEntry[]): string[] => entries.map((e) => `${e.path} ${e.kind}`).sort();

/** The error a walk fails with, or undefined. */
async function walkError(fs: Filesystem, path: unknown, options?: WalkOptions): Promise<unknown> {
  try {
    await collect(fs.walk(path as string, options));
  } catch (err) {
    return err;
  }
  return undefined;
}

export function walkSection(ctx: SuiteContext): void {
  const tree = () => ctx.make({ files: FILES, dirs: DIRS });

  describe('what it yields', () => {
    it('every entry below the root, not the root itself, with its kind', async () => {
      const fs = await tree();
      const expected = seededBelow('');
      expect(lines(await walked(fs, undefined))).toEqual(expected);
      expect(lines(await walked(fs, ''))).toEqual(expected);
    });

    it('from a subdirectory: workspace paths of everything below it, not the directory itself', async () => {
      const fs = await tree();
      expect(lines(await walked(fs, 'dir'))).toEqual([
        'dir/.dot directory',
        'dir/.dot/inside.txt file',
        'dir/b.txt file',
        'dir/dir directory',
        'dir/dir/twin.txt file',
        'dir/sub directory',
        'dir/sub/deep directory',
        'dir/sub/deep/deeper directory',
        'dir/sub/deep/deeper/deepest directory',
        'dir/sub/deep/deeper/deepest/bottom.txt file',
        'dir/sub/deep/leaf.md file',
        'dir/sub/empty-inner directory',
      ]);
      expect(lines(await walked(fs, 'dir/sub/deep/deeper'))).toEqual(seededBelow('dir/sub/deep/deeper'));
    });

    it.each(['', 'dir/sub', 'name with spaces', '-name'])('equals the recursive union of list from %j, without and with stat', async (start) => {
      const fs = await tree();
      expectSameEntries(await walked(fs, start), await listed(fs, start));
      expectSameEntries(await walked(fs, start, { stat: true }), await listed(fs, start, { stat: true }));
    });

    it('with stat, each entry carries exactly what list(dir, { stat: true }) reports for it', async () => {
      const fs = await tree();
      const entries = await walked(fs, '', { stat: true });
      expect(entries.length).toBe(seededTree().size);
      const listings = new Map<string, FileEntry[]>();
      for (const entry of entries) {
        const dir = parentOf(entry.path);
        const listing = listings.get(dir) ?? (await fs.list(dir, { stat: true }));
        listings.set(dir, listing);
        const fromList = listing.find((e) => e.name === entry.name);
        expect(fromList, entry.path).toBeDefined();
        expectSameEntries([entry], [fromList as FileEntry]);
      }
      const sizes = Object.fromEntries(entries.filter((e) => e.kind === 'file').map((e) => [e.path, e.stat?.size]));
      expect(sizes['a.txt']).toBe(6);
      expect(sizes['bin.dat']).toBe(5);
      expect(sizes['name with spaces/é 😀 中文.txt']).toBe(7);
    });

    it('root and directory spellings walk the same tree', async () => {
      const fs = await tree();
      const root = lines(await walked(fs, ''));
      for (const p of ['.', './', './/', 'dir/..']) expect(lines(await walked(fs, p)), JSON.stringify(p)).toEqual(root);
      const dir = lines(await walked(fs, 'dir'));
      for (const p of ['dir/', './dir', 'dir//', 'dir/./', 'dir/sub/..', 'src/../dir']) expect(lines(await walked(fs, p)), JSON.stringify(p)).toEqual(dir);
    });

    it('an empty directory yields nothing; empty directories below the start are entries', async () => {
      const fs = await tree();
      expect(await collect(fs.walk('empty')).then((batches) => batches.flat())).toEqual([]);
      expect(await walked(fs, 'nested/empty/deeper')).toEqual([]);
      expect(lines(await walked(fs, 'nested'))).toEqual(['nested/empty directory', 'nested/empty/deeper directory']);
    });

    it('dotfiles and dot directories are included', async () => {
      const fs = await tree();
      const paths = (await walked(fs, '')).map((e) => e.path);
      for (const p of ['.hidden', '.git', '.git/config', 'dir/.dot/inside.txt', 'src/.git/HEAD', 'src/.git/refs', 'src/.git/objects/ab/cdef']) {
        expect(paths).toContain(p);
      }
    });

    it('names with spaces, unicode, quotes, shell and glob characters, and a leading dash come back verbatim and usable', async () => {
      const fs = await tree();
      expect(lines(await walked(fs, '-name'))).toEqual(['-name/[ab]*?.txt file', '-name/q\'uote "dq" $HOME `echo`.txt file']);
      expect(lines(await walked(fs, 'name with spaces'))).toEqual([
        'name with spaces/nested dir directory',
        'name with spaces/nested dir/x y.txt file',
        'name with spaces/é 😀 中文.txt file',
      ]);
      for (const entry of await walked(fs, '')) {
        if (entry.kind !== 'file') continue;
        const seeded = FILES[entry.path];
        const want = typeof seeded === 'string' ? seeded : Buffer.from(seeded as Uint8Array).toString('latin1');
        const got = await fs.readBytes(entry.path);
        expect(typeof seeded === 'string' ? text(got) : Buffer.from(got).toString('latin1'), entry.path).toBe(want);
      }
    });

    it('parents come before their children along a deep chain', async () => {
      const fs = await tree();
      const order = (await walked(fs, '')).map((e) => e.path);
      const chain = ['dir', 'dir/sub', 'dir/sub/deep', 'dir/sub/deep/deeper', 'dir/sub/deep/deeper/deepest', 'dir/sub/deep/deeper/deepest/bottom.txt'];
      const at = chain.map((p) => order.indexOf(p));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    });

    it('sees changes made since the last walk', async () => {
      const fs = await tree();
      await fs.write('dir/new.txt', 'new');
      await fs.mkdir('dir/fresh/inner', { parents: true });
      await fs.delete('dir/sub', { recursive: true });
      await fs.rename('dir/b.txt', 'dir/dir/b2.txt');
      const entries = await walked(fs, 'dir', { stat: true });
      expect(lines(entries)).toEqual([
        'dir/.dot directory',
        'dir/.dot/inside.txt file',
        'dir/dir directory',
        'dir/dir/b2.txt file',
        'dir/dir/twin.txt file',
        'dir/fresh directory',
        'dir/fresh/inner directory',
        'dir/new.txt file',
      ]);
      expectSameEntries(entries, await listed(fs, 'dir', { stat: true }));
    });

    it('a larger tree comes back whole, whatever the batching', async () => {
      const files: Record<string, string> = {};
      for (let d = 0; d < 8; d++) {
        for (let f = 0; f < 20; f++) files[`d${d}/f${f}.txt`] = `${d}:${f}`;
        files[`d${d}/s/t/leaf.txt`] = 'leaf';
      }
      const fs = await ctx.make({ files });
      const entries = await walked(fs, '', { stat: true });
      expect(entries.length).toBe(8 * (1 + 20 + 3));
      expectSameEntries(entries, await listed(fs, '', { stat: true }));
    });
  });

  describe('maxDepth', () => {
    it('1 equals list of the start directory', async () => {
      const fs = await tree();
      for (const start of ['', 'dir']) {
        expectSameEntries(await walked(fs, start, { maxDepth: 1 }), await fs.list(start));
        expectSameEntries(await walked(fs, start, { maxDepth: 1, stat: true }), await fs.list(start, { stat: true }));
      }
    });

    it('each depth yields exactly the entries up to it', async () => {
      const fs = await tree();
      const all = seededBelow('');
      for (let depth = 1; depth <= 7; depth++) {
        const got = lines(await walked(fs, '', { maxDepth: depth }));
        expect(got, `maxDepth ${depth}`).toEqual(all.filter((l) => pathOfLine(l).split('/').length <= depth));
      }
      for (const depth of [2, 3]) {
        expectSameEntries(await walked(fs, 'dir', { maxDepth: depth, stat: true }), await listed(fs, 'dir', { maxDepth: depth, stat: true }));
      }
    });

    it('0 yields nothing', async () => {
      const fs = await tree();
      expect((await collect(fs.walk('', { maxDepth: 0 }))).flat()).toEqual([]);
      expect((await collect(fs.walk('dir', { maxDepth: 0, stat: true }))).flat()).toEqual([]);
    });

    it('deeper than the tree is the whole tree', async () => {
      const fs = await tree();
      expect(lines(await walked(fs, '', { maxDepth: 1000 }))).toEqual(seededBelow(''));
    });

    it('negative or fractional is EINVAL', async () => {
      const fs = await tree();
      for (const maxDepth of [-1, 1.5, Number.NaN, -0.5, Number.NEGATIVE_INFINITY]) {
        for (const stat of [false, true]) {
          expect(await walkError(fs, 'dir', { maxDepth, stat }), String(maxDepth)).toMatchObject({ code: 'EINVAL', op: 'walk' });
        }
      }
    });
  });

  describe('exclude', () => {
    it('a file so named is left out at any depth, with and without stat', async () => {
      const fs = await tree();
      for (const stat of [false, true]) {
        const exclude = ['b.txt', 'HEAD', 'index.js', 'bottom.txt'];
        const entries = await walked(fs, '', { exclude, stat });
        expectSameEntries(entries, await listed(fs, '', { exclude, stat }));
        const paths = entries.map((e) => e.path);
        for (const p of ['dir/b.txt', 'src/.git/HEAD', 'node_modules/pkg/index.js', 'dir/sub/deep/deeper/deepest/bottom.txt']) expect(paths).not.toContain(p);
        expect(paths).toContain('dir/sub/deep/deeper/deepest');
        expect(paths).toContain('node_modules/pkg');
      }
    });

    it('a directory so named is neither yielded nor entered, at any depth', async () => {
      const fs = await tree();
      const exclude = ['node_modules', '.git'];
      const entries = await walked(fs, '', { exclude });
      expect(lines(entries)).toEqual(
        seededBelow('').filter(
          (l) =>
            !pathOfLine(l)
              .split('/')
              .some((segment) => exclude.includes(segment)),
        ),
      );
      expect(entries.map((e) => e.path)).toContain('src/main.ts');
      expectSameEntries(await walked(fs, '', { exclude, stat: true }), await listed(fs, '', { exclude, stat: true }));
    });

    it('names are matched exactly and literally, not as patterns, case or prefixes, with and without stat', async () => {
      const fs = await tree();
      for (const stat of [false, true]) {
        const all = seededBelow('');
        expect(
          lines(await walked(fs, '', { exclude: ['*.txt', '*', '?', 'A.TXT', 'node', 'node_modules/pkg', '.', '..', 'dir/b.txt', 'a.tx*'], stat })),
        ).toEqual(all);
        expect(lines(await walked(fs, '', { exclude: ['[ab]*?.txt'], stat }))).toEqual(all.filter((l) => !l.startsWith('-name/[ab]*?.txt ')));
        expect(lines(await walked(fs, '', { exclude: ['name with spaces', 'é 😀 中文.txt'], stat }))).toEqual(
          all.filter((l) => !l.startsWith('name with spaces')),
        );
        expect(lines(await walked(fs, '', { exclude: ['-name'], stat }))).toEqual(all.filter((l) => !l.startsWith('-name')));
        expect(lines(await walked(fs, '', { exclude: [], stat }))).toEqual(all);
      }
    });

    it("the start directory's own name does not exclude the start, with and without stat", async () => {
      const fs = await tree();
      for (const stat of [false, true]) {
        expect(lines(await walked(fs, 'dir', { exclude: ['dir'], stat }))).toEqual(seededBelow('dir').filter((l) => !l.startsWith('dir/dir')));
        expect(lines(await walked(fs, 'src/.git', { exclude: ['.git'], stat }))).toEqual(seededBelow('src/.git'));
      }
    });

    it('combines with maxDepth and stat', async () => {
      const fs = await tree();
      const options = { exclude: ['sub', 'node_modules', '.hidden'], maxDepth: 2, stat: true };
      expectSameEntries(await walked(fs, '', options), await listed(fs, '', options));
    });
  });

  describe('enter', () => {
    it('is asked once for each directory, after exclude, and never for files, with and without stat', async () => {
      const fs = await tree();
      for (const stat of [false, true]) {
        const asked: FileEntry[] = [];
        const exclude = ['node_modules'];
        await walked(fs, '', {
          stat,
          exclude,
          enter: (entry) => {
            asked.push(entry);
            return true;
          },
        });
        expect(asked.every((e) => e.kind === 'directory')).toBe(true);
        expect(asked.every((e) => e.name === nameOf(e.path))).toBe(true);
        const paths = asked.map((e) => e.path).sort();
        expect(new Set(paths).size).toBe(paths.length);
        expect(paths).toEqual(
          seededBelow('')
            .filter((l) => l.endsWith(' directory'))
            .map((l) => l.slice(0, -' directory'.length))
            .filter((p) => !p.split('/').includes('node_modules'))
            .sort(),
        );
      }
    });

    it('false yields the directory but nothing below it, with and without stat', async () => {
      const fs = await tree();
      for (const stat of [false, true]) {
        const enter = (entry: FileEntry) => entry.name !== 'sub' && entry.path !== 'src' && entry.name !== 'nested dir';
        const entries = await walked(fs, '', { enter, stat });
        const paths = entries.map((e) => e.path);
        for (const p of ['dir/sub', 'src', 'name with spaces/nested dir']) expect(paths).toContain(p);
        expect(paths.filter((p) => p.startsWith('dir/sub/') || p.startsWith('src/') || p.startsWith('name with spaces/nested dir/'))).toEqual([]);
        expectSameEntries(entries, await listed(fs, '', { enter, stat }));
      }
    });

    it('refusing every directory equals list of the start', async () => {
      const fs = await tree();
      expectSameEntries(await walked(fs, '', { enter: () => false }), await fs.list(''));
      expectSameEntries(await walked(fs, 'dir', { enter: () => false, stat: true }), await fs.list('dir', { stat: true }));
    });

    it('combines with exclude, maxDepth and stat', async () => {
      const fs = await tree();
      const options: WalkOptions = { exclude: ['.git'], maxDepth: 4, stat: true, enter: (entry) => !entry.path.startsWith('dir/sub/deep') };
      expectSameEntries(await walked(fs, '', options), await listed(fs, '', options));
    });
  });

  describe('errors', () => {
    it.each([
      ['a missing path is ENOENT', 'ENOENT', ['missing', 'dir/missing', 'missing/deeper', 'empty/x']],
      ['a file is ENOTDIR', 'ENOTDIR', ['a.txt', 'dir/b.txt', 'bin.dat', 'a.txt/']],
    ] as const)('%s, with or without stat', async (_title, code, paths) => {
      const fs = await tree();
      for (const p of paths) {
        for (const stat of [false, true]) {
          const err = await walkError(fs, p, { stat });
          expect(err, p).toMatchObject({ code, op: 'walk', path: p });
          expect(isFsError(err) && err.hint.length > 0).toBe(true);
        }
      }
    });

    it('below a file fails with the code list gives', async () => {
      const fs = await tree();
      for (const p of ['a.txt/x', 'dir/b.txt/y/z']) {
        const code = await codeOf(fs.list(p));
        expect(code).not.toBe('OK');
        expect(await walkError(fs, p), p).toMatchObject({ code, op: 'walk' });
      }
    });

    it('every refused hostile path fails with the code list gives, before any I/O', async () => {
      const fs = await tree();
      const rows = HOSTILE_PATHS.filter((r) => r.code !== undefined);
      expect(rows.length).toBeGreaterThan(100);
      for (const row of rows) {
        const err = await walkError(fs, row.path, { stat: true });
        expect(isFsError(err), JSON.stringify(row.path)).toBe(true);
        expect({ path: row.path, code: (err as { code?: string }).code, op: (err as { op?: string }).op }).toEqual({
          path: row.path,
          code: await codeOf(fs.list(row.path)),
          op: 'walk',
        });
      }
      expect(lines(await walked(fs, ''))).toEqual(seededBelow(''));
    });

    it('a non-string path is EINVAL', async () => {
      const fs = await tree();
      for (const value of [null, 42, {}, ['dir']]) expect(await walkError(fs, value), String(value)).toMatchObject({ code: 'EINVAL', op: 'walk' });
    });

    it('walk() returns at once; the error comes from the first next()', async () => {
      const fs = await tree();
      const it = fs.walk('missing');
      await expect(it.next()).rejects.toMatchObject({ code: 'ENOENT', op: 'walk' });
    });
  });

  describe('iteration', () => {
    it('stopping early releases the walk; the filesystem stays usable', async () => {
      const fs = await tree();
      for await (const batch of fs.walk('', { stat: true })) {
        expect(Array.isArray(batch)).toBe(true);
        break;
      }
      const it = fs.walk('dir');
      await it.next();
      await it.return?.();
      await fs.write('after.txt', 'after');
      await fs.delete('dir', { recursive: true });
      expect(lines(await walked(fs, ''))).toEqual([...seededBelow('').filter((l) => !l.startsWith('dir')), 'after.txt file'].sort());
    });

    it('a directory removed mid-walk is passed over, not an error, with and without stat', async () => {
      for (const stat of [false, true]) {
        const fs = await tree();
        const known = new Set(seededBelow('').map(pathOfLine));
        const seen: string[] = [];
        let removed = false;
        for await (const batch of fs.walk('', { stat })) {
          seen.push(...batch.map((e) => e.path));
          if (!removed) {
            removed = true;
            for (const p of ['dir', 'src', 'name with spaces', 'nested']) await fs.delete(p, { recursive: true });
          }
        }
        expect(new Set(seen).size).toBe(seen.length);
        for (const p of seen) expect(known.has(p), p).toBe(true);
        expect(seen).toContain('a.txt');
      }
    });

    it('concurrent walks agree', async () => {
      const fs = await tree();
      const results = await Promise.all([walked(fs, '', { stat: true }), walked(fs, '', { stat: true }), walked(fs, 'dir', { exclude: ['sub'] })]);
      expectSameEntries(results[0], results[1]);
      expectSameEntries(results[2], await listed(fs, 'dir', { exclude: ['sub'] }));
    });
  });
}
