/**
 * Crash consistency: a change interrupted at any point — in process (the
 * edit stops forever at a journal step) or for real (a child process
 * SIGKILLed at random moments) — is settled on the next open so that every
 * file agrees with its newest version, and a multi-file change is either
 * complete or absent.
 */

import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fsError } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { type ContextLayer, type CrashHook, createContext, SqliteStateStore } from '../src/index.ts';
import { PostgresStateStore } from '../src/state/postgres-store.ts';
import { BACKENDS, memoryBackend } from './backends.ts';
import { runAndKill } from './support/kill-child.ts';
import { testSchemaName } from './support/test-state.ts';

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
const here = dirname(fileURLToPath(import.meta.url));

/**
 * Files and version records agree. A file ctxfs has not edited yet may have no
 * record, but then it must still hold its seed content (`untouched`).
 */
async function assertConsistent(ctx: ContextLayer, paths: readonly string[], untouched: Readonly<Record<string, string>> = {}): Promise<void> {
  expect(await ctx.journal.pending()).toEqual([]);
  for (const p of paths) {
    const exists = await ctx.fs.exists(p);
    const latest = await ctx.versions.latest(p);
    if (!exists) expect(latest === undefined || latest.sha256 === undefined).toBe(true);
    else if (latest === undefined && p in untouched) expect(new TextDecoder().decode(await ctx.fs.readBytes(p)), p).toBe(untouched[p]);
    else expect(latest?.sha256, p).toBe(sha(await ctx.fs.readBytes(p)));
  }
}

const POINTS: Array<{ point: Parameters<CrashHook>[0]; index: number; expectNew: boolean }> = [
  { point: 'after-intent', index: 0, expectNew: false },
  { point: 'after-write', index: 0, expectNew: false },
  { point: 'after-write', index: 1, expectNew: true },
  { point: 'before-record', index: 0, expectNew: true },
];

