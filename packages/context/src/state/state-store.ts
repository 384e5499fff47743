/**
 * What the context layer asks of the place its state lives: an asynchronous
 * SQL store with one transaction model, implemented over SQLite (one
 * machine, no server) and PostgreSQL (many hosts, one truth).
 *
 * Queries are written once, in the subset of SQL both dialects share: `?`
 * placeholders (PostgreSQL's store numbers them), `INSERT … ON CONFLICT`,
 * `RETURNING`, no `rowid`, no `INSERT OR …`, no aliases in `HAVING`. Where a
 * query cannot be shared it branches on {@link StateStore.dialect}.
 *
 * Transactions are implicit in the calling code's async context: a query made
 * while a {@link StateStore.transaction} callback runs (awaited from it, at any
 * depth) joins that transaction; a query from anywhere else waits for it or
 * runs beside it, never inside it. So a module calls `store.get(…)` the same
 * way in and out of a transaction, and a rollback never takes another
 * caller's write with it.
 *
 * @module
 */

import type { AuditChainReport } from './audit-chain.ts';
import { multiRow } from './multi-row.ts';

/** A value a query binds. Integers beyond 2^53 come back as `bigint` from SQLite only when written so. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** A row as the driver returns it: column name to value. */
export type SqlRow = Record<string, unknown>;

/** What a write reports. */
export interface RunResult {
  /** Rows inserted, updated or deleted. */
  readonly changes: number;
}

/** The legacy `audit` table's record (one row a call), newest first from {@link StateStore.auditLog}. */
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

/** One row for the `audit` table. */
export interface AuditRowInput {
  op: string;
  path?: string | undefined;
  agent?: string | undefined;
  sessionId?: string | undefined;
  params?: unknown;
  result: string;
  tokens?: number | undefined;
  changeId?: string | undefined;
}

/** How {@link StateStore.transaction} commits. */
export interface TransactionOptions {
  /** The commit is on stable storage when the transaction resolves (see {@link StateStore.transaction}). */
  readonly durable?: boolean;
}

/** The rows of a statement sent by {@link StateStore.writeReturning}, answered later. */
export interface Returning<R> {
  readonly rows: Promise<R[]>;
}

/**
 * The context layer's state store. Open one with {@link openStateStore}.
 *
 * @example
 * ```ts
 * import { openStateStore } from '@ctxfs/context';
 * const store = await openStateStore(':memory:');
 * await store.transaction(async () => {
 *   await store.run('INSERT INTO sessions (id, profile, created_ms) VALUES (?, ?, ?)', ['s1', 'large', Date.now()]);
 * });
 * (await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))?.n; // 1
 * await store.close();
 * ```
 */
export interface StateStore {
  /** Which SQL the store speaks, for the few queries the dialects cannot share. */
  readonly dialect: 'sqlite' | 'postgres';
  /** Where it is: the SQLite file (or `':memory:'`), or the PostgreSQL URL without its password. */
  readonly location: string;
  /** Whether {@link close} was called. */
  readonly closed: boolean;
  /** Whether the calling async context is inside one of this store's transactions. */
  readonly inTransaction: boolean;

  /** The first row of a query, or `undefined`. */
  get<R = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<R | undefined>;
  /** Every row of a query. */
  all<R = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
  /** Runs a write. */
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  /**
   * Runs a write whose outcome the caller need not wait for. Inside a
   * transaction on PostgreSQL it is sent at once and answered later: the
   * writes of a transaction and its `COMMIT` travel together, one round trip
   * for all, and the transaction rejects with the first that failed (every
   * statement after it too, with that error). Elsewhere it waits as
   * {@link run} does. For the writes whose changed-row count nobody reads.
   *
   * @example
   * ```ts
   * await store.transaction(async () => {
   *   await store.write('UPDATE files SET access_count = access_count + 1 WHERE path = ?', ['a.ts']);
   *   await store.write('DELETE FROM edit_journal WHERE id = ?', [7]);
   * }); // on PostgreSQL: both writes and the COMMIT in one round trip
   * ```
   */
  write(sql: string, params?: readonly SqlValue[]): Promise<void>;
  /**
   * Runs a write whose rows (`RETURNING`) the caller takes once its
   * transaction has committed: inside a transaction on PostgreSQL it is
   * sent as {@link write} sends, and answered with the `COMMIT`, where
   * waiting for its rows first would cost a round trip of its own.
   * Elsewhere it runs as {@link all} does. `rows` rejects with the
   * statement's error, and the transaction with it.
   *
   * @example
   * ```ts
   * const sent = await store.transaction(() => store.writeReturning<{ id: number }>('INSERT INTO edit_journal (change_id, op, author, entries, created_ms) VALUES (?, ?, ?, ?, ?) RETURNING id', ['c1', 'replace', 'me', '[]', Date.now()]));
   * (await sent.rows)[0]?.id; // the new row's id
   * ```
   */
  writeReturning<R = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<Returning<R>>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back
   * when it rejects. Nested calls join the outer transaction. Writers
   * serialize per store (SQLite's write lock; a per-store advisory lock on
   * PostgreSQL), so a read-then-write inside one sees no other writer between.
   *
   * `durable: true` asks that the commit be on stable storage when the call
   * resolves, so that it survives a crash of the machine as well as of the
   * process. SQLite commits in WAL mode with `synchronous = NORMAL` by
   * default, which survives a process's crash but may lose the last commits to
   * a power loss; a durable transaction commits with `synchronous = FULL`
   * (one more `fsync` of the WAL). PostgreSQL's commits are durable already.
   * The edit journal's intent is written this way: it must be on disk before
   * the file it announces is replaced. A durable transaction must be the
   * outermost: asking for one inside another throws, since the enclosing
   * transaction's commit decides.
   *
   * @example
   * ```ts
   * await store.transaction(async () => {
   *   await store.run('INSERT INTO edit_journal (change_id, op, author, entries, created_ms) VALUES (?, ?, ?, ?, ?)', ['c1', 'replace', 'me', '[]', Date.now()]);
   * }, { durable: true }); // on disk before the file is written
   * ```
   */
  transaction<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `fn` holding the locks named by `keys` against every process
   * sharing this store, on any machine: the edit pipeline holds one per file
   * from its read of the file's head to its record, so edits of one file
   * from many hosts take turns and merge as edits within one process do.
   * Several keys are taken together, in sorted order (so two holders never
   * deadlock), however many: an edit of 40 files holds 40. On SQLite (one
   * machine) `fn` runs at once: there the backend's own cross-process lock
   * does this. Not a transaction; `fn` may open them.
   *
   * `ahead`, called once the lock is asked for and before it is granted,
   * may start plain reads whose answers `fn` will take (without awaiting
   * them itself): on PostgreSQL they go out right behind the lock's request,
   * on its connection, so they run once the lock is granted and are
   * answered in its round trip. SQLite does not call it (a read answers at
   * once); `fn` then asks for what it needs itself.
   */
  withLock<T>(keys: string | readonly string[], fn: () => Promise<T>, ahead?: () => void): Promise<T>;
  /** Called after every outermost transaction ends: `true` when it committed. */
  onTransactionEnd(listener: (committed: boolean) => void): void;

