/**
 * A record is in the trail once, whoever appends it. A process commits a
 * record to the state store's table, then appends it to the trail; a
 * process that opens in between finds the row missing from the trail and
 * replays it. The first process must then not append it again (five
 * `ctxfs cat` started at once left 11 records for 10 calls about one CI run
 * in ten). Two stores and two trails on one database and one log directory
 * stand for the two processes; the second opens exactly in that gap.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditEntry, AuditTrail, SqliteStateStore } from '../src/index.ts';
import { storeAuditSink } from '../src/safety/audit-sink.ts';
import type { AuditDraft, AuditSink } from '../src/safety/safety-layer.ts';

const CONTEXT = { backend: 'HostFilesystem', user: 'tester' };

function draft(requestId: string, durationMs: number, over: Partial<AuditDraft> = {}): AuditDraft {
  return {
    requestId,
    op: 'readLines',
    opClass: 'read',
    paths: ['README.md'],
    agent: 'cli',
    sessionId: 'session-a',
    params: { start: 1 },
    result: 'ok',
    tokens: 12,
    durationMs,
    ...over,
  };
}

/**
 * The row of a change whose process died between committing it and
 * appending it to `trail`: in the table only, bound for that trail.
 */
function diedAfterCommit(store: SqliteStateStore, trail: AuditTrail, requestId: string, durationMs: number): Promise<void> {
  return store.audit({
    op: 'replace',
    path: 'README.md',
    agent: 'cli',
    sessionId: 'session-died',
    params: { opClass: 'write', durationMs, requestId, trailChain: trail.tip.chain },
    result: 'ok',
  });
}

/** A process's view: its own store connection, trail and sink. */
interface Process {
  store: SqliteStateStore;
  trail: AuditTrail;
  sink: AuditSink;
}

