/**
 * The container's native walk (one busybox `find` for the whole tree) on
 * what the conformance fixtures cannot seed: names no path can address (a
 * newline, a tab, a backslash, DEL, bytes that are not UTF-8, U+FFFD),
 * symlinks inside and outside the workspace, a FIFO, temporary names, an
 * unreadable directory (as a non-root container user). Every stat is checked
 * against `fs.stat` of the same path, the entry sets against an explicit
 * list and a recursive `list` (one helper request per directory, no `find`).
 * Real engine, real busybox.
 */

import { type FileEntry, type FileStat, isAddressableName, type WalkOptions } from '@ctxfs/core';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, seedWorkspace, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();

/** Containers this file started; removed by id, so parallel test files keep theirs. */
const started: Docker.Container[] = [];
let container: Docker.Container;
let counter = 0;

/** Files seeded by archive: names with spaces, quotes, a leading dash, unicode and a '|'. */
const FILES: Readonly<Record<string, string>> = {
  'a.txt': 'alpha\n',
  'marked.txt': 'marker\n',
  'sub/b.txt': 'bravo!',
  'sub/deeper/c.txt': 'c',
  'sub/deeper/deepest/d.txt': 'dd',
  'name with spaces/x y.txt': 'xy',
  'q\'uote "dq" $HOME `echo`.txt': 'quotes',
  '-dash/-n': 'dash',
  'é 😀 中文/ü.txt': 'unicode',
  'p|ipe|.txt': 'pipe',
  'skip/me.txt': 'skipped',
  'x*y': 'star',
  xzy: 'no star',
};

/**
 * Files whose path holds a name no path can address, as printf formats (a
 * shell creates them: bytes that are not UTF-8 cannot travel in a JavaScript
 * string). Each holds `marker`, so a grep that lets one through shows it.
 * Directories among them hold further files and directories, all of which
 * must go with them.
 */
const UNADDRESSABLE = [
  'new\\nline.txt',
  'nl\\ndir/inner.txt',
  'nl\\ndir/plain/deep.txt',
  'tab\\tfile.txt',
  'tab\\tdir/in.txt',
  'tab\\tdir/sub/deep.txt',
  'back\\\\slash.txt',
  'back\\\\dir/in.txt',
  'del\\177',
  'bad\\377.txt',
  'bad\\377dir/in.txt',
  'bad\\377dir/sub/deep.txt',
  'fffd\\357\\277\\275.txt',
  'sub/deeper/hid\\tden/deep.txt',
  'sub/x\\ny.txt',
];

/** Shell commands creating {@link UNADDRESSABLE}, and a symlink and an empty directory with such names. */
const UNADDRESSABLE_SHELL = [
  ...UNADDRESSABLE.map((f) => {
    const slash = f.lastIndexOf('/');
    const mk = slash < 0 ? '' : `mkdir -p "$(printf '${f.slice(0, slash)}')" && `;
    return `${mk}printf marker > "$(printf '${f}')"`;
  }),
  `ln -s a.txt "$(printf 'link\\tin')"`,
  `mkdir "$(printf 'empty\\001dir')"`,
];

/**
 * Symlinks (inside to a file and a directory, outside to a file and a
 * directory, dangling), a FIFO, a temporary write left behind (file and
 * directory), a file with a known whole-second mtime, and the unaddressable
 * names.
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
  ...UNADDRESSABLE_SHELL,
].join(' && ');

/** Every entry of the default workspace, as `kinds` lines: the seeded files, their directories and the extras; nothing else. */
const EXPECTED: readonly string[] = (() => {
  const lines = new Set<string>();
  for (const file of Object.keys(FILES)) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) lines.add(`${JSON.stringify(parts.slice(0, i).join('/'))} directory`);
    lines.add(`${JSON.stringify(file)} file`);
  }
  for (const link of ['link-in', 'link-dir', 'link-out', 'link-out-dir', 'link-dangling']) lines.add(`${JSON.stringify(link)} symlink`);
  lines.add('"fifo" other');
  return [...lines].sort();
})();

async function workspace(files: Readonly<Record<string, string>> = FILES, extras = EXTRAS): Promise<ContainerFilesystem> {
  const dir = `w${++counter}`;
  await seedWorkspace(container, '/work', dir, files);
  if (extras !== '') {
    const res = await sh(container, `cd /work/${dir} && ${extras}`);
    expect(res.code).toBe(0);
  }
  return ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: `/work/${dir}`, createWorkdir: false });
}

