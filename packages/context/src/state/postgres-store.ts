/**
 * The shared state store: PostgreSQL through node-postgres (`pg`, chosen over
 * porsager's `postgres` by bench/state-store/drivers.bench.ts), so many hosts
 * serving one workspace share one truth. One database holds many workspaces,
 * one schema each; every pooled connection has its `search_path` set to the
 * store's schema.
 *
 * Writers serialize per schema: a transaction takes a pooled connection and,
 * with its first statement, `BEGIN`s and takes a transaction-scoped advisory
 * lock keyed by the schema (one round trip), as SQLite's `BEGIN IMMEDIATE`
 * takes its write lock, so a read-then-write inside a transaction sees no
 * other writer between. A transaction that sends no statement sends nothing.
 *
 * A lost server or connection fails the call with `EUNAVAILABLE` naming the
 * server; the pool replaces the connection for the next call. A `SELECT`
 * outside a transaction whose connection died is tried once more on a fresh
 * one; nothing else is retried here (a write may have been applied).
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { type FsError, fsError } from '@ctxfs/core';
import pg from 'pg';
import { KeyedTurns } from '../concurrency/keyed-turns.ts';
import { Permits } from '../concurrency/permits.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';
import { POSTGRES_BASELINE, POSTGRES_BASELINE_VERSION, POSTGRES_VERSION_TABLE } from './postgres-schema.ts';
import type { RunResult, SqlRow, SqlValue } from './state-store.ts';
import { withoutPassword } from './store.ts';
import { TransactionScope } from './transaction-scope.ts';

/** Options of {@link PostgresStateStore.open}. */
export interface PostgresStoreOptions {
  /** `postgres://user[:password]@host[:port]/database[?host=/socket/dir][&schema=name]`. */
  url: string;
  /** The workspace root; names the schema when the URL does not (`ctxfs_` + 16 hex of its SHA-256). */
  workspace?: string;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** How long to wait for a connection to the server; default 10,000 ms. */
  connectTimeoutMs?: number;
  /** How long an edit waits for another's lock on its file (`withLock`) before it is `EBUSY`; default 60,000 ms. */
  lockWaitMs?: number;
  /** Schema steps after the baseline; default {@link MIGRATIONS} (those past version 9). */
  migrations?: readonly Migration[];
}

/** Connections for file locks held or awaited at once, per store (each lock, one). */
const LOCK_CONNECTIONS = 16;
/** How long an edit waits for another's lock on its file, by default, before it is told the holder hangs. */
const LOCK_WAIT_MS = 60_000;

// COUNT(*) is int8 and SUM/AVG numeric: the counts and sizes a store keeps are
// far below 2^53, and the shared queries expect numbers, as SQLite returns.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8_OID || oid === NUMERIC_OID) return Number;
    return (pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown)(oid, format);
  },
};

/** Reads outside a transaction that share one connection at most: a long one holds back those queued behind it. */
const READ_LANE_DEPTH = 8;

/** A pooled connection and the statements in flight on it. */
interface ReadLane {
  readonly client: Promise<pg.PoolClient>;
  users: number;
}

/** The connection of a lock's holder while it asks reads ahead (see {@link PostgresStateStore.withLock}). */
interface AheadLane {
  readonly client: pg.PoolClient;
  /** Until the lock is given back: a read asked later takes a pooled connection. */
  open: boolean;
  readonly sent: Array<Promise<unknown>>;
}

/** A statement as sent: `$n` placeholders and the name it is prepared under. */
interface Prepared {
  readonly text: string;
  readonly name: string | undefined;
}

/**
 * A PostgreSQL state store.
 *
 * @example
 * ```ts
 * const store = await PostgresStateStore.open({ url: 'postgres://ctxfs@/ctxfs?host=/var/run/postgresql', workspace: '/srv/project' });
 * await store.transaction(async () => {
 *   const row = await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions');
 *   await store.run('INSERT INTO sessions (id, profile, created_ms) VALUES (?, ?, ?)', [`s${row?.n}`, 'large', Date.now()]);
 * });
 * await store.close();
 * ```
 */
