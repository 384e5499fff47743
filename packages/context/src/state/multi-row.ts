/**
 * Multi-row statements, shared by every module that writes rows in batches
 * (the registry's records, session reads, audit rows).
 *
 * @module
 */

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
