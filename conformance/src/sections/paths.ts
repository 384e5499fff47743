/**
 * Paths and security: every row of the hostile-path table thrown at every
 * path-taking operation. Refused rows must fail with the row's code before
 * touching anything; legal rows must land exactly on their normalized path
 * inside the root. Each test ends by checking the whole tree, so a path that
 * slipped through and created something anywhere else is caught.
 *
 * @module
 */

import { type Filesystem, isFsError } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, text, utf8 } from '../context.ts';
import { HOSTILE_PATHS, type HostilePath, showPath } from '../hostile-paths.ts';

const SEED = { '_seed.txt': 'seed', '_seed/inner.txt': 'inner' } as const;
const SEED_TREE = ['_seed', '_seed.txt', '_seed/inner.txt'];

type Attempt = readonly [op: string, run: (fs: Filesystem, p: string) => Promise<unknown>];

/** Every path-taking operation, with the hostile path in each path position. */
const ATTEMPTS: readonly Attempt[] = [
  ['exists', (fs, p) => fs.exists(p)],
  ['stat', (fs, p) => fs.stat(p)],
  ['list', (fs, p) => fs.list(p)],
  ['readBytes', (fs, p) => fs.readBytes(p)],
  ['read', (fs, p) => fs.read(p)],
  ['openRead', (fs, p) => fs.openRead(p)],
  ['openText', (fs, p) => fs.openText(p)],
  ['writeBytes', (fs, p) => fs.writeBytes(p, utf8('x'), { createParents: true })],
  ['write', (fs, p) => fs.write(p, 'x', { mode: 'append', createParents: true })],
  ['openWrite', (fs, p) => fs.openWrite(p, { mode: 'create', createParents: true })],
  ['delete', (fs, p) => fs.delete(p, { recursive: true, force: true })],
  ['mkdir', (fs, p) => fs.mkdir(p, { parents: true, existOk: true })],
  ['rename', (fs, p) => fs.rename(p, '_moved')],
  ['rename', (fs, p) => fs.rename('_seed.txt', p)],
  ['copy', (fs, p) => fs.copy(p, '_copied', { recursive: true })],
  ['copy', (fs, p) => fs.copy('_seed', p, { recursive: true })],
  ['walk', (fs, p) => collect(fs.walk(p, { stat: true }))],
  ['glob', (fs, p) => collect(fs.glob('**', { cwd: p }))],
  ['grep', (fs, p) => collect(fs.grep('seed', { path: p }))],
];

async function treeOf(fs: Filesystem): Promise<string[]> {
  return (await collect(fs.glob('**', { dot: true }))).map((m) => m.path).sort();
}

async function expectSeedIntact(fs: Filesystem): Promise<void> {
  expect(await treeOf(fs)).toEqual(SEED_TREE);
  expect(text(await fs.readBytes('_seed.txt'))).toBe('seed');
  expect(text(await fs.readBytes('_seed/inner.txt'))).toBe('inner');
}

async function refusal(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  return undefined;
}

const parentOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const baseOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const topOf = (p: string) => p.split('/')[0] as string;