for (const backend of BACKENDS) {
  describe(`crash recovery over ${backend.name}`, () => {
    for (const { point, index, expectNew } of POINTS) {
      it(`a two-file patch stopped at ${point} #${index} is ${expectNew ? 'completed' : 'rolled back'} on open`, async () => {
        const ws = await backend.create({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
        const store = await SqliteStateStore.open();
        let stopped!: () => void;
        const reached = new Promise<void>((r) => {
          stopped = r;
        });
        const hook: CrashHook = (p, i) => {
          if (p !== point || i !== index) return;
          stopped();
          return new Promise<void>(() => {}); // the process "dies" here: nothing after this runs
        };
        // The "dying" editor gets its own handle on the workspace, as another process would have:
        // its in-process locks must not block the recovery (a dead process holds none).
        const stateDir = mkdtempSync(join(tmpdir(), 'ctxfs-crash-state-'));
        const dyingFs = backend.name === 'host' ? await HostFilesystem.open({ root: ws.fs.root, stateDir, locks: { crossProcess: false } }) : ws.fs;
        const first = await createContext({ fs: dyingFs, store, edits: { crashHook: hook } });
        await first.readFile('a.txt');
        void first.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ @@\n-b\n+B\n');
        await reached;
        expect(await first.journal.pending()).toHaveLength(1);
        // While the first context is open its change is in flight, and recovery leaves it to it.
        expect((await createContext({ fs: ws.fs, store })).recovery.inFlight).toHaveLength(1);
        // Its "death": a closed journal's unfinished change is settled by the next open.
        await first.close();
        const reopened = await createContext({ fs: ws.fs, store });
        expect(reopened.recovery[expectNew ? 'completed' : 'rolledBack']).toHaveLength(1);
        const a = new TextDecoder().decode(await ws.fs.readBytes('a.txt'));
        const b = new TextDecoder().decode(await ws.fs.readBytes('b.txt'));
        expect([a, b]).toEqual(expectNew ? ['A\n', 'B\n'] : ['a\n', 'b\n']);
        await assertConsistent(reopened, ['a.txt', 'b.txt']);
        if (expectNew) expect((await reopened.history('a.txt')).map((v) => v.op)).toEqual(['patch', 'initial']);
        else expect((await reopened.history('a.txt')).map((v) => v.op)).toEqual(['initial']);
        await store.close();
        await ws.cleanup();
        rmSync(stateDir, { recursive: true, force: true });
      });
    }

    it('a stopped create and a stopped delete are settled too', async () => {
      const ws = await backend.create({ 'gone.txt': 'bye\n' });
      const store = await SqliteStateStore.open();
      let stoppedAt = 0;
      const hang: CrashHook = (p) => {
        if (p !== 'before-record') return;
        stoppedAt++;
        return new Promise<void>(() => {});
      };
      const stateDir = mkdtempSync(join(tmpdir(), 'ctxfs-crash-state-'));
      const dyingFs = backend.name === 'host' ? await HostFilesystem.open({ root: ws.fs.root, stateDir, locks: { crossProcess: false } }) : ws.fs;
      const first = await createContext({ fs: dyingFs, store, edits: { crashHook: hang } });
      void first.createFile('new.txt', 'hi\n');
      void first.deleteFile('gone.txt');
      // Both written and about to be recorded (an intent alone is not enough: its file may not be written yet).
      for (let i = 0; i < 1000 && stoppedAt < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect((await first.journal.pending()).map((p) => p.op).sort()).toEqual(['create', 'delete']);
      await first.close();
      const reopened = await createContext({ fs: ws.fs, store });
      expect(reopened.recovery.completed).toHaveLength(2);
      await assertConsistent(reopened, ['new.txt', 'gone.txt']);
      expect((await reopened.history('gone.txt'))[0]?.op).toBe('delete');
      await store.close();
      await ws.cleanup();
      rmSync(stateDir, { recursive: true, force: true });
    });
  });
}

describe('a change that could be neither written nor put back', () => {
  it("is kept as the context's own and settled against the files by its next call, not left in flight while the process lives", async () => {
    const ws = await memoryBackend.create({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const store = await SqliteStateStore.open();
    const ctx = await createContext({ fs: ws.fs, store });
    try {
      // b.txt's write fails after a.txt's; putting a.txt back needs its old content from the store, which fails once too.
      const fs = ws.fs;
      const write = fs.writeBytes.bind(fs);
      fs.writeBytes = async (path, bytes, options) => {
        if (path === 'b.txt') throw fsError('EIO', 'writeBytes', path, { reason: 'the disk failed' });
        return write(path, bytes, options);
      };
      const versions = ctx.journal.versions;
      const get = versions.getBlob.bind(versions);
      let failGet = true;
      versions.getBlob = async (sha256) => {
        if (failGet) {
          failGet = false;
          throw fsError('EUNAVAILABLE', 'getBlob', undefined, { reason: 'the state store cannot be reached' });
        }
        return get(sha256);
      };
      const refused = await ctx.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ @@\n-b\n+B\n');
      expect(refused).toMatchObject({ success: false, code: 'EIO' });
      expect(refused.message).toMatch(/Putting the files back failed too; the journal keeps the change and settles it against the files at a later call\./);
      expect(failGet).toBe(false);
      expect(new TextDecoder().decode(await ws.fs.readBytes('a.txt'))).toBe('A\n');
      expect(await ctx.journal.pending()).toHaveLength(1);
      fs.writeBytes = write;
      // The next call puts a.txt back before it reads, and forgets the intent.
      expect((await ctx.readFile('a.txt')).text).toContain('\na\n');
      expect(new TextDecoder().decode(await ws.fs.readBytes('a.txt'))).toBe('a\n');
      await assertConsistent(ctx, ['a.txt', 'b.txt'], { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    } finally {
      await ctx.close();
      await store.close();
      await ws.cleanup();
    }
  });
});

/**
 * The audit and the files agree: every recorded change has exactly one
 * audit record naming it, and every audit record of an applied change names
 * a recorded change.
 */
async function assertAuditAgrees(ctx: ContextLayer): Promise<number> {
  const changes = ((await ctx.store.all('SELECT DISTINCT change_id AS id FROM history WHERE change_id IS NOT NULL')) as Array<{ id: string }>).map((r) => r.id);
  const audited = ((await ctx.store.all("SELECT change_id AS id FROM audit WHERE change_id IS NOT NULL AND result = 'ok'")) as Array<{ id: string }>).map(
    (r) => r.id,
  );
  expect(audited.length, 'one record per change').toBe(new Set(audited).size);
  expect(new Set(audited)).toEqual(new Set(changes));
  return audited.length;
}

// Kills of the SIGKILL test; CTXFS_CRASH_KILLS raises it for a longer campaign.
const KILLS = Number(process.env.CTXFS_CRASH_KILLS ?? 200);

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
/**
 * The stores the kills run against: a SQLite file, and a schema of its own
 * on the test server (fewer kills there: each reopen connects a pool).
 */
const stores: Array<{ name: string; kills: number; window: { minMs: number; spreadMs: number }; state: (base: string) => string }> = [
  { name: 'SQLite', kills: KILLS, window: { minMs: 10, spreadMs: 120 }, state: (base) => join(base, 'state.db') },
];
if (PG_URL !== undefined || process.env.CI) {
  stores.push({
    name: 'PostgreSQL',
    kills: Math.ceil(KILLS / 5),
    // Each step is several round trips: a wider window lets a child complete changes before its kill (7 in 40 rounds with SQLite's, in CI).
    window: { minMs: 50, spreadMs: 400 },
    state: () => {
      if (PG_URL === undefined) throw new Error('CTXFS_TEST_POSTGRES_URL: the kills over PostgreSQL must run in CI (see .ci/system-deps.sh)');
      return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${testSchemaName('crash_')}`;
    },
  });
}

describe.each(stores)('crash recovery after SIGKILL of a real process (host, $name)', ({ name, kills: KILLS, window, state }) => {
  it('every kill leaves files, versions and the audit in agreement, two-file changes whole; the audit chain verifies', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-crash-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    writeFileSync(join(root, 'a.txt'), 'head\nn=0\ntail\n');
    writeFileSync(join(root, 'b.txt'), 'head\nn=0\ntail\n');
    writeFileSync(join(root, 'c.txt'), 'c\n');
    const db = state(base);
    const stateDir = join(base, 'host-state');
    let recoveredChanges = 0;
    let lastN = 0;
    try {
      let audited = 0;
      for (let round = 0; round < KILLS; round++) {
        await runAndKill(join(here, 'support', 'crash-child.ts'), [root, db, stateDir, join(base, `locks-${round}`), join(base, 'audit')], {
          ...window,
        });

        // The killed child's lock files would only be taken over once stale; the child is
        // known dead here, so this process skips cross-process locks.
        const fs = await HostFilesystem.open({ root, stateDir, durability: 'none', locks: { crossProcess: false } });
        const ctx = await createContext({
          fs,
          store: db,
          safety: { policyFiles: false, auditTrail: { dir: join(base, 'audit'), key: { keyFile: join(base, 'audit.key') } } },
        });
        recoveredChanges += ctx.recovery.completed.length + ctx.recovery.rolledBack.length;
        // A kill before the child's first change of a file (a loaded machine can kill the first child before
        // it records anything) leaves that file unrecorded and as seeded.
        await assertConsistent(ctx, ['a.txt', 'b.txt', 'c.txt'], { 'a.txt': 'head\nn=0\ntail\n', 'b.txt': 'head\nn=0\ntail\n', 'c.txt': 'c\n' });
        const na = /n=(\d+)/.exec(readFileSync(join(root, 'a.txt'), 'utf8'))?.[1];
        const nb = /n=(\d+)/.exec(readFileSync(join(root, 'b.txt'), 'utf8'))?.[1];
        expect(na).toBe(nb);
        expect(Number(na)).toBeGreaterThanOrEqual(lastN);
        lastN = Number(na);
        // The history of a.txt counts every completed step, none twice.
        const steps = (await ctx.history('a.txt', 100_000)).filter((v) => v.op === 'patch').length;
        expect(steps).toBe(lastN);
        audited = await assertAuditAgrees(ctx);
        // The store's one chain holds every record the killed children committed, linked.
        expect(await ctx.store.verifyAudit()).toMatchObject({ ok: true });
        // The keyed copy verifies, and names the same changes (what a kill kept from it is replayed on open).
        const trail = ctx.auditTrail;
        expect(trail?.verify().ok).toBe(true);
        const trailed = new Set(
          (trail?.query({ result: 'ok', limit: 1_000_000 }) ?? []).map((r) => (r.params as { changeId?: string }).changeId).filter(Boolean),
        );
        expect(trailed.size).toBe(audited);
        await ctx.close();
        await fs.close();
      }
      expect(lastN).toBeGreaterThan(0);
      console.log(
        `[sigkill ${name}] ${KILLS} kills, ${lastN} two-file changes completed, ${recoveredChanges} interrupted changes settled on reopen, ${audited} audited changes, each with its one record`,
      );
    } finally {
      rmSync(base, { recursive: true, force: true });
      if (db.startsWith('postgres')) {
        const schema = /[?&]schema=(\w+)/.exec(db)?.[1] as string;
        const admin = await PostgresStateStore.open({ url: db });
        await admin.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.close();
      }
    }
  }, 900_000);
});
