/**
 * Snapshots: `snapshot` captures the whole workspace, `restore` brings it
 * back exactly (contents, kinds, files added since removed), snapshots are
 * isolated from later writes, and unknown or dropped ids are `ENOSNAPSHOT`.
 * A backend without the capability refuses all four calls with `EUNSUPPORTED`.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, describeWhen, itWhen, type SuiteContext, text, utf8 } from '../context.ts';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

/** The whole tree: path → 'dir' or the file's bytes as hex. */
async function dump(fs: Filesystem): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const m of fs.glob('**', { dot: true })) {
    out[m.path] = m.kind === 'file' ? Buffer.from(await fs.readBytes(m.path)).toString('hex') : m.kind;
  }
  return out;
}

const read = async (fs: Filesystem, path: string) => text(await fs.readBytes(path));

const SEED = {
  'a.txt': 'alpha\n',
  'bin/all.bin': ALL_BYTES,
  'src/lib/x.ts': 'export const x = 1;\n',
  'src/lib/y.ts': 'export const y = 2;\n',
  '.dot/file': 'dot',
  'empty.txt': '',
};

export function snapshotsSection(ctx: SuiteContext): void {
  describeWhen(!ctx.caps.snapshots)('not supported', () => {
    it.each(['snapshot', 'restore', 'listSnapshots', 'dropSnapshot'] as const)('%s is EUNSUPPORTED', async (op) => {
      const fs = await ctx.make({ files: { 'a.txt': 'a' } });
      const call = {
        snapshot: () => fs.snapshot('t'),
        restore: () => fs.restore('some-id'),
        listSnapshots: () => fs.listSnapshots(),
        dropSnapshot: () => fs.dropSnapshot('some-id'),
      }[op];
      const err = await call().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EUNSUPPORTED', op });
      expect(await read(fs, 'a.txt')).toBe('a');
    });
  });

  describeWhen(ctx.caps.snapshots)('round trip', () => {
    it('restore brings back contents, binary bytes and kinds exactly', async () => {
      const fs = await ctx.make({ files: SEED, dirs: ['d/e'] });
      const before = await dump(fs);
      const snap = await fs.snapshot('base');
      await fs.write('a.txt', 'changed');
      await fs.writeBytes('bin/all.bin', new Uint8Array([1, 2, 3]));
      await fs.delete('src', { recursive: true });
      await fs.write('new.txt', 'new');
      await fs.restore(snap);
      expect(await dump(fs)).toEqual(before);
      expect([...(await fs.readBytes('bin/all.bin'))]).toEqual([...ALL_BYTES]);
    });

    it('files and directories created after the snapshot are removed', async () => {
      const fs = await ctx.make({ files: { 'keep.txt': 'k' } });
      const snap = await fs.snapshot();
      await fs.write('extra.txt', 'x');
      await fs.mkdir('newdir/sub', { parents: true });
      await fs.write('newdir/sub/f.txt', 'f');
      await fs.restore(snap);
      expect(await dump(fs)).toEqual({ 'keep.txt': Buffer.from('k').toString('hex') });
    });

    it('deleted trees are restored', async () => {
      const fs = await ctx.make({ files: SEED });
      const snap = await fs.snapshot();
      await fs.delete('src', { recursive: true });
      await fs.delete('a.txt');
      await fs.restore(snap);
      expect(await read(fs, 'src/lib/x.ts')).toBe('export const x = 1;\n');
      expect(await read(fs, 'src/lib/y.ts')).toBe('export const y = 2;\n');
      expect(await read(fs, 'a.txt')).toBe('alpha\n');
      expect((await fs.stat('src/lib')).kind).toBe('directory');
    });

    it('a modified file is restored', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'one' } });
      const snap = await fs.snapshot();
      await fs.write('f.txt', 'two, longer than one');
      await fs.restore(snap);
      expect(await read(fs, 'f.txt')).toBe('one');
      expect((await fs.stat('f.txt')).size).toBe(3);
    });

    it('a file replaced by a directory (and back) is restored', async () => {
      const fs = await ctx.make({ files: { 'p.txt': 'file', 'q/r.txt': 'r' } });
      const snap = await fs.snapshot();
      await fs.delete('p.txt');
      await fs.mkdir('p.txt');
      await fs.delete('q', { recursive: true });
      await fs.write('q', 'now a file');
      await fs.restore(snap);
      expect((await fs.stat('p.txt')).kind).toBe('file');
      expect(await read(fs, 'p.txt')).toBe('file');
      expect(await read(fs, 'q/r.txt')).toBe('r');
    });

    it('restoring the same snapshot twice works', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'one' } });
      const snap = await fs.snapshot();
      await fs.write('f.txt', 'two');
      await fs.restore(snap);
      await fs.write('f.txt', 'three');
      await fs.write('g.txt', 'g');
      await fs.restore(snap);
      expect(await dump(fs)).toEqual({ 'f.txt': Buffer.from('one').toString('hex') });
    });

    it('several snapshots restore in any order', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'A' } });
      const a = await fs.snapshot('A');
      await fs.write('f.txt', 'B');
      await fs.write('b-only.txt', 'b');
      const b = await fs.snapshot('B');
      await fs.write('f.txt', 'C');
      await fs.restore(a);
      expect(await read(fs, 'f.txt')).toBe('A');
      expect(await fs.exists('b-only.txt')).toBe(false);
      await fs.restore(b);
      expect(await read(fs, 'f.txt')).toBe('B');
      expect(await read(fs, 'b-only.txt')).toBe('b');
      await fs.restore(a);
      expect(await read(fs, 'f.txt')).toBe('A');
    });

    it('restore accepts the id string as well as the Snapshot', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'one' } });
      const snap = await fs.snapshot();
      await fs.write('f.txt', 'two');
      await fs.restore(snap.id);
      expect(await read(fs, 'f.txt')).toBe('one');
    });

    it('a snapshot of an empty workspace restores to empty', async () => {
      const fs = await ctx.make({});
      const snap = await fs.snapshot();
      await fs.write('x.txt', 'x');
      await fs.mkdir('d');
      await fs.restore(snap);
      expect(await fs.list()).toEqual([]);
    });

    it('the workspace keeps working normally after restore', async () => {
      const fs = await ctx.make({ files: { 'd/f.txt': 'f' } });
      const snap = await fs.snapshot();
      await fs.restore(snap);
      await fs.write('d/g.txt', 'g');
      await fs.rename('d/f.txt', 'd/h.txt');
      expect((await fs.list('d')).map((e) => e.name)).toEqual(['g.txt', 'h.txt']);
    });
  });

  describeWhen(ctx.caps.snapshots)('isolation', () => {
    it('an append after the snapshot does not reach it', async () => {
      const fs = await ctx.make({ files: { 'log.txt': 'line1\n' } });
      const snap = await fs.snapshot();
      await fs.write('log.txt', 'line2\n', { mode: 'append' });
      expect(await read(fs, 'log.txt')).toBe('line1\nline2\n');
      await fs.restore(snap);
      expect(await read(fs, 'log.txt')).toBe('line1\n');
    });

    it('appends after a restore do not corrupt other snapshots', async () => {
      const fs = await ctx.make({ files: { f: 'a' } });
      const s1 = await fs.snapshot();
      await fs.write('f', 'b', { mode: 'append' });
      const s2 = await fs.snapshot();
      await fs.write('f', 'c', { mode: 'append' });
      await fs.restore(s1);
      await fs.write('f', 'z', { mode: 'append' });
      expect(await read(fs, 'f')).toBe('az');
      await fs.restore(s2);
      expect(await read(fs, 'f')).toBe('ab');
      await fs.write('f', 'y', { mode: 'append' });
      await fs.restore(s1);
      expect(await read(fs, 'f')).toBe('a');
      await fs.restore(s2);
      expect(await read(fs, 'f')).toBe('ab');
    });

    it('streamed writes after the snapshot do not reach it', async () => {
      const fs = await ctx.make({ files: { f: 'old' } });
      const snap = await fs.snapshot();
      const w = await fs.openWrite('f', { mode: 'append' });
      await w.write(utf8('-more'));
      await w.close();
      const w2 = await fs.openWrite('g', { mode: 'create' });
      await w2.write(utf8('g'));
      await w2.close();
      await fs.restore(snap);
      expect(await read(fs, 'f')).toBe('old');
      expect(await fs.exists('g')).toBe(false);
    });

    it('copies and renames after the snapshot do not reach it', async () => {
      const fs = await ctx.make({ files: { a: 'A', 'd/b': 'B' } });
      const snap = await fs.snapshot();
      await fs.copy('a', 'd/b');
      await fs.rename('d', 'e');
      await fs.write('e/b', 'x', { mode: 'append' });
      await fs.restore(snap);
      expect(await dump(fs)).toEqual({ a: '41', d: 'directory', 'd/b': '42' });
    });

    it('a reader opened before restore still reads what it opened', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'old content' } });
      const snap = await fs.snapshot();
      await fs.write('f.txt', 'new content');
      const reader = await fs.openRead('f.txt');
      await fs.restore(snap);
      const chunks = await collect(reader);
      await reader.close();
      expect(text(Buffer.concat(chunks))).toBe('new content');
      expect(await read(fs, 'f.txt')).toBe('old content');
    });
  });

  describeWhen(ctx.caps.snapshots)('bookkeeping and errors', () => {
    it('snapshot() without a tag', async () => {
      const fs = await ctx.make({});
      const snap = await fs.snapshot();
      expect(typeof snap.id).toBe('string');
      expect(snap.id.length).toBeGreaterThan(0);
      expect(snap.tag).toBeUndefined();
      expect(snap.createdAt).toBeInstanceOf(Date);
    });

    it('ids are unique', async () => {
      const fs = await ctx.make({});
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await fs.snapshot()).id);
      expect(ids.size).toBe(5);
    });

    it('listSnapshots lists in creation order with tags', async () => {
      const fs = await ctx.make({ files: { f: '1' } });
      expect(await fs.listSnapshots()).toEqual([]);
      const a = await fs.snapshot('first');
      const b = await fs.snapshot();
      const c = await fs.snapshot('third');
      const list = await fs.listSnapshots();
      expect(list.map((s) => s.id)).toEqual([a.id, b.id, c.id]);
      expect(list.map((s) => s.tag)).toEqual(['first', undefined, 'third']);
    });

    it('dropSnapshot removes it from the list', async () => {
      const fs = await ctx.make({});
      const a = await fs.snapshot('a');
      const b = await fs.snapshot('b');
      await fs.dropSnapshot(a);
      expect((await fs.listSnapshots()).map((s) => s.id)).toEqual([b.id]);
      await fs.dropSnapshot(b.id);
      expect(await fs.listSnapshots()).toEqual([]);
    });

    it('restore of an unknown id is ENOSNAPSHOT and changes nothing', async () => {
      const fs = await ctx.make({ files: { f: 'x' } });
      const err = await fs.restore('no-such-snapshot').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ENOSNAPSHOT', op: 'restore' });
      expect(await read(fs, 'f')).toBe('x');
    });

    it('restore of a forged Snapshot object is ENOSNAPSHOT', async () => {
      const fs = await ctx.make({});
      expect(await codeOf(fs.restore({ id: 'forged', createdAt: new Date() }))).toBe('ENOSNAPSHOT');
    });

    it('restore after drop is ENOSNAPSHOT', async () => {
      const fs = await ctx.make({ files: { f: 'x' } });
      const snap = await fs.snapshot();
      await fs.dropSnapshot(snap);
      await fs.write('f', 'y');
      expect(await codeOf(fs.restore(snap))).toBe('ENOSNAPSHOT');
      expect(await read(fs, 'f')).toBe('y');
    });

    it('dropping an unknown or already dropped snapshot is ENOSNAPSHOT', async () => {
      const fs = await ctx.make({});
      const snap = await fs.snapshot();
      await fs.dropSnapshot(snap);
      expect(await codeOf(fs.dropSnapshot(snap))).toBe('ENOSNAPSHOT');
      expect(await codeOf(fs.dropSnapshot('never-existed'))).toBe('ENOSNAPSHOT');
    });

    it('dropping one snapshot leaves the others restorable', async () => {
      const fs = await ctx.make({ files: { f: '1' } });
      const a = await fs.snapshot();
      await fs.write('f', '2');
      const b = await fs.snapshot();
      await fs.dropSnapshot(a);
      await fs.write('f', '3');
      await fs.restore(b);
      expect(await read(fs, 'f')).toBe('2');
    });

    it('an empty id is EINVAL', async () => {
      const fs = await ctx.make({});
      expect(await codeOf(fs.restore(''))).toBe('EINVAL');
      expect(await codeOf(fs.dropSnapshot(''))).toBe('EINVAL');
    });
  });

  describeWhen(ctx.caps.snapshots)('empty directories and modes', () => {
    itWhen(ctx.caps.snapshotsKeepEmptyDirs)('empty directories survive restore', async () => {
      const fs = await ctx.make({ dirs: ['empty', 'deep/empty'] });
      const snap = await fs.snapshot();
      await fs.delete('empty');
      await fs.delete('deep', { recursive: true });
      await fs.restore(snap);
      expect((await fs.stat('empty')).kind).toBe('directory');
      expect(await fs.list('deep/empty')).toEqual([]);
    });

    itWhen(!ctx.caps.snapshotsKeepEmptyDirs)('documented limitation: empty directories are not restored', async () => {
      const fs = await ctx.make({ files: { f: 'x' }, dirs: ['empty'] });
      const snap = await fs.snapshot();
      await fs.delete('empty');
      await fs.restore(snap);
      expect(await fs.exists('empty')).toBe(false);
      expect(await read(fs, 'f')).toBe('x');
    });

    itWhen(ctx.caps.permissions)('modes are restored', async () => {
      const fs = await ctx.make({ files: { 'f.txt': 'x', 'd/g.txt': 'y' } });
      const before = [(await fs.stat('f.txt')).mode, (await fs.stat('d')).mode, (await fs.stat('d/g.txt')).mode];
      expect(before.every((m) => typeof m === 'number')).toBe(true);
      const snap = await fs.snapshot();
      await fs.delete('f.txt');
      await fs.delete('d', { recursive: true });
      await fs.restore(snap);
      expect([(await fs.stat('f.txt')).mode, (await fs.stat('d')).mode, (await fs.stat('d/g.txt')).mode]).toEqual(before);
    });
  });
}