export function pathsSection(ctx: SuiteContext): void {
  const timeout = ctx.target.timeout;
  const refusedRows = HOSTILE_PATHS.filter((r) => r.code !== undefined);
  const legalRows = HOSTILE_PATHS.filter((r) => r.resolves !== undefined);

  it('the table holds at least 200 rows, refused and legal', () => {
    expect(HOSTILE_PATHS.length).toBeGreaterThanOrEqual(200);
    expect(refusedRows.length).toBeGreaterThan(100);
    expect(legalRows.length).toBeGreaterThan(50);
  });

  describe('refused paths', () => {
    it.each(refusedRows.map((r) => [r.code, showPath(r.path), r.name, r] as const))(
      '%s %s (%s)',
      async (_code, _shown, _name, row: HostilePath) => {
        const fs = await ctx.make({ files: SEED });
        for (const [op, run] of ATTEMPTS) {
          const err = await refusal(() => run(fs, row.path));
          expect(isFsError(err), `${op} must reject with an FsError`).toBe(true);
          if (!isFsError(err)) continue;
          expect({ op, code: err.code }).toEqual({ op, code: row.code });
          expect(err.op).toBe(op);
          expect(typeof err.path).toBe('string');
          expect(err.hint.length).toBeGreaterThan(0);
          // Control characters never reach logs raw.
          // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the check
          expect(err.message).not.toMatch(/[\u0000-\u001f\u007f]/);
        }
        await expectSeedIntact(fs);
      },
      timeout,
    );
  });

  describe('legal tricky paths land on their normalized path', () => {
    const fileRows = legalRows.filter((r) => r.resolves !== '' && !r.light && !/[\\/]$/.test(r.path));
    const dirRows = legalRows.filter((r) => r.resolves !== '' && !r.light && /[\\/]$/.test(r.path));
    const rootRows = legalRows.filter((r) => r.resolves === '');
    const lightRows = legalRows.filter((r) => r.light);

    it.each(fileRows.map((r) => [showPath(r.path), showPath(r.resolves ?? ''), r.name, r] as const))(
      'file %s -> %s (%s)',
      async (_shown, _to, _name, row: HostilePath) => {
        const fs = await ctx.make({ files: SEED });
        const p = row.path;
        const n = row.resolves as string;
        const content = `MARK ${n}\n`;
        expect(await fs.exists(p)).toBe(false);
        expect(await codeOf(fs.stat(p))).toBe('ENOENT');
        const written = await fs.writeBytes(p, utf8(content), { createParents: true });
        expect(written.path).toBe(n);
        const st = await fs.stat(p);
        expect({ path: st.path, kind: st.kind, size: st.size }).toEqual({ path: n, kind: 'file', size: utf8(content).byteLength });
        expect((await fs.stat(n)).path).toBe(n);
        expect(await fs.exists(p)).toBe(true);
        expect(text(await fs.readBytes(p))).toBe(content);
        expect((await fs.read(p)).lines).toEqual([`MARK ${n}`]);
        const names = (await fs.list(parentOf(n))).map((e) => e.name);
        expect(names).toContain(baseOf(n));
        const globbed = await collect(fs.glob('*', { cwd: `${p}/..`, dot: true }));
        expect(globbed.map((m) => m.path)).toContain(n);
        const grepped = await collect(fs.grep('MARK', { path: p, literal: true }));
        expect(grepped.map((m) => [m.path, m.line])).toEqual([[n, 1]]);
        await fs.copy(p, '_copied');
        expect(text(await fs.readBytes('_copied'))).toBe(content);
        await fs.rename(p, '_renamed');
        expect(await fs.exists(n)).toBe(false);
        await fs.rename('_renamed', p);
        expect(text(await fs.readBytes(n))).toBe(content);
        await fs.delete('_copied');
        await fs.delete(p);
        expect(await fs.exists(n)).toBe(false);
        if (n.includes('/')) await fs.delete(topOf(n), { recursive: true });
        await expectSeedIntact(fs);
      },
      timeout,
    );

    it.each(dirRows.map((r) => [showPath(r.path), showPath(r.resolves ?? ''), r.name, r] as const))(
      'directory %s -> %s (%s)',
      async (_shown, _to, _name, row: HostilePath) => {
        const fs = await ctx.make({ files: SEED });
        const p = row.path;
        const n = row.resolves as string;
        expect(await fs.exists(p)).toBe(false);
        await fs.mkdir(p, { parents: true });
        const st = await fs.stat(p);
        expect({ path: st.path, kind: st.kind }).toEqual({ path: n, kind: 'directory' });
        expect(await fs.exists(n)).toBe(true);
        expect(await fs.list(p)).toEqual([]);
        expect(await codeOf(fs.writeBytes(p, utf8('x')))).toBe('EISDIR');
        expect(await codeOf(fs.mkdir(p))).toBe('EEXIST');
        await fs.writeBytes(`${n}/f.txt`, utf8('MARK\n'));
        expect((await collect(fs.glob('*', { cwd: p }))).map((m) => m.path)).toEqual([`${n}/f.txt`]);
        expect((await collect(fs.grep('MARK', { path: p }))).map((m) => m.path)).toEqual([`${n}/f.txt`]);
        expect((await fs.list(p)).map((e) => e.path)).toEqual([`${n}/f.txt`]);
        await fs.delete(p, { recursive: true });
        expect(await fs.exists(n)).toBe(false);
        if (n.includes('/')) await fs.delete(topOf(n), { recursive: true });
        await expectSeedIntact(fs);
      },
      timeout,
    );

    it.each(rootRows.map((r) => [showPath(r.path), r.name, r] as const))(
      'root spelling %s (%s)',
      async (_shown, _name, row: HostilePath) => {
        const fs = await ctx.make({ files: SEED });
        const p = row.path;
        const st = await fs.stat(p);
        expect({ path: st.path, kind: st.kind }).toEqual({ path: '', kind: 'directory' });
        expect(await fs.exists(p)).toBe(true);
        expect((await fs.list(p)).map((e) => e.path)).toEqual(['_seed', '_seed.txt']);
        expect((await collect(fs.glob('*', { cwd: p }))).map((m) => m.path).sort()).toEqual(['_seed', '_seed.txt']);
        expect((await collect(fs.grep('seed', { path: p }))).map((m) => m.path)).toEqual(['_seed.txt']);
        expect(await codeOf(fs.readBytes(p))).toBe('EISDIR');
        expect(await codeOf(fs.writeBytes(p, utf8('x')))).toBe('EISDIR');
        expect(await codeOf(fs.openWrite(p))).toBe('EISDIR');
        expect(await codeOf(fs.delete(p))).toBe('EPERM');
        expect(await codeOf(fs.delete(p, { recursive: true, force: true }))).toBe('EPERM');
        expect(await codeOf(fs.mkdir(p))).toBe('EEXIST');
        await fs.mkdir(p, { existOk: true });
        expect(await codeOf(fs.copy(p, '_root-copy'))).toBe('EISDIR');
        expect(await codeOf(fs.copy(p, '_root-copy', { recursive: true }))).toBe('EINVAL');
        const renamed = await refusal(() => fs.rename(p, '_root-moved'));
        expect(isFsError(renamed)).toBe(true);
        await expectSeedIntact(fs);
      },
      timeout,
    );

    it.each(lightRows.map((r) => [showPath(r.path), r.name, r] as const))(
      'long legal path %s is looked up, not refused (%s)',
      async (_shown, _name, row: HostilePath) => {
        const fs = await ctx.make({ files: SEED });
        const p = row.path;
        expect(await fs.exists(p)).toBe(false);
        expect(await codeOf(fs.stat(p))).toBe('ENOENT');
        expect(await codeOf(fs.readBytes(p))).toBe('ENOENT');
        expect(await codeOf(fs.openRead(p))).toBe('ENOENT');
        expect(await codeOf(fs.list(p))).toBe('ENOENT');
        expect(await codeOf(fs.delete(p))).toBe('ENOENT');
        await fs.delete(p, { force: true });
        await expectSeedIntact(fs);
      },
      timeout,
    );
  });

  it(
    'a file at depth 256 can be written and read back',
    async () => {
      const fs = await ctx.make({ files: SEED });
      const deep = `${'d/'.repeat(255)}f`;
      await fs.write(deep, 'deep', { createParents: true });
      expect(await fs.read(deep).then((t) => t.text)).toBe('deep');
      expect(await codeOf(fs.write(`${'d/'.repeat(256)}f`, 'x', { createParents: true }))).toBe('ENAMETOOLONG');
      await fs.delete('d', { recursive: true });
      await expectSeedIntact(fs);
    },
    timeout,
  );

  it.each([
    ['null', null],
    ['number', 42],
    ['object', {}],
    ['array', ['a']],
  ] as const)('a non-string path (%s) is EINVAL', async (_label, value) => {
    const fs = await ctx.make({ files: SEED });
    const bad = value as unknown as string;
    for (const run of [() => fs.stat(bad), () => fs.readBytes(bad), () => fs.writeBytes(bad, utf8('x')), () => fs.delete(bad), () => fs.mkdir(bad)]) {
      const err = await refusal(run);
      expect(isFsError(err, 'EINVAL')).toBe(true);
    }
    await expectSeedIntact(fs);
  });

  it.each([
    ['file/ on a file is ENOTDIR for stat', '_seed.txt/'],
    ['file/child is ENOTDIR for stat', '_seed.txt/child'],
  ])('%s', async (_label, p) => {
    const fs = await ctx.make({ files: SEED });
    expect(await codeOf(fs.stat(p))).toBe('ENOTDIR');
    expect(await fs.exists(p)).toBe(false);
  });

  it('a trailing slash on a file, for reading, writing, stat or delete: ENOTDIR naming the name with its slash and the fix; nothing changes', async () => {
    const fs = await ctx.make({ files: SEED });
    const calls: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
      ['stat', () => fs.stat('_seed.txt/')],
      ['readBytes', () => fs.readBytes('_seed.txt/')],
      ['openWrite', () => fs.openWrite('_seed.txt/')],
      ['delete', () => fs.delete('_seed.txt/')],
    ];
    for (const [op, call] of calls) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(err, 'ENOTDIR'), op).toBe(true);
      if (!isFsError(err)) continue;
      expect(err.path, op).toBe('_seed.txt/');
      expect(err.hint, op).toContain('drop the trailing "/"');
    }
    // A file written at a slashed name that does not exist would be a file named as a directory.
    const made = await fs.writeBytes('fresh/', utf8('x')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFsError(made, 'EISDIR')).toBe(true);
    expect(await fs.exists('fresh')).toBe(false);
    await expectSeedIntact(fs);
  });

  it('refusals happen before I/O: a refused write creates no parent directories', async () => {
    const fs = await ctx.make({ files: SEED });
    expect(await codeOf(fs.writeBytes('newparent/../../x', utf8('x'), { createParents: true }))).toBe('EPATHESCAPE');
    expect(await codeOf(fs.writeBytes(`newparent/${'a'.repeat(256)}`, utf8('x'), { createParents: true }))).toBe('ENAMETOOLONG');
    expect(await codeOf(fs.mkdir('newparent/x\u0000', { parents: true }))).toBe('EINVAL');
    await expectSeedIntact(fs);
  });
}
