/**
 * `@ctxfs/memory` against the raw memfs `Volume` it wraps, same content, same
 * process, same run. Targets from issue 2: reads and writes of 1 KB and 1 MB
 * within 1.2x of raw memfs; a snapshot of 10,000 files under 5 ms and under
 * 2 MiB of new memory (the 10 MiB of content must not be copied). Issue 11:
 * grep with a regex (re2js, linear time) beside the backtracking V8 path it
 * replaced, and a pattern that stalls V8 answered within 100 ms.
 *
 * @module
 */

import type { GlobMatch, GrepMatch } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { Volume } from 'memfs';
import picomatch from 'picomatch';
import { type Case, defineSuite, single } from '../harness.ts';

const KB = 1024;
const MB = 1024 * 1024;
const SNAPSHOT_FILES = 10_000;
const SNAPSHOT_FILE_BYTES = KB;
/** A camelCase call with a number: matches the needle lines, and offers no literal to skip text by. */
const GREP_REGEX = '[a-z]+[A-Z]\\w*\\(\\d+\\)';

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A small source tree: 10 packages × 3 dirs × 6 files, a third of them `.ts`. */
function globTree(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let p = 0; p < 10; p++) {
    for (const d of ['src', 'src/util', 'test']) {
      for (let f = 0; f < 6; f++) {
        const ext = ['ts', 'js', 'md'][f % 3];
        files[`glob/pkg${p}/${d}/file${f}.${ext}`] = `// ${p} ${d} ${f}\n`;
      }
    }
  }
  return files;
}

/** 1,000 text files of 20 lines; every tenth file has the needle on one line. */
function grepTree(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) {
    const lines: string[] = [];
    for (let l = 0; l < 20; l++)
      lines.push(l === 7 && i % 10 === 0 ? `  const value = findNeedleHere(${i});` : `  line ${l} of file ${i}: some ordinary source text`);
    files[`grep/d${Math.floor(i / 100)}/f${i}.txt`] = `${lines.join('\n')}\n`;
  }
  return files;
}

interface Dirent {
  name: string | Uint8Array;
  isDirectory(): boolean;
  isFile(): boolean;
}

/** The raw-memfs walk a caller would write by hand. */
function rawWalk(vol: Volume, root: string, onFile: (abs: string, rel: string) => void): void {
  const stack: string[] = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const d of vol.readdirSync(dir, { withFileTypes: true }) as unknown as Dirent[]) {
      const abs = `${dir}/${String(d.name)}`;
      if (d.isDirectory()) stack.push(abs);
      else if (d.isFile()) onFile(abs, abs.slice(root.length + 1));
    }
  }
}

function same(what: string, a: unknown, b: unknown): void {
  if (JSON.stringify(a) !== JSON.stringify(b))
    throw new Error(`${what}: subject and baseline disagree (${JSON.stringify(a)} vs ${JSON.stringify(b)})`.slice(0, 300));
}

function sameBytes(what: string, a: Uint8Array, b: Uint8Array): void {
  if (Buffer.compare(a, b) !== 0) throw new Error(`${what}: subject and baseline bytes differ`);
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

function populate(vol: Volume, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    const abs = `/${path}`;
    vol.mkdirSync(abs.slice(0, abs.lastIndexOf('/')), { recursive: true });
    vol.writeFileSync(abs, content);
  }
}