  /** The schema version after migration. */
  schemaVersion(): Promise<number>;

  /**
   * Registers a writer that queues audit rows (the audit sink batches those of
   * reads): {@link flushAudit} writes them, before the table is read and
   * before the store closes.
   */
  beforeAuditRead(flush: () => Promise<void>): void;
  /** Writes what the writers registered with {@link beforeAuditRead} still hold. */
  flushAudit(): Promise<void>;
  /**
   * Appends rows to the `audit` table, in order, each chained to the row
   * before it (in the caller's transaction, or one of its own), up to
   * 64 a statement (multi-row.ts). See audit-chain.ts.
   */
  audit(entries: AuditRowInput | readonly AuditRowInput[]): Promise<void>;
  /** Checks the `audit` table's hash chain, oldest row first; names the first row that does not verify. */
  verifyAudit(): Promise<AuditChainReport>;
  /** Rows of the `audit` table, newest first. */
  auditLog(filter?: { path?: string; limit?: number }): Promise<AuditRecord[]>;

  /** Flushes queued audit rows and closes. Idempotent. */
  close(): Promise<void>;
}

/**
 * The `audit` table's insert of `rows` rows, shared by both stores: each row
 * {@link auditValues}, then its link and hash (audit-chain.ts).
 */
export const auditInsert: (rows: number) => string = multiRow(
  'INSERT INTO audit (at_ms, op, path, agent, session_id, params, result, tokens, change_id, prev, hash) VALUES',
  '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);

/** The values of {@link auditInsert} a row's hash covers, in `CHAINED_COLUMNS` order. */
export function auditValues(entry: AuditRowInput): SqlValue[] {
  return [
    Date.now(),
    entry.op,
    entry.path ?? null,
    entry.agent ?? null,
    entry.sessionId ?? null,
    entry.params === undefined ? null : JSON.stringify(entry.params),
    entry.result,
    entry.tokens ?? null,
    entry.changeId ?? null,
  ];
}

/** The query of {@link StateStore.auditLog} and the records of its rows. */
export function auditLogQuery(filter: { path?: string; limit?: number }): { sql: string; params: SqlValue[] } {
  const params: SqlValue[] = [];
  let sql = 'SELECT id, at_ms, op, path, agent, session_id, params, result, tokens FROM audit';
  if (filter.path !== undefined) {
    sql += ' WHERE path = ?';
    params.push(filter.path);
  }
  sql += ' ORDER BY id DESC LIMIT ?';
  params.push(filter.limit ?? 100);
  return { sql, params };
}

/** A row of {@link auditLogQuery} as a record. */
export function auditRecordOf(r: SqlRow): AuditRecord {
  return {
    id: Number(r.id),
    at: new Date(Number(r.at_ms)),
    op: String(r.op),
    path: r.path === null ? undefined : String(r.path),
    agent: r.agent === null ? undefined : String(r.agent),
    sessionId: r.session_id === null ? undefined : String(r.session_id),
    params: r.params === null ? undefined : (JSON.parse(String(r.params)) as unknown),
    result: String(r.result),
    tokens: r.tokens === null ? undefined : Number(r.tokens),
  };
}
