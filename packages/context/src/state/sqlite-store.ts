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
  /**
   * Whether closing the store folds the write-ahead log into the database
   * file (default `true`). SQLite does that when the last connection closes,
   * at the cost of four `fsync`s (the log's creation and header, and the
   * checkpoint's two): a few milliseconds, which a process that runs one
   * command (the CLI) pays each time. With `false` the connection is left
   * for the process's exit to drop and the log stays for the next process;
   * the log is folded in during a write once it holds
   * {@link SHORT_LIVED_WAL_PAGES} pages, so a new process reads little of
   * it. What a power failure can take grows from the last process's
   * writes that were not committed durably (reads' records, access counts,
   * audit rows; an edit's journal commits durably either way) to those of
   * the processes since the last fold.
   */
  checkpointOnClose?: boolean;
}

/**
 * The log's size, in pages, at which a store that does not checkpoint on
 * close folds it in: 512 KiB of 4 KiB pages, about ten read commands'
 * records, which the next process's open reads in well under a
 * millisecond (SQLite's default of 1,000 pages took 3 ms at 3 MB).
 */
export const SHORT_LIVED_WAL_PAGES = 128;

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

  /** Whether {@link shutdown} closes the connection (and so checkpoints) or leaves it for the process's exit. */
  readonly #checkpointOnClose: boolean;

  private constructor(database: SqliteDatabase, checkpointOnClose: boolean) {
    super();
    this.database = database;
    this.#checkpointOnClose = checkpointOnClose;
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
    const path = options.path ?? ':memory:';
    const checkpointOnClose = options.checkpointOnClose !== false || path === ':memory:';
    const store = new SqliteStateStore(SqliteDatabase.open(path, options.busyTimeoutMs ?? 5000), checkpointOnClose);
    // A fold reuses the log from its start but keeps the file's size: one large edit would leave a log of megabytes
    // for every later process to open; the limit truncates it back at the next fold.
    if (!checkpointOnClose)
      store.database.db.exec(`PRAGMA wal_autocheckpoint = ${SHORT_LIVED_WAL_PAGES}; PRAGMA journal_size_limit = ${SHORT_LIVED_WAL_PAGES * 4096}`);
    try {
      await store.#migrate(options.migrations ?? MIGRATIONS);
    } catch (err) {
      store.database.close();
      throw err;
    }
    return store;
  }

  /**
   * One machine: the backend's cross-process lock serializes its processes (see {@link StateStore.withLock}).
   * Nothing is asked ahead: a query answers at once.
   */
  withLock<T>(_keys: string | readonly string[], fn: () => Promise<T>, _ahead?: () => void): Promise<T> {
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
    if (this.#checkpointOnClose) this.database.close();
    else this.database.release();
  }
}
