/**
 * The container's native walk (one busybox `find` for the whole tree) on
 * what the conformance fixtures cannot seed: names with a newline, symlinks
 * inside and outside the workspace, a FIFO, temporary names, an unreadable
 * directory (as a non-root container user). Every stat is checked against
 * `fs.stat` of the same path, and the entry sets against a recursive `list`
 * (one helper request per directory, no `find`). Real engine, real busybox.
 */

import type { FileEntry, FileStat, WalkOptions } from '@ctxfs/core';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, seedWorkspace, sh, startTestContainer } from './docker-fixture.ts';

const available = await dockerAvailable();

/** Containers this file started; removed by id, so parallel test files keep theirs. */
const started: Docker.Container[] = [];
let container: Docker.Container;
let counter = 0;

const NL_FILE = 'new\nline.txt';
const NL_DIR = 'nl\ndir';

/** Files seeded by archive: names with spaces, quotes, a leading dash, unicode, a '|' and a newline. */
const FILES: Readonly<Record<string, string>> = {
  'a.txt': 'alpha\n',
  'sub/b.txt': 'bravo!',
  'sub/deeper/c.txt': 'c',
  'sub/deeper/deepest/d.txt': 'dd',
  'name with spaces/x y.txt': 'xy',
  'q\'uote "dq" $HOME `echo`.txt': 'quotes',
  '-dash/-n': 'dash',
  'é 😀 中文/ü.txt': 'unicode',
  'p|ipe|.txt': 'pipe',
  [NL_FILE]: 'newline',
  [`${NL_DIR}/inner.txt`]: 'inner',
  [`${NL_DIR}/plain/deep.txt`]: 'deep',
  'skip/me.txt': 'skipped',
  'x*y': 'star',
  xzy: 'no star',
};

/**
 * Symlinks (inside to a file and a directory, outside to a file and a
 * directory, dangling), a FIFO, a temporary write left behind (file and
 * directory) and a file with a known whole-second mtime.
 */
const EXTRAS = [
  'ln -s a.txt link-in',
  'ln -s sub link-dir',
  'ln -s /etc/passwd link-out',
  'ln -s /etc link-out-dir',
  'ln -s missing link-dangling',
  'mkfifo fifo',
  'printf t > .ctxfs-0123456789abcdef01234567-w1.tmp',
  'mkdir .ctxfs-0123456789abcdef01234567-d.tmp && printf t > .ctxfs-0123456789abcdef01234567-d.tmp/hidden',
  "touch -d '2021-03-04 05:06:07' a.txt",
].join(' && ');

async function workspace(files: Readonly<Record<string, string>> = FILES, extras = EXTRAS): Promise<ContainerFilesystem> {
  const dir = `w${++counter}`;
  await seedWorkspace(container, '/work', dir, files);
  if (extras !== '') {
    const res = await sh(container, `cd /work/${dir} && ${extras}`);
    expect(res.code).toBe(0);
  }
  return ContainerFilesystem.open({ container: container.id, workdir: `/work/${dir}`, createWorkdir: false });
}

async function walked(fs: ContainerFilesystem, path = '', options: WalkOptions = {}): Promise<FileEntry[]> {
  const out: FileEntry[] = [];
  const seen = new Set<string>();
  const prefix = path === '' ? '' : `${path}/`;
  for await (const batch of fs.walk(path, options)) {
    for (const entry of batch) {
      expect(seen.has(entry.path), `${entry.path} twice`).toBe(false);
      expect(entry.path.startsWith(prefix)).toBe(true);
      expect(entry.name).toBe(entry.path.slice(entry.path.lastIndexOf('/') + 1));
      const parent = entry.path.slice(0, Math.max(0, entry.path.lastIndexOf('/')));
      if (parent !== path) expect(seen.has(parent), `${entry.path} before its parent`).toBe(true);
      expect(entry.stat !== undefined).toBe(options.stat === true);
      seen.add(entry.path);
      out.push(entry);
    }
  }
  return out;
}

/**
 * Reference: recursive list without stat (the helper's shell glob, one
 * request per directory). A directory whose name holds a newline cannot be
 * addressed (paths refuse control characters), so it is not descended into;
 * tests state what lies below such directories themselves.
 */
