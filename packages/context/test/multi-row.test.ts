import { describe, expect, it } from 'vitest';
import { multiRow, multiRowStatements, ROWS_PER_STATEMENT } from '../src/state/multi-row.ts';

describe('multiRowStatements', () => {
  const pairs = multiRow('INSERT INTO t (a, b) VALUES', '(?, ?)', 'ON CONFLICT DO NOTHING');

  it('cuts rows into statements of at most the given size, in row order, each row once', () => {
    const rows = Array.from({ length: 2 * ROWS_PER_STATEMENT + 3 }, (_, i) => i);
    const statements = multiRowStatements(pairs, rows, (n, index) => [n, index]);
    expect(statements.map((s) => s.params.length / 2)).toEqual([ROWS_PER_STATEMENT, ROWS_PER_STATEMENT, 3]);
    expect(statements[2]?.sql).toBe('INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?) ON CONFLICT DO NOTHING');
    const flat = statements.flatMap((s) => s.params);
    expect(flat).toEqual(rows.flatMap((n) => [n, n]));
  });

  it('puts the leading parameters before every statement, says which rows each writes, and makes no statement of no rows', () => {
    const update = multiRow('UPDATE t SET seen = ? WHERE id IN (', '?', ')');
    const statements = multiRowStatements(update, ['a', 'b', 'c'], (id) => [id], { leading: [7], perStatement: 2 });
    expect(statements).toEqual([
      { sql: 'UPDATE t SET seen = ? WHERE id IN ( ?, ? )', params: [7, 'a', 'b'], rows: ['a', 'b'] },
      { sql: 'UPDATE t SET seen = ? WHERE id IN ( ? )', params: [7, 'c'], rows: ['c'] },
    ]);
    expect(multiRowStatements(update, [], (id: string) => [id])).toEqual([]);
  });

  it('calls values once a row, in order, so a row may depend on the ones before it', () => {
    let prev = 'genesis';
    const statements = multiRowStatements(
      pairs,
      ['x', 'y', 'z'],
      (v) => {
        const link = prev;
        prev = `${link}>${v}`;
        return [link, prev];
      },
      { perStatement: 2 },
    );
    expect(statements.flatMap((s) => s.params)).toEqual(['genesis', 'genesis>x', 'genesis>x', 'genesis>x>y', 'genesis>x>y', 'genesis>x>y>z']);
  });
});
