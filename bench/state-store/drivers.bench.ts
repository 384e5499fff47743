/**
 * Which PostgreSQL driver the PostgreSQL state store runs on: node-postgres
 * (`pg`, pooled by `pg-pool`) beside porsager's `postgres`, over the Unix
 * socket of the test server (`CTXFS_TEST_POSTGRES_URL`, as `./run-tests`
 * sets it), on the store's hot paths: a row by key, a one-row insert, a
 * three-statement transaction, and a 500-row multi-row insert. Both sides
 * use prepared statements and a pool of 4 connections; `pg` is the subject,
 * `postgres` the baseline, so a ratio below 1 means `pg` is faster. Then the
 * store built on the chosen driver beside raw `pg` on the same queries: what
 * the store adds (placeholder translation, the async-context transaction
 * scope, the writer queue and the advisory lock).
 *
 * Run: `node --expose-gc --conditions=ctxfs-source bench/state-store/drivers.bench.ts [--quick]`
 * with CTXFS_TEST_POSTGRES_URL set.
 * Writes `bench/results/state-store-drivers-<timestamp>.json` and
 * `bench/results/latest-state-store-drivers.json` like the other suites.
 *
 * @module
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import postgres from 'postgres';
import { PostgresStateStore } from '../../packages/context/src/state/postgres-store.ts';
import { type Case, DEFAULT_RUN_OPTIONS, defineSuite, formatSuite } from '../src/harness.ts';

const here = dirname(fileURLToPath(import.meta.url));
const SCHEMA = 'bench_drivers';
const STORE_SCHEMA = 'bench_store';
const ROWS = 500;
const POOL = 4;

interface Drivers {
  readonly pool: pg.Pool;
  readonly sql: postgres.Sql;
  readonly store: PostgresStateStore;
  /** Raw `pg` on the store's schema. */
  readonly raw: pg.Pool;
}

/** The socket directory and database of a `postgres://user@/db?host=/dir` URL. */
function target(url: string): { user: string; database: string; socketDir: string } {
  // WHATWG URL refuses an empty host (`ctxfs@/ctxfs`), so the parts are taken apart by hand.
  const m = /^postgres(?:ql)?:\/\/([^:@/]+)@\/([^?]+)\?(.*)$/.exec(url);
  const socketDir = m === null ? null : new URLSearchParams(m[3]).get('host');
  if (m === null || socketDir === null) throw new Error(`${url}: expected a Unix-socket URL (postgres://user@/db?host=/socket/dir)`);
  return { user: decodeURIComponent(m[1] ?? ''), database: decodeURIComponent(m[2] ?? ''), socketDir };
}

/** `($1, $2, $3), ($4, $5, $6), …` for `rows` rows of three values. */
function valuesList(rows: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) out.push(`($${3 * r + 1}, $${3 * r + 2}, $${3 * r + 3})`);
  return out.join(', ');
}

const bulkSql = (table: string) => `INSERT INTO ${table} (k, v, b) VALUES ${valuesList(ROWS)}`;

let seq = 0;
/** Fresh keys, so inserts never conflict across rounds and drivers. */
const nextKey = (side: string) => `${side}-${process.pid}-${++seq}`;

function bulkParams(side: string): Array<string | number | Uint8Array> {
  const params: Array<string | number | Uint8Array> = [];
  const bytes = new Uint8Array([0, 1, 2, 255]);
  for (let r = 0; r < ROWS; r++) params.push(nextKey(side), r, bytes);
  return params;
}