async function listed(fs: ContainerFilesystem, dir = '', options: WalkOptions = {}, depth = 1): Promise<FileEntry[]> {
  const out: FileEntry[] = [];
  if (depth > (options.maxDepth ?? Number.POSITIVE_INFINITY)) return out;
  for (const entry of await fs.list(dir)) {
    if (options.exclude?.includes(entry.name)) continue;
    out.push(entry);
    if (
      entry.kind === 'directory' &&
      !entry.path.includes('\n') &&
      depth < (options.maxDepth ?? Number.POSITIVE_INFINITY) &&
      (options.enter?.(entry) ?? true)
    ) {
      out.push(...(await listed(fs, entry.path, options, depth + 1)));
    }
  }
  return out;
}

const kinds = (entries: readonly FileEntry[]): string[] => entries.map((e) => `${JSON.stringify(e.path)} ${e.kind}`).sort();

/** Whether `path` lies below a directory whose name holds a newline (which `listed` cannot enter). */
const belowNewline = (path: string): boolean => path.slice(0, Math.max(0, path.lastIndexOf('/'))).includes('\n');

/** What the seeded fixture has below {@link NL_DIR}, as `kinds` lines. */
const NL_SUBTREE = [`${NL_DIR}/inner.txt file`, `${NL_DIR}/plain directory`, `${NL_DIR}/plain/deep.txt file`].map((l) => {
  const at = l.lastIndexOf(' ');
  return `${JSON.stringify(l.slice(0, at))}${l.slice(at)}`;
});

/** The walk's lines, checked against the reference: below newline directories against `subtree`, elsewhere against `listed`. */
function expectLikeListed(got: readonly FileEntry[], reference: readonly FileEntry[], subtree: readonly string[]): void {
  expect(kinds(got.filter((e) => !belowNewline(e.path)))).toEqual(kinds(reference));
  expect(kinds(got.filter((e) => belowNewline(e.path)))).toEqual([...subtree].sort());
}

function plainStat(st: FileStat | undefined): Record<string, unknown> | undefined {
  if (st === undefined) return undefined;
  return { path: st.path, kind: st.kind, size: st.size, mode: st.mode, mtime: st.mtime.getTime(), ctime: st.ctime?.getTime() };
}

