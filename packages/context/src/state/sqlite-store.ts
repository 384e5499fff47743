/**
 * The embedded state store: SQLite through `node:sqlite`, one connection a
 * process. Its statements run synchronously, so the asynchronous interface
 * costs a resolved promise a query; what it must add is isolation between
 * async contexts sharing the one connection: while one context's
 * transaction is open (between two of its awaits), every other context's
 * query waits for it, so nothing joins a transaction it did not open.
 *
 * @module
 */

import type { SQLInputValue } from 'node:sqlite';
import { fsError } from '@ctxfs/core';
import { MIGRATIONS, type Migration } from './migrations.ts';
import { SqliteDatabase } from './sqlite-database.ts';
import type { RunResult, SqlRow, SqlValue, TransactionOptions } from './state-store.ts';
import { TransactionScope } from './transaction-scope.ts';

/** Options of {@link SqliteStateStore.open}. */
export interface SqliteStoreOptions {
  /** Database file, or `':memory:'` (the default) for a private in-memory store. */
  path?: string;
  /** How long a writer waits for another process's lock; default 5,000 ms. */
  busyTimeoutMs?: number;
  /** Schema steps; default {@link MIGRATIONS}. */
  migrations?: readonly Migration[];
}

/** The connection token of a transaction: there is one connection, so it only marks ownership. */
type Owner = { readonly id: number };

/**
 * A SQLite state store. Open one per process; several processes may open the
 * same file at once.
 *
 * @example
 * ```ts
 * const store = await SqliteStateStore.open({ path: ':memory:' });
 * await store.schemaVersion(); // the newest migration
 * await store.close();
 * ```
 */
export class SqliteStateStore extends TransactionScope<Owner> {
  readonly dialect = 'sqlite' as const;
  /** The synchronous handle, for host-local caches kept in the same file (the audit trail's index). */
  readonly database: SqliteDatabase;
  // Settles when the open transaction ends; undefined when none is open.
  #busy: Promise<void> | undefined;
  #release: (() => void) | undefined;
  #next = 0;
  /** Whether the open transaction commits with `synchronous = FULL`. */
  #durable = false;

  private constructor(database: SqliteDatabase) {
    super();
    this.database = database;
  }

  get location(): string {
    return this.database.path;
  }

  /** The file path, or `':memory:'`. */
  get path(): string {
    return this.database.path;
  }

  /** Opens (creating if needed) and migrates a store. */
  static async open(options: SqliteStoreOptions = {}): Promise<SqliteStateStore> {
    const store = new SqliteStateStore(SqliteDatabase.open(options.path ?? ':memory:', options.busyTimeoutMs ?? 5000));
    try {
      await store.#migrate(options.migrations ?? MIGRATIONS);
    } catch (err) {
      store.database.close();
      throw err;
    }
    return store;
  }

  /** One machine: the backend's cross-process lock serializes its processes (see {@link StateStore.withLock}). */
  withLock<T>(_keys: string | readonly string[], fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async schemaVersion(): Promise<number> {
    const row = this.database.db.prepare('PRAGMA user_version').get() as { user_version: number };
    return row.user_version;
  }

  async #migrate(migrations: readonly Migration[]): Promise<void> {
    const db = this.database.db;
    // BEGIN IMMEDIATE takes the write lock first, so two processes opening a
    // fresh store at once do not both try to apply version 1.
    try {
      await this.transaction(async () => {
        let current = await this.schemaVersion();
        for (const m of migrations) {
          if (m.version <= current) continue;
          if (m.version !== current + 1) throw new Error(`migration ${m.version} follows ${current}`);
          db.exec(m.sql);
          await m.run?.(this);
          db.exec(`PRAGMA user_version = ${m.version}`);
          current = m.version;
        }
        const newest = migrations.at(-1)?.version ?? 0;
        if (current > newest) {
          throw new Error(`the store is at schema ${current}, written by a newer ctxfs than this one (which knows up to ${newest}); upgrade ctxfs to open it`);
        }
      });
    } catch (err) {
      throw fsError('EIO', 'openState', this.path, { reason: `state store migration failed: ${(err as Error).message}`, cause: err });
    }
  }

  protected async begin(options: TransactionOptions): Promise<Owner> {
    while (this.#busy !== undefined) await this.#busy;
    // SQLite refuses to change the safety level inside a transaction: it is set for this one before it opens, and put back when it ends.
    this.#durable = options.durable === true;
    if (this.#durable) this.database.db.exec('PRAGMA synchronous = FULL');
    try {
      this.database.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      this.#restoreSafety();
      throw err;
    }
    this.#busy = new Promise((resolve) => {
      this.#release = resolve;
    });
    return { id: ++this.#next };
  }

  protected async end(_owner: Owner, commit: boolean, _pending: readonly Promise<unknown>[]): Promise<void> {
    // Its writes were answered as they were made (node:sqlite is synchronous): none is pending.
    try {
      if (this.database.db.isTransaction) this.database.db.exec(commit ? 'COMMIT' : 'ROLLBACK');
    } finally {
      if (!commit || !this.database.db.isTransaction) {
        this.#restoreSafety();
        const release = this.#release;
        this.#busy = undefined;
        this.#release = undefined;
        release?.();
      }
    }
  }

  /** Back to the connection's default, `synchronous = NORMAL` (see sqlite-database.ts), after a durable transaction. */
  #restoreSafety(): void {
    if (!this.#durable) return;
    this.#durable = false;
    if (!this.database.db.isTransaction) this.database.db.exec('PRAGMA synchronous = NORMAL');
  }

  protected async query(owner: Owner | undefined, sql: string, params: readonly SqlValue[], want: 'rows' | 'changes'): Promise<SqlRow[] | RunResult> {
    if (owner === undefined) while (this.#busy !== undefined) await this.#busy;
    const st = this.database.statement(sql);
    const args = params as SQLInputValue[];
    if (want === 'rows') return st.all(...args) as SqlRow[];
    return { changes: Number(st.run(...args).changes) };
  }

  protected async shutdown(): Promise<void> {
    this.database.close();
  }
}