describe('a record committed by one process and replayed by another before it appends', () => {
  let base = '';
  const opened: Process[] = [];

  async function open(): Promise<Process> {
    const store = await SqliteStateStore.open({ path: join(base, 'state.db') });
    const trail = AuditTrail.open({ dir: join(base, 'audit'), key: { keyFile: join(base, 'key', 'audit.key') }, index: store });
    const p = { store, trail, sink: await storeAuditSink(store, trail, CONTEXT) };
    opened.push(p);
    return p;
  }

  /** The trail's records of request `id`, read from the log itself. */
  const recordsOf = (trail: AuditTrail, id: string) => trail.scan({ limit: 1_000_000 }).filter((r) => r.requestId === id);

  /** Opens a process once `store`'s next commit of `method` has ended, before its caller continues. */
  function openAfterCommit(store: SqliteStateStore, method: 'transaction' | 'end'): Promise<Process> {
    const target = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = target[method] as (...args: unknown[]) => Promise<unknown>;
    return new Promise((resolve, reject) => {
      target[method] = async (...args: unknown[]) => {
        // A transaction joined from within one commits with it.
        if (method === 'transaction' && store.inTransaction) return original.apply(store, args);
        const out = await original.apply(store, args);
        target[method] = original;
        // A committing end only: the gap is after the row is in the table.
        if (method === 'end' && args[1] !== true) return out;
        await open().then(resolve, reject);
        return out;
      };
    });
  }

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'ctxfs-replay-race-'));
    const first = await open();
    // The trail holds a record the table holds: what a replay starts from.
    first.sink(draft('earlier', 1.5));
    await first.store.flushAudit();
  });

  afterEach(async () => {
    for (const p of opened.splice(0)) {
      await p.store.close();
      p.trail.close();
    }
    rmSync(base, { recursive: true, force: true });
  });

  it("a read's record, flushed a batch at a time", async () => {
    const a = opened[0] as Process;
    a.sink(draft('read-1', 0.731));
    const b = openAfterCommit(a.store, 'transaction');
    await a.store.flushAudit();
    const other = await b;
    const records = recordsOf(a.trail, 'read-1');
    // The other process did replay it: the test hit the gap.
    expect(records.map((r) => r.params.replayed)).toEqual([true]);
    expect(recordsOf(other.trail, 'read-1')).toHaveLength(1);
    expect(a.trail.verify().ok).toBe(true);
    // The index agrees with the log, once the other process has written its rows (a tick after its append).
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.trail.query({ op: 'readLines', limit: 100 }).map((r) => r.requestId)).toEqual(['read-1', 'earlier']);
  });

  it("a change's record, written in the change's transaction", async () => {
    const a = opened[0] as Process;
    const b = openAfterCommit(a.store, 'end');
    await a.store.transaction(async () => {
      await a.sink(draft('change-1', 4.02, { op: 'replace', opClass: 'write', changeId: 'c1' }));
    });
    await b;
    expect(recordsOf(a.trail, 'change-1').map((r) => r.params.replayed)).toEqual([true]);
    expect(a.trail.verify().ok).toBe(true);
  });

  it('a replayed record is recognised in the file another process rotated away from, and in the one it rotated to', () => {
    const dir = join(base, 'rotating');
    const options = { dir, key: { keyFile: join(base, 'key', 'audit.key') }, maxFileBytes: 2048 };
    const a = AuditTrail.open(options);
    const b = AuditTrail.open(options);
    try {
      const entry = (requestId: string, params: Record<string, unknown> = {}): AuditEntry => ({
        requestId,
        op: 'readLines',
        opClass: 'read',
        paths: ['README.md'],
        sessionId: 's',
        agent: 'cli',
        backend: 'HostFilesystem',
        user: 'tester',
        params,
        result: 'ok',
        durationMs: 1.25,
      });
      const fill = (n: number) => {
        for (let i = 0; i < n; i++) b.append(entry(`filler-${i}`, { text: 'x'.repeat(200) }));
      };
      a.append(entry('a-first'));
      // Replayed into the file a appends to, which b then rotates away from.
      b.append(entry('in-old-file', { replayed: true }));
      fill(12);
      // Replayed into the newest file, after rotations a has not seen.
      fill(12);
      b.append(entry('in-new-file', { replayed: true }));
      expect(a.appendCommitted(entry('in-old-file'))).toBeUndefined();
      expect(a.appendCommitted(entry('in-new-file'))).toBeUndefined();
      // Replayed into a file b completed between two others a never appended to.
      const before = a.verify().files;
      fill(12);
      b.append(entry('in-middle-file', { replayed: true }));
      fill(24);
      expect(a.verify().files - before).toBeGreaterThan(2);
      expect(a.appendCommitted(entry('in-middle-file'))).toBeUndefined();
      // Once each: the same call made again is appended.
      expect(a.appendCommitted(entry('in-new-file'))?.requestId).toBe('in-new-file');
      expect(a.verify().ok).toBe(true);
      expect(a.verify().files).toBeGreaterThan(2);
    } finally {
      a.close();
      b.close();
    }
  });

  it('lines another process appended a moment ago, whose index rows it has not written yet, are not taken for missing', async () => {
    const a = opened[0] as Process;
    // Another process on the same files whose index rows never reach the database: the lag at its worst.
    const store = await SqliteStateStore.open({ path: join(base, 'state.db') });
    const trail = AuditTrail.open({ dir: join(base, 'audit'), key: { keyFile: join(base, 'key', 'audit.key') } });
    const writer = { store, trail, sink: await storeAuditSink(store, trail, CONTEXT) };
    opened.push(writer);
    // A third opens its trail before those lines exist, then its sink after: the replay's moment.
    const laterStore = await SqliteStateStore.open({ path: join(base, 'state.db') });
    const laterTrail = AuditTrail.open({ dir: join(base, 'audit'), key: { keyFile: join(base, 'key', 'audit.key') }, index: laterStore });
    for (let i = 0; i < 5; i++) writer.sink(draft(`fresh-${i}`, 1 + i / 10));
    await writer.store.flushAudit();
    const later = { store: laterStore, trail: laterTrail, sink: await storeAuditSink(laterStore, laterTrail, CONTEXT) };
    opened.push(later);
    for (let i = 0; i < 5; i++)
      expect(
        recordsOf(a.trail, `fresh-${i}`).map((r) => r.params.replayed ?? false),
        `fresh-${i}`,
      ).toEqual([false]);
  });

  it('on a new trail, the first record of a process killed between its commit and its append is replayed', async () => {
    const dir = join(base, 'new-trail');
    const store = await SqliteStateStore.open({ path: join(dir, 'state.db') });
    const trail = AuditTrail.open({ dir: join(dir, 'audit'), key: { keyFile: join(base, 'key', 'audit.key') }, index: store });
    // The row its process committed, bound for this trail, before it died.
    await diedAfterCommit(store, trail, 'first', 2.5);
    opened.push({ store, trail, sink: await storeAuditSink(store, trail, CONTEXT) });
    expect(recordsOf(trail, 'first').map((r) => r.params.replayed)).toEqual([true]);
  });

  it('a missed record is replayed though the library appended more records since than the replay compares', async () => {
    const a = opened[0] as Process;
    await diedAfterCommit(a.store, a.trail, 'died', 5.5);
    // Records appended straight to the trail have no row: 100 of them hide where the table's rows stand.
    for (let i = 0; i < 100; i++) {
      a.trail.append({
        requestId: `library-${i}`,
        op: 'note',
        opClass: 'read',
        paths: [],
        sessionId: 's',
        agent: 'lib',
        backend: 'x',
        user: 'u',
        params: {},
        result: 'ok',
        durationMs: 0,
      });
    }
    const replayer = await open();
    expect(recordsOf(replayer.trail, 'died').map((r) => r.params.replayed)).toEqual([true]);
    expect(recordsOf(replayer.trail, 'earlier')).toHaveLength(1);
  });

  it('a request retried with its id after its process died is recorded again: only the replayed record itself is skipped', async () => {
    const a = opened[0] as Process;
    // A process that died between its commit and its append: the row is in the table only.
    await diedAfterCommit(a.store, a.trail, 'retried', 3.25);
    const replayer = await open();
    expect(recordsOf(replayer.trail, 'retried').map((r) => r.params.replayed)).toEqual([true]);
    // The retry, in a process that has the trail open, under the same request id.
    a.sink(draft('retried', 0.412, { op: 'replace', opClass: 'write' }));
    await a.store.flushAudit();
    expect(recordsOf(a.trail, 'retried').map((r) => r.params.replayed ?? false)).toEqual([false, true]);
  });
});

