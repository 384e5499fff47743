/**
 * The audit index: a cache of the log in the state store, so a query by
 * file, agent, session, operation or time range does not read the log. A row
 * holds what queries filter on and where the line is (file, byte offset,
 * length); the record itself is read back from the log, so what a query
 * returns is what the chain holds. The index can always be rebuilt from the
 * log (`AuditTrail.rebuildIndex()`).
 *
 * Rows are written in batches: appends queue them and one transaction a tick
 * (or every {@link FLUSH_ROWS} rows) writes them. A crash loses at most the
 * queue, which the trail indexes again from the log when it reopens.
 *
 * @module
 */

import type { SQLInputValue } from 'node:sqlite';
import type { SqliteDatabase } from '../../state/sqlite-database.ts';

/** Rows queued before they are written without waiting for the next tick. */
export const FLUSH_ROWS = 512;

/** Rows a multi-row INSERT carries. */
const ROWS_A_STATEMENT = 32;
const INDEX_INSERT = 'INSERT OR REPLACE INTO audit_index (seq, at_ms, file_no, line, offset, length, op, op_class, agent, session_id, backend, result, mac)';
const INDEX_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const PATHS_INSERT = 'INSERT OR IGNORE INTO audit_index_paths (path, seq)';

/** One indexed entry. */
export interface IndexRow {
  readonly seq: number;
  readonly atMs: number;
  readonly fileNo: number;
  readonly line: number;
  readonly offset: number;
  readonly length: number;
  readonly op: string;
  readonly opClass: string;
  readonly agent: string;
  readonly sessionId: string;
  readonly backend: string;
  readonly result: string;
  readonly mac: string;
  readonly paths: readonly string[];
}

/** Filters of {@link AuditIndex.select}; all given filters must hold. */
export interface AuditQuery {
  /** Entries that touched this workspace-relative path. */
  readonly path?: string;
  readonly agent?: string;
  readonly sessionId?: string;
  readonly op?: string;
  readonly opClass?: string;
  readonly backend?: string;
  readonly result?: string;
  /** Written at or after. */
  readonly since?: Date;
  /** Written before. */
  readonly until?: Date;
  /** At most this many, newest first; default 100. */
  readonly limit?: number;
}

/** Where a selected entry's line is. */
export interface IndexHit {
  readonly seq: number;
  readonly fileNo: number;
  readonly line: number;
  readonly offset: number;
  readonly length: number;
}

/**
 * The index tables of one trail in a SQLite state store, written
 * synchronously: rows are added under the trail's file lock.
 */
export class AuditIndex {
  readonly store: SqliteDatabase;
  #pending: IndexRow[] = [];
  #scheduled: NodeJS.Immediate | undefined;

  constructor(store: SqliteDatabase) {
    this.store = store;
  }

  /** The chain the index holds rows of, if any. */
  get chain(): string | undefined {
    const row = this.store.statement("SELECT value FROM audit_index_meta WHERE key = 'chain'").get() as { value: string } | undefined;
    return row?.value;
  }

  set chain(chain: string) {
    this.store.statement("INSERT OR REPLACE INTO audit_index_meta (key, value) VALUES ('chain', ?)").run(chain);
  }

  /**
   * The seq through which every entry of the kept log is indexed (0 when
   * none is known to be): what a trail opening need not read again. Set
   * under the log's lock, after the entries up to the log's tip were
   * indexed; lowered when rows after it are dropped.
   */
  get complete(): number {
    const row = this.store.statement("SELECT value FROM audit_index_meta WHERE key = 'complete'").get() as { value: string } | undefined;
    return row === undefined ? 0 : Number(row.value);
  }

  set complete(seq: number) {
    this.store.statement("INSERT OR REPLACE INTO audit_index_meta (key, value) VALUES ('complete', ?)").run(String(seq));
  }

  /** Where the newest indexed entry at or before `seq` is in the log (its line number, byte offset and length). */
  lineAtOrBefore(seq: number): { seq: number; fileNo: number; line: number; offset: number; length: number } | undefined {
    this.flush();
    const row = this.store.statement('SELECT seq, file_no, line, offset, length FROM audit_index WHERE seq <= ? ORDER BY seq DESC LIMIT 1').get(seq) as
      | { seq: number; file_no: number; line: number; offset: number; length: number }
      | undefined;
    return row === undefined
      ? undefined
      : { seq: Number(row.seq), fileNo: Number(row.file_no), line: Number(row.line), offset: Number(row.offset), length: Number(row.length) };
  }

  /** The newest indexed entry. */
  newest(): { seq: number; mac: string } | undefined {
    this.flush();
    const row = this.store.statement('SELECT seq, mac FROM audit_index ORDER BY seq DESC LIMIT 1').get() as { seq: number; mac: string } | undefined;
    return row === undefined ? undefined : { seq: Number(row.seq), mac: String(row.mac) };
  }

  /** The seqs of the indexed entries after `seq`. */
  seqsAfter(seq: number): Set<number> {
    this.flush();
    const rows = this.store.statement('SELECT seq FROM audit_index WHERE seq > ?').all(seq) as Array<{ seq: number }>;
    return new Set(rows.map((r) => Number(r.seq)));
  }

