/**
 * The context layer's own state — registry, versions, relations, summaries,
 * sessions, audit — in real SQLite (`node:sqlite`). WAL journaling and a busy
 * timeout let two processes share one store; migrations are versioned through
 * SQLite's `user_version`.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { fsError } from '@ctxfs/core';
import { MIGRATIONS, type Migration } from './migrations.ts';

/** Options of {@link StateStore.open}. */
export interface StateStoreOptions {
  /** Database file, or `':memory:'` (the default) for a private in-memory store. */
  path?: string;
  /** How long a writer waits for another process's lock; default 5,000 ms. */
  busyTimeoutMs?: number;
  /** Schema steps; default {@link MIGRATIONS}. */
  migrations?: readonly Migration[];
}

/**
 * Where the store of a workspace lives by default: in a directory beside the
 * workspace (`<parent>/.<name>.ctxfs/state.db`), so it never shows up in the
 * workspace's own list, glob or grep results. Workspaces that are not host
 * directories (memory, containers) get `':memory:'`.
 *
 * @example
 * ```ts
 * defaultStatePath('/home/me/project'); // '/home/me/.project.ctxfs/state.db'
 * defaultStatePath('memory:');          // ':memory:'
 * ```
 */
export function defaultStatePath(workspaceRoot: string): string {
  if (!isAbsolute(workspaceRoot)) return ':memory:';
  const name = basename(workspaceRoot) || createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 12);
  return join(dirname(workspaceRoot), `.${name}.ctxfs`, 'state.db');
}

/**
 * The fallback location when the directory beside the workspace is not
 * writable: `$XDG_STATE_HOME/ctxfs/<hash of root>/state.db`.
 */
export function userStatePath(workspaceRoot: string): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'ctxfs', createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16), 'context.db');
}

/**
 * A SQLite-backed store. Open one per process; several processes may open the
 * same file at once.
 *
 * @example
 * ```ts
 * import { StateStore } from '@ctxfs/context';
 * const store = StateStore.open({ path: ':memory:' });
 * store.schemaVersion; // 1
 * store.close();
 * ```
 */
export class StateStore {
  readonly db: DatabaseSync;
  readonly path: string;
  #depth = 0;
  readonly #transactionEnd: Array<(committed: boolean) => void> = [];
  readonly #flushes: Array<() => void> = [];
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  private constructor(db: DatabaseSync, path: string) {
    this.db = db;
    this.path = path;
  }

  /** Opens (creating if needed) and migrates a store. */
  static open(options: StateStoreOptions = {}): StateStore {
    const path = options.path ?? ':memory:';
    let db: DatabaseSync;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5000 });
    } catch (err) {
      throw fsError('EIO', 'openState', path, {
        reason: `cannot open the state store: ${(err as Error).message}`,
        hint: 'check that the state directory is writable',
        cause: err,
      });
    }
    if (path !== ':memory:') enableWal(db, options.busyTimeoutMs ?? 5000);
    db.exec('PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
    const store = new StateStore(db, path);
    store.#migrate(options.migrations ?? MIGRATIONS);
    return store;
  }

  /** The schema version after migration. */
  get schemaVersion(): number {
    const row = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    return row.user_version;
  }

  #migrate(migrations: readonly Migration[]): void {
    // BEGIN IMMEDIATE takes the write lock first, so two processes opening a
    // fresh store at once do not both try to apply version 1.
    this.db.exec('BEGIN IMMEDIATE');
    try {
      let current = this.schemaVersion;
      for (const m of migrations) {
        if (m.version <= current) continue;
        if (m.version !== current + 1) throw new Error(`migration ${m.version} follows ${current}`);
        this.db.exec(m.sql);
        m.run?.(this.db);
        this.db.exec(`PRAGMA user_version = ${m.version}`);
        current = m.version;
      }
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw fsError('EIO', 'openState', this.path, { reason: `state store migration failed: ${(err as Error).message}`, cause: err });
    }
  }

  /**
   * The prepared statement for `sql`, compiled once per store: preparing on
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

  /** Whether a transaction is open on this handle. */
  get inTransaction(): boolean {
    return this.#depth > 0;
  }

  /**
   * Called before the audit table is read and before the store closes:
   * writers that queue records (the audit sink batches those of reads) write
   * them now, so a reader sees every record made before it asked.
   */
  beforeAuditRead(flush: () => void): void {
    this.#flushes.push(flush);
  }

  /** Writes what the writers registered with {@link beforeAuditRead} still hold. */
  flushAudit(): void {
    for (const flush of this.#flushes) flush();
  }

  /** Called after every outermost transaction ends: `true` when it committed, `false` when it rolled back. */
  onTransactionEnd(listener: (committed: boolean) => void): void {
    this.#transactionEnd.push(listener);
  }

  /** Runs `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: () => T): T {
    if (this.#depth > 0) {
      this.#depth++;
      try {
        return fn();
      } finally {
        this.#depth--;
      }
    }
    this.db.exec('BEGIN IMMEDIATE');
    this.#depth = 1;
    let committed = false;
    try {
      const result = fn();
      this.db.exec('COMMIT');
      committed = true;
      return result;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    } finally {
      this.#depth = 0;
      for (const listener of this.#transactionEnd) listener(committed);
    }
  }

  /** Appends one audit record. */
  audit(entry: {
    op: string;
    path?: string | undefined;
    agent?: string | undefined;
    sessionId?: string | undefined;
    params?: unknown;
    result: string;
    tokens?: number | undefined;
    changeId?: string | undefined;
  }): void {
    this.statement('INSERT INTO audit (at_ms, op, path, agent, session_id, params, result, tokens, change_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      Date.now(),
      entry.op,
      entry.path ?? null,
      entry.agent ?? null,
      entry.sessionId ?? null,
      entry.params === undefined ? null : JSON.stringify(entry.params),
      entry.result,
      entry.tokens ?? null,
      entry.changeId ?? null,
    );
  }

  /** Audit records, newest first. */
  auditLog(filter: { path?: string; limit?: number } = {}): AuditRecord[] {
    this.flushAudit();
    const params: SQLInputValue[] = [];
    let sql = 'SELECT id, at_ms, op, path, agent, session_id, params, result, tokens FROM audit';
    if (filter.path !== undefined) {
      sql += ' WHERE path = ?';
      params.push(filter.path);
    }
    sql += ' ORDER BY id DESC LIMIT ?';
    params.push(filter.limit ?? 100);
    return (this.db.prepare(sql).all(...params) as Array<Record<string, unknown>>).map((r) => ({
      id: Number(r.id),
      at: new Date(Number(r.at_ms)),
      op: String(r.op),
      path: r.path === null ? undefined : String(r.path),
      agent: r.agent === null ? undefined : String(r.agent),
      sessionId: r.session_id === null ? undefined : String(r.session_id),
      params: r.params === null ? undefined : (JSON.parse(String(r.params)) as unknown),
      result: String(r.result),
      tokens: r.tokens === null ? undefined : Number(r.tokens),
    }));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the database. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.flushAudit();
    this.#closed = true;
    this.db.close();
  }
}

/** One audited call. */
export interface AuditRecord {
  readonly id: number;
  readonly at: Date;
  readonly op: string;
  readonly path: string | undefined;
  readonly agent: string | undefined;
  readonly sessionId: string | undefined;
  readonly params: unknown;
  readonly result: string;
  readonly tokens: number | undefined;
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
