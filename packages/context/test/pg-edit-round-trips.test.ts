/**
 * The round trips an edit waits for on PostgreSQL (issue 21): a one-line
 * `replace` and a one-hunk `applyPatch` of a 1 KB file, counted as the
 * state-store bench counts them (test/support/pg-round-trips.ts), and what
 * the fewer round trips must keep: one version and one audit record per
 * edit, the journal empty, the chain verified, a stale edit merged. Runs at
 * CTXFS_TEST_POSTGRES_URL (a schema of its own per test, dropped after);
 * in CI a missing URL fails the file instead of skipping it.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import pg from 'pg';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { PostgresStateStore } from '../src/state/postgres-store.ts';
import { countRoundTrips } from './support/pg-round-trips.ts';
import { testSchemaName } from './support/test-state.ts';

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
// In CI the PostgreSQL cases must run: a missing server fails the run, never a silent skip (./run-tests sets the URL).
if (PG_URL === undefined && process.env.CI)
  throw new Error('CTXFS_TEST_POSTGRES_URL is not set: bash .ci/system-deps.sh starts PostgreSQL and ./run-tests passes its URL');
const dir = mkdtempSync(join(tmpdir(), 'ctxfs-pg-edit-'));
const schemas: string[] = [];
let made = 0;

/** 1,024 bytes: 16 lines of 64, as the bench's files. */
function kilobyte(name: string): string {
  return Array.from({ length: 16 }, (_, i) => `${name} line ${String(i).padStart(2, '0')} `.padEnd(63, 'x')).join('\n') + '\n';
}

const PROFILE = { base: 'large', sessionTokens: 1e12 } as const;

/** A host workspace holding `files`, and a context on a PostgreSQL schema of its own (and its URL, for a second host). */
async function open(files: Record<string, string>, agent = 'llm:a'): Promise<{ ctx: ContextLayer; url: string; fs: HostFilesystem; root: string }> {
  const root = join(dir, `ws${++made}`);
  mkdirSync(root);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  const fs = await HostFilesystem.open({ root, stateDir: join(dir, `state${made}`) });
  onTestFinished(() => fs.close());
  const schema = testSchemaName('edit_rt_');
  schemas.push(schema);
  const url = `${PG_URL}${(PG_URL as string).includes('?') ? '&' : '?'}schema=${schema}`;
  const ctx = await createContext({ fs, store: url, agent, profile: PROFILE });
  onTestFinished(() => ctx.close());
  return { ctx, url, fs, root };
}