export class PostgresStateStore extends TransactionScope<pg.PoolClient> {
  readonly dialect = 'postgres' as const;
  readonly location: string;
  /** The schema this store's tables live in. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #lockKey: string;
  readonly #prepared = new Map<string, Prepared>();
  #names = 0;
  // Connections that reported an error: destroyed, never handed back to the pool.
  readonly #broken = new WeakSet<pg.ClientBase>();
  // A lost connection starts a new generation: a server restart or a mass
  // termination ends every connection at once, so the idle ones opened before
  // are not handed out again (a retry would meet another dead one).
  readonly #generationOf = new WeakMap<pg.ClientBase, number>();
  #generation = 0;
  // This process's transactions queue here before taking a connection: they
  // would serialize on the advisory lock anyway, and a queue of them each
  // holding a pooled connection while it waits could leave the one holding
  // the lock no connection for a query it makes outside its transaction.
  #writers: Promise<void> = Promise.resolve();
  #releaseWriter: (() => void) | undefined;
  // The connection of the open transaction (one at a time, by the queue). The
  // scope calls end() again to roll back when a commit fails: by then the
  // connection is back in the pool, perhaps another caller's, and is left alone.
  #active: pg.PoolClient | undefined;
  // The active connection while its BEGIN waits for the transaction's first statement.
  readonly #unbegun = new WeakSet<pg.PoolClient>();
  // The answer to a transaction's BEGIN, sent ahead of its first statement.
  readonly #opening = new WeakMap<pg.PoolClient, Promise<void>>();
  protected override readonly pipelined = true;
  // sha256() is there (PostgreSQL 11 and later): an audit append need not wait to read the chain's head.
  protected override readonly chainsAuditInServer = true;
  // The connection reads outside a transaction share while one is in flight (#readLane).
  #reader: ReadLane | undefined;

  // File locks (withLock) live on connections of their own, outside the
  // query pool, so a waiter never holds a connection its holder needs: each
  // held or awaited lock has one, blocked in the server's lock queue (first
  // come, first served, where polling served whoever looked last).
  readonly #lockPool: pg.Pool;
  readonly #lockTurns = new KeyedTurns();
  readonly #lockPermits = new Permits(LOCK_CONNECTIONS);
  readonly #lockSpace: number;

  readonly #lockWaitMs: number;
  // Reads a lock's holder asks ahead (see withLock): sent on the lock's connection, behind its request.
  readonly #ahead = new AsyncLocalStorage<AheadLane>();

  private constructor(pool: pg.Pool, location: string, schema: string, client: pg.ClientConfig, lockWaitMs: number) {
    super();
    this.#pool = pool;
    this.#lockWaitMs = lockWaitMs;
    this.#lockPool = new pg.Pool({
      ...client,
      max: LOCK_CONNECTIONS,
      // Pipelined: the reads asked ahead go out right behind the lock's request (withLock).
      pipeline: true,
      // A lock held past this is a holder that hangs: the waiter is told so instead of waiting for ever.
      options: `${client.options ?? ''} -c lock_timeout=${lockWaitMs}`,
      idleTimeoutMillis: 10_000,
    });
    // A lock connection the server drops reports it here (its locks died with it); the pool discards it.
    this.#lockPool.on('error', () => undefined);
    this.location = location;
    this.schema = schema;
    this.#lockKey = advisoryKey(schema);
    this.#lockSpace = int32Of(`ctxfs:${schema}`);
  }

  /** Connects, creates the schema if absent and migrates it. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStateStore> {
    const location = withoutPassword(options.url);
    const { connectionString, schema: named, options: serverOptions } = splitParams(options.url);
    const schema = named ?? (options.workspace === undefined ? 'ctxfs' : workspaceSchema(options.workspace));
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw fsError('EINVAL', 'openState', location, {
        reason: `'${schema}' is not a schema name this store uses`,
        hint: 'name the schema with lower-case letters, digits and underscores (?schema=ctxfs_project)',
      });
    }
    const client: pg.ClientConfig = {
      connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      options: `${serverOptions === undefined ? '' : `${serverOptions} `}-c search_path=${schema}`,
      types: TYPES,
    };
    // Pipelined: a transaction's writes and its COMMIT go out together (StateStore.write).
    const pool = new pg.Pool({ ...client, max: options.poolSize ?? 10, pipeline: true } as pg.PoolConfig);
    const store = new PostgresStateStore(pool, location, schema, client, options.lockWaitMs ?? LOCK_WAIT_MS);
    // An idle connection the server drops reports it here; the pool discards it.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => {
      store.#generationOf.set(client, store.#generation);
      client.on('error', () => store.#lost(client));
    });
    try {
      await store.#migrate(options.migrations ?? MIGRATIONS);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return store;
  }

  async schemaVersion(): Promise<number> {
    const row = await this.get<{ version: number }>('SELECT version FROM ctxfs_schema');
    return row?.version ?? 0;
  }

  async #migrate(migrations: readonly Migration[]): Promise<void> {
    const known = Math.max(POSTGRES_BASELINE_VERSION, migrations.at(-1)?.version ?? 0);
    // A schema already current, every open but the first, needs no lock and no DDL.
    const found = await this.get<{ version: number }>('SELECT version FROM ctxfs_schema').catch((err: FsError) => {
      if (err.code === 'EUNAVAILABLE') throw err;
      return undefined;
    });
    if (found?.version === known) return;
    try {
      // begin() takes the schema's advisory lock first, so two hosts opening a
      // new database at once do not both create it.
      await this.transaction(async () => {
        const client = this.current as pg.PoolClient;
        await this.#open(client);
        await this.#exec(client, `CREATE SCHEMA IF NOT EXISTS ${this.schema}; ${POSTGRES_VERSION_TABLE}`);
        let current = Number((await client.query<{ version: number }>('SELECT version FROM ctxfs_schema')).rows[0]?.version ?? 0);
        if (current > known) {
          throw new Error(`the store is at schema ${current}, written by a newer ctxfs than this one (which knows up to ${known}); upgrade ctxfs to open it`);
        }
        if (current === 0) {
          await this.#exec(client, `${POSTGRES_BASELINE}; INSERT INTO ctxfs_schema (version) VALUES (${POSTGRES_BASELINE_VERSION})`);
          current = POSTGRES_BASELINE_VERSION;
        }
        for (const m of migrations) {
          if (m.version <= current) continue;
          if (m.version !== current + 1) throw new Error(`migration ${m.version} follows ${current}`);
          if (m.postgres === undefined) throw new Error(`migration ${m.version} (${m.description}) has no PostgreSQL SQL`);
          await this.#exec(client, m.postgres);
          await m.run?.(this);
          await client.query('UPDATE ctxfs_schema SET version = $1', [m.version]);
          current = m.version;
        }
      });
    } catch (err) {
      if ((err as FsError).code === 'EUNAVAILABLE') throw err;
      throw fsError('EIO', 'openState', this.location, { reason: `state store migration failed: ${(err as Error).message}`, cause: err });
    }
  }

  /** Runs SQL of several statements (the simple protocol: no parameters, not prepared). */
  async #exec(client: pg.PoolClient, sql: string): Promise<void> {
    try {
      await client.query(sql);
    } catch (err) {
      throw this.#failure(err, 'openState', client);
    }
  }

  protected async begin(): Promise<pg.PoolClient> {
    const previous = this.#writers;
    let release!: () => void;
    this.#writers = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    this.#releaseWriter = release;
    let client: pg.PoolClient;
    try {
      client = await this.#connect('transaction');
    } catch (err) {
      this.#endWriter();
      throw err;
    }
    // BEGIN waits for the transaction's first statement: one that makes none costs no round trip.
    this.#unbegun.add(client);
    this.#active = client;
    return client;
  }

  /**
   * Opens the transaction on `client` if its first statement is still to
   * come, without waiting: the connection pipelines, so `BEGIN` and the
   * writers' lock go out just ahead of that statement, in the same round
   * trip. What follows waits for the answer; a statement the lock holds back
   * is answered after it, inside the transaction (were `BEGIN` lost, the
   * server would refuse it as in a failed transaction, never run it alone).
   */
  #open(client: pg.PoolClient): Promise<void> {
    if (this.#unbegun.delete(client)) {
      // One message for both (the simple protocol runs them in turn); the key is digits this store made.
      const opened = client.query(`BEGIN; SELECT pg_advisory_xact_lock(${this.#lockKey})`).then(
        () => undefined,
        (err: unknown) => {
          throw this.#failure(err, 'transaction', client);
        },
      );
      // Awaited by each statement of the transaction; one of them reports it.
      opened.catch(() => undefined);
      this.#opening.set(client, opened);
    }
    return this.#opening.get(client) ?? Promise.resolve();
  }

  #endWriter(): void {
    const release = this.#releaseWriter;
    this.#releaseWriter = undefined;
    release?.();
  }

  protected async end(client: pg.PoolClient, commit: boolean, pending: readonly Promise<unknown>[]): Promise<void> {
    if (client !== this.#active) return;
    this.#active = undefined;
    try {
      if (this.#unbegun.delete(client)) return;
      // Sent behind the writes not yet answered: they and it share one round trip.
      const ended = client.query(commit ? 'COMMIT' : 'ROLLBACK');
      const opened = this.#opening.get(client) ?? Promise.resolve();
      const settled = await Promise.allSettled([opened, ...pending]);
      let result: pg.QueryResult;
      try {
        result = await ended;
      } catch (err) {
        throw this.#failure(err, 'transaction', client);
      }
      if (!commit) return;
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      // A failed statement aborts the transaction: the server answers COMMIT with ROLLBACK.
      if (failed !== undefined && result.command !== 'COMMIT') throw failed.reason;
      if (failed !== undefined) {
        // The scope holds back a commit behind a write that failed before it was sent; should one
        // slip through, the caller must not take the transaction for rolled back.
        throw fsError('EIO', 'transaction', this.location, {
          reason: `a write of the transaction failed (${(failed.reason as Error)?.message ?? String(failed.reason)}) after the rest of it was committed`,
          hint: 'the transaction was committed without that write: read the state before writing again',
          cause: failed.reason,
        });
      }
      if (result.command === 'ROLLBACK') {
        throw fsError('EIO', 'transaction', this.location, {
          reason: 'the server rolled the transaction back at its commit (a statement in it failed)',
          hint: 'retry the call; if it fails again, the server log names the statement',
        });
      }
    } finally {
      this.#opening.delete(client);
      this.#release(client);
      this.#endWriter();
    }
  }

  protected async query(client: pg.PoolClient | undefined, sql: string, params: readonly SqlValue[], want: 'rows' | 'changes'): Promise<SqlRow[] | RunResult> {
    const values = params.map(bindable);
    if (client !== undefined) {
      const opened = this.#open(client);
      const sent = this.#send(client, this.#statement(sql), values, sql);
      // Answered after the BEGIN; when that failed, its error is the one to report.
      sent.catch(() => undefined);
      try {
        await opened;
        return shape(await sent, want);
      } catch (err) {
        // The transaction is aborted either way; the next one prepares afresh.
        if (stalePlan(err)) this.#prepared.delete(sql);
        throw err;
      }
    }
    // Outside a transaction: a connection of the pool, for this one statement, or
    // for a read, the one reads in flight share.
    const read = /^\s*select\b/i.test(sql);
    const shared = read && !/\b(for\s+(update|share|no\s+key\s+update|key\s+share)|pg_advisory)/i.test(sql);
    const ahead = shared ? this.#ahead.getStore() : undefined;
    if (ahead?.open === true) {
      // Asked ahead by a lock's holder: behind the lock's request on its connection, answered once it is granted.
      const sent = this.#send(ahead.client, this.#statement(sql), values, sql);
      ahead.sent.push(sent);
      try {
        return shape(await sent, want);
      } catch (err) {
        // The lock's connection failed (its locks with it, see withLock) or the plan went stale: asked again below.
        if (stalePlan(err)) this.#prepared.delete(sql);
      }
    }
    for (let attempt = 0; ; attempt++) {
      const lane = shared ? this.#readLane() : { client: this.#connect('query'), users: 1 };
      let own: pg.PoolClient | undefined;
      try {
        own = await lane.client;
        return shape(await this.#send(own, this.#statement(sql), values, sql), want);
      } catch (err) {
        // A plan the server refused ran nothing: prepared again under a new name, it is safe to send again.
        if (stalePlan(err)) {
          this.#prepared.delete(sql);
          if (attempt === 0) continue;
        }
        // A read is safe to send again on a fresh connection; a write may have been applied.
        if (own !== undefined && this.#broken.has(own) && attempt === 0 && read) continue;
        throw err;
      } finally {
        // A lane that broke, or never connected, takes no more reads.
        if (this.#reader === lane && (own === undefined || this.#broken.has(own))) this.#reader = undefined;
        if (--lane.users === 0) {
          if (this.#reader === lane) this.#reader = undefined;
          if (own !== undefined) this.#release(own);
        }
      }
    }
  }

  /**
   * The connection of the reads in flight outside a transaction, joined by
   * this one: pipelined, reads made together (\`Promise.all\`) wait for one
   * round trip on one server process, where a connection each would wake
   * one process each. Reads only: a plain \`SELECT\` waits for no row lock,
   * so none waits here behind a statement that waits for one of this
   * process's transactions. Given back when its last read is answered.
   */
  #readLane(): ReadLane {
    let lane = this.#reader;
    if (lane === undefined || lane.users >= READ_LANE_DEPTH) {
      lane = { client: this.#connect('query'), users: 0 };
      this.#reader = lane;
    }
    lane.users++;
    return lane;
  }

  protected async shutdown(): Promise<void> {
    await this.#lockPool.end().catch(() => undefined);
    await this.#pool.end();
  }

  /**
   * Holds the advisory locks named by this schema and `keys` while `fn` runs
   * (see {@link StateStore.withLock}), all on one connection of the lock
   * pool: a holder of many keys needs one connection, not one a key (an edit
   * of more files than the pool has connections would otherwise wait for
   * itself). Should the connection drop, the server frees the locks and `fn`
   * runs on unguarded: the backend's compare-and-swap still refuses a write
   * that would overwrite another's. A lock not had within `lockWaitMs` (60 s
   * by default), or a deadlock the server finds, is `EBUSY`. The plain
   * `SELECT`s `ahead` makes go out on that connection right behind the
   * (last) lock's request: the server runs them as soon as the lock is
   * granted, so their answers come in the lock's round trip; one that fails
   * there is asked again on a pooled connection.
   */
  async withLock<T>(keys: string | readonly string[], fn: () => Promise<T>, ahead?: () => void): Promise<T> {
    const sorted = [...new Set(typeof keys === 'string' ? [keys] : keys)].sort();
    // The server's session locks are re-entrant on one connection: callers of this process take turns here first, in the same order.
    const turns: Array<() => void> = [];
    try {
      for (const key of sorted) turns.push(await this.#lockTurns.take(key));
      return await this.#serverLocks(sorted, fn, ahead);
    } finally {
      for (const done of turns.reverse()) done();
    }
  }

  async #serverLocks<T>(keys: readonly string[], fn: () => Promise<T>, ahead: (() => void) | undefined): Promise<T> {
    let permit: () => void;
    try {
      // Waiting for a lock connection is waiting for a lock: bounded by lockWaitMs, not by the connect timeout.
      permit = await this.#lockPermits.take(this.#lockWaitMs);
    } catch (err) {
      throw fsError('EBUSY', 'lock', (keys[0] ?? '').replace(/^file:/, ''), {
        reason: `${LOCK_CONNECTIONS} other edits of this process have held every lock connection of the store for over ${this.#lockWaitMs / 1000} s`,
        hint: 'retry the edit; edits of many files at once are best made as one change (apply_patch), which takes one connection',
        cause: err,
      });
    }
    try {
      return await this.#onLockConnection(keys, fn, ahead);
    } finally {
      permit();
    }
  }

  async #onLockConnection<T>(keys: readonly string[], fn: () => Promise<T>, ahead: (() => void) | undefined): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#lockPool.connect();
    } catch (err) {
      throw this.#failure(err, 'lock');
    }
    let lost = false;
    const onError = () => {
      lost = true;
    };
    client.on('error', onError);
    const lane: AheadLane = { client, open: true, sent: [] };
    try {
      for (const [i, key] of keys.entries()) {
        const asked = client.query({ name: 'ctxfs_file_lock', text: 'SELECT pg_advisory_lock($1, $2)', values: [this.#lockSpace, int32Of(key)] });
        // Behind the last lock's request, in its round trip: the server answers them once every lock is granted.
        if (i === keys.length - 1 && ahead !== undefined) this.#ahead.run(lane, ahead);
        try {
          await asked;
        } catch (err) {
          if (connectionLost(err) !== undefined) lost = true;
          throw this.#lockRefused(err, key);
        }
      }
      return await fn();
    } finally {
      // Reads asked ahead and never taken are answered before the connection is given back.
      lane.open = false;
      await Promise.allSettled(lane.sent);
      // Every lock this connection holds is this holder's: one statement frees them, those taken
      // before a refusal too. Not waited for: the holder is done, and whoever waits next (here or on
      // another host) is granted the lock when the server runs it. The connection goes back to the
      // pool after the answer, or is ended (which frees whatever it still held) when there is none.
      const freed = lost
        ? Promise.resolve(false)
        : client.query({ name: 'ctxfs_file_unlock_all', text: 'SELECT pg_advisory_unlock_all()' }).then(
            () => !lost,
            () => false,
          );
      void freed.then((ok) => {
        client.off('error', onError);
        client.release(!ok);
      });
    }
  }

  /** The error of a lock not had: `EBUSY` for a timeout or a deadlock, the connection's failure otherwise. */
  #lockRefused(err: unknown, key: string): unknown {
    const code = (err as { code?: unknown }).code;
    if (code === '55P03' || code === '40P01') {
      return fsError('EBUSY', 'lock', key.replace(/^file:/, ''), {
        reason:
          code === '55P03'
            ? `another edit of it (another process or host) has held its lock for over ${this.#lockWaitMs / 1000} s`
            : 'waiting for its lock would deadlock with another edit',
        hint: 'retry the edit; if this keeps happening, look for a process that hangs while editing this file',
        cause: err,
      });
    }
    return this.#failure(err, 'lock', undefined, 'SELECT pg_advisory_lock');
  }

  async #send(client: pg.PoolClient, statement: Prepared, values: unknown[], sql: string): Promise<pg.QueryResult> {
    try {
      return await client.query({ text: statement.text, values, ...(statement.name === undefined ? {} : { name: statement.name }) });
    } catch (err) {
      throw this.#failure(err, 'query', client, sql);
    }
  }

  /** A pooled connection opened since the last one was lost. */
  async #connect(op: string): Promise<pg.PoolClient> {
    for (;;) {
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (err) {
        throw this.#failure(err, op);
      }
      if (this.#generationOf.get(client) === this.#generation) return client;
      client.release(new Error('opened before a connection was lost'));
    }
  }

  #lost(client: pg.ClientBase): void {
    if (!this.#broken.has(client)) this.#generation++;
    this.#broken.add(client);
  }

  /** Gives a connection back to the pool, or destroys it when it broke. */
  #release(client: pg.PoolClient): void {
    if (this.#broken.has(client)) client.release(new Error('connection lost'));
    else client.release();
  }

  /** `sql` with `$n` placeholders, prepared under a name of its own; computed once per text. */
  #statement(sql: string): Prepared {
    let known = this.#prepared.get(sql);
    if (known === undefined) {
      const text = numberPlaceholders(sql);
      // Several statements in one text cannot be prepared; they run unnamed.
      const name = /;\s*\S/.test(text) ? undefined : `ctxfs_${++this.#names}`;
      known = { text, name };
      this.#prepared.set(sql, known);
    }
    return known;
  }

  /**
   * What a driver error means for the caller: the server or the connection
   * lost (`EUNAVAILABLE`, and the connection is marked broken), or the
   * statement's own failure, passed on as it is.
   */
  #failure(err: unknown, op: string, client?: pg.ClientBase, sql?: string): unknown {
    const lost = connectionLost(err);
    if (lost === undefined) {
      // SQLite keeps a NUL in text; PostgreSQL refuses it (22021). Said plainly,
      // since the caller's value, not the store, is what has to change.
      if ((err as { code?: unknown }).code === '22021') {
        return fsError('EINVAL', op, this.location, {
          reason: `PostgreSQL cannot store this text: ${(err as Error).message}${sql === undefined ? '' : ` (running ${sql.slice(0, 80)})`}`,
          hint: 'text bound to a PostgreSQL store cannot hold NUL (U+0000): escape it, or store the value as bytes',
          cause: err,
        });
      }
      return err;
    }
    if (client !== undefined) this.#lost(client);
    return fsError('EUNAVAILABLE', op, this.location, {
      reason: `the PostgreSQL server at ${this.location} ${lost}: ${(err as Error).message}${sql === undefined ? '' : ` (running ${sql.slice(0, 80)})`}`,
      hint: 'check that the server is running and reachable with this URL, then retry; a write that failed this way may or may not have been applied: read before writing again (a caller that gave the call a request id can resend it with the same id: it applies at most once)',
      cause: err,
    });
  }
}

/**
 * Whether the server refused a prepared statement because a table it reads
 * changed shape since it was prepared (another host's migration added a
 * column under a `SELECT *`). Nothing ran; a statement prepared anew works.
 */
function stalePlan(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '0A000' && /cached plan must not change result type/.test((err as Error).message);
}

/** Why `err` means the connection or server is gone, or `undefined` for a statement's own error. */
function connectionLost(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ENOENT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return 'cannot be reached';
    if (['ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)) return 'dropped the connection';
    // SQLSTATE: 08 connection exceptions; 57P01-03 shutdown, crash, starting up;
    // 28 authentication; 3D000 no such database.
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return 'closed the connection';
    if (code.startsWith('28') || code === '3D000') return 'refused the connection';
  }
  const message = err instanceof Error ? err.message : '';
  if (/Connection terminated|connection error|not queryable|timeout exceeded when trying to connect/i.test(message)) return 'dropped the connection';
  return undefined;
}

/**
 * `?` placeholders numbered `$1…$n`, leaving those inside quotes and comments alone.
 *
 * @example
 * ```ts
 * numberPlaceholders("SELECT 'why?' AS q FROM t WHERE a = ? AND b = ?"); // "SELECT 'why?' AS q FROM t WHERE a = $1 AND b = $2"
 * ```
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'" || c === '"') {
      // A quoted string or identifier; a doubled quote is an escaped one.
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === c) {
          if (sql[j + 1] === c) j += 2;
          else break;
        } else j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end === -1 ? sql.length : end;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '?') {
      out += `$${++n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** A value as node-postgres binds it: bytes as a Buffer over the same memory, bigints as text. */
function bindable(value: SqlValue): unknown {
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function shape(result: pg.QueryResult, want: 'rows' | 'changes'): SqlRow[] | RunResult {
  return want === 'rows' ? (result.rows as SqlRow[]) : { changes: result.rowCount ?? 0 };
}

/**
 * The schema of a workspace: `ctxfs_` and 16 hex digits of the SHA-256 of its root.
 *
 * @example
 * ```ts
 * workspaceSchema('/srv/project'); // 'ctxfs_' + 16 hex digits, the same on every host
 * ```
 */
export function workspaceSchema(workspace: string): string {
  return `ctxfs_${createHash('sha256').update(workspace).digest('hex').slice(0, 16)}`;
}

/** A 32-bit key of `text`, for the two-key advisory locks (a keyspace apart from the one-key lock of writers). */
function int32Of(text: string): number {
  return createHash('sha256').update(text).digest().readInt32BE(0);
}

/** The advisory lock key of a schema: 64 bits of its hash, as the signed decimal PostgreSQL takes. */
function advisoryKey(schema: string): string {
  return createHash('sha256').update(`ctxfs:${schema}`).digest().readBigInt64BE(0).toString();
}

/**
 * The URL without its `schema` parameter (which the driver does not know)
 * and its `options` parameter (which would replace the store's search path:
 * the driver prefers the URL's), and those two.
 */
function splitParams(url: string): { connectionString: string; schema: string | undefined; options: string | undefined } {
  const q = url.indexOf('?');
  if (q === -1) return { connectionString: url, schema: undefined, options: undefined };
  const params = new URLSearchParams(url.slice(q + 1));
  const schema = params.get('schema') ?? undefined;
  const options = params.get('options') ?? undefined;
  params.delete('schema');
  params.delete('options');
  const rest = params.toString();
  return { connectionString: rest === '' ? url.slice(0, q) : `${url.slice(0, q)}?${rest}`, schema, options };
}
