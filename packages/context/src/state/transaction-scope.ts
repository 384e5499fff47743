/**
 * The transaction model both state stores share: a transaction belongs to the
 * async context that opened it (AsyncLocalStorage), nested calls join it,
 * listeners hear how the outermost one ended, and audit writers flush before
 * the audit table is read. A store supplies only how to begin, commit, roll
 * back and query on a connection.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { AUDIT_GENESIS, AUDIT_HEAD, type AuditChainReport, auditAppendInServer, auditAppendParams, auditHash, verifyAuditChain } from './audit-chain.ts';
import { multiRowStatements, ROWS_PER_STATEMENT } from './multi-row.ts';
import type { AuditRecord, AuditRowInput, Returning, RunResult, SqlRow, SqlValue, StateStore, TransactionOptions } from './state-store.ts';
import { auditInsert, auditLogQuery, auditRecordOf, auditValues } from './state-store.ts';

/** One open transaction: the connection it runs on, while it is open. */
interface Frame<C> {
  readonly connection: C;
  open: boolean;
  /** Writes sent and not yet answered ({@link TransactionScope.write}): settled before the transaction ends. */
  readonly pending: Array<Promise<unknown>>;
  /** The first of them that failed: the transaction is lost, and this is why. */
  failure?: { readonly error: unknown };
  /** The hash of the last audit row this transaction appended: the next one's link, without reading it back (where the process hashes). */
  auditHead?: string;
}

/** A store's connection-level operations; `C` is its connection type. */
export abstract class TransactionScope<C> implements StateStore {
  abstract readonly dialect: 'sqlite' | 'postgres';
  abstract readonly location: string;
  readonly #frames = new AsyncLocalStorage<Frame<C>>();
  readonly #ends: Array<(committed: boolean) => void> = [];
  readonly #flushes: Array<() => Promise<void>> = [];
  #closed = false;

  /** Takes a connection and opens a write transaction on it, committed as `options` ask. */
  protected abstract begin(options: TransactionOptions): Promise<C>;
  /**
   * Commits (`true`) or rolls back (`false`), then gives the connection back.
   * `pending` are the writes sent without waiting ({@link write}): a commit
   * rejects with the first that failed (the transaction was lost with it).
   */
  protected abstract end(connection: C, commit: boolean, pending: readonly Promise<unknown>[]): Promise<void>;
  /**
   * Whether a statement can be sent before the one ahead of it is answered
   * (PostgreSQL's pipeline). Where it cannot, or need not (SQLite answers at
   * once), {@link write} waits as {@link run} does.
   */
  protected readonly pipelined: boolean = false;
  /**
   * Whether the database links and hashes audit rows itself
   * ({@link auditAppendInServer}): an append then sends its rows without
   * reading the head first, and waits for nothing before its commit. Where
   * not (SQLite has no SHA-256), the process reads the head and hashes.
   */
  protected readonly chainsAuditInServer: boolean = false;
  /** Runs one statement, on `connection` inside a transaction or on any connection outside one. */
  protected abstract query(connection: C | undefined, sql: string, params: readonly SqlValue[], want: 'rows' | 'changes'): Promise<SqlRow[] | RunResult>;
  /** Closes the connections. */
  protected abstract shutdown(): Promise<void>;

  get closed(): boolean {
    return this.#closed;
  }

  get inTransaction(): boolean {
    return this.#frames.getStore()?.open === true;
  }

  /** The connection of the caller's open transaction, if any. */
  protected get current(): C | undefined {
    const frame = this.#frames.getStore();
    return frame?.open === true ? frame.connection : undefined;
  }

  async get<R = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    const rows = (await this.#answer(sql, params, 'rows')) as SqlRow[];
    return rows[0] as R | undefined;
  }

  async all<R = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return (await this.#answer(sql, params, 'rows')) as R[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    return (await this.#answer(sql, params, 'changes')) as RunResult;
  }

  async write(sql: string, params: readonly SqlValue[] = []): Promise<void> {
    const frame = this.#frames.getStore();
    if (frame?.open !== true || !this.pipelined) {
      await this.run(sql, params);
      return;
    }
    this.#pipe(frame, sql, params, 'changes');
  }

  async writeReturning<R = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<Returning<R>> {
    const frame = this.#frames.getStore();
    if (frame?.open !== true || !this.pipelined) return { rows: Promise.resolve(await this.all<R>(sql, params)) };
    return { rows: this.#pipe(frame, sql, params, 'rows') as Promise<R[]> };
  }

  /** Sends a statement of `frame`'s transaction without waiting for it; its end waits, and a failure loses the transaction. */
  #pipe(frame: Frame<C>, sql: string, params: readonly SqlValue[], want: 'rows' | 'changes'): Promise<SqlRow[] | RunResult> {
    if (frame.failure !== undefined) throw frame.failure.error;
    const sent = this.query(frame.connection, sql, params, want);
    frame.pending.push(sent);
    sent.catch((error: unknown) => {
      frame.failure ??= { error };
    });
    return sent;
  }

