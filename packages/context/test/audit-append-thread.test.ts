/**
 * The trail's append thread (issue 12): batches of committed records handed
 * to `appendLater` are written by a worker thread, as another writer on the
 * log; whatever the trail does next waits for them, so the chain holds
 * every record once, in the order handed over, indexed, and verifies.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { type AuditEntry, AuditTrail, SqliteStateStore } from '../src/index.ts';
import { entryFields } from '../src/safety/audit/audit-record.ts';
import { ChainKey } from '../src/safety/audit/chain-key.ts';
import { sealFieldsJson, sealLine } from '../src/safety/audit/chain-line.ts';
import { entryJson } from '../src/safety/audit/entry-writer.ts';

const root = mkdtempSync(join(tmpdir(), 'ctxfs-audit-thread-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const KEY = new Uint8Array(32).fill(9);

async function place(): Promise<{ dir: string; store: SqliteStateStore }> {
  const base = join(root, `case-${++n}`);
  const store = await SqliteStateStore.open({ path: join(base, 'state.db') });
  onTestFinished(() => store.close());
  return { dir: join(base, 'audit'), store };
}

let requests = 0;
/** A read's record, of its own request. */
const READ = { op: 'readFile', opClass: 'read', paths: ['src/a.ts'], result: 'ok', durationMs: 3 } as const;
const WHO = { sessionId: 's1', agent: 'llm:claude', backend: 'host', user: 'dev' };
const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({ ...READ, ...WHO, requestId: `r${++requests}`, params: { maxTokens: 800 }, ...over });

const batchOf = (k: number, over: Partial<AuditEntry> = {}) => Array.from({ length: k }, () => entry(over));

/** Hands batches over until the thread has opened (it starts on the second and opens a moment later). */
async function threaded(trail: AuditTrail): Promise<string[]> {
  const handed: string[] = [];
  for (let i = 0; i < 400 && !trail.threaded; i++) {
    const batch = batchOf(2);
    trail.appendLater(batch);
    handed.push(...batch.map((e) => e.requestId as string));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(trail.threaded).toBe(true);
  return handed;
}

/** Request ids of the log's entries in chain order. */
function inOrder(trail: AuditTrail): string[] {
  return trail
    .scan({ limit: 1_000_000 })
    .reverse()
    .map((r) => r.requestId);
}

test('the thread seals the JSON the caller made of an entry into the bytes the trail writes of the entry itself', () => {
  // The caller serializes each entry once (entryJson) and the thread seals that text as it is: its lines must be the trail's own.
  const key = new ChainKey(KEY);
  const awkward = entry({
    paths: ['src/ünïcødé 日本語.ts', 'C:\\dir\\"q".ts'],
    params: { old: 'a\nb', new: 'x'.repeat(300), lone: 'a\ud800b', nested: { deep: [1, null, 'z'] } },
    code: 'EACCES',
    tokens: 7,
    approval: { required: true, by: 'user', approver: 'ana' },
    before: { 'src/a.ts': 'f'.repeat(64) },
    diff: { files: 1, added: 2, removed: 3 },
    durationMs: 0.25,
  });
  for (const e of [entry(), awkward]) {
    const json = entryJson(e);
    const fields = entryFields(e, e.requestId as string);
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(fields)));
    const ts = new Date().toISOString();
    const prev = 'a1'.repeat(32);
    const theirs = sealFieldsJson(42, prev, ts, 'entry', json, key);
    const ours = sealLine({ seq: 42, prev, ts, type: 'entry', ...fields }, key);
    expect(theirs.bytes.toString('utf8')).toBe(ours.bytes.toString('utf8'));
    expect(theirs.mac).toBe(ours.mac);
  }
});