/** What the store holds of each edit: versions, audit records of changes, intents left. */
async function books(ctx: ContextLayer, path: string): Promise<{ versions: number[]; changes: number; journal: number }> {
  const versions = (await ctx.store.all<{ seq: number }>('SELECT seq FROM history WHERE path = ? ORDER BY seq', [path])).map((r) => Number(r.seq));
  await ctx.store.flushAudit();
  const changes = await ctx.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit WHERE change_id IS NOT NULL');
  const journal = await ctx.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM edit_journal');
  return { versions, changes: Number(changes?.n), journal: Number(journal?.n) };
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (PG_URL === undefined || schemas.length === 0) return;
  const admin = await PostgresStateStore.open({ url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schemas[0]}` });
  for (const schema of schemas) await admin.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

describe.skipIf(PG_URL === undefined)('round trips of an edit on PostgreSQL', () => {
  const roundTrips = <T>(fn: () => Promise<T>) => countRoundTrips(pg, fn);

  test('a one-line replace of a 1 KB file, back and forth as the bench edits, waits for at most 6 round trips', async () => {
    const text = kilobyte('replace');
    const { ctx } = await open({ 'a.txt': text });
    let forward = true;
    const toggle = async () => {
      const [from, to] = forward ? ['replace line 07 x', 'replace line 07 y'] : ['replace line 07 y', 'replace line 07 x'];
      forward = !forward;
      const r = await ctx.replace('a.txt', from, to);
      expect(r.success, r.message).toBe(true);
      return r;
    };
    // Warm: connections open, statements prepared, both contents stored.
    for (let i = 0; i < 4; i++) await toggle();
    const counted = await roundTrips(toggle);
    // The session's spend read, the file's lock with the edit's reads, the intent, the record, the reads after it, the lock's release.
    expect(counted.waited, counted.statements.join('\n')).toBeLessThanOrEqual(6);
    const b = await books(ctx, 'a.txt');
    expect(b.versions).toEqual([1, 2, 3, 4, 5, 6]);
    expect(b.changes).toBe(5);
    expect(b.journal).toBe(0);
    expect(await ctx.store.verifyAudit()).toMatchObject({ ok: true });
  });

  test('a one-hunk applyPatch waits for at most 6 round trips', async () => {
    const text = kilobyte('patch');
    const { ctx } = await open({ 'p.txt': text });
    const lines = text.split('\n');
    const [before, line, after] = [lines[6] as string, lines[7] as string, lines[8] as string];
    const changed = `${line.slice(0, -1)}y`;
    const patch = (from: string, to: string) => `--- a/p.txt\n+++ b/p.txt\n@@ -7,3 +7,3 @@\n ${before}\n-${from}\n+${to}\n ${after}\n`;
    let forward = true;
    const toggle = async () => {
      const r = await ctx.applyPatch(forward ? patch(line, changed) : patch(changed, line));
      forward = !forward;
      expect(r.success, r.message).toBe(true);
    };
    for (let i = 0; i < 4; i++) await toggle();
    const counted = await roundTrips(toggle);
    expect(counted.waited, counted.statements.join('\n')).toBeLessThanOrEqual(6);
    expect((await books(ctx, 'p.txt')).journal).toBe(0);
  });

  test('an edit to content never stored before is stored as a delta and waits for at most 6 round trips', async () => {
    const text = kilobyte('fresh');
    const { ctx } = await open({ 'f.txt': text });
    let n = 0;
    const edit = async () => {
      const r = await ctx.replace('f.txt', `fresh line 07 ${n === 0 ? '' : `v${n} `}`, `fresh line 07 v${n + 1} `);
      n++;
      expect(r.success, r.message).toBe(true);
      return r;
    };
    for (let i = 0; i < 3; i++) await edit();
    const counted = await roundTrips(edit);
    expect(counted.waited, counted.statements.join('\n')).toBeLessThanOrEqual(6);
    const version = counted.value.version as string;
    const stored = await ctx.store.get<{ base: string | null; depth: number }>('SELECT base, depth FROM blobs WHERE sha256 = ?', [version]);
    expect(stored?.base).not.toBeNull();
    expect(Number(stored?.depth)).toBeGreaterThan(0);
    const b = await books(ctx, 'f.txt');
    expect(b.versions).toEqual([1, 2, 3, 4, 5]);
    expect(b.journal).toBe(0);
  });

  test('edits of one file from two hosts still serialize and merge: no version lost, every seq once, the chain verified', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `shared line ${String(i).padStart(2, '0')} v0`);
    const { ctx: a, url, root } = await open({ 's.txt': `${lines.join('\n')}\n` });
    // Another host: its own backend over the same files, its own store (pool and lock connections) on the same schema.
    const otherFs = await HostFilesystem.open({ root, stateDir: join(dir, `state${made}-b`) });
    onTestFinished(() => otherFs.close());
    const b = await createContext({ fs: otherFs, store: url, agent: 'llm:b', profile: PROFILE });
    onTestFinished(() => b.close());
    await a.readFile('s.txt');
    await b.readFile('s.txt');
    const edits: Array<Promise<unknown>> = [];
    for (let i = 0; i < 10; i++) {
      // a edits even lines, b odd lines 20 apart: each edit is based on a read the other host has made stale.
      edits.push(a.replace('s.txt', `shared line ${String(i * 2).padStart(2, '0')} v0`, `shared line ${String(i * 2).padStart(2, '0')} a`));
      edits.push(b.replace('s.txt', `shared line ${String(21 + i * 2).padStart(2, '0')} v0`, `shared line ${String(21 + i * 2).padStart(2, '0')} b`));
    }
    const results = (await Promise.all(edits)) as Array<{ success: boolean; message: string }>;
    for (const r of results) expect(r.success, r.message).toBe(true);
    const final = readFileSync(join(root, 's.txt'), 'utf8');
    for (let i = 0; i < 10; i++) {
      expect(final).toContain(`shared line ${String(i * 2).padStart(2, '0')} a`);
      expect(final).toContain(`shared line ${String(21 + i * 2).padStart(2, '0')} b`);
    }
    const bk = await books(a, 's.txt');
    // The first edit records the initial content, then one version an edit.
    expect(bk.versions).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(bk.changes).toBe(20);
    expect(bk.journal).toBe(0);
    expect(await a.store.verifyAudit()).toMatchObject({ ok: true });
  });
});