describe('hosts that share one state store and keep a trail each', () => {
  it("a replay takes only its own trail's rows, never another host's or those of a process without a trail", async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-replay-hosts-'));
    const keyFile = join(base, 'key', 'audit.key');
    // The trail's index lives in a SQLite store only; over a shared PostgreSQL store a trail has none, as here.
    const host = async (name: string) => {
      const store = await SqliteStateStore.open({ path: join(base, 'shared-state.db') });
      const trail = AuditTrail.open({ dir: join(base, name, 'audit'), key: { keyFile } });
      return { store, trail, sink: await storeAuditSink(store, trail, CONTEXT) };
    };
    const open: Array<{ store: SqliteStateStore; trail: AuditTrail }> = [];
    try {
      const one = await host('one');
      open.push(one);
      one.sink(draft('one-1', 1.1));
      await one.store.flushAudit();
      const two = await host('two');
      open.push(two);
      two.sink(draft('two-1', 2.1));
      await two.store.flushAudit();
      // A process with no trail (a container workspace over the shared store).
      const bare = await SqliteStateStore.open({ path: join(base, 'shared-state.db') });
      open.push({ store: bare, trail: two.trail });
      const sink = await storeAuditSink(bare, undefined, CONTEXT);
      sink(draft('bare-1', 3.1));
      await bare.flushAudit();
      // Another process on host one opens its trail and replays what it missed.
      const again = await host('one');
      open.push(again);
      const ids = (t: AuditTrail) => t.scan({ limit: 100 }).map((r) => r.requestId);
      expect(ids(again.trail)).toEqual(['one-1']);
      expect(ids(two.trail)).toEqual(['two-1']);
      // A process on host one dies between its commit and its append; host two then writes more rows than a
      // replay once compared. The next process on host one still finds its own host's missed record.
      await diedAfterCommit(again.store, again.trail, 'one-died', 7.25);
      for (let i = 0; i < 300; i++) two.sink(draft(`two-busy-${i}`, 1 + i / 1000));
      await two.store.flushAudit();
      const third = await host('one');
      open.push(third);
      expect(ids(third.trail)).toEqual(['one-died', 'one-1']);
      expect(third.trail.scan({ limit: 1 })[0]?.params.replayed).toBe(true);
    } finally {
      for (const p of open) await p.store.close();
      for (const t of new Set(open.map((p) => p.trail))) t.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