/** Entries `find` in the container sees below the workspace: all of them, whatever their names. */
async function entriesOnDisk(fs: ContainerFilesystem): Promise<number> {
  const res = await sh(container, `cd '${fs.workdir}' && find . -mindepth 1 -print0 | tr -cd '\\000' | wc -c`);
  expect(res.code).toBe(0);
  return Number(res.stdout.trim());
}

/**
 * How many entries {@link UNADDRESSABLE_SHELL} makes that no listing may
 * show: every escape in the formats makes a name unaddressable, so each path
 * prefix with one in a segment counts.
 */
const UNADDRESSABLE_ENTRIES = (() => {
  const prefixes = new Set<string>();
  for (const f of UNADDRESSABLE) {
    const parts = f.split('/');
    for (let i = 1; i <= parts.length; i++) if (parts.slice(0, i).some((seg) => seg.includes('\\'))) prefixes.add(parts.slice(0, i).join('/'));
  }
  return prefixes.size + 2;
})();

/** Temporary entries EXTRAS leaves (a file, a directory and the file in it). */
const TEMP_ENTRIES = 3;

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

/** Reference: recursive list without stat (the helper's shell glob, one request per directory). */
async function listed(fs: ContainerFilesystem, dir = '', options: WalkOptions = {}, depth = 1): Promise<FileEntry[]> {
  const out: FileEntry[] = [];
  if (depth > (options.maxDepth ?? Number.POSITIVE_INFINITY)) return out;
  for (const entry of await fs.list(dir)) {
    if (options.exclude?.includes(entry.name)) continue;
    out.push(entry);
    if (entry.kind === 'directory' && depth < (options.maxDepth ?? Number.POSITIVE_INFINITY) && (options.enter?.(entry) ?? true)) {
      out.push(...(await listed(fs, entry.path, options, depth + 1)));
    }
  }
  return out;
}

const kinds = (entries: readonly { path: string; kind: string }[]): string[] => entries.map((e) => `${JSON.stringify(e.path)} ${e.kind}`).sort();

/** The path of a `kinds` line. */
const pathOf = (line: string): string => JSON.parse(line.slice(0, line.lastIndexOf(' '))) as string;

