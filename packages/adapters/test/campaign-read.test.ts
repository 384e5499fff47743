/**
 * Campaign on the one-guarded-call read (`WorkspaceFiles.readWithStat`, used
 * by Mastra's readFile and deepagents' read): each read is one audit record
 * and one operation of the budget, a link out of the root discloses nothing,
 * and a change on disk after a read still makes the agent's write refused.
 */

import { writeFile as writeHostFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileNotFoundError, IsDirectoryError, NotDirectoryError, StaleFileError } from '@mastra/core/workspace';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBackend } from '../src/deepagents/index.ts';
import { CtxfsWorkspaceFilesystem } from '../src/mastra/index.ts';
import { cleanUp, openWorkspace, type TestWorkspace } from './workspaces.ts';

afterAll(cleanUp);

const tree = { 'a.txt': 'one\n', 'b.txt': 'bee\n', 'd/x.txt': 'x\n', 'bin.dat': new Uint8Array([0, 1, 2, 0xff]) };

async function records(ws: TestWorkspace): Promise<string[]> {
  return (await ws.context.store.auditLog()).reverse().map((r) => `${r.op} ${r.path} ${r.result}`);
}

describe('a read through the adapters is one guarded call (host)', { timeout: 60_000 }, () => {
  it('Mastra readFile: one readBytes record a read, with its bytes; errors keep their Mastra class', async () => {
    const ws = await openWorkspace('host', tree);
    try {
      const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
      expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('one\n');
      expect([...((await m.readFile('/bin.dat')) as Buffer)]).toEqual([0, 1, 2, 0xff]);
      await expect(m.readFile('/missing.txt')).rejects.toBeInstanceOf(FileNotFoundError);
      await expect(m.readFile('/a.txt/')).rejects.toBeInstanceOf(NotDirectoryError);
      await expect(m.readFile('/d/')).rejects.toBeInstanceOf(IsDirectoryError);
      const log = await ws.context.store.auditLog();
      const reads = log.filter((r) => r.path === 'a.txt' || r.path === 'bin.dat' || r.path === 'missing.txt');
      expect(reads.map((r) => `${r.op} ${r.path} ${r.result}`).reverse()).toEqual([
        'readBytes a.txt ok',
        'readBytes bin.dat ok',
        'readBytes missing.txt error',
        'readBytes a.txt error',
      ]);
      expect(reads.find((r) => r.path === 'bin.dat')?.params).toMatchObject({ bytes: 4 });
      // Nothing else was recorded for the files read: no stat before each.
      expect(log.filter((r) => r.op === 'stat')).toEqual([]);
      // The slashed name is refused as ENOTDIR, recorded under the file's name.
      expect(log.find((r) => r.path === 'a.txt' && r.result !== 'ok')?.params).toMatchObject({ code: 'ENOTDIR' });
    } finally {
      await ws.close();
    }
  });

  it('deepagents read: one readBytes record a read; a missing file and a directory are "not found"', async () => {
    const ws = await openWorkspace('host', tree);
    try {
      const b = new CtxfsBackend({ context: ws.context });
      expect(await b.read('/a.txt')).toMatchObject({ content: 'one\n' });
      expect(await b.read('/missing.txt')).toEqual({ error: "File '/missing.txt' not found" });
      expect(await b.read('/d')).toEqual({ error: "File '/d' not found" });
      expect((await b.read('/a.txt/')).error).toMatch(/ENOTDIR/);
      expect((await b.readRaw('/bin.dat')).data?.content).toEqual(new Uint8Array([0, 1, 2, 0xff]));
      const log = await records(ws);
      expect(log.filter((r) => r.startsWith('readBytes a.txt') || r.startsWith('readBytes bin.dat'))).toEqual([
        'readBytes a.txt ok',
        'readBytes a.txt error',
        'readBytes bin.dat ok',
      ]);
      expect(log.filter((r) => r.startsWith('stat '))).toEqual([]);
    } finally {
      await ws.close();
    }
  });

  it('a link inside the root is read as its target; a link out of the root is refused or not found, naming no host path', async () => {
    const ws = await openWorkspace('host', tree);
    try {
      await ws.link?.('a.txt', 'in.lnk');
      await ws.link?.('/etc/hostname', 'out.lnk');
      const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
      const b = new CtxfsBackend({ context: ws.context });
      expect(await m.readFile('/in.lnk', { encoding: 'utf8' })).toBe('one\n');
      expect(await b.read('/in.lnk')).toMatchObject({ content: 'one\n' });
      const mastra = await m.readFile('/out.lnk').then(
        (v) => `value ${String(v)}`,
        (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`,
      );
      expect(mastra).toMatch(/^PermissionError/);
      const deep = JSON.stringify(await b.read('/out.lnk'));
      const raw = JSON.stringify(await b.readRaw('/out.lnk'));
      for (const said of [mastra, deep, raw]) {
        expect(said).not.toMatch(/\/etc\b|hostname/);
        expect(said).not.toContain(ws.hostRoot ?? '\0');
      }
      expect(deep).toBe(JSON.stringify({ error: "File '/out.lnk' not found" }));
    } finally {
      await ws.close();
    }
  });

  it('stale detection still works: a read then a write by the same agent commits; a change on disk after the read refuses the write', async () => {
    const ws = await openWorkspace('host', tree);
    try {
      const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
      expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('one\n');
      const a = await m.stat('/a.txt');
      await m.writeFile('/a.txt', 'two\n', { expectedMtime: a.modifiedAt });
      expect(new TextDecoder().decode(await ws.fs.readBytes('a.txt'))).toBe('two\n');

      expect(await m.readFile('/b.txt', { encoding: 'utf8' })).toBe('bee\n');
      const b = await m.stat('/b.txt');
      await writeHostFile(join(ws.hostRoot ?? '', 'b.txt'), 'changed on disk\n');
      await expect(m.writeFile('/b.txt', 'mine\n', { expectedMtime: b.modifiedAt })).rejects.toBeInstanceOf(StaleFileError);
      expect(new TextDecoder().decode(await ws.fs.readBytes('b.txt'))).toBe('changed on disk\n');
    } finally {
      await ws.close();
    }
  });

  it('deepagents: a read then an edit by the same agent commits; a change on disk after the read is merged or refused, never overwritten', async () => {
    const ws = await openWorkspace('host', { 'x.txt': 'alpha\nbeta\ngamma\n' });
    try {
      const b = new CtxfsBackend({ context: ws.context });
      expect(await b.read('/x.txt')).toMatchObject({ content: 'alpha\nbeta\ngamma\n' });
      expect((await b.edit('/x.txt', 'alpha', 'ALPHA')).error).toBeUndefined();
      expect(await b.read('/x.txt')).toMatchObject({ content: 'ALPHA\nbeta\ngamma\n' });
      // The file changes on disk after the read: a whole-file write from the stale read must not silently drop the change.
      await writeHostFile(join(ws.hostRoot ?? '', 'x.txt'), 'ALPHA\nbeta\nGAMMA\n');
      const w = await b.write('/x.txt', 'ALPHA\nBETA\ngamma\n');
      const now = new TextDecoder().decode(await ws.fs.readBytes('x.txt'));
      if (w.error === undefined) expect(now).toBe('ALPHA\nBETA\nGAMMA\n');
      else expect(now).toBe('ALPHA\nbeta\nGAMMA\n');
    } finally {
      await ws.close();
    }
  });

  it('a Mastra readFile and a deepagents read each count one operation of budgets.operations', async () => {
    const ws = await openWorkspace('host', tree, { safety: { policy: { budgets: { operations: 2 } } } });
    try {
      const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
      const b = new CtxfsBackend({ context: ws.context });
      expect(await m.readFile('/a.txt', { encoding: 'utf8' })).toBe('one\n');
      expect(await b.read('/b.txt')).toMatchObject({ content: 'bee\n' });
      await expect(m.readFile('/a.txt')).rejects.toThrow(/ELIMIT/);
      expect((await b.read('/b.txt')).error).toMatch(/ELIMIT/);
      expect((await records(ws)).slice(-2)).toEqual(['readBytes a.txt denied', 'readBytes b.txt denied']);
    } finally {
      await ws.close();
    }
  });

  // Found in this campaign after 3020b58 (fixed by c0838a1): a read that served nothing was audited as a successful readBytes.
  it('Mastra readFile of a directory throws IsDirectoryError, and the audit does not record a successful readBytes', async () => {
    const ws = await openWorkspace('host', { 'd/x.txt': 'x\n' });
    try {
      const m = new CtxfsWorkspaceFilesystem({ context: ws.context });
      await expect(m.readFile('/d')).rejects.toBeInstanceOf(IsDirectoryError);
      const log = await ws.context.store.auditLog({ path: 'd' });
      expect(log.map((r) => `${r.op} ${r.result}`)).not.toContain('readBytes ok');
    } finally {
      await ws.close();
    }
  });

  it('deepagents read of a link out of the root answers "not found", and the audit does not record a successful readBytes of it', async () => {
    const ws = await openWorkspace('host', { 'a.txt': 'a\n' });
    try {
      await ws.link?.('/etc/hostname', 'out.lnk');
      const b = new CtxfsBackend({ context: ws.context });
      expect(await b.read('/out.lnk')).toEqual({ error: "File '/out.lnk' not found" });
      const log = await ws.context.store.auditLog({ path: 'out.lnk' });
      expect(log.map((r) => `${r.op} ${r.result}`)).not.toContain('readBytes ok');
    } finally {
      await ws.close();
    }
  });
});
