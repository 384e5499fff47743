/**
 * A new trail takes the state store's audit history: every row bound for no
 * trail and its own, once, in the table's order, none bound for another
 * host's trail — read a page at a time, never the whole table at once (a
 * store of a million rows would hold them all in memory), though other
 * processes append between the pages. Over SQLite, and over PostgreSQL
 * when the test server's URL is set.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditEntry, AuditTrail, openStateStore, type StateStore } from '../src/index.ts';
import { storeAuditSink } from '../src/safety/audit-sink.ts';
import { testSchemaName } from './support/test-state.ts';

const CONTEXT = { backend: 'HostFilesystem', user: 'tester' };
/** Rows in the table before the trail is made: several pages of the replay's. */
const ROWS = 3000;
/** The chain of another host's trail sharing the store. */
const OTHER_HOST = '00000000-0000-4000-8000-00000000beef';

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
const STORES: Array<[string, (base: string) => string]> = [['SQLite', (base) => join(base, 'state.db')]];
if (PG_URL !== undefined) STORES.push(['PostgreSQL', () => `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${testSchemaName('history_')}`]);

/** Row `i`'s request id, operation and duration: what the trail knows a replayed record by. */
const row = (i: number) => ({ requestId: `h-${i}`, op: 'readLines', durationMs: 1 + i / 1000 });

describe.each(STORES)('the replay as a trail opens, over %s', (_name, location) => {
  let base = '';
  let state = '';
  const stores: StateStore[] = [];
  const trails: AuditTrail[] = [];

  /** A process's store and trail, on the one database and log directory. */
  const open = async (): Promise<{ store: StateStore; trail: AuditTrail }> => {
    const store = await openStateStore(state);
    stores.push(store);
    const trail = AuditTrail.open({ dir: join(base, 'audit'), key: { keyFile: join(base, 'key', 'audit.key') }, index: store });
    trails.push(trail);
    return { store, trail };
  };

  /**
   * Writes the rows of a table's history: `mine(i)` bound for the trail, every tenth from 3 on for another host's,
   * the rest for none. Returns the request ids the trail is to take, oldest first: all but another host's.
   */
  const fill = async (store: StateStore, chain: string, mine: (i: number) => boolean): Promise<string[]> => {
    const rows = Array.from({ length: ROWS }, (_, i) => {
      const { requestId, op, durationMs } = row(i);
      const trailChain = mine(i) ? chain : i % 10 === 3 ? OTHER_HOST : undefined;
      return {
        op,
        path: 'a.ts',
        agent: 'cli',
        sessionId: 's',
        params: { opClass: 'read', durationMs, requestId, ...(trailChain ? { trailChain } : {}) },
        result: 'ok',
      };
    });
    await store.audit(rows);
    return rows.filter((r) => r.params.trailChain !== OTHER_HOST).map((r) => r.params.requestId);
  };

  /** The request ids of the trail's records, oldest first, read from the log. */
  const ids = (trail: AuditTrail) =>
    trail
      .scan({ limit: 1_000_000 })
      .map((r) => r.requestId)
      .reverse();

  /** Runs `hook` once, as `store` reads its `nth` page of the table's history (after the read, before the append). */
  const onPage = (store: StateStore, nth: number, hook: () => Promise<void>): { sizes: number[] } => {
    const sizes: number[] = [];
    const all = store.all.bind(store);
    let pages = 0;
    store.all = (async (sql: string, params?: readonly never[]) => {
      const rows = await all(sql, params);
      sizes.push(rows.length);
      if (/id <= \?/.test(sql) && ++pages === nth) await hook();
      return rows;
    }) as StateStore['all'];
    return { sizes };
  };

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'ctxfs-audit-history-'));
    state = location(base);
  });

  afterEach(async () => {
    for (const t of trails.splice(0)) t.close();
    // This test's own schema on the server, through a connection it opened.
    const schema = /^postgres.*[?&]schema=(\w+)/.exec(state)?.[1];
    if (schema !== undefined) await stores[0]?.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const s of stores.splice(0)) await s.close();
    rmSync(base, { recursive: true, force: true });
  });

  it("takes every row bound for no trail or its own, once and in order, but another host's, never more than a page a read", async () => {
    const { store, trail } = await open();
    // Every hundredth row from 73 on: a process of this trail's killed between its commit and its append.
    const expected = await fill(store, trail.tip.chain, (i) => i % 100 === 73);
    const { sizes } = onPage(store, 0, async () => undefined);
    await storeAuditSink(store, trail, CONTEXT);
    expect(ids(trail)).toEqual(expected);
    expect(trail.scan({ limit: 1_000_000 }).every((r) => r.params.replayed === true)).toBe(true);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1024);
    expect(trail.verify().ok).toBe(true);
  });

  it('a record another process appends between two pages, itself or by its own replay, is not appended again', async () => {
    const a = await open();
    // Rows 2500–2509: a live process's of this trail, committed; it appends them while the replay reads its pages.
    const live = (i: number) => i >= 2500 && i < 2510;
    const expected = await fill(a.store, a.trail.tip.chain, live);
    onPage(a.store, 2, async () => {
      const b = await open();
      const { requestId, op, durationMs } = row(2500);
      const entry: AuditEntry = {
        requestId,
        op,
        opClass: 'read',
        paths: ['a.ts'],
        sessionId: 's',
        agent: 'cli',
        backend: 'x',
        user: 'u',
        params: {},
        result: 'ok',
        durationMs,
      };
      expect(b.trail.appendCommitted(entry)?.requestId).toBe(requestId);
      // A process opening now finds the trail started: it replays what follows 2500 of its trail's rows (2501–2509).
      const c = await open();
      await storeAuditSink(c.store, c.trail, CONTEXT);
    });
    await storeAuditSink(a.store, a.trail, CONTEXT);
    const held = ids(a.trail);
    expect(held.toSorted()).toEqual(expected.toSorted());
    // The other processes' lines are where they appended them (after the first page); the rest in the table's order.
    const theirs = new Set(Array.from({ length: 10 }, (_, k) => row(2500 + k).requestId));
    expect(held.findIndex((id) => theirs.has(id))).toBeLessThan(1024);
    expect(held.filter((id) => !theirs.has(id))).toEqual(expected.filter((id) => !theirs.has(id)));
    expect(a.trail.verify().ok).toBe(true);
  });

  it('a trail with records is read once on open: its newest records tell it is not new and what it lacks', async () => {
    const first = await open();
    await fill(first.store, first.trail.tip.chain, () => false);
    await storeAuditSink(first.store, first.trail, CONTEXT);
    const { store, trail } = await open();
    const newest = trail.newest.bind(trail);
    const reads: number[] = [];
    trail.newest = (limit: number) => {
      reads.push(limit);
      return newest(limit);
    };
    const { sizes } = onPage(store, 0, async () => undefined);
    await storeAuditSink(store, trail, CONTEXT);
    expect(reads).toEqual([64]);
    // The table's rows bound for this trail among its newest, and nothing of its history.
    expect(sizes).toEqual([0]);
  });

  it('two processes opening a new trail at once: the history is in it once', async () => {
    const a = await open();
    const expected = await fill(a.store, a.trail.tip.chain, () => false);
    // The other process takes the whole history between the first replay's read of its first page and its append.
    onPage(a.store, 1, async () => {
      const b = await open();
      await storeAuditSink(b.store, b.trail, CONTEXT);
    });
    await storeAuditSink(a.store, a.trail, CONTEXT);
    expect(ids(a.trail)).toEqual(expected);
  });
});