  /** Queues a row; written on the next tick or when the queue is full. */
  add(row: IndexRow): void {
    this.#pending.push(row);
    if (this.#pending.length >= FLUSH_ROWS) this.flush();
    else if (this.#scheduled === undefined) {
      this.#scheduled = setImmediate(() => {
        this.#scheduled = undefined;
        if (this.store.closed) return;
        try {
          this.flush();
        } catch {
          // Off the caller's stack an error would be uncaught: the rows stay queued and the
          // next flush from a call (query, verify, close) retries them and reports the error.
        }
      });
      this.#scheduled.unref();
    }
  }

  /** Writes queued rows in one transaction. */
  flush(): void {
    if (this.#scheduled !== undefined) {
      clearImmediate(this.#scheduled);
      this.#scheduled = undefined;
    }
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    const values: SQLInputValue[] = [];
    for (const r of rows) values.push(r.seq, r.atMs, r.fileNo, r.line, r.offset, r.length, r.op, r.opClass, r.agent, r.sessionId, r.backend, r.result, r.mac);
    const paths: SQLInputValue[] = [];
    for (const r of rows) for (const p of new Set(r.paths)) paths.push(p, r.seq);
    this.store.transaction(() => {
      this.#insert(INDEX_INSERT, INDEX_ROW, 13, values);
      this.#insert(PATHS_INSERT, '(?, ?)', 2, paths);
    });
    // Dequeued only once written: a failed transaction leaves them for the next flush.
    this.#pending = [];
  }

  /**
   * Inserts `values` (`width` a row) with statements of {@link ROWS_A_STATEMENT}
   * rows, then one row a statement for the rest: a row a statement costs
   * about 60% more in SQLite's per-call work.
   */
  #insert(head: string, row: string, width: number, values: readonly SQLInputValue[]): void {
    const rows = values.length / width;
    const many = this.store.statement(`${head} VALUES ${Array(ROWS_A_STATEMENT).fill(row).join(', ')}`);
    let at = 0;
    for (; at + ROWS_A_STATEMENT <= rows; at += ROWS_A_STATEMENT) many.run(...values.slice(at * width, (at + ROWS_A_STATEMENT) * width));
    const one = this.store.statement(`${head} VALUES ${row}`);
    for (; at < rows; at++) one.run(...values.slice(at * width, (at + 1) * width));
  }

  /** Drops queued rows (the trail is starting over) and every row. */
  clear(): void {
    this.#pending = [];
    this.store.transaction(() => {
      this.store.db.exec('DELETE FROM audit_index; DELETE FROM audit_index_paths; DELETE FROM audit_index_meta;');
    });
  }

  /** Drops rows of files retention deleted: every entry before `seq`. */
  dropBefore(seq: number): void {
    this.flush();
    this.store.transaction(() => {
      this.store.statement('DELETE FROM audit_index WHERE seq < ?').run(seq);
      this.store.statement('DELETE FROM audit_index_paths WHERE seq < ?').run(seq);
    });
  }

  /** Drops rows after `seq` (records the log no longer holds). */
  dropAfter(seq: number): void {
    this.flush();
    this.store.transaction(() => {
      this.store.statement('DELETE FROM audit_index WHERE seq > ?').run(seq);
      this.store.statement('DELETE FROM audit_index_paths WHERE seq > ?').run(seq);
      if (this.complete > seq) this.complete = seq;
    });
  }

  /** Entries matching `q`, newest first. */
  select(q: AuditQuery): IndexHit[] {
    this.flush();
    const where: string[] = [];
    const args: SQLInputValue[] = [];
    let from = 'audit_index i';
    let order = 'i.seq';
    if (q.path !== undefined) {
      order = 'p.seq';
      // Drive from the path rows: a file's entries are few among all of them.
      from = 'audit_index_paths p JOIN audit_index i ON i.seq = p.seq';
      where.push('p.path = ?');
      args.push(q.path);
    }
    const eq = (col: string, v: string | undefined) => {
      if (v === undefined) return;
      where.push(`i.${col} = ?`);
      args.push(v);
    };
    eq('agent', q.agent);
    eq('session_id', q.sessionId);
    eq('op', q.op);
    eq('op_class', q.opClass);
    eq('backend', q.backend);
    eq('result', q.result);
    if (q.since !== undefined) {
      where.push('i.at_ms >= ?');
      args.push(q.since.getTime());
    }
    if (q.until !== undefined) {
      where.push('i.at_ms < ?');
      args.push(q.until.getTime());
    }
    const limit = Math.max(0, Math.floor(q.limit ?? 100));
    args.push(limit);
    const sql = `SELECT i.seq, i.file_no, i.line, i.offset, i.length FROM ${from}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} DESC LIMIT ?`;
    const rows = this.store.statement(sql).all(...args) as Array<{ seq: number; file_no: number; line: number; offset: number; length: number }>;
    return rows.map((r) => ({ seq: Number(r.seq), fileNo: Number(r.file_no), line: Number(r.line), offset: Number(r.offset), length: Number(r.length) }));
  }
}