/** `fn` in one transaction on a connection of `pool`, as a store built on `pg` alone would run it. */
async function pgTransaction(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

const pgSide = {
  async get(pool: pg.Pool): Promise<unknown> {
    const r = await pool.query({ name: 'get', text: 'SELECT k, v, b FROM kv WHERE k = $1', values: ['hot'] });
    return r.rows[0];
  },
  async insert(pool: pg.Pool): Promise<unknown> {
    return pool.query({ name: 'ins', text: 'INSERT INTO log (k, v, b) VALUES ($1, $2, $3)', values: [nextKey('pg'), 1, null] });
  },
  async transaction(pool: pg.Pool): Promise<unknown> {
    return pgTransaction(pool, async (client) => {
      const r = await client.query({ name: 'tx-get', text: 'SELECT v FROM kv WHERE k = $1', values: ['counter-pg'] });
      await client.query({ name: 'tx-upd', text: 'UPDATE kv SET v = $1 WHERE k = $2', values: [Number(r.rows[0].v) + 1, 'counter-pg'] });
      await client.query({ name: 'ins', text: 'INSERT INTO log (k, v, b) VALUES ($1, $2, $3)', values: [nextKey('pg'), 1, null] });
    });
  },
  async bulk(pool: pg.Pool): Promise<unknown> {
    return pool.query({ name: 'bulk', text: bulkSql('log'), values: bulkParams('pg') });
  },
};

const porsagerSide = {
  async get(sql: postgres.Sql): Promise<unknown> {
    const rows = await sql.unsafe('SELECT k, v, b FROM kv WHERE k = $1', ['hot'], { prepare: true });
    return rows[0];
  },
  async insert(sql: postgres.Sql): Promise<unknown> {
    return sql.unsafe('INSERT INTO log (k, v, b) VALUES ($1, $2, $3)', [nextKey('js'), 1, null], { prepare: true });
  },
  async transaction(sql: postgres.Sql): Promise<unknown> {
    return sql.begin(async (tx) => {
      const rows = await tx.unsafe('SELECT v FROM kv WHERE k = $1', ['counter-js'], { prepare: true });
      await tx.unsafe('UPDATE kv SET v = $1 WHERE k = $2', [Number(rows[0]?.v) + 1, 'counter-js'], { prepare: true });
      await tx.unsafe('INSERT INTO log (k, v, b) VALUES ($1, $2, $3)', [nextKey('js'), 1, null], { prepare: true });
    });
  },
  async bulk(sql: postgres.Sql): Promise<unknown> {
    return sql.unsafe(bulkSql('log'), bulkParams('js') as postgres.ParameterOrJSON<never>[], { prepare: true });
  },
};

const suite = defineSuite<Drivers>({
  name: 'state-store-drivers',
  description: 'pg (node-postgres + pg-pool) beside postgres (porsager) on the PostgreSQL state store hot paths, over a Unix socket',
  async setup() {
    const url = process.env.CTXFS_TEST_POSTGRES_URL;
    if (url === undefined) throw new Error('CTXFS_TEST_POSTGRES_URL is not set: run `bash .ci/system-deps.sh` and take the URL it prints');
    const t = target(url);
    const options = `-c search_path=${SCHEMA}`;
    const pool = new pg.Pool({ host: t.socketDir, user: t.user, database: t.database, max: POOL, options });
    const sql = postgres({
      path: join(t.socketDir, '.s.PGSQL.5432'),
      user: t.user,
      database: t.database,
      max: POOL,
      connection: { search_path: SCHEMA },
      onnotice: () => undefined,
    });
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
    await pool.query(
      `CREATE TABLE ${SCHEMA}.kv (k TEXT PRIMARY KEY, v BIGINT NOT NULL, b BYTEA);
       CREATE TABLE ${SCHEMA}.log (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, k TEXT NOT NULL, v BIGINT NOT NULL, b BYTEA);
       INSERT INTO ${SCHEMA}.kv VALUES ('hot', 42, '\\x00ff'), ('counter-pg', 0, NULL), ('counter-js', 0, NULL)`,
    );
    await pool.query(`DROP SCHEMA IF EXISTS ${STORE_SCHEMA} CASCADE`);
    const store = await PostgresStateStore.open({ url: `${url}&schema=${STORE_SCHEMA}`, poolSize: POOL });
    await store.run('INSERT INTO sessions (id, profile, created_ms, tokens_served) VALUES (?, ?, ?, ?)', ['hot', 'large', 1.5, 0]);
    const raw = new pg.Pool({ host: t.socketDir, user: t.user, database: t.database, max: POOL, options: `-c search_path=${STORE_SCHEMA}` });
    return { pool, sql, store, raw };
  },
  async teardown({ pool, sql, store, raw }) {
    await store.close();
    await raw.end();
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${STORE_SCHEMA} CASCADE`);
    await pool.end();
    await sql.end();
  },
  cases: ({ pool, sql, store, raw }): Case[] => [
    { name: 'row by key', subjectName: 'pg', subject: () => pgSide.get(pool), baseline: () => porsagerSide.get(sql), baselineName: 'postgres' },
    { name: 'insert one row', subjectName: 'pg', subject: () => pgSide.insert(pool), baseline: () => porsagerSide.insert(sql), baselineName: 'postgres' },
    {
      name: 'transaction: select, update, insert',
      subjectName: 'pg',
      subject: () => pgSide.transaction(pool),
      baseline: () => porsagerSide.transaction(sql),
      baselineName: 'postgres',
    },
    {
      name: `insert ${ROWS} rows in one statement`,
      subjectName: 'pg',
      batch: 1,
      subject: () => pgSide.bulk(pool),
      baseline: () => porsagerSide.bulk(sql),
      baselineName: 'postgres',
    },
    {
      name: 'store: row by key',
      subjectName: 'store',
      subject: () => store.get('SELECT id, tokens_served FROM sessions WHERE id = ?', ['hot']),
      baseline: async () => (await raw.query({ name: 'get', text: 'SELECT id, tokens_served FROM sessions WHERE id = $1', values: ['hot'] })).rows[0],
      baselineName: 'raw pg',
    },
    {
      name: 'store: transaction, read then write',
      subjectName: 'store',
      subject: () =>
        store.transaction(async () => {
          const row = await store.get<{ tokens_served: number }>('SELECT tokens_served FROM sessions WHERE id = ?', ['hot']);
          await store.run('UPDATE sessions SET tokens_served = ? WHERE id = ?', [(row?.tokens_served ?? 0) + 1, 'hot']);
          await store.run('INSERT INTO audit (at_ms, op, result) VALUES (?, ?, ?)', [Date.now(), 'read', 'ok']);
        }),
      baseline: () =>
        pgTransaction(raw, async (client) => {
          const r = await client.query({ name: 'tx-get', text: 'SELECT tokens_served FROM sessions WHERE id = $1', values: ['hot'] });
          await client.query({
            name: 'tx-upd',
            text: 'UPDATE sessions SET tokens_served = $1 WHERE id = $2',
            values: [Number(r.rows[0].tokens_served) + 1, 'hot'],
          });
          await client.query({ name: 'tx-ins', text: 'INSERT INTO audit (at_ms, op, result) VALUES ($1, $2, $3)', values: [Date.now(), 'read', 'ok'] });
        }),
      baselineName: 'raw pg',
    },
  ],
});

const quick = process.argv.includes('--quick');
const result = await suite.run({
  ...DEFAULT_RUN_OPTIONS,
  ...(quick ? { timeMs: 80, warmupMs: 30, rounds: 2 } : {}),
  resultsDir: join(here, '..', 'results'),
});
process.stdout.write(`${formatSuite(result)}\n`);
