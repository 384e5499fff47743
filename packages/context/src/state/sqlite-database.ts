/**
 * One SQLite database file through `node:sqlite`'s synchronous API: opened in
 * WAL mode with a busy timeout so several processes share it, statements
 * compiled once. The asynchronous SQLite state store runs on it, and so do
 * host-local caches that must be written synchronously (the audit trail's
 * index, written under the trail's file lock).
 *
 * @module
 */

import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type FsError, type FsErrorCode, fsError } from '@ctxfs/core';

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
    let db: DatabaseSync | undefined;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      db = new DatabaseSync(path, { timeout: busyTimeoutMs });
      // A file that is not a database, or one that cannot be written, opens: the first statement finds out.
      if (path !== ':memory:') enableWal(db, busyTimeoutMs);
      db.exec('PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
      // A file this process cannot write opens read-only, and the first write of a call fails half-way through it.
      const denied = path === ':memory:' ? undefined : unwritable(path);
      if (denied !== undefined) throw Object.assign(new Error(`${denied}: the state file is not writable`), { code: denied });
    } catch (err) {
      db?.close();
      throw openFailure(path, err);
    }
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

/** What is at `path` on the host, without following a last link; `undefined` where nothing is (or it cannot be told). */
function kindAt(path: string): 'directory' | 'file' | 'other' | undefined {
  try {
    const st = statSync(path);
    return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

/** Why this process may not write `path` (create and rename files in it, for a directory): `EACCES`, `EROFS`…; `undefined` where it may. */
function unwritable(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'EACCES';
  }
}

/**
 * Why the state store at `path` did not open, as what is wrong at the path
 * and what to name instead: a directory (`EISDIR`), a file where a directory
 * of the path should be (`ENOTDIR`), a file that is not a database
 * (`EINVAL`), a directory that cannot be written or a read-only filesystem
 * (`EACCES`, `EROFS`). Each hint names a path that would open, where one can
 * be told; what cannot be told stays `EIO` with SQLite's or the system's
 * message.
 */
function openFailure(path: string, err: unknown): FsError {
  const message = (err as Error).message;
  const errno = (err as NodeJS.ErrnoException).code;
  // SQLite's primary result code: the extended code's low byte.
  const sqlite = ((err as { errcode?: number }).errcode ?? -1) & 0xff;
  const fail = (code: FsErrorCode, reason: string, hint: string) => fsError(code, 'openState', path, { reason, hint, cause: err });
  if (kindAt(path) === 'directory') {
    return fail(
      'EISDIR',
      `the state location '${path}' is a directory; the state store is one database file`,
      `name a file for the state, e.g. '${join(path, 'state.db')}'`,
    );
  }
  // The nearest ancestor that exists: a file there means no directory can be made below it.
  let ancestor = dirname(path);
  while (kindAt(ancestor) === undefined && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
  const ancestorKind = kindAt(ancestor);
  if (ancestorKind !== undefined && ancestorKind !== 'directory') {
    return fail(
      'ENOTDIR',
      `'${ancestor}' is a file, not a directory, so the state file '${path}' cannot be made below it`,
      `name a state file in a directory, e.g. '${join(dirname(ancestor), 'state.db')}'`,
    );
  }
  if (errno === 'EACCES' || errno === 'EPERM' || errno === 'EROFS' || sqlite === 8 /* SQLITE_READONLY */ || sqlite === 14 /* SQLITE_CANTOPEN */) {
    // The directory to make the file in, or the file itself where it is there.
    const denied = kindAt(path) === 'file' && unwritable(path) !== undefined ? path : ancestor;
    const why = unwritable(denied) ?? (errno === 'EROFS' ? 'EROFS' : undefined);
    if (why === 'EROFS') {
      return fail('EROFS', `the state location '${path}' is on a read-only filesystem`, 'name a state file on a writable filesystem');
    }
    if (why !== undefined) {
      return fail(
        'EACCES',
        `cannot write ${denied === path ? 'the state file' : 'the directory'} '${denied}' (permission denied)`,
        `make '${denied}' writable, or name a state file in a writable directory`,
      );
    }
  }
  if (sqlite === 26 /* SQLITE_NOTADB */ || sqlite === 11 /* SQLITE_CORRUPT */) {
    return fail(
      'EINVAL',
      `'${path}' is not a SQLite database (${message}), so not a state store; it is left as it is`,
      `name another file for the state, e.g. '${join(dirname(path), 'state.db') === path ? join(dirname(path), 'ctxfs-state.db') : join(dirname(path), 'state.db')}'`,
    );
  }
  return fail('EIO', `cannot open the state store: ${message}`, `check that '${dirname(path)}' is writable and has space, then retry`);
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
