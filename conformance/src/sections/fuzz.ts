/**
 * Generated hostile paths (fast-check) thrown at every path-taking operation.
 * The oracle is core's `resolvePath` with the backend's own limits: when it
 * refuses a path, the operation must refuse it with the same code; when it
 * accepts one, the operation may succeed or fail with an ordinary filesystem
 * code, but never crash, throw a non-FsError, or act outside the root.
 *
 * Runs are seeded for reproducibility; set `CTXFS_FUZZ_SEED` to explore.
 *
 * @module
 */

import { type Filesystem, isFsError, resolvePath } from '@ctxfs/core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { collect, type SuiteContext, text, utf8 } from '../context.ts';

/** Codes an operation on a legal path may fail with. */
const ALLOWED = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EEXIST', 'ENOTEMPTY', 'EINVAL', 'ENAMETOOLONG', 'EPERM', 'EBUSY', 'EBINARY']);

const SEED = { 'keep.txt': 'keep', 'dir/inner.txt': 'inner', 'dir/sub/deep.txt': 'deep' } as const;

/** Pieces hostile paths are made of. */
const fragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('..', '.', '', '...', '..a', 'a..', 'dir', 'keep.txt', 'sub', 'x', 'é', '😀', '中', '~', '%2e%2e', '．．') },
  { weight: 2, arbitrary: fc.constantFrom('/', '//', '\\', '\\\\', 'C:', 'c:', '\\\\?\\', '//?/', '/etc/passwd', 'C:\\', '\\\\srv\\share') },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c === 0x20 ? 0x7f : c)) },
  { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udfff', '\udc00\ud800', '\ud83d') },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 260 }).map((n) => 'L'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 70 }).map((n) => 'é😀'.repeat(n).slice(0, n * 2)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 6, unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
);

const separator = fc.constantFrom('/', '/', '/', '\\', '', '//');

/** A hostile path: fragments joined by separators, sometimes very deep. */
export const hostilePath: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.tuple(fragment, separator), { minLength: 1, maxLength: 10 }).map((parts) => parts.map(([f, s]) => f + s).join('')) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 250, max: 262 }), fc.constantFrom('d/', '../', './', 'd\\')).map(([n, s]) => s.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 4090, max: 4100 }).map((n) => 'p/'.repeat(n).slice(0, n)) },
);

type Operation = readonly [name: string, run: (fs: Filesystem, p: string) => Promise<unknown>];

/** Every operation of the protocol that takes a path, with the fuzzed path in each position. */
const OPERATIONS: readonly Operation[] = [
  ['exists', (fs, p) => fs.exists(p)],
  ['stat', (fs, p) => fs.stat(p)],
  ['list', (fs, p) => fs.list(p)],
  ['readBytes', (fs, p) => fs.readBytes(p, { limit: 64 })],
  ['read', (fs, p) => fs.read(p, { limit: 2 })],
  [
    'openRead',
    async (fs, p) => {
      await using r = await fs.openRead(p, { chunkSize: 16 });
      return r.read();
    },
  ],
  [
    'openText',
    async (fs, p) => {
      await using t = await fs.openText(p);
      return collect(t.lines());
    },
  ],
  ['writeBytes', (fs, p) => fs.writeBytes(p, utf8('fuzz'), { createParents: true })],
  ['write', (fs, p) => fs.write(p, 'fuzz', { mode: 'append' })],
  [
    'openWrite',
    async (fs, p) => {
      const w = await fs.openWrite(p, { mode: 'create', createParents: true });
      await w.write(utf8('fuzz'));
      await w.abort();
    },
  ],
  ['delete', (fs, p) => fs.delete(p, { recursive: true, force: true })],
  ['mkdir', (fs, p) => fs.mkdir(p, { parents: true, existOk: true })],
  ['rename', (fs, p) => fs.rename(p, 'renamed-target')],
  ['rename', (fs, p) => fs.rename('keep.txt', p, { overwrite: false })],
  ['copy', (fs, p) => fs.copy(p, 'copy-target', { recursive: true })],
  ['copy', (fs, p) => fs.copy('dir', p, { recursive: true, overwrite: false })],
  ['walk', async (fs, p) => (await collect(fs.walk(p, { maxDepth: 3 }))).slice(0, 50)],
  ['glob', async (fs, p) => (await collect(fs.glob('**', { cwd: p, maxDepth: 3 }))).slice(0, 50)],
  ['grep', async (fs, p) => collect(fs.grep('e', { path: p, maxMatches: 5 }))],
];