describe.runIf(available)('container native walk', () => {
  beforeAll(async () => {
    container = await startTestContainer();
    started.push(container);
  });
  afterAll(async () => {
    await Promise.all(started.map((c) => c.remove({ force: true }).catch(() => {})));
  });

  it('yields every entry list reports, odd names included, with and without stat', async () => {
    const fs = await workspace();
    const reference = await listed(fs);
    expect(kinds(reference)).toContain(`${JSON.stringify(NL_FILE)} file`);
    expect(kinds(reference)).toContain(`${JSON.stringify(NL_DIR)} directory`);
    expect(kinds(reference)).toContain('"fifo" other');
    expect(kinds(reference)).toContain('"link-out" symlink');
    expectLikeListed(await walked(fs), reference, NL_SUBTREE);
    expectLikeListed(await walked(fs, '', { stat: true }), reference, NL_SUBTREE);
    const paths = (await walked(fs)).map((e) => e.path);
    for (const p of Object.keys(FILES)) expect(paths).toContain(p);
    for (const p of paths) expect(p.includes('.ctxfs-'), p).toBe(false);
    // Symlinks are reported, never entered, inside or outside.
    expect(paths.filter((p) => p.startsWith('link-')).sort()).toEqual(['link-dangling', 'link-dir', 'link-in', 'link-out', 'link-out-dir']);
    await fs.close();
  });

  it("every stat equals fs.stat of the same path (kind, size, mode, mtime and ctime to the ms) and list's", async () => {
    const fs = await workspace();
    const entries = await walked(fs, '', { stat: true });
    let compared = 0;
    for (const entry of entries) {
      if (entry.path.includes('\n') || entry.path === 'link-out' || entry.path === 'link-out-dir' || entry.path === 'link-dangling') continue;
      expect(plainStat(entry.stat), entry.path).toEqual(plainStat(await fs.stat(entry.path)));
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
    // And what list(dir, { stat: true }) reports, entry for entry, odd names included.
    const dirs = new Set(['', ...entries.filter((e) => e.kind === 'directory' && !e.path.includes('\n')).map((e) => e.path)]);
    const fromList = new Map<string, FileStat | undefined>();
    for (const dir of dirs) for (const e of await fs.list(dir, { stat: true })) fromList.set(e.path, e.stat);
    const listable = entries.filter((e) => !belowNewline(e.path));
    expect(fromList.size).toBe(listable.length);
    for (const entry of listable) expect(plainStat(entry.stat), JSON.stringify(entry.path)).toEqual(plainStat(fromList.get(entry.path)));
    const byPath = new Map(entries.map((e) => [e.path, e.stat as FileStat]));
    expect(byPath.get('a.txt')?.mtime.toISOString()).toBe('2021-03-04T05:06:07.000Z');
    expect(byPath.get('a.txt')?.size).toBe(6);
    expect(byPath.get('p|ipe|.txt')?.size).toBe(4);
    expect(byPath.get('é 😀 中文/ü.txt')?.size).toBe(7);
    expect(byPath.get('fifo')).toMatchObject({ kind: 'other', size: 0 });
    expect(byPath.get('sub')).toMatchObject({ kind: 'directory', size: 0 });
    expect(byPath.get(NL_FILE)).toMatchObject({ kind: 'file', size: 7, mode: 0o644 });
    expect(byPath.get(NL_DIR)).toMatchObject({ kind: 'directory', size: 0 });
    expect(byPath.get(`${NL_DIR}/plain/deep.txt`)).toMatchObject({ kind: 'file', size: 4 });
    await fs.close();
  });

  it('a symlink inside reports its target; one leading outside or dangling reports the link itself, never the target', async () => {
    const fs = await workspace();
    const byPath = new Map((await walked(fs, '', { stat: true })).map((e) => [e.path, e]));
    expect(byPath.get('link-in')?.kind).toBe('symlink');
    expect(plainStat(byPath.get('link-in')?.stat)).toEqual({ ...plainStat(await fs.stat('a.txt')), path: 'link-in' });
    expect(byPath.get('link-dir')?.stat).toMatchObject({ kind: 'directory', size: 0 });
    // The link's own metadata: its size is the target string's length, not /etc/passwd's.
    expect(byPath.get('link-out')?.stat).toMatchObject({ path: 'link-out', kind: 'symlink', size: '/etc/passwd'.length, mode: 0o777 });
    expect(byPath.get('link-out-dir')?.stat).toMatchObject({ kind: 'symlink', size: '/etc'.length });
    expect(byPath.get('link-dangling')?.stat).toMatchObject({ kind: 'symlink', size: 'missing'.length });
    await expect(fs.stat('link-out')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    // A walk from a symlinked directory inside the root walks its target under the link's path.
    expect(kinds(await walked(fs, 'link-dir'))).toEqual(kinds(await walked(fs, 'sub')).map((l) => l.replace('"sub/', '"link-dir/')));
    await expect(walked(fs, 'link-out-dir')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await fs.close();
  });

  it('excluded names are matched literally and neither reported nor entered, newline names included', async () => {
    const fs = await workspace();
    for (const stat of [false, true]) {
      const exclude = ['sub', 'x*y', '-n', NL_DIR, 'fifo', 'link-out', '*', '.', '..', 'a/b', ''];
      const got = await walked(fs, '', { exclude, stat });
      expectLikeListed(got, await listed(fs, '', { exclude }), []);
      const paths = got.map((e) => e.path);
      for (const p of ['sub', 'sub/b.txt', 'x*y', '-dash/-n', NL_DIR, `${NL_DIR}/inner.txt`, 'fifo', 'link-out']) expect(paths).not.toContain(p);
      for (const p of ['xzy', '-dash', 'a.txt', NL_FILE, 'link-in']) expect(paths).toContain(p);
      const odd = await walked(fs, '', { exclude: [NL_FILE, 'inner.txt', 'plain'], stat });
      expectLikeListed(odd, await listed(fs, '', { exclude: [NL_FILE, 'inner.txt', 'plain'] }), []);
    }
    await fs.close();
  });

  it('maxDepth: each depth gives the entries up to it; beyond any tree is the whole tree', async () => {
    const fs = await workspace();
    const all = await listed(fs);
    for (const maxDepth of [1, 2, 3, 4]) {
      const within = (path: string) => path.split('/').length <= maxDepth;
      const want = all.filter((e) => within(e.path));
      const subtree = NL_SUBTREE.filter((l) => within(JSON.parse(l.slice(0, l.lastIndexOf(' '))) as string));
      expectLikeListed(await walked(fs, '', { maxDepth }), want, subtree);
      expectLikeListed(await walked(fs, '', { maxDepth, stat: true }), want, subtree);
    }
    expect(kinds(await walked(fs, 'sub', { maxDepth: 1 }))).toEqual(kinds(await fs.list('sub')));
    expectLikeListed(await walked(fs, '', { maxDepth: 1e12 }), all, NL_SUBTREE);
    await fs.close();
  });

  it('enter: false yields the directory and nothing below it; asked only about directories it could descend into', async () => {
    const fs = await workspace();
    for (const stat of [false, true]) {
      const asked: FileEntry[] = [];
      const enter = (entry: FileEntry) => {
        asked.push(entry);
        return entry.name !== 'deeper' && entry.path !== NL_DIR && entry.name !== 'skip';
      };
      const got = await walked(fs, '', { enter, stat });
      const paths = got.map((e) => e.path);
      for (const p of ['sub/deeper', NL_DIR, 'skip']) expect(paths).toContain(p);
      expect(paths.filter((p) => p.startsWith('sub/deeper/') || p.startsWith(`${NL_DIR}/`) || p.startsWith('skip/'))).toEqual([]);
      expect(asked.every((e) => e.kind === 'directory' && (e.stat !== undefined) === stat)).toBe(true);
      expect(new Set(asked.map((e) => e.path)).size).toBe(asked.length);
      asked.length = 0;
      expectLikeListed(got, await listed(fs, '', { enter }), []);
      asked.length = 0;
      // With maxDepth, directories at the last level are not asked about.
      await walked(fs, '', { enter, stat, maxDepth: 2 });
      expect(asked.filter((e) => e.path.split('/').length >= 2)).toEqual([]);
    }
    await fs.close();
  });

  it('a larger tree with newline names spread through it parses whole, parents first', async () => {
    const lines: string[] = [];
    for (let d = 0; d < 40; d++) {
      lines.push(`mkdir -p "d${d}/s" "d${d}/n\${NL}${d}/in"`);
      lines.push(
        `for f in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do printf %s "$f" > "d${d}/f$f-long-name-to-fill-the-argument-buffer-of-find.txt"; done`,
      );
      lines.push(`printf x > "d${d}/x$NL.txt" && printf yy > "d${d}/n\${NL}${d}/in/y$NL$NL" && printf z > "d${d}/s/z|$NL|.txt"`);
    }
    const fs = await workspace({}, `NL='\n' && ${lines.join(' && ')}`);
    const entries = await walked(fs, '', { stat: true });
    // Per directory: itself, s, n<LF>d, n<LF>d/in; 20 files, x<LF>.txt, the file in s, the file in n<LF>d/in.
    expect(entries.length).toBe(40 * (4 + 23));
    const subtree = Array.from({ length: 40 }, (_, d) => [`d${d}/n\n${d}/in directory`, `d${d}/n\n${d}/in/y\n\n file`]).flat();
    expectLikeListed(
      entries,
      await listed(fs),
      subtree.map((l) => `${JSON.stringify(l.slice(0, l.lastIndexOf(' ')))}${l.slice(l.lastIndexOf(' '))}`),
    );
    const byPath = new Map(entries.map((e) => [e.path, e.stat as FileStat]));
    for (let d = 0; d < 40; d += 13) {
      expect(byPath.get(`d${d}/x\n.txt`)).toMatchObject({ kind: 'file', size: 1 });
      expect(byPath.get(`d${d}/n\n${d}/in/y\n\n`)).toMatchObject({ kind: 'file', size: 2 });
      expect(byPath.get(`d${d}/s/z|\n|.txt`)).toMatchObject({ kind: 'file', size: 1 });
      expect(byPath.get(`d${d}/f7-long-name-to-fill-the-argument-buffer-of-find.txt`)).toMatchObject({ kind: 'file', size: 1 });
    }
    await fs.close();
  });

  it('an unreadable directory is passed over, not a failed walk (non-root container user)', async () => {
    const c = await startTestContainer({ User: '1000:1000' });
    started.push(c);
    const res = await sh(
      c,
      'mkdir -p /tmp/w/locked/inner /tmp/w/open && printf x > /tmp/w/locked/inner/f && printf y > /tmp/w/open/g && chmod 000 /tmp/w/locked',
    );
    expect(res.code).toBe(0);
    const fs = await ContainerFilesystem.open({ container: c.id, workdir: '/tmp/w', createWorkdir: false });
    expect(kinds(await listed(fs))).toEqual(['"locked" directory', '"open" directory', '"open/g" file']);
    for (const stat of [false, true]) {
      expect(kinds(await walked(fs, '', { stat }))).toEqual(['"locked" directory', '"open" directory', '"open/g" file']);
      // Walked itself, it is as empty as list finds it.
      expect(await fs.list('locked')).toEqual([]);
      expect(await walked(fs, 'locked', { stat })).toEqual([]);
    }
    await fs.close();
  });
});
