/**
 * Campaign on the trailing-slash rule (core's `trailingSlashError`): on every
 * backend, and through the context layer over it, a name ending in `/` is
 * never read, written or deleted as a file; each refusal names the name and
 * the fix, and nothing on disk changes.
 */

import { type FsError, isFsError } from '@ctxfs/core';
import { afterAll, describe, expect, it } from 'vitest';
import { backends, cleanUp, openWorkspace, type TestWorkspace } from './workspaces.ts';

afterAll(cleanUp);

const enc = (s: string) => new TextEncoder().encode(s);

async function errorOf(call: () => Promise<unknown>): Promise<FsError> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFsError(err)) throw new Error(`expected an FsError, got ${String(err)}`);
  return err;
}

async function unchanged(ws: TestWorkspace): Promise<void> {
  expect(new TextDecoder().decode(await ws.fs.readBytes('a.txt'))).toBe('a\n');
  expect((await ws.fs.list('')).map((e) => e.path).sort()).toEqual(['a.txt', 'd']);
}

for (const backend of await backends()) {
  describe(`a name ending in "/" on ${backend}`, { timeout: 60_000 }, () => {
    it('core: a file named with a slash is ENOTDIR for every call taking a file; a file written where nothing is, EISDIR; nothing changes', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n', 'd/x.txt': 'x\n' });
      try {
        const fs = ws.fs;
        for (const [label, call] of [
          ['readBytes', () => fs.readBytes('a.txt/')],
          ['read', () => fs.read('a.txt/')],
          ['openRead', () => fs.openRead('a.txt/')],
          ['openText', () => fs.openText('a.txt/')],
          ['stat', () => fs.stat('a.txt/')],
          ['writeBytes', () => fs.writeBytes('a.txt/', enc('b\n'))],
          ['append', () => fs.writeBytes('a.txt/', enc('b\n'), { mode: 'append' })],
          ['write', () => fs.write('a.txt/', 'b\n')],
          ['openWrite', () => fs.openWrite('a.txt/')],
          ['delete', () => fs.delete('a.txt/')],
        ] as const) {
          const err = await errorOf(call);
          expect(err.code, label).toBe('ENOTDIR');
          expect(err.path, label).toBe('a.txt/');
          expect(err.hint, label).toBe('drop the trailing "/" to name it: a.txt');
        }
        for (const [label, call] of [
          ['writeBytes', () => fs.writeBytes('new/', enc('n\n'))],
          ['writeBytes createParents', () => fs.writeBytes('d/new/', enc('n\n'), { createParents: true })],
          ['write', () => fs.write('new/', 'n\n')],
          ['openWrite', () => fs.openWrite('new/')],
        ] as const) {
          const err = await errorOf(call);
          expect(err.code, label).toBe('EISDIR');
          expect(err.path, label).toMatch(/^(d\/)?new\/$/);
          expect(err.hint, label).toMatch(/^drop the trailing "\/" to name a file: (d\/)?new$/);
        }
        expect(await fs.exists('a.txt/')).toBe(false);
        // A directory named with its slash is the directory.
        expect((await fs.stat('d/')).kind).toBe('directory');
        expect((await fs.list('d/')).map((e) => e.path)).toEqual(['d/x.txt']);
        expect((await errorOf(() => fs.readBytes('d/'))).code).toBe('EISDIR');
        await unchanged(ws);
        expect((await fs.list('d')).map((e) => e.path)).toEqual(['d/x.txt']);
      } finally {
        await ws.close();
      }
    });

    it('the context layer: every file-taking call refuses a slashed name as ENOTDIR without touching the disk', async () => {
      const ws = await openWorkspace(backend, { 'a.txt': 'a\n', 'd/x.txt': 'x\n' });
      try {
        const ctx = ws.context;
        for (const [label, call] of [
          ['readFile', () => ctx.readFile('a.txt/')],
          ['readLines', () => ctx.readLines('a.txt/', 1, 1)],
          ['getOutline', () => ctx.getOutline('a.txt/')],
          ['readFile dir', () => ctx.readFile('d/')],
        ] as const) {
          const err = await errorOf(call);
          expect(err.code, label).toBe('ENOTDIR');
          expect(err.hint, label).toMatch(/^remove the trailing slash: "(a\.txt|d)"$/);
        }
        for (const [label, call] of [
          ['writeFile new', () => ctx.writeFile('new/', 'n\n')],
          ['writeFile a.txt', () => ctx.writeFile('a.txt/', 'b\n')],
          ['replace', () => ctx.replace('a.txt/', 'a', 'b')],
        ] as const) {
          const r = (await call()) as { success: boolean; code?: string; message: string };
          expect(r.success, label).toBe(false);
          expect(r.code, label).toBe('ENOTDIR');
          expect(r.message, label).toMatch(/ends with a slash, which names a directory/);
        }
        await unchanged(ws);
        // Each refusal is in the audit, none as a change.
        const log = await ctx.store.auditLog();
        expect(log.filter((r) => r.result === 'ok' && ['writeFile', 'replace', 'write'].includes(r.op))).toEqual([]);
      } finally {
        await ws.close();
      }
    });
  });
}
