/**
 * Multi-row statements, shared by every module that writes rows in batches
 * (the registry's records and access counts, session reads and read heads,
 * audit rows, symbols).
 *
 * @module
 */

import type { SqlValue } from './state-store.ts';

/** One statement, its parameters, and the rows it writes (a caller that must know what a failed statement left unwritten reads them here). */
export interface MultiRowStatement<T = unknown> {
  readonly sql: string;
  readonly params: SqlValue[];
  readonly rows: readonly T[];
}

/**
 * Rows a multi-row statement carries unless its writer says otherwise: 64
 * rows of up to 14 parameters stay far below either dialect's limit
 * (SQLite 32,766, PostgreSQL 65,535), and more rows a statement saved
 * nothing measurable in the registry's scan.
 */
export const ROWS_PER_STATEMENT = 64;

/**
 * The SQL of a multi-row statement for `rows` rows, built once per row count:
 * the text is also the key of the store's prepared-statement cache, and a
 * scan runs hundreds of these.
 *
 * @example
 * ```ts
 * const insertPairs = multiRow('INSERT INTO t (a, b) VALUES', '(?, ?)', 'ON CONFLICT DO NOTHING');
 * insertPairs(2); // 'INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON CONFLICT DO NOTHING'
 * ```
 */
export function multiRow(head: string, tuple: string, tail = ''): (rows: number) => string {
  const built = new Map<number, string>();
  return (rows) => {
    let sql = built.get(rows);
    if (sql === undefined) {
      sql = `${head} ${Array(rows).fill(tuple).join(', ')}${tail === '' ? '' : ` ${tail}`}`;
      built.set(rows, sql);
    }
    return sql;
  };
}

/** Options of {@link multiRowStatements}. */
export interface MultiRowOptions {
  /** Rows a statement at most; default {@link ROWS_PER_STATEMENT}. */
  readonly perStatement?: number;
  /** Parameters before every statement's rows (a value its head uses). */
  readonly leading?: readonly SqlValue[];
}

/**
 * `rows` as multi-row statements of `sql`, each of up to `perStatement`
 * rows. `values` gives one row's parameters in tuple order; it is called
 * once a row, in row order, so a value may depend on the rows before it (the
 * audit chain's links do).
 *
 * @example
 * ```ts
 * const insertPairs = multiRow('INSERT INTO t (a, b) VALUES', '(?, ?)');
 * multiRowStatements(insertPairs, [[1, 2], [3, 4]], ([a, b]) => [a, b]);
 * // [{ sql: 'INSERT INTO t (a, b) VALUES (?, ?), (?, ?)', params: [1, 2, 3, 4], rows: [[1, 2], [3, 4]] }]
 * ```
 */
export function multiRowStatements<T>(
  sql: (rows: number) => string,
  rows: readonly T[],
  values: (row: T, index: number) => readonly SqlValue[],
  options: MultiRowOptions = {},
): MultiRowStatement<T>[] {
  const per = options.perStatement ?? ROWS_PER_STATEMENT;
  const out: MultiRowStatement<T>[] = [];
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const params: SqlValue[] = [...(options.leading ?? [])];
    for (const [k, row] of chunk.entries()) params.push(...values(row, i + k));
    out.push({ sql: sql(chunk.length), params, rows: chunk });
  }
  return out;
}

/** Values an `IN (…)` list carries at most: far below either dialect's parameter limit. */
export const VALUES_PER_IN_LIST = 500;

/**
 * `values` in chunks of at most {@link VALUES_PER_IN_LIST}, each with the
 * placeholders of its `IN (…)` list: one query a chunk instead of one a value.
 *
 * @example
 * ```ts
 * for (const { chunk, marks } of inLists(paths)) await store.all(`SELECT * FROM t WHERE path IN (${marks})`, chunk);
 * ```
 */
export function* inLists<T>(values: readonly T[]): Generator<{ readonly chunk: T[]; readonly marks: string }> {
  for (let i = 0; i < values.length; i += VALUES_PER_IN_LIST) {
    const chunk = values.slice(i, i + VALUES_PER_IN_LIST);
    yield { chunk, marks: chunk.map(() => '?').join(', ') };
  }
}
