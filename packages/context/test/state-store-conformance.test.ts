/**
 * One suite for every state store: SQLite in memory and in a file, and
 * PostgreSQL (a fresh schema for this file, dropped after) at
 * CTXFS_TEST_POSTGRES_URL, which ./run-tests sets from the server
 * .ci/system-deps.sh starts. In CI a missing URL fails the run.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { MIGRATIONS, type Migration } from '../src/state/migrations.ts';
import { PostgresStateStore } from '../src/state/postgres-store.ts';
import { SqliteStateStore } from '../src/state/sqlite-store.ts';
import type { SqlRow, StateStore } from '../src/state/state-store.ts';

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
const NEWEST = MIGRATIONS.at(-1)?.version ?? 0;
const dir = mkdtempSync(join(tmpdir(), 'ctxfs-store-conformance-'));
const SCHEMA = `ctxfs_conformance_${process.pid}_${Date.now().toString(36)}`;
const schemas = new Set<string>();

/** `url` with one more query parameter. */
function withParam(url: string, key: string, value: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${key}=${encodeURIComponent(value)}`;
}

interface OpenOptions {
  /** A store of its own rather than the subject's shared one (a new file or schema). */
  readonly own?: string;
  readonly migrations?: readonly Migration[];
  readonly url?: string;
}

interface Subject {
  readonly name: string;
  /** Whether a store can be opened again on the same data. */
  readonly persistent: boolean;
  open(options?: OpenOptions): Promise<StateStore>;
  /**
   * A second store on the same data, as another host would open it. SQLite's
   * is the same store: its connection is one a process (a second one in the
   * same thread would block the thread in SQLite's busy wait while the first
   * holds the lock); processes sharing a file are tested in store.test.ts.
   */
  peer(store: StateStore, options?: OpenOptions): Promise<StateStore>;
}

let files = 0;
const subjects: Subject[] = [
  {
    name: 'SQLite :memory:',
    persistent: false,
    open: (o = {}) => SqliteStateStore.open({ path: ':memory:', ...(o.migrations === undefined ? {} : { migrations: o.migrations }) }),
    peer: async (store) => store,
  },
  {
    name: 'SQLite file',
    persistent: true,
    open: (o = {}) =>
      SqliteStateStore.open({ path: join(dir, `${o.own ?? `s${++files}`}.db`), ...(o.migrations === undefined ? {} : { migrations: o.migrations }) }),
    peer: async (store) => store,
  },
];
if (PG_URL !== undefined) {
  const open = (o: OpenOptions = {}) => {
    const schema = o.own === undefined ? SCHEMA : `${SCHEMA}_${o.own}`;
    schemas.add(schema);
    return PostgresStateStore.open({ url: withParam(o.url ?? PG_URL, 'schema', schema), ...(o.migrations === undefined ? {} : { migrations: o.migrations }) });
  };
  subjects.push({ name: 'PostgreSQL', persistent: true, open, peer: (_store, o) => open(o) });
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (PG_URL === undefined || schemas.size === 0) return;
  // With no server the tests have failed already; this would only add to it.
  const admin = await PostgresStateStore.open({ url: withParam(PG_URL, 'schema', SCHEMA) }).catch(() => undefined);
  if (admin === undefined) return;
  for (const schema of schemas) await admin.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

test('the PostgreSQL store is tested (CTXFS_TEST_POSTGRES_URL is set) in CI', () => {
  if (PG_URL === undefined && !process.env.CI) {
    console.warn(
      '\n!! SKIPPING the PostgreSQL state store: CTXFS_TEST_POSTGRES_URL is not set.\n!! Run bash .ci/system-deps.sh, then ./run-tests (which sets it).\n',
    );
    return;
  }
  expect(PG_URL, 'CTXFS_TEST_POSTGRES_URL: the PostgreSQL state store must be tested in CI (see .ci/system-deps.sh)').toBeDefined();
});

let tables = 0;
/** A scratch table of every value type, in the store's dialect. */
async function scratch(store: StateStore): Promise<string> {
  const name = `scratch_${process.pid}_${++tables}`;
  const types = store.dialect === 'postgres' ? ['DOUBLE PRECISION', 'BIGINT', 'BYTEA'] : ['REAL', 'INTEGER', 'BLOB'];
  await store.run(`CREATE TABLE ${name} (k TEXT PRIMARY KEY, s TEXT, r ${types[0]}, i ${types[1]}, n TEXT, b ${types[2]})`);
  return name;
}

/** A store for one test, closed when the test ends. */
async function opened(subject: Subject, options?: OpenOptions): Promise<StateStore> {
  const store = await subject.open(options);
  onTestFinished(() => store.close());
  return store;
}

const keys = (rows: SqlRow[]) => rows.map((r) => r.k);

describe.each(subjects)('state store conformance: $name', (subject) => {
  test('values of every type come back as they were bound', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    const bytes = new Uint8Array([0, 255, 0, 1, 0xff, 0]);
    const big = 2 ** 40 + 3;
    // Text holds no NUL: PostgreSQL refuses it in TEXT (bytes go in BLOB/BYTEA columns).
    const wrote = await store.run(`INSERT INTO ${t} (k, s, r, i, n, b) VALUES (?, ?, ?, ?, ?, ?)`, ['a', 'héllo ✓ ?', 1.25, big, null, bytes]);
    expect(wrote.changes).toBe(1);
    await store.run(`INSERT INTO ${t} (k, s, r, i, n, b) VALUES (?, ?, ?, ?, ?, ?)`, ['b', '', -0.5, -(2 ** 31) - 7, 'x', new Uint8Array(0)]);
    const row = await store.get<SqlRow>(`SELECT k, s, r, i, n, b FROM ${t} WHERE k = ?`, ['a']);
    expect(row).toMatchObject({ k: 'a', s: 'héllo ✓ ?', r: 1.25, i: big, n: null });
    expect(row?.b).toBeInstanceOf(Uint8Array);
    expect(Uint8Array.from(row?.b as Uint8Array)).toEqual(bytes);
    const all = await store.all<SqlRow>(`SELECT k, i, b FROM ${t} ORDER BY k`);
    expect(all.map((r) => [r.k, r.i, (r.b as Uint8Array).byteLength])).toEqual([
      ['a', big, 6],
      ['b', -(2 ** 31) - 7, 0],
    ]);
    const agg = await store.get<{ n: unknown; total: unknown; high: unknown }>(`SELECT COUNT(*) AS n, SUM(i) AS total, MAX(r) AS high FROM ${t}`);
    expect(agg).toEqual({ n: 2, total: big - 2 ** 31 - 7, high: 1.25 });
    expect(await store.get(`SELECT k FROM ${t} WHERE k = ?`, ['none'])).toBeUndefined();
    expect((await store.run(`UPDATE ${t} SET n = ? WHERE k IN (?, ?)`, ['y', 'a', 'b'])).changes).toBe(2);
    expect((await store.run(`DELETE FROM ${t} WHERE k = ?`, ['none'])).changes).toBe(0);
  });

  test('a ? inside a string literal or a quoted name is not a placeholder', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    await store.run(`INSERT INTO ${t} (k, s) VALUES (?, 'why? it''s ?')`, ['q?']);
    const row = await store.get<SqlRow>(`SELECT k AS "is it?", s, 'a?b' AS lit FROM ${t} WHERE k = ? AND s LIKE '%?%' -- trailing ?\n`, ['q?']);
    expect(row).toEqual({ 'is it?': 'q?', s: "why? it's ?", lit: 'a?b' });
  });

  test('a transaction commits when its function resolves and rolls back when it rejects; listeners hear which', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    const ends: boolean[] = [];
    store.onTransactionEnd((committed) => ends.push(committed));
    const value = await store.transaction(async () => {
      expect(store.inTransaction).toBe(true);
      await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['kept']);
      return 42;
    });
    expect(value).toBe(42);
    await expect(
      store.transaction(async () => {
        await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['lost']);
        expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['kept', 'lost']);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    // A statement's own error rolls back too.
    await expect(
      store.transaction(async () => {
        await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['also lost']);
        await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['kept']);
      }),
    ).rejects.toThrow();
    expect(store.inTransaction).toBe(false);
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['kept']);
    expect(ends).toEqual([true, false, false]);
  });

  test('write: applied in order with the transaction; one that fails rolls it back and every statement after it reports its error', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    // Outside a transaction a write is applied before it resolves.
    await store.write(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, ['outside', 1]);
    expect(keys(await store.all(`SELECT k FROM ${t}`))).toEqual(['outside']);
    await store.transaction(async () => {
      await store.write(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, ['a', 1]);
      await store.write(`UPDATE ${t} SET i = i + ? WHERE k = ?`, [10, 'a']);
      // A read in the same transaction sees the writes sent before it.
      expect(await store.get(`SELECT i FROM ${t} WHERE k = ?`, ['a'])).toEqual({ i: 11 });
      await store.write(`UPDATE ${t} SET i = i * ? WHERE k = ?`, [2, 'a']);
    });
    expect(await store.get(`SELECT i FROM ${t} WHERE k = ?`, ['a'])).toEqual({ i: 22 });

    const ends: boolean[] = [];
    store.onTransactionEnd((committed) => ends.push(committed));
    // The duplicate key is found when the write is answered: at the commit, or at the next statement.
    const atCommit = store.transaction(async () => {
      await store.write(`INSERT INTO ${t} (k) VALUES (?)`, ['lost']);
      await store.write(`INSERT INTO ${t} (k) VALUES (?)`, ['a']);
      await store.write(`INSERT INTO ${t} (k) VALUES (?)`, ['lost too']);
    });
    await expect(atCommit).rejects.toThrow(/duplicate|unique/i);
    // Where the write is answered later, the read after it reports the write's error, not "transaction aborted".
    const atRead = store.transaction(async () => {
      await store.write(`INSERT INTO ${t} (k) VALUES (?)`, ['a']);
      await store.get(`SELECT COUNT(*) AS n FROM ${t}`);
      return 'committed';
    });
    await expect(atRead).rejects.toThrow(/duplicate|unique/i);
    expect(ends).toEqual([false, false]);
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['a', 'outside']);
    // The store is whole after a lost transaction.
    await store.transaction(() => store.write(`INSERT INTO ${t} (k) VALUES (?)`, ['next']));
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['a', 'next', 'outside']);
  });

  test('writeReturning: its rows once the transaction commits, applied in order with it; one that fails rolls it back', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    const outside = await store.writeReturning<{ k: string }>(`INSERT INTO ${t} (k, i) VALUES (?, ?) RETURNING k`, ['outside', 1]);
    expect(await outside.rows).toEqual([{ k: 'outside' }]);
    const sent = await store.transaction(async () => {
      const inserted = await store.writeReturning<{ i: number }>(`INSERT INTO ${t} (k, i) VALUES (?, ?) RETURNING i`, ['a', 7]);
      await store.write(`UPDATE ${t} SET i = i + ? WHERE k = ?`, [1, 'a']);
      return inserted;
    });
    expect(await sent.rows).toEqual([{ i: 7 }]);
    expect(await store.get(`SELECT i FROM ${t} WHERE k = ?`, ['a'])).toEqual({ i: 8 });
    let lost: Promise<unknown> | undefined;
    await expect(
      store.transaction(async () => {
        await store.write(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, ['gone', 1]);
        lost = (await store.writeReturning(`INSERT INTO ${t} (k, i) VALUES (?, ?) RETURNING k`, ['a', 2])).rows;
        lost.catch(() => undefined);
      }),
    ).rejects.toThrow(/duplicate|unique/i);
    // Where it is answered later (PostgreSQL), its rows report the error too; elsewhere the call threw it.
    if (lost !== undefined) await expect(lost).rejects.toThrow(/duplicate|unique/i);
    expect(lost === undefined).toBe(store.dialect === 'sqlite');
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['a', 'outside']);
  });

  test('a transaction that audits keeps one chain beside another host appending', async () => {
    const own = { own: `ahead${++files}` };
    const a = await opened(subject, own);
    const b = await subject.peer(a, own);
    if (b !== a) onTestFinished(() => b.close());
    const t = await scratch(a);
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      writes.push(
        a.transaction(async () => {
          await a.run(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, [`a${i}`, i]);
          await a.audit({ op: 'edit', path: `a${i}.ts`, result: 'ok' });
          await a.audit({ op: 'edit-more', path: `a${i}.ts`, result: 'ok' });
        }),
      );
      writes.push(b.audit({ op: 'read', path: `b${i}.ts`, result: 'ok' }));
      // A transaction between them that appends nothing leaves the chain whole.
      writes.push(a.transaction(() => a.run(`UPDATE ${t} SET i = i + 1 WHERE k = ?`, [`a${i}`])));
    }
    await Promise.all(writes);
    expect(await a.verifyAudit()).toMatchObject({ ok: true, records: 120 });
  });

  test('reads made together outside a transaction each get their own answer, a failing one only its own error', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    for (let i = 0; i < 20; i++) await store.run(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, [`k${i}`, i]);
    const answers = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        i === 5 ? store.get(`SELECT nothing FROM ${t} WHERE k = ?`, [`k${i}`]) : store.get<{ i: number }>(`SELECT i FROM ${t} WHERE k = ?`, [`k${i}`]),
      ),
    );
    expect(answers.map((a) => (a.status === 'fulfilled' ? (a.value as { i: number }).i : 'failed'))).toEqual(
      Array.from({ length: 20 }, (_, i) => (i === 5 ? 'failed' : i)),
    );
    expect(await store.get(`SELECT COUNT(*) AS n FROM ${t}`)).toEqual({ n: 20 });
  });

  test('close closes the store even when the audit rows it flushes cannot be written, and reports why', async () => {
    const store = await subject.open();
    store.beforeAuditRead(() => Promise.reject(new Error('the audit rows could not be written')));
    await expect(store.close()).rejects.toThrow('the audit rows could not be written');
    expect(store.closed).toBe(true);
    await expect(store.get('SELECT 1 AS x')).rejects.toThrow();
    await store.close();
  });

  test('a nested transaction joins the outer one: the outer rollback takes its writes', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    const ends: boolean[] = [];
    store.onTransactionEnd((committed) => ends.push(committed));
    await expect(
      store.transaction(async () => {
        await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['outer']);
        await store.transaction(async () => store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['inner']));
        expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['inner', 'outer']);
        throw new Error('undo both');
      }),
    ).rejects.toThrow('undo both');
    expect(await store.all(`SELECT k FROM ${t}`)).toEqual([]);
    expect(ends).toEqual([false]);
  });

  test('a durable transaction commits like any other and must be the outermost; the store keeps its default after it', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    await store.transaction(async () => store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['durable']), { durable: true });
    expect(keys(await store.all(`SELECT k FROM ${t}`))).toEqual(['durable']);
    await expect(
      store.transaction(async () => {
        await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['outer']);
        await store.transaction(async () => store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['inner']), { durable: true });
      }),
    ).rejects.toThrow('a durable transaction must be the outermost');
    expect(keys(await store.all(`SELECT k FROM ${t}`))).toEqual(['durable']);
    // A failed durable transaction rolls back as any other.
    await expect(
      store.transaction(
        async () => {
          await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['lost']);
          throw new Error('no');
        },
        { durable: true },
      ),
    ).rejects.toThrow('no');
    expect(keys(await store.all(`SELECT k FROM ${t}`))).toEqual(['durable']);
    if (store instanceof SqliteStateStore) {
      // synchronous = NORMAL (1) again for every other transaction: FULL (2) was this one's alone.
      expect(store.database.db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 1 });
    }
  });

  test('a commit that fails rolls back, and the transaction queued behind it is untouched', async () => {
    const store = await opened(subject);
    const parent = `scratch_${process.pid}_${++tables}_parent`;
    const child = `scratch_${process.pid}_${tables}_child`;
    // A deferred foreign key fails at COMMIT, in both dialects.
    await store.run(`CREATE TABLE ${parent} (id TEXT PRIMARY KEY)`);
    await store.run(`CREATE TABLE ${child} (k TEXT PRIMARY KEY, parent TEXT REFERENCES ${parent} (id) DEFERRABLE INITIALLY DEFERRED)`);
    const ends: boolean[] = [];
    store.onTransactionEnd((committed) => ends.push(committed));
    const failing = store.transaction(async () => {
      await store.run(`INSERT INTO ${child} (k, parent) VALUES (?, ?)`, ['orphan', 'none']);
    });
    const queued = store.transaction(async () => {
      await store.run(`INSERT INTO ${child} (k) VALUES (?)`, ['b']);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await store.run(`INSERT INTO ${child} (k) VALUES (?)`, ['b2']);
    });
    await expect(failing).rejects.toThrow();
    await queued;
    expect(keys(await store.all(`SELECT k FROM ${child} ORDER BY k`))).toEqual(['b', 'b2']);
    expect(ends).toEqual([false, true]);
    await store.transaction(() => store.run(`INSERT INTO ${child} (k) VALUES (?)`, ['c']));
    expect(keys(await store.all(`SELECT k FROM ${child} ORDER BY k`))).toEqual(['b', 'b2', 'c']);
  });

  test('a query from another async context never joins an open transaction', async () => {
    const store = await opened(subject);
    const t = await scratch(store);
    const insert = (k: string) => store.run(`INSERT INTO ${t} (k) VALUES (?)`, [k]);

    // The transaction rolls back; the other context's write, made while it was open, survives.
    let opened1!: () => void;
    const open1 = new Promise<void>((resolve) => {
      opened1 = resolve;
    });
    let outsideSawTransaction: boolean | undefined;
    const outside = (async () => {
      await open1;
      outsideSawTransaction = store.inTransaction;
      await insert('outside');
    })();
    await expect(
      store.transaction(async () => {
        await insert('inside');
        opened1();
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await outside;
    expect(outsideSawTransaction).toBe(false);
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['outside']);

    // And the other way round: the other context's transaction rolls back, this one commits.
    let opened2!: () => void;
    const open2 = new Promise<void>((resolve) => {
      opened2 = resolve;
    });
    const other = (async () => {
      await open2;
      await store
        .transaction(async () => {
          await insert('other');
          throw new Error('other rolls back');
        })
        .catch((err: Error) => err.message);
    })();
    await store.transaction(async () => {
      await insert('mine');
      opened2();
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    await other;
    expect(keys(await store.all(`SELECT k FROM ${t} ORDER BY k`))).toEqual(['mine', 'outside']);
  });

  test('writers serialize: two stores each doing 200 read-then-increment transactions on one counter lose no increment', async () => {
    const a = await opened(subject);
    const b = await subject.peer(a);
    if (b !== a) onTestFinished(() => b.close());
    const t = await scratch(a);
    await a.run(`INSERT INTO ${t} (k, i) VALUES (?, ?)`, ['counter', 0]);
    const increment = (store: StateStore) =>
      store.transaction(async () => {
        const row = await store.get<{ i: number }>(`SELECT i FROM ${t} WHERE k = ?`, ['counter']);
        await store.run(`UPDATE ${t} SET i = ? WHERE k = ?`, [(row?.i ?? 0) + 1, 'counter']);
      });
    const runs: Array<Promise<void>> = [];
    for (let n = 0; n < 200; n++) runs.push(increment(a), increment(b));
    await Promise.all(runs);
    expect((await b.get<{ i: number }>(`SELECT i FROM ${t} WHERE k = ?`, ['counter']))?.i).toBe(400);
  });

  test('audit rows are written and read back newest first, by path and limit', async () => {
    const store = await opened(subject);
    let flushed = 0;
    store.beforeAuditRead(async () => {
      flushed++;
      await store.audit({ op: 'queued', path: 'q.ts', result: 'ok' });
    });
    const before = Date.now();
    await store.audit({ op: 'read', path: 'a.ts', agent: 'agent-1', sessionId: 's1', params: { lines: [1, 2] }, result: 'ok', tokens: 120 });
    await store.audit({ op: 'write', path: 'b.ts', result: 'denied' });
    await store.audit({ op: 'read', path: 'a.ts', result: 'ok', changeId: 'c1' });
    const log = await store.auditLog();
    expect(flushed).toBe(1);
    expect(log.map((r) => r.op)).toEqual(['queued', 'read', 'write', 'read']);
    expect(log[3]).toMatchObject({ path: 'a.ts', agent: 'agent-1', sessionId: 's1', params: { lines: [1, 2] }, result: 'ok', tokens: 120 });
    expect(log[2]).toMatchObject({ path: 'b.ts', agent: undefined, sessionId: undefined, params: undefined, tokens: undefined });
    expect(log[3]?.at.getTime()).toBeGreaterThanOrEqual(before);
    expect(log.every((r) => typeof r.id === 'number')).toBe(true);
    const byPath = await store.auditLog({ path: 'a.ts', limit: 1 });
    expect(byPath).toHaveLength(1);
    expect(byPath[0]?.id).toBe(log[1]?.id);
  });

  test('the audit table is one hash chain across stores (hosts) appending at once, and verifies', async () => {
    const own = { own: `chain${++files}` };
    const a = await opened(subject, own);
    const b = await subject.peer(a, own);
    if (b !== a) onTestFinished(() => b.close());
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < 60; i++) {
      writes.push(a.audit({ op: 'read', path: `a${i}.ts`, agent: 'llm:a', result: 'ok', tokens: i }));
      writes.push(
        b.transaction(async () => {
          await b.audit({ op: 'replace', path: `b${i}.ts`, params: { n: i, text: 'ü\u0000'.repeat(i % 3) }, result: 'ok', changeId: `c${i}` });
          await b.audit({ op: 'replace', path: `b${i}.ts`, result: 'conflict' });
        }),
      );
    }
    await Promise.all(writes);
    const report = await a.verifyAudit();
    expect(report).toMatchObject({ ok: true, records: 180 });
    const newest = await a.get<{ id: number; hash: string }>('SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1');
    expect(report.head).toEqual({ id: Number(newest?.id), hash: newest?.hash });
    expect((await b.verifyAudit()).ok).toBe(true);
  });

  test("audit rows given together are appended in order, one chain, past one statement's worth, beside another host's", async () => {
    const own = { own: `batch${++files}` };
    const a = await opened(subject, own);
    const b = await subject.peer(a, own);
    if (b !== a) onTestFinished(() => b.close());
    const batch = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ op: tag, path: `${tag}${i}.ts`, result: 'ok', tokens: i }));
    // 150 rows: three statements' worth (64 a statement); the other host appends one row at a time meanwhile.
    await Promise.all([
      a.audit(batch('a', 150)),
      (async () => {
        for (const row of batch('b', 20)) await b.audit(row);
      })(),
      a.transaction(async () => {
        await a.audit(batch('t', 3));
        await a.audit({ op: 't-last', result: 'ok' });
      }),
      a.audit([]),
    ]);
    expect(await a.verifyAudit()).toMatchObject({ ok: true, records: 174 });
    const rows = await a.all<{ op: string; tokens: number | null }>('SELECT op, tokens FROM audit ORDER BY id');
    const tokensOf = (op: string) => rows.filter((r) => r.op === op).map((r) => Number(r.tokens));
    expect(tokensOf('a')).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(tokensOf('b')).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const ops = rows.map((r) => r.op);
    expect(ops.indexOf('t-last')).toBe(ops.lastIndexOf('t') + 1);
  });

  test('a changed, removed or unchained audit row is named by verify', async () => {
    const store = await opened(subject, { own: `tamper${++files}` });
    for (let i = 0; i < 10; i++) await store.audit({ op: 'read', path: `f${i}.ts`, result: 'ok', tokens: i });
    const ids = (await store.all<{ id: number }>('SELECT id FROM audit ORDER BY id')).map((r) => Number(r.id));
    await store.run('UPDATE audit SET tokens = 999 WHERE id = ?', [ids[6] as number]);
    expect(await store.verifyAudit()).toMatchObject({ ok: false, records: 6, head: { id: ids[5] }, firstBad: { id: ids[6], damage: 'altered' } });
    await store.run('UPDATE audit SET tokens = 6 WHERE id = ?', [ids[6] as number]);
    expect((await store.verifyAudit()).ok).toBe(true);
    await store.run('DELETE FROM audit WHERE id = ?', [ids[3] as number]);
    expect(await store.verifyAudit()).toMatchObject({ ok: false, records: 3, firstBad: { id: ids[4], damage: 'unlinked' } });
    await store.run('DELETE FROM audit WHERE id > ?', [ids[2] as number]);
    await store.run("INSERT INTO audit (at_ms, op, result) VALUES (?, 'sneaked', 'ok')", [Date.now()]);
    expect(await store.verifyAudit()).toMatchObject({ ok: false, records: 3, firstBad: { damage: 'unchained' } });
  });

  test.skipIf(!subject.persistent)('rows written before the chain existed are chained by the migration, in id order', async () => {
    const own = `pre${Date.now().toString(36)}`;
    const old = await subject.open({ own, migrations: MIGRATIONS.filter((m) => m.version <= 9) });
    expect(await old.schemaVersion()).toBe(9);
    for (let i = 0; i < 25; i++) {
      await old.run('INSERT INTO audit (at_ms, op, path, result, tokens, params) VALUES (?, ?, ?, ?, ?, ?)', [
        Date.now(),
        'read',
        `p${i}`,
        'ok',
        i,
        JSON.stringify({ i }),
      ]);
    }
    await old.close();
    const store = await opened(subject, { own });
    expect(await store.schemaVersion()).toBe(NEWEST);
    await store.audit({ op: 'after', result: 'ok' });
    expect(await store.verifyAudit()).toMatchObject({ ok: true, records: 26 });
  });

  test.skipIf(!subject.persistent)("each reader's last read of each file is filled into read_heads by its migration", async () => {
    const own = `heads${Date.now().toString(36)}`;
    const old = await subject.open({ own, migrations: MIGRATIONS.filter((m) => m.version <= 10) });
    const reads: Array<[string, string, string, string]> = [
      ['s1', 'llm:a', 'a.ts', 'v1'],
      ['s1', 'llm:a', 'a.ts', 'v2'],
      ['s1', 'llm:b', 'a.ts', 'v1'],
      ['s2', 'llm:a', 'a.ts', 'v3'],
      ['s2', 'llm:a', 'b.ts', 'v9'],
      ['s1', 'llm:a', 'a.ts', 'v4'],
    ];
    for (const [session, agent, path, sha] of reads) {
      await old.run('INSERT INTO session_reads (session_id, agent, path, sha256, op, tokens, read_ms) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        session,
        agent,
        path,
        sha,
        'readFile',
        1,
        Date.now(),
      ]);
    }
    await old.close();
    const store = await opened(subject, { own });
    const heads = await store.all<{ session_id: string; agent: string; path: string; sha256: string }>(
      'SELECT session_id, agent, path, sha256 FROM read_heads ORDER BY path, session_id, agent',
    );
    expect(heads.map((h) => [h.session_id, h.agent, h.path, h.sha256])).toEqual([
      ['s1', 'llm:a', 'a.ts', 'v4'],
      ['s1', 'llm:b', 'a.ts', 'v1'],
      ['s2', 'llm:a', 'a.ts', 'v3'],
      ['s2', 'llm:a', 'b.ts', 'v9'],
    ]);
  });

  test('reads are indexed by session and reader only: read_heads answers who read a file', async () => {
    const store = await opened(subject);
    const sql =
      store.dialect === 'postgres'
        ? "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'session_reads' AND schemaname = current_schema()"
        : "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'session_reads' AND sql IS NOT NULL";
    const names = (await store.all<{ name: string }>(sql)).map((r) => r.name).filter((n) => !n.endsWith('_pkey'));
    expect(names).toEqual(['session_reads_agent_path']);
  });

  test('the schema version is the newest migration', async () => {
    const store = await opened(subject);
    expect(await store.schemaVersion()).toBe(NEWEST);
  });

  test.skipIf(!subject.persistent)('a later migration applies in both dialects; a store at a version newer than this code is refused', async () => {
    const own = `v${Date.now().toString(36)}`;
    const next: Migration = {
      version: NEWEST + 1,
      description: 'a table for the test',
      sql: 'CREATE TABLE later_table (x INTEGER)',
      postgres: 'CREATE TABLE later_table (x BIGINT)',
    };
    const newer = await subject.open({ own, migrations: [...MIGRATIONS, next] });
    expect(await newer.schemaVersion()).toBe(NEWEST + 1);
    await newer.run('INSERT INTO later_table (x) VALUES (?)', [7]);
    await newer.close();
    const refused = subject.open({ own });
    await expect(refused).rejects.toMatchObject({ code: 'EIO' });
    await expect(refused).rejects.toThrow(new RegExp(`schema ${NEWEST + 1}, written by a newer ctxfs than this one .*upgrade ctxfs`));
  });
});

describe.skipIf(PG_URL === undefined)('PostgreSQL state store', () => {
  const url = PG_URL as string;
  const open = (extra: Record<string, string> = {}) => {
    schemas.add(SCHEMA);
    let u = withParam(url, 'schema', SCHEMA);
    for (const [k, v] of Object.entries(extra)) u = withParam(u, k, v);
    return PostgresStateStore.open({ url: u, poolSize: 4 });
  };

  // SQLite binds a detached buffer as an empty blob; node-postgres cannot send it.
  test('write: one whose values cannot be sent (nothing reaches the server) rolls the transaction back too', async () => {
    const store = await open();
    onTestFinished(() => store.close());
    const t = await scratch(store);
    const detached = new Uint8Array(new ArrayBuffer(8));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const lost = store.transaction(async () => {
      await store.write(`INSERT INTO ${t} (k, b) VALUES (?, ?)`, ['first', new Uint8Array([1])]);
      await store.write(`INSERT INTO ${t} (k, b) VALUES (?, ?)`, ['second', detached]);
    });
    await expect(lost).rejects.toThrow();
    expect(keys(await store.all(`SELECT k FROM ${t}`))).toEqual([]);
  });

  test('withLock excludes across stores (hosts) by key, with pools smaller than the waiters, and frees the lock when fn throws', async () => {
    const hosts = await Promise.all([open(), open(), open()]);
    onTestFinished(async () => {
      for (const h of hosts) await h.close();
    });
    // Twelve callers a store, pools of four: a waiter holding a pooled connection would starve the holder's transaction.
    let inside = 0;
    let most = 0;
    const order: string[] = [];
    const critical = (store: StateStore, who: string) =>
      store.withLock('file:shared.txt', async () => {
        inside++;
        most = Math.max(most, inside);
        await store.transaction(async () => {
          await store.get('SELECT 1 AS one');
        });
        await new Promise((r) => setTimeout(r, 2));
        order.push(who);
        inside--;
      });
    await Promise.all(hosts.flatMap((h, i) => Array.from({ length: 12 }, (_, n) => critical(h, `${i}.${n}`))));
    expect(order).toHaveLength(36);
    expect(most).toBe(1);
    // Other keys do not wait for a held one.
    let release!: () => void;
    const held = hosts[0]?.withLock('file:a', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 20));
    await expect(hosts[1]?.withLock('file:b', async () => 'b')).resolves.toBe('b');
    release();
    await held;
    await expect(hosts[1]?.withLock('file:a', () => Promise.reject(new Error('fn failed')))).rejects.toThrow('fn failed');
    await expect(hosts[2]?.withLock('file:a', async () => 'free again')).resolves.toBe('free again');
  });

  test('one holder takes more file locks than there are lock connections (an edit of 40 files) and another host waits for them', async () => {
    const [store, other] = await Promise.all([open(), open()]);
    onTestFinished(async () => {
      await store.close();
      await other.close();
    });
    const keys = Array.from({ length: 40 }, (_, i) => `file:src/f${String(i).padStart(2, '0')}.ts`);
    let otherRan = false;
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    let finish!: () => void;
    const held = store.withLock(keys, async () => {
      inside();
      await new Promise<void>((r) => (finish = r));
      return 'all 40';
    });
    await entered;
    // The last key is held too: another host waits for it until the holder is done.
    const waiting = other.withLock(keys[39] as string, async () => {
      otherRan = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(otherRan).toBe(false);
    finish();
    expect(await held).toBe('all 40');
    await waiting;
    expect(otherRan).toBe(true);
  });

  test('when edits of this process hold every lock connection, one more waits as it would for the lock: past the connect timeout, and EBUSY after lockWaitMs', async () => {
    schemas.add(SCHEMA);
    /** 16 holders in `store` until the returned function is called. */
    const holdAll = async (store: PostgresStateStore) => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let entered = 0;
      const holders = Array.from({ length: 16 }, (_, i) =>
        store.withLock(`file:held/${i}.ts`, async () => {
          entered++;
          await gate;
        }),
      );
      while (entered < 16) await new Promise((r) => setTimeout(r, 10));
      return async () => {
        release();
        await Promise.all(holders);
      };
    };
    // A waiter outlives the connect timeout (an edit awaiting approval holds its locks that long and more). The
    // timeout leaves the holders' own 16 connects room on a loaded machine: at 300 ms one of them timed out there.
    const patient = await PostgresStateStore.open({ url: withParam(url, 'schema', SCHEMA), poolSize: 2, connectTimeoutMs: 1_500, lockWaitMs: 8_000 });
    onTestFinished(() => patient.close());
    const freeAll = await holdAll(patient);
    const waiter = patient.withLock('file:one-more.ts', async () => 'ran');
    await new Promise((r) => setTimeout(r, 2_500));
    await freeAll();
    expect(await waiter).toBe('ran');
    // Past lockWaitMs it is told why.
    const brief = await PostgresStateStore.open({ url: withParam(url, 'schema', SCHEMA), poolSize: 2, connectTimeoutMs: 1_500, lockWaitMs: 400 });
    onTestFinished(() => brief.close());
    const freeBrief = await holdAll(brief);
    await expect(brief.withLock('file:one-more.ts', async () => 'ran')).rejects.toMatchObject({
      code: 'EBUSY',
      path: 'one-more.ts',
      message: expect.stringMatching(/other edits of this process have held every lock connection of the store for over 0\.4 s/),
    });
    await freeBrief();
    expect(await brief.withLock('file:one-more.ts', async () => 'ran')).toBe('ran');
  });

  test('a transaction that sends no statement sends nothing: it does not wait for the workspace lock another host holds', async () => {
    const store = await open();
    onTestFinished(() => store.close());
    const holder = await PostgresStateStore.open({ url: withParam(url, 'schema', SCHEMA), poolSize: 2 });
    onTestFinished(() => holder.close());
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const holding = new Promise<void>((resolve) => {
      started = resolve;
    });
    const other = holder.transaction(async () => {
      await holder.run('CREATE TEMP TABLE IF NOT EXISTS lock_probe (x int)');
      started();
      await held;
    });
    await holding;
    try {
      const empty = store.transaction(async () => 'nothing sent');
      const waited = await Promise.race([empty, new Promise((resolve) => setTimeout(() => resolve('waited'), 2000))]);
      expect(waited).toBe('nothing sent');
      // One that does send a statement waits its turn.
      const writing = store.transaction(() => store.get<{ n: number }>('SELECT 1 AS n'));
      expect(await Promise.race([writing.then(() => 'ran'), new Promise((resolve) => setTimeout(() => resolve('waited'), 300))])).toBe('waited');
      release();
      await expect(writing).resolves.toEqual({ n: 1 });
    } finally {
      release();
      await other;
    }
  });

  test('a file lock held past lockWaitMs by another host is EBUSY naming the file; freed, it is taken', async () => {
    const holder = await PostgresStateStore.open({ url: withParam(PG_URL as string, 'schema', SCHEMA) });
    const waiter = await PostgresStateStore.open({ url: withParam(PG_URL as string, 'schema', SCHEMA), lockWaitMs: 300 });
    onTestFinished(async () => {
      await holder.close();
      await waiter.close();
    });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inside!: () => void;
    const entered = new Promise<void>((r) => {
      inside = r;
    });
    const holding = holder.withLock('file:src/a.ts', async () => {
      inside();
      await held;
    });
    await entered;
    const started = Date.now();
    await expect(waiter.withLock('file:src/a.ts', async () => 'never')).rejects.toMatchObject({
      code: 'EBUSY',
      path: 'src/a.ts',
      reason: expect.stringMatching(/held its lock for over 0.3 s/),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    release();
    await holding;
    expect(await waiter.withLock('file:src/a.ts', async () => 'taken')).toBe('taken');
  });

  test('every SQLite table and column, after all migrations, exists in PostgreSQL with a compatible type', async () => {
    const lite = await SqliteStateStore.open();
    const pg = await open();
    onTestFinished(async () => {
      await lite.close();
      await pg.close();
    });
    const compatible: Record<string, string[]> = {
      INTEGER: ['bigint'],
      REAL: ['double precision'],
      TEXT: ['text'],
      BLOB: ['bytea'],
    };
    const liteTables = await lite.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const pgColumns = await pg.all<{ table_name: string; column_name: string; data_type: string; is_nullable: string; collation_name: string | null }>(
      "SELECT table_name, column_name, data_type, is_nullable, collation_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT LIKE 'scratch\\_%'",
    );
    const mismatches: string[] = [];
    for (const { name } of liteTables) {
      const columns = await lite.all<{ name: string; type: string; notnull: number; pk: number }>(
        `SELECT name, type, "notnull", pk FROM pragma_table_info('${name}')`,
      );
      for (const c of columns) {
        const there = pgColumns.find((p) => p.table_name === name && p.column_name === c.name);
        if (there === undefined) mismatches.push(`${name}.${c.name}: missing in PostgreSQL`);
        else if (!(compatible[c.type] ?? []).includes(there.data_type))
          mismatches.push(`${name}.${c.name}: ${c.type} in SQLite, ${there.data_type} in PostgreSQL`);
        else if ((c.notnull === 1 || c.pk > 0) !== (there.is_nullable === 'NO')) mismatches.push(`${name}.${c.name}: NOT NULL differs`);
        // Byte order, as SQLite compares text, whatever the database's locale.
        else if (c.type === 'TEXT' && there.collation_name !== 'C') mismatches.push(`${name}.${c.name}: collates as ${there.collation_name}, not C`);
      }
    }
    expect(mismatches).toEqual([]);
    const liteIndexes = await lite.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name");
    const pgIndexes = (await pg.all<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()')).map((r) => r.indexname);
    expect(liteIndexes.map((r) => r.name).filter((n) => !pgIndexes.includes(n))).toEqual([]);
    // Only the version table and relations' id, which SQLite keeps as its rowid, are PostgreSQL's own.
    const extra = pgColumns.filter((p) => !liteTables.some((t) => t.name === p.table_name) || (p.table_name === 'relations' && p.column_name === 'id'));
    expect(extra.map((p) => `${p.table_name}.${p.column_name}`).sort()).toEqual(['ctxfs_schema.version', 'relations.id']);
  });

  test('transactions outnumbering the pool, each waiting on a query from outside it, do not starve one another', async () => {
    const store = await PostgresStateStore.open({ url: withParam(url, 'schema', SCHEMA), poolSize: 2 });
    onTestFinished(() => store.close());
    // A worker started here runs its jobs in this context, outside every transaction.
    const jobs: Array<() => void> = [];
    let wake: (() => void) | undefined;
    let stop = false;
    const worker = (async () => {
      while (!stop) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (jobs.length > 0) resolve();
        });
        for (let job = jobs.shift(); job !== undefined; job = jobs.shift()) job();
      }
    })();
    const outside = <T>(fn: () => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        jobs.push(() => void fn().then(resolve, reject));
        wake?.();
      });
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) =>
        store.transaction(async () => {
          const seen = await outside(() => store.get<{ inside: boolean; n: number }>('SELECT ? = ? AS inside, 1 AS n', [String(n), String(n)]));
          return seen?.n;
        }),
      ),
    );
    expect(results).toEqual([1, 1, 1, 1, 1, 1]);
    stop = true;
    wake?.();
    await worker;
  });

  test('a connection killed inside a transaction fails the transaction with EUNAVAILABLE; the next call works', async () => {
    const store = await open();
    const admin = await open();
    onTestFinished(async () => {
      await store.close();
      await admin.close();
    });
    const failed = store.transaction(async () => {
      const me = await store.get<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.get('SELECT pg_terminate_backend(?)', [me?.pid ?? 0]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.get('SELECT 1 AS one');
    });
    await expect(failed).rejects.toMatchObject({ code: 'EUNAVAILABLE' });
    await expect(failed).rejects.toThrow(store.location);
    expect(await store.get('SELECT 1 AS one')).toEqual({ one: 1 });
    expect(await store.transaction(() => store.get('SELECT 2 AS two'))).toEqual({ two: 2 });
  });

  test("the pool's connections killed between calls: a SELECT is retried, a write succeeds or fails with EUNAVAILABLE, and the next call works", async () => {
    const app = `ctxfs_fault_${process.pid}`;
    const store = await open({ application_name: app });
    const admin = await open();
    onTestFinished(async () => {
      await store.close();
      await admin.close();
    });
    const t = await scratch(store);
    const kill = async () => {
      // Several connections in the pool, then every one of them ended.
      await Promise.all([1, 2, 3, 4].map((n) => store.get('SELECT pg_sleep(0.01), ? AS n', [String(n)])));
      const killed = await admin.get<{ n: number }>(
        'SELECT COUNT(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()',
        [app],
      );
      expect(killed?.n).toBeGreaterThan(0);
    };
    // Whether the next call meets a dead connection depends on whether the
    // pool has heard of the kill yet: several rounds make the dead one likely.
    for (let round = 0; round < 8; round++) {
      await kill();
      expect(await store.get(`SELECT COUNT(*) AS n FROM ${t}`)).toEqual({ n: 0 });
    }
    await kill();
    const write = await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['w']).then(
      () => 'written',
      (err: { code?: string }) => err.code,
    );
    expect(['written', 'EUNAVAILABLE']).toContain(write);
    await store.run(`INSERT INTO ${t} (k) VALUES (?) ON CONFLICT (k) DO NOTHING`, ['w']);
    expect(await store.all(`SELECT k FROM ${t}`)).toEqual([{ k: 'w' }]);
  });

  test('a server that is not there: EUNAVAILABLE naming the location, never the password', async () => {
    const nowhere = join(dir, 'no-server');
    const open = PostgresStateStore.open({ url: `postgres://ctxfs:s3cret-pw@/ctxfs?password=other-pw&host=${nowhere}`, connectTimeoutMs: 2000 });
    await expect(open).rejects.toMatchObject({ code: 'EUNAVAILABLE' });
    const err = (await open.catch((e: Error) => e)) as Error;
    expect(err.message).toContain(`postgres://ctxfs@/ctxfs?host=${nowhere}`);
    expect(err.message).not.toContain('s3cret-pw');
    expect(err.message).not.toContain('other-pw');
    expect(err.message).toMatch(/server is running/);
    // A database that does not exist on a running server.
    const wrongDb = url.replace(/\/ctxfs(\?|$)/, '/ctxfs_no_such_db$1');
    await expect(PostgresStateStore.open({ url: wrongDb })).rejects.toMatchObject({ code: 'EUNAVAILABLE' });
  });

  test("a table changed under a prepared SELECT * (another host's migration) is read in its new shape", async () => {
    const store = await PostgresStateStore.open({ url: withParam(url, 'schema', SCHEMA), poolSize: 1 });
    const other = await open();
    onTestFinished(async () => {
      await store.close();
      await other.close();
    });
    const t = await scratch(store);
    await store.run(`INSERT INTO ${t} (k) VALUES (?)`, ['a']);
    const read = () => store.get<SqlRow>(`SELECT * FROM ${t} WHERE k = ?`, ['a']);
    expect(Object.keys((await read()) ?? {})).not.toContain('added');
    await other.run(`ALTER TABLE ${t} ADD COLUMN added TEXT DEFAULT 'new'`);
    expect(await read()).toMatchObject({ k: 'a', added: 'new' });
    await other.run(`ALTER TABLE ${t} ADD COLUMN again TEXT DEFAULT 'x'`);
    await expect(store.transaction(read)).rejects.toThrow(/cached plan/);
    expect(await store.transaction(read)).toMatchObject({ added: 'new', again: 'x' });
  });

  test('text holding a NUL is refused with EINVAL (SQLite keeps it; PostgreSQL text cannot)', async () => {
    const store = await open();
    onTestFinished(() => store.close());
    const t = await scratch(store);
    const refused = store.run(`INSERT INTO ${t} (k, s) VALUES (?, ?)`, ['nul', 'a\u0000b']);
    await expect(refused).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(refused).rejects.toThrow(/NUL/);
    expect(await store.get(`SELECT COUNT(*) AS n FROM ${t}`)).toEqual({ n: 0 });
  });

  test('one database holds many workspaces, one schema each', async () => {
    const a = await PostgresStateStore.open({ url, workspace: `/srv/a-${SCHEMA}` });
    const b = await PostgresStateStore.open({ url, workspace: `/srv/b-${SCHEMA}` });
    schemas.add((a as PostgresStateStore).schema).add((b as PostgresStateStore).schema);
    onTestFinished(async () => {
      await a.close();
      await b.close();
    });
    expect(a.schema).toMatch(/^ctxfs_[0-9a-f]{16}$/);
    expect(a.schema).not.toBe(b.schema);
    await a.run('INSERT INTO sessions (id, profile, created_ms) VALUES (?, ?, ?)', ['s', 'large', 1.5]);
    expect(await a.get('SELECT COUNT(*) AS n FROM sessions')).toEqual({ n: 1 });
    expect(await b.get('SELECT COUNT(*) AS n FROM sessions')).toEqual({ n: 0 });
  });
});