  /**
   * One statement's answer. Behind a write that failed in the same
   * transaction, the server refuses every statement as "in a failed
   * transaction": the caller is told the write's own error instead.
   */
  async #answer(sql: string, params: readonly SqlValue[], want: 'rows' | 'changes'): Promise<SqlRow[] | RunResult> {
    const frame = this.#frames.getStore();
    const connection = frame?.open === true ? frame.connection : undefined;
    if (frame?.failure !== undefined && connection !== undefined) throw frame.failure.error;
    try {
      return await this.query(connection, sql, params, want);
    } catch (err) {
      if (connection !== undefined && frame?.failure !== undefined) throw frame.failure.error;
      throw err;
    }
  }

  async transaction<T>(fn: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.inTransaction) {
      // The enclosing transaction's commit decides when this one's writes are on disk.
      if (options.durable === true) throw new Error('a durable transaction must be the outermost: this one would commit with the transaction it joins');
      return fn();
    }
    const frame: Frame<C> = { connection: await this.begin(options), open: true, pending: [] };
    let committed = false;
    try {
      const result = await this.#frames.run(frame, fn);
      if (frame.pending.length > 0) {
        // A write that failed before reaching the server (a value that could not be sent) aborted
        // nothing there, and a COMMIT would keep the writes before it: its error arrives within a
        // turn of the event loop, so the commit waits that turn and is not sent when one failed.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (frame.failure !== undefined) throw frame.failure.error;
      }
      await this.end(frame.connection, true, frame.pending);
      committed = true;
      return result;
    } catch (err) {
      if (!committed) await this.end(frame.connection, false, frame.pending).catch(() => undefined);
      throw err;
    } finally {
      frame.open = false;
      for (const listener of this.#ends) listener(committed);
    }
  }

  onTransactionEnd(listener: (committed: boolean) => void): void {
    this.#ends.push(listener);
  }

  beforeAuditRead(flush: () => Promise<void>): void {
    this.#flushes.push(flush);
  }

  async flushAudit(): Promise<void> {
    for (const flush of this.#flushes) await flush();
  }

  async audit(entries: AuditRowInput | readonly AuditRowInput[]): Promise<void> {
    const rows: readonly AuditRowInput[] = Array.isArray(entries) ? entries : [entries as AuditRowInput];
    if (rows.length === 0) return;
    // In a write transaction: writers serialize, so the head read here (or by the insert) is still the head at commit.
    await this.transaction(async () => {
      if (this.chainsAuditInServer) {
        // Rows chained a statement's worth at a time; the next statement reads the last as the head.
        // None is waited for: they travel with the transaction's other statements and its COMMIT.
        const per = ROWS_PER_STATEMENT;
        const statements = multiRowStatements(auditAppendInServer, rows, (entry, i) => auditAppendParams(auditValues(entry), (i % per) + 1), {
          perStatement: per,
        });
        for (const st of statements) await this.write(st.sql, st.params);
        return;
      }
      const frame = this.#frames.getStore() as Frame<C>;
      const read = frame.auditHead === undefined ? await this.get<{ hash: string | null }>(AUDIT_HEAD) : undefined;
      let prev = frame.auditHead ?? read?.hash ?? AUDIT_GENESIS;
      const statements = multiRowStatements(auditInsert, rows, (entry) => {
        const values = auditValues(entry);
        const link = prev;
        prev = auditHash(link, values);
        return [...values, link, prev];
      });
      for (const st of statements) await this.write(st.sql, st.params);
      frame.auditHead = prev;
    });
  }

  verifyAudit(): Promise<AuditChainReport> {
    return verifyAuditChain(this);
  }

  async auditLog(filter: { path?: string; limit?: number } = {}): Promise<AuditRecord[]> {
    await this.flushAudit();
    const { sql, params } = auditLogQuery(filter);
    return (await this.all(sql, params)).map(auditRecordOf);
  }

  abstract schemaVersion(): Promise<number>;

  abstract withLock<T>(keys: string | readonly string[], fn: () => Promise<T>, ahead?: () => void): Promise<T>;

  async close(): Promise<void> {
    if (this.#closed) return;
    // Closed whatever the flush does: a store the caller closed keeps no connection open.
    let failed: { readonly error: unknown } | undefined;
    try {
      await this.flushAudit();
    } catch (error) {
      failed = { error };
    }
    this.#closed = true;
    await this.shutdown();
    if (failed !== undefined) throw failed.error;
  }
}