/** Fuzz runs for one operation: the target's figure, or enough that the section totals at least 10,000. */
export function fuzzRunsPerOperation(target: { fuzzRuns?: number | undefined }): number {
  return target.fuzzRuns ?? Math.ceil(10_000 / OPERATIONS.length);
}

const SEED_VALUE = Number(process.env.CTXFS_FUZZ_SEED ?? 0x5eed);

/** Every path below the root, as a sorted list. */
async function treeOf(fs: Filesystem): Promise<string[]> {
  return (await collect(fs.glob('**', { dot: true }))).map((m) => m.path).sort();
}

export function fuzzSection(ctx: SuiteContext): void {
  const runs = fuzzRunsPerOperation(ctx.target);
  const timeout = Math.max(ctx.target.timeout ?? 0, 120_000);

  it('the generator yields refused and accepted paths alike', () => {
    const sample = fc.sample(hostilePath, { numRuns: 2000, seed: SEED_VALUE });
    const codes = new Map<string, number>();
    for (const p of sample) {
      let code = 'OK';
      try {
        resolvePath(p, 'stat');
      } catch (err) {
        code = (err as { code: string }).code;
      }
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    for (const code of ['OK', 'EPATHESCAPE', 'EINVAL', 'ENAMETOOLONG']) {
      expect(codes.get(code) ?? 0, `paths resolving to ${code}`).toBeGreaterThan(40);
    }
  });

  it.each(OPERATIONS.map(([name, run], i) => [`${name}#${i}`, name, run, i] as const))(
    `%s survives ${runs} hostile paths`,
    async (_label, name, run, index) => {
      const fs = await ctx.make({ files: SEED });
      // Every normalized path a successful mutation may have touched.
      const touched = new Set<string>();
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(hostilePath, async (p) => {
          let expected: string | undefined;
          let normalized: string | undefined;
          try {
            normalized = resolvePath(p, 'stat', fs.limits).path;
          } catch (err) {
            expected = (err as { code: string }).code;
          }
          let failure: unknown;
          try {
            await run(fs, p);
          } catch (err) {
            failure = err;
          }
          if (failure !== undefined && !isFsError(failure)) {
            throw new Error(`${name}(${JSON.stringify(p)}) threw a non-FsError: ${String(failure)}`);
          }
          if (expected !== undefined) {
            if (!isFsError(failure)) throw new Error(`${name}(${JSON.stringify(p)}) succeeded; resolvePath refuses it with ${expected}`);
            if (failure.code !== expected) throw new Error(`${name}(${JSON.stringify(p)}) failed with ${failure.code}, expected ${expected}`);
            if (failure.op !== name) throw new Error(`${name}(${JSON.stringify(p)}) reported op ${failure.op}`);
            return;
          }
          accepted++;
          if (isFsError(failure)) {
            if (!ALLOWED.has(failure.code)) throw new Error(`${name}(${JSON.stringify(p)}) failed with unexpected ${failure.code}: ${failure.message}`);
            if (failure.hint.length === 0) throw new Error(`${name}(${JSON.stringify(p)}) error has no hint`);
          } else if (normalized !== undefined) {
            touched.add(normalized);
          }
        }),
        { numRuns: runs, seed: SEED_VALUE + index, endOnFailure: true },
      );
      expect(accepted).toBeGreaterThan(0);
      // Whatever exists now must be a seed, a path a successful call named, an
      // ancestor of one, or what a rename/copy target holds.
      const allowedRoots = new Set(['keep.txt', 'dir', 'renamed-target', 'copy-target']);
      for (const t of touched) allowedRoots.add(t.split('/')[0] as string);
      // copy('dir', '.') merges the directory's contents into the root, as fs.cp does.
      if (touched.has('')) for (const name of ['inner.txt', 'sub']) allowedRoots.add(name);
      for (const path of await treeOf(fs)) {
        expect(allowedRoots.has(path.split('/')[0] as string), `unexpected path ${JSON.stringify(path)}`).toBe(true);
      }
      // Read-only operations leave the seed untouched.
      if (['exists', 'stat', 'list', 'readBytes', 'read', 'openRead', 'openText', 'walk', 'glob', 'grep'].includes(name)) {
        expect(await treeOf(fs)).toEqual(['dir', 'dir/inner.txt', 'dir/sub', 'dir/sub/deep.txt', 'keep.txt']);
        expect(text(await fs.readBytes('keep.txt'))).toBe('keep');
      }
    },
    timeout,
  );
}