describe('appendLater', () => {
  test('batches go to the thread; appends, tip and queries after them see them first, in the order handed over', async () => {
    const { dir, store } = await place();
    const trail = AuditTrail.open({ dir, key: KEY, index: store });
    const want = await threaded(trail);
    for (let i = 0; i < 20; i++) {
      const later = batchOf(16);
      trail.appendLater(later);
      want.push(...later.map((e) => e.requestId as string));
      // A record appended here comes after the batch handed over before it.
      if (i % 5 === 0) want.push(trail.append(entry()).requestId);
    }
    const last = batchOf(8);
    trail.appendLater(last);
    want.push(...last.map((e) => e.requestId as string));
    expect(trail.tip.seq).toBe(want.length + 1);
    expect(trail.query({ limit: 1_000_000 }).map((r) => r.requestId)).toEqual([...want].reverse());
    expect(inOrder(trail)).toEqual(want);
    const report = trail.verify();
    expect(report).toMatchObject({ ok: true, entries: want.length });
    trail.close();
  });

  test('close waits for the batch under way; the next open finds every record indexed', async () => {
    const { dir, store } = await place();
    const trail = AuditTrail.open({ dir, key: KEY, index: store });
    const want = await threaded(trail);
    const last = batchOf(64);
    trail.appendLater(last);
    want.push(...last.map((e) => e.requestId as string));
    trail.close();
    const again = AuditTrail.open({ dir, key: KEY, index: store });
    onTestFinished(() => again.close());
    expect(again.verify()).toMatchObject({ ok: true, entries: want.length });
    expect(again.query({ path: 'src/a.ts', limit: 1_000_000 }).length).toBe(want.length);
    expect(inOrder(again)).toEqual(want);
  });

  test('another writer appending between the batches (another process), rotation and retention: one chain, each record once, the index as the log', async () => {
    const { dir, store } = await place();
    const trail = AuditTrail.open({ dir, key: KEY, index: store, maxFileBytes: 16 * 1024, retainFiles: 4 });
    const other = AuditTrail.open({ dir, key: KEY, maxFileBytes: 16 * 1024, retainFiles: 4 });
    const want = new Set(await threaded(trail));
    for (let i = 0; i < 40; i++) {
      const later = batchOf(12);
      trail.appendLater(later);
      for (const e of later) want.add(e.requestId as string);
      want.add(other.append(entry()).requestId);
      if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    other.close();
    trail.close();
    const again = AuditTrail.open({ dir, key: KEY, index: store, maxFileBytes: 16 * 1024, retainFiles: 4 });
    onTestFinished(() => again.close());
    expect(again.verify()).toMatchObject({ ok: true });
    const found = inOrder(again);
    expect(new Set(found).size).toBe(found.length);
    // Retention deleted the oldest files: what is kept is the newest of what was appended, and indexed as it is.
    expect(found.length).toBeGreaterThan(50);
    expect(found.length).toBeLessThan(want.size);
    for (const id of found) expect(want.has(id)).toBe(true);
    expect(again.query({ limit: 1_000_000 }).map((r) => r.requestId)).toEqual([...found].reverse());
  });

  test('a record another process replayed before the thread appends it is not appended again', async () => {
    const { dir, store } = await place();
    const trail = AuditTrail.open({ dir, key: KEY, index: store });
    const other = AuditTrail.open({ dir, key: KEY });
    onTestFinished(() => other.close());
    const handed = await threaded(trail);
    const batch = batchOf(4);
    // Replayed by the other process from the state store's table, between the commit and this append.
    const replayed = batch[2] as AuditEntry;
    other.append({ ...replayed, params: { ...replayed.params, replayed: true } });
    trail.appendLater(batch);
    trail.close();
    const again = AuditTrail.open({ dir, key: KEY, index: store });
    onTestFinished(() => again.close());
    const ids = inOrder(again);
    expect(ids.filter((id) => id === replayed.requestId)).toHaveLength(1);
    expect(ids).toEqual([...handed, replayed.requestId, ...batch.filter((e) => e !== replayed).map((e) => e.requestId)]);
    expect(again.verify()).toMatchObject({ ok: true });
  });

  test('a batch the thread cannot append whole is thrown by the next appendLater; the lines it wrote are indexed', async () => {
    const { dir, store } = await place();
    const trail = AuditTrail.open({ dir, key: KEY, index: store });
    const handed = await threaded(trail);
    const bad = [entry(), entry({ opClass: 'nonsense' as AuditEntry['opClass'] }), entry()];
    trail.appendLater(bad);
    expect(() => trail.appendLater([])).toThrow(/could not append 2 of a batch of 3 records.*opClass/);
    // The error is reported once; appends go on.
    trail.appendLater([]);
    const after = trail.append(entry());
    expect(trail.query({ limit: 1_000_000 }).map((r) => r.requestId)).toEqual([...handed, bad[0]?.requestId, after.requestId].reverse());
    expect(trail.verify()).toMatchObject({ ok: true });
    trail.close();
  });
});
