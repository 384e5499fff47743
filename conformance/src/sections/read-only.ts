/**
 * Read-only mode: every mutation is refused with `EROFS` (carrying the
 * operation and path) before anything changes; every read still works.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { collect, itWhen, type SuiteContext, text, utf8 } from '../context.ts';

const FILES = { 'a.txt': 'alpha\nbeta\n', 'dir/b.txt': 'bravo\n', 'dir/sub/c.bin': new Uint8Array([0, 1, 2, 255]) };
const DIRS = ['empty'];

async function dump(fs: Filesystem): Promise<string[]> {
  const out: string[] = [];
  for await (const m of fs.glob('**', { dot: true })) {
    out.push(m.kind === 'file' ? `${m.path}=${Buffer.from(await fs.readBytes(m.path)).toString('hex')}` : `${m.path}/`);
  }
  return out;
}

type Mutation = readonly [name: string, op: string, path: string, run: (fs: Filesystem) => Promise<unknown>];

const MUTATIONS: readonly Mutation[] = [
  ['openWrite overwrite', 'openWrite', 'a.txt', (fs) => fs.openWrite('a.txt')],
  ['openWrite create', 'openWrite', 'new.txt', (fs) => fs.openWrite('new.txt', { mode: 'create' })],
  ['openWrite append', 'openWrite', 'a.txt', (fs) => fs.openWrite('a.txt', { mode: 'append' })],
  ['openWrite createParents', 'openWrite', 'x/y/z.txt', (fs) => fs.openWrite('x/y/z.txt', { createParents: true })],
  ['writeBytes', 'writeBytes', 'a.txt', (fs) => fs.writeBytes('a.txt', utf8('x'))],
  ['write', 'write', 'a.txt', (fs) => fs.write('a.txt', 'x')],
  ['write new file', 'write', 'n.txt', (fs) => fs.write('n.txt', 'x')],
  ['delete file', 'delete', 'a.txt', (fs) => fs.delete('a.txt')],
  ['delete dir recursive', 'delete', 'dir', (fs) => fs.delete('dir', { recursive: true })],
  ['delete missing with force', 'delete', 'missing', (fs) => fs.delete('missing', { force: true })],
  ['mkdir', 'mkdir', 'newdir', (fs) => fs.mkdir('newdir')],
  ['mkdir parents', 'mkdir', 'p/q', (fs) => fs.mkdir('p/q', { parents: true })],
  ['rename file', 'rename', 'a.txt', (fs) => fs.rename('a.txt', 'b.txt')],
  ['rename dir', 'rename', 'dir', (fs) => fs.rename('dir', 'dir2')],
  ['copy file', 'copy', 'a.txt', (fs) => fs.copy('a.txt', 'copy.txt')],
  ['copy dir', 'copy', 'dir', (fs) => fs.copy('dir', 'dir-copy', { recursive: true })],
];

export function readOnlySection(ctx: SuiteContext): void {
  const make = () => ctx.make({ files: FILES, dirs: DIRS, readOnly: true });

  it('readOnly and capabilities.readOnly are true', async () => {
    const fs = await make();
    expect(fs.readOnly).toBe(true);
    expect(fs.capabilities.readOnly).toBe(true);
  });

  it('a writable instance says readOnly false', async () => {
    const fs = await ctx.make({ files: FILES });
    expect(fs.readOnly).toBe(false);
    expect(fs.capabilities.readOnly).toBe(false);
  });

  describe('mutations are EROFS and change nothing', () => {
    it.each(MUTATIONS)('%s', async (_name, op, path, run) => {
      const fs = await make();
      const before = await dump(fs);
      const err = await run(fs).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EROFS', op });
      expect((err as { path?: string }).path).toBe(path);
      expect(typeof (err as { hint?: unknown }).hint).toBe('string');
      expect(await dump(fs)).toEqual(before);
    });

    it('restore is EROFS', async () => {
      const fs = await make();
      const before = await dump(fs);
      const err = await fs.restore('any-snapshot').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: ctx.caps.snapshots ? 'EROFS' : 'EUNSUPPORTED', op: 'restore' });
      expect(await dump(fs)).toEqual(before);
    });
  });

  describe('reads still work', () => {
    it('exists, stat, list', async () => {
      const fs = await make();
      expect(await fs.exists('a.txt')).toBe(true);
      expect(await fs.exists('nope')).toBe(false);
      expect(await fs.stat('dir/sub/c.bin')).toMatchObject({ kind: 'file', size: 4 });
      expect((await fs.list()).map((e) => e.name)).toEqual(['a.txt', 'dir', 'empty']);
    });

    it('openRead and readBytes', async () => {
      const fs = await make();
      const reader = await fs.openRead('dir/sub/c.bin');
      expect(Buffer.concat(await collect(reader))).toEqual(Buffer.from([0, 1, 2, 255]));
      await reader.close();
      expect(text(await fs.readBytes('a.txt', { offset: 6 }))).toBe('beta\n');
    });

    it('openText and read', async () => {
      const fs = await make();
      const t = await fs.openText('a.txt');
      expect(await collect(t.lines())).toEqual(['alpha', 'beta']);
      await t.close();
      expect((await fs.read('a.txt', { offset: 1 })).lines).toEqual(['beta']);
    });

    it('glob and grep', async () => {
      const fs = await make();
      expect((await collect(fs.glob('**/*.txt'))).map((m) => m.path)).toEqual(['a.txt', 'dir/b.txt']);
      expect((await collect(fs.grep('a$'))).map((m) => `${m.path}:${m.line}`)).toEqual(['a.txt:1', 'a.txt:2']);
    });

    it('walk', async () => {
      const fs = await make();
      const entries = (await collect(fs.walk('', { stat: true }))).flat();
      expect(entries.map((e) => `${e.path}:${e.kind}:${e.stat?.size}`).sort()).toEqual([
        'a.txt:file:11',
        'dir/b.txt:file:6',
        'dir/sub/c.bin:file:4',
        'dir/sub:directory:0',
        'dir:directory:0',
        'empty:directory:0',
      ]);
    });

    itWhen(ctx.caps.snapshots)('snapshot and listSnapshots are allowed (they do not mutate the workspace)', async () => {
      const fs = await make();
      const snap = await fs.snapshot('ro');
      expect((await fs.listSnapshots()).map((s) => s.id)).toContain(snap.id);
    });
  });
}
