/**
 * One SQLite database file through `node:sqlite`'s synchronous API: opened in
 * WAL mode with a busy timeout so several processes share it, statements
 * compiled once. The asynchronous SQLite state store runs on it, and so do
 * host-local caches that must be written synchronously (the audit trail's
 * index, written under the trail's file lock).
 *
 * @module
 */

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { fsError } from '@ctxfs/core';

/**
 * A synchronous SQLite handle.
 *
 * @example
 * ```ts
 * const db = SqliteDatabase.open('/tmp/cache.db');
 * db.transaction(() => db.statement('CREATE TABLE IF NOT EXISTS t (x)').run());
 * db.close();
 * ```
 */
export class SqliteDatabase {
  readonly db: DatabaseSync;
  readonly path: string;
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  private constructor(db: DatabaseSync, path: string) {
    this.db = db;
    this.path = path;
  }

  /** Opens (creating the file and its directory if needed) `path`, or `':memory:'`. */
  static open(path: string, busyTimeoutMs = 5000): SqliteDatabase {
    let db: DatabaseSync;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      db = new DatabaseSync(path, { timeout: busyTimeoutMs });
    } catch (err) {
      throw fsError('EIO', 'openState', path, {
        reason: `cannot open the state store: ${(err as Error).message}`,
        hint: 'check that the state directory is writable',
        cause: err,
      });
    }
    if (path !== ':memory:') enableWal(db, busyTimeoutMs);
    db.exec('PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
    return new SqliteDatabase(db, path);
  }

  /**
   * The prepared statement for `sql`, compiled once per handle: preparing on
   * every call would dominate hot paths (a registry scan, every served read).
   */
  statement(sql: string): StatementSync {
    let st = this.#statements.get(sql);
    if (st === undefined) {
      st = this.db.prepare(sql);
      this.#statements.set(sql, st);
    }
    return st;
  }

  /** Whether a transaction is open on this connection (whoever opened it). */
  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  /**
   * Runs `fn` in one write transaction. When one is already open on this
   * connection (an enclosing call, or the asynchronous store's transaction
   * between two of its awaits), `fn` joins it.
   */
  transaction<T>(fn: () => T): T {
    if (this.db.isTransaction) return fn();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the connection. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.db.close();
  }

  /**
   * Stops using the connection without closing it, for a process about to
   * exit: the exit drops it, and SQLite's close (which folds the
   * write-ahead log into the database file and deletes it, the last
   * connection's checkpoint) does not run. The log stays for the next
   * connection, which reads it as it reads any log a crash left. A process
   * that lives on instead has the connection closed when it is collected.
   */
  release(): void {
    this.#closed = true;
  }
}

/**
 * Puts the database in WAL mode. A database already in WAL (every open but
 * the first) is left alone; the first switch needs a lock that processes
 * opening the same new store at once contend for, and SQLite may answer
 * "busy" without waiting, so it is tried again until the busy timeout.
 */
function enableWal(db: DatabaseSync, timeoutMs: number): void {
  const mode = db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined;
  if (mode?.journal_mode === 'wal') return;
  const until = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      const code = (err as { errcode?: number }).errcode;
      if ((code !== 5 && code !== 6) || Date.now() >= until) throw err;
      Atomics.wait(pause, 0, 0, 10 + Math.floor(Math.random() * 20));
    }
  }
}