/** Lines of `kinds` whose path lies below `path`. */
const below = (lines: readonly string[], path: string): string[] => lines.filter((l) => pathOf(l).startsWith(`${path}/`));

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

  it('walk, list and glob report every addressable entry and leave out unaddressable names with what is below them', async () => {
    const fs = await workspace();
    // The fixture really holds them: find sees every entry.
    expect(await entriesOnDisk(fs)).toBe(EXPECTED.length + UNADDRESSABLE_ENTRIES + TEMP_ENTRIES);
    expect(kinds(await listed(fs))).toEqual(EXPECTED);
    expect(kinds(await walked(fs))).toEqual(EXPECTED);
    expect(kinds(await walked(fs, '', { stat: true }))).toEqual(EXPECTED);
    // From a subdirectory holding such names, too.
    expect(kinds(await walked(fs, 'sub', { stat: true }))).toEqual(below(EXPECTED, 'sub'));
    expect((await fs.list('sub/deeper')).map((e) => e.name).sort()).toEqual(['c.txt', 'deepest']);
    // Glob goes through the walk; grep through its own file list (FL): only
    // marked.txt holds the marker among the addressable files.
    const globbed: Array<{ path: string; kind: string }> = [];
    for await (const m of fs.glob('**', { dot: true })) globbed.push(m);
    expect(kinds(globbed)).toEqual(EXPECTED);
    const grepped: string[] = [];
    for await (const m of fs.grep('marker', { dot: true })) grepped.push(m.path);
    expect(grepped).toEqual(['marked.txt']);
    for (const line of EXPECTED) expect(pathOf(line).split('/').every(isAddressableName), line).toBe(true);
    await fs.close();
  });

  it('list with stats: the same entries as list, each stat equal to fs.stat', async () => {
    const fs = await workspace();
    for (const dir of ['', 'sub', 'sub/deeper']) {
      const plain = await fs.list(dir);
      const withStats = await fs.list(dir, { stat: true });
      expect(kinds(withStats)).toEqual(kinds(plain));
      expect(kinds(withStats)).toEqual(
        EXPECTED.filter((l) => {
          const p = pathOf(l);
          return p.slice(0, Math.max(0, p.lastIndexOf('/'))) === dir && p !== dir;
        }),
      );
      for (const e of withStats) {
        if (e.name.startsWith('link-out') || e.name === 'link-dangling') continue;
        expect(plainStat(e.stat), e.path).toEqual(plainStat(await fs.stat(e.path)));
      }
    }
    await fs.close();
  });

  it("every stat equals fs.stat of the same path (kind, size, mode, mtime and ctime to the ms) and list's", async () => {
    const fs = await workspace();
    const entries = await walked(fs, '', { stat: true });
    let compared = 0;
    for (const entry of entries) {
      if (entry.path === 'link-out' || entry.path === 'link-out-dir' || entry.path === 'link-dangling') continue;
      expect(plainStat(entry.stat), entry.path).toEqual(plainStat(await fs.stat(entry.path)));
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
    // And what list(dir, { stat: true }) reports, entry for entry.
    const dirs = new Set(['', ...entries.filter((e) => e.kind === 'directory').map((e) => e.path)]);
    const fromList = new Map<string, FileStat | undefined>();
    for (const dir of dirs) for (const e of await fs.list(dir, { stat: true })) fromList.set(e.path, e.stat);
    expect(fromList.size).toBe(entries.length);
    for (const entry of entries) expect(plainStat(entry.stat), JSON.stringify(entry.path)).toEqual(plainStat(fromList.get(entry.path)));
    const byPath = new Map(entries.map((e) => [e.path, e.stat as FileStat]));
    expect(byPath.get('a.txt')?.mtime.toISOString()).toBe('2021-03-04T05:06:07.000Z');
    expect(byPath.get('a.txt')?.size).toBe(6);
    expect(byPath.get('p|ipe|.txt')?.size).toBe(4);
    expect(byPath.get('é 😀 中文/ü.txt')?.size).toBe(7);
    expect(byPath.get('fifo')).toMatchObject({ kind: 'other', size: 0 });
    expect(byPath.get('sub')).toMatchObject({ kind: 'directory', size: 0 });
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
    // A stat of it alone is the same link's own stat, as on the host; reading through it is refused.
    expect(await fs.stat('link-out')).toMatchObject({ path: 'link-out', kind: 'symlink', size: '/etc/passwd'.length });
    await expect(fs.readBytes('link-out')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    // A walk from a symlinked directory inside the root walks its target under the link's path.
    expect(kinds(await walked(fs, 'link-dir'))).toEqual(kinds(await walked(fs, 'sub')).map((l) => l.replace('"sub/', '"link-dir/')));
    await expect(walked(fs, 'link-out-dir')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    await fs.close();
  });

  it('excluded names are matched literally and neither reported nor entered; unaddressable ones in the list do no harm', async () => {
    const fs = await workspace();
    for (const stat of [false, true]) {
      const exclude = ['sub', 'x*y', '-n', 'nl\ndir', 'tab\tdir', 'back\\dir', 'fifo', 'link-out', '*', '.', '..', 'a/b', ''];
      const got = await walked(fs, '', { exclude, stat });
      const paths = got.map((e) => e.path);
      for (const p of ['sub', 'sub/b.txt', 'x*y', '-dash/-n', 'fifo', 'link-out']) expect(paths).not.toContain(p);
      const gone = new Set(['x*y', '-dash/-n', 'fifo', 'link-out']);
      expect(kinds(got)).toEqual(EXPECTED.filter((l) => !gone.has(pathOf(l)) && pathOf(l) !== 'sub' && !pathOf(l).startsWith('sub/')));
      expect(kinds(got)).toEqual(kinds(await listed(fs, '', { exclude })));
      for (const p of ['xzy', '-dash', 'a.txt', 'link-in', 'link-out-dir']) expect(paths).toContain(p);
    }
    await fs.close();
  });

  it('maxDepth: each depth gives the entries up to it; beyond any tree is the whole tree', async () => {
    const fs = await workspace();
    for (const maxDepth of [1, 2, 3, 4]) {
      const want = EXPECTED.filter((l) => pathOf(l).split('/').length <= maxDepth);
      expect(kinds(await listed(fs, '', { maxDepth }))).toEqual(want);
      expect(kinds(await walked(fs, '', { maxDepth }))).toEqual(want);
      expect(kinds(await walked(fs, '', { maxDepth, stat: true }))).toEqual(want);
    }
    expect(kinds(await walked(fs, 'sub', { maxDepth: 1 }))).toEqual(kinds(await fs.list('sub')));
    expect(kinds(await walked(fs, '', { maxDepth: 1e12 }))).toEqual(EXPECTED);
    await fs.close();
  });

  it('enter: false yields the directory and nothing below it; asked only about addressable directories it could descend into', async () => {
    const fs = await workspace();
    for (const stat of [false, true]) {
      const asked: FileEntry[] = [];
      const enter = (entry: FileEntry) => {
        asked.push(entry);
        return entry.name !== 'deeper' && entry.name !== 'skip';
      };
      const got = await walked(fs, '', { enter, stat });
      const paths = got.map((e) => e.path);
      for (const p of ['sub/deeper', 'skip']) expect(paths).toContain(p);
      expect(paths.filter((p) => p.startsWith('sub/deeper/') || p.startsWith('skip/'))).toEqual([]);
      expect(asked.every((e) => e.kind === 'directory' && (e.stat !== undefined) === stat)).toBe(true);
      expect(asked.every((e) => isAddressableName(e.name))).toBe(true);
      expect(new Set(asked.map((e) => e.path)).size).toBe(asked.length);
      asked.length = 0;
      expect(kinds(got)).toEqual(kinds(await listed(fs, '', { enter })));
      asked.length = 0;
      // With maxDepth, directories at the last level are not asked about.
      await walked(fs, '', { enter, stat, maxDepth: 2 });
      expect(asked.filter((e) => e.path.split('/').length >= 2)).toEqual([]);
    }
    await fs.close();
  });

  it('a larger tree with newline names spread through it parses whole: every other entry, nothing mis-split', async () => {
    const lines: string[] = [];
    for (let d = 0; d < 40; d++) {
      lines.push(`mkdir -p "d${d}/s" "d${d}/n\${NL}${d}/in" "d${d}/t\${TAB}${d}/in"`);
      lines.push(
        `for f in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do printf %s "$f" > "d${d}/f$f-long-name-to-fill-the-argument-buffer-of-find.txt"; done`,
      );
      lines.push(
        `printf x > "d${d}/x$NL.txt" && printf yy > "d${d}/n\${NL}${d}/in/y$NL$NL" && printf z > "d${d}/s/z|$NL|.txt" && printf w > "d${d}/t\${TAB}${d}/in/w"`,
      );
    }
    const fs = await workspace({}, `NL='\n' && TAB='\t' && ${lines.join(' && ')}`);
    expect(await entriesOnDisk(fs)).toBe(40 * (2 + 20 + 8));
    const want = Array.from({ length: 40 }, (_, d) => [
      `"d${d}" directory`,
      `"d${d}/s" directory`,
      ...Array.from({ length: 20 }, (_, f) => `"d${d}/f${f}-long-name-to-fill-the-argument-buffer-of-find.txt" file`),
    ])
      .flat()
      .sort();
    for (const stat of [false, true]) {
      const entries = await walked(fs, '', { stat });
      expect(kinds(entries)).toEqual(want);
      if (!stat) continue;
      const byPath = new Map(entries.map((e) => [e.path, e.stat as FileStat]));
      for (let d = 0; d < 40; d += 13) {
        expect(byPath.get(`d${d}/s`)).toMatchObject({ kind: 'directory', size: 0 });
        expect(byPath.get(`d${d}/f7-long-name-to-fill-the-argument-buffer-of-find.txt`)).toMatchObject({ kind: 'file', size: 1 });
        expect(byPath.get(`d${d}/f17-long-name-to-fill-the-argument-buffer-of-find.txt`)).toMatchObject({ kind: 'file', size: 2 });
      }
    }
    expect(kinds(await listed(fs))).toEqual(want);
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
    const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: c.id, workdir: '/tmp/w', createWorkdir: false });
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