export default defineSuite({
  name: 'memory',
  description: '@ctxfs/memory MemoryFilesystem vs raw memfs Volume',
  setup() {
    const data1k = bytes(KB, 1);
    const data1m = bytes(MB, 2);
    const files: Record<string, string | Uint8Array> = { 'r/1k.bin': data1k, 'r/1m.bin': data1m, 'w/1k.bin': data1k, 'w/1m.bin': data1m };
    for (let i = 0; i < 1000; i++) files[`list/entry-${String(i).padStart(4, '0')}.txt`] = 'x';
    Object.assign(files, globTree(), grepTree(), { 'redos/a.txt': `${'a'.repeat(50_000)}!\n` });
    const fs = new MemoryFilesystem({ files });
    const vol = new Volume();
    populate(vol, files);

    const snapFiles: Record<string, Uint8Array> = {};
    for (let i = 0; i < SNAPSHOT_FILES; i++) snapFiles[`s/d${i % 100}/f${i}.bin`] = bytes(SNAPSHOT_FILE_BYTES, i + 7);
    const snapFs = new MemoryFilesystem({ files: snapFiles });
    return { fs, vol, data1k, data1m, snapFs, snapFiles };
  },
  async teardown({ fs, snapFs }) {
    await fs.close();
    await snapFs.close();
  },
  cases: ({ fs, vol, data1k, data1m, snapFs, snapFiles }): Case[] => {
    const isTs = picomatch('**/*.ts');
    const rawGlob = () => {
      const out: string[] = [];
      rawWalk(vol, '/glob', (abs, rel) => {
        if (isTs(rel)) out.push(abs);
      });
      return out;
    };
    // The hand-written search: read every file, split it, look for the first match in each line.
    const rawGrep = (find: (line: string) => number = (line) => line.indexOf('findNeedleHere')) => {
      const out: Array<{ path: string; line: number; start: number }> = [];
      rawWalk(vol, '/grep', (abs) => {
        const lines = (vol.readFileSync(abs, 'utf8') as string).split('\n');
        for (let i = 0; i < lines.length; i++) {
          const at = find(lines[i] as string);
          if (at >= 0) out.push({ path: abs, line: i + 1, start: at });
        }
      });
      return out;
    };
    // What the scanner did before issue 11: a backtracking V8 RegExp per line.
    const v8 = new RegExp(GREP_REGEX, 'u');
    const v8Find = (line: string) => line.search(v8);
    const grepKeys = async (pattern: string, options: { literal?: boolean }) =>
      (await drain<GrepMatch>(fs.grep(pattern, { path: 'grep', ...options }))).map((m) => `/${m.path}:${m.line}:${m.matchStart}`).sort();
    const rawKeys = (find?: (line: string) => number) =>
      rawGrep(find)
        .map((m) => `${m.path}:${m.line}:${m.start}`)
        .sort();
    let restoreSnap: Awaited<ReturnType<typeof snapFs.snapshot>> | undefined;
    return [
      {
        name: 'read 1 KB',
        subjectName: 'fs.readBytes',
        subject: () => fs.readBytes('r/1k.bin'),
        baselineName: 'vol.readFileSync',
        baseline: () => vol.readFileSync('/r/1k.bin'),
        target: { maxRatio: 1.2 },
        moreBaselines: [{ name: 'vol.promises.readFile', fn: () => vol.promises.readFile('/r/1k.bin'), target: { maxRatio: 1.2 } }],
        verify: async () => sameBytes('read 1 KB', await fs.readBytes('r/1k.bin'), vol.readFileSync('/r/1k.bin') as Buffer),
      },
      {
        name: 'read 1 MB',
        subjectName: 'fs.readBytes',
        subject: () => fs.readBytes('r/1m.bin'),
        baselineName: 'vol.readFileSync',
        baseline: () => vol.readFileSync('/r/1m.bin'),
        target: { maxRatio: 1.2 },
        moreBaselines: [{ name: 'vol.promises.readFile', fn: () => vol.promises.readFile('/r/1m.bin'), target: { maxRatio: 1.2 } }],
        memory: true,
        verify: async () => sameBytes('read 1 MB', await fs.readBytes('r/1m.bin'), vol.readFileSync('/r/1m.bin') as Buffer),
      },
      {
        name: 'write 1 KB',
        subjectName: 'fs.writeBytes',
        subject: () => fs.writeBytes('w/1k.bin', data1k),
        baselineName: 'vol.writeFileSync',
        baseline: () => vol.writeFileSync('/w/1k.bin', data1k),
        target: { maxRatio: 1.2 },
        moreBaselines: [{ name: 'vol.promises.writeFile', fn: () => vol.promises.writeFile('/w/1k.bin', data1k) }],
        verify: async () => {
          await fs.writeBytes('w/1k.bin', data1k);
          sameBytes('write 1 KB', await fs.readBytes('w/1k.bin'), data1k);
        },
      },
      {
        name: 'write 1 MB',
        subjectName: 'fs.writeBytes',
        subject: () => fs.writeBytes('w/1m.bin', data1m),
        baselineName: 'vol.writeFileSync',
        baseline: () => vol.writeFileSync('/w/1m.bin', data1m),
        target: { maxRatio: 1.2 },
        moreBaselines: [{ name: 'vol.promises.writeFile', fn: () => vol.promises.writeFile('/w/1m.bin', data1m) }],
        verify: async () => {
          await fs.writeBytes('w/1m.bin', data1m);
          sameBytes('write 1 MB', await fs.readBytes('w/1m.bin'), data1m);
        },
      },
      {
        name: 'list 1,000 entries',
        subjectName: 'fs.list',
        subject: () => fs.list('list'),
        baselineName: 'vol.readdirSync+types',
        baseline: () => vol.readdirSync('/list', { withFileTypes: true }),
        verify: async () =>
          same(
            'list',
            (await fs.list('list')).map((e) => e.name),
            (vol.readdirSync('/list') as string[]).map(String).sort(),
          ),
      },
      {
        name: 'glob **/*.ts (60 of 180 files)',
        subjectName: 'fs.glob',
        subject: () => drain<GlobMatch>(fs.glob('**/*.ts', { cwd: 'glob' })),
        baselineName: 'readdir walk+picomatch',
        baseline: () => rawGlob(),
        verify: async () => same('glob', (await drain<GlobMatch>(fs.glob('**/*.ts', { cwd: 'glob' }))).map((m) => `/${m.path}`).sort(), rawGlob().sort()),
      },
      {
        name: 'grep literal (1,000 files)',
        subjectName: 'fs.grep',
        subject: () => drain<GrepMatch>(fs.grep('findNeedleHere', { path: 'grep', literal: true })),
        baselineName: 'readFileSync+indexOf',
        baseline: () => rawGrep(),
        verify: async () => same('grep', await grepKeys('findNeedleHere', { literal: true }), rawKeys()),
        note: 'both sides find 100 matches; the baseline neither skips binaries nor handles CRLF/encodings',
      },
      {
        name: 'grep regex (1,000 files)',
        subjectName: 'fs.grep (re2js)',
        subject: () => drain<GrepMatch>(fs.grep(GREP_REGEX, { path: 'grep' })),
        baselineName: 'readFileSync+V8 RegExp',
        baseline: () => rawGrep(v8Find),
        verify: async () => same('grep regex', await grepKeys(GREP_REGEX, {}), rawKeys(v8Find)),
        note: `'${GREP_REGEX}' (no literal to prefilter on), 100 matches; the baseline is the backtracking V8 path the scanner had before issue 11, which '(a+)+$' stalls`,
      },
      single({
        kind: 'single',
        name: "grep '(a+)+$' over a 50 KB line",
        subjectName: 'fs.grep (re2js)',
        run: () => drain<GrepMatch>(fs.grep('(a+)+$', { path: 'redos' })),
        budget: { maxMs: 100 },
        note: 'V8 does not return from this one (exponential backtracking); re2js is linear in the line',
      }),
      single({
        kind: 'single',
        name: `snapshot ${SNAPSHOT_FILES.toLocaleString('en')} files`,
        subjectName: 'fs.snapshot',
        run: () => snapFs.snapshot(),
        cleanup: (snap) => snapFs.dropSnapshot(snap),
        budget: { maxMs: 5, maxBytes: 2 * MB },
        note: `content is ${SNAPSHOT_FILES.toLocaleString('en')} × ${SNAPSHOT_FILE_BYTES} B = ${((SNAPSHOT_FILES * SNAPSHOT_FILE_BYTES) / MB).toFixed(1)} MiB; retained memory far below it means no content was copied`,
      }),
      {
        name: `restore ${SNAPSHOT_FILES.toLocaleString('en')} files`,
        subjectName: 'fs.restore',
        setup: async () => {
          restoreSnap = await snapFs.snapshot('restore-bench');
        },
        teardown: async () => {
          if (restoreSnap) await snapFs.dropSnapshot(restoreSnap);
        },
        subject: () => snapFs.restore(restoreSnap as NonNullable<typeof restoreSnap>),
        baselineName: 'new Volume+writeFileSync×10k',
        baseline: () => {
          const v = new Volume();
          populate(v, snapFiles);
          return v;
        },
        memory: true,
        verify: async () => {
          await snapFs.write('s/extra.txt', 'gone after restore');
          await snapFs.restore(restoreSnap as NonNullable<typeof restoreSnap>);
          if (await snapFs.exists('s/extra.txt')) throw new Error('restore kept a file created after the snapshot');
          for (const i of [0, 4321, SNAPSHOT_FILES - 1]) {
            const path = `s/d${i % 100}/f${i}.bin`;
            sameBytes(`restore ${path}`, await snapFs.readBytes(path), snapFiles[path] as Uint8Array);
          }
        },
        note: 'the baseline copies every file into a fresh volume; restore shares the snapshot buffers',
      },
    ];
  },
});
