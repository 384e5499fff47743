/**
 * A SQLite store opened with `checkpointOnClose: false` (the CLI's: one
 * command a process) leaves its write-ahead log at close for the next
 * process instead of folding it into the database file, and keeps the log
 * short by folding it during writes. Run in real processes: what the next
 * one reads is what SQLite recovers from the log a process left, as after a
 * crash.
 */

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { SHORT_LIVED_WAL_PAGES } from '../src/state/sqlite-store.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');

// Opens the store at argv[2] (checkpointing on close unless argv[3] is 'leave'), writes argv[4] rows of argv[5] bytes in a transaction each, prints the count.
const SCRIPT = `
import { SqliteStateStore } from ${JSON.stringify(join(REPO, 'packages/context/src/index.ts'))};
const [path, mode, rows, size] = process.argv.slice(2);
const store = await SqliteStateStore.open({ path, checkpointOnClose: mode !== 'leave' });
await store.run('CREATE TABLE IF NOT EXISTS kept (n INTEGER, text TEXT)');
for (let i = 0; i < Number(rows); i++) await store.transaction(() => store.run('INSERT INTO kept VALUES (?, ?)', [i, 'x'.repeat(Number(size))]));
const [{ count }] = await store.all('SELECT count(*) AS count FROM kept');
await store.close();
console.log(count);
process.exit(0);
`;

describe('a SQLite store that does not checkpoint on close', () => {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-sqlite-close-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const script = join(base, 'write.mts');
  writeFileSync(script, SCRIPT);
  const run = (path: string, mode: 'leave' | 'checkpoint', rows: number, size = 100): number => {
    const r = spawnSync(process.execPath, ['--conditions=ctxfs-source', script, path, mode, String(rows), String(size)], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return Number(r.stdout.trim());
  };
  /** The rows of the database file alone, as a copy without its log reads them. */
  const inFileAlone = (path: string): number => {
    const copy = join(base, `alone-${process.hrtime.bigint()}.db`);
    copyFileSync(path, copy);
    const db = new DatabaseSync(copy);
    try {
      const table = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'kept'").get() as { n: number };
      return table.n === 0 ? 0 : Number((db.prepare('SELECT count(*) AS n FROM kept').get() as { n: number }).n);
    } finally {
      db.close();
    }
  };

  it('leaves the log for the next process, which reads every row from it; a store that checkpoints folds it in and removes it', () => {
    const path = join(base, 'left.db');
    expect(run(path, 'leave', 5)).toBe(5);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    expect(inFileAlone(path)).toBe(0);
    expect(run(path, 'leave', 5)).toBe(10);
    expect(inFileAlone(path)).toBe(0);
    // The default: the last connection's close folds the log in and deletes it.
    expect(run(path, 'checkpoint', 1)).toBe(11);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(inFileAlone(path)).toBe(11);
  });

  it(`folds the log in during writes once it holds ${SHORT_LIVED_WAL_PAGES} pages, so it never grows long`, () => {
    const path = join(base, 'bounded.db');
    // About 4 MB in 1,000 transactions: SQLite's default would let the log reach 1,000 pages.
    expect(run(path, 'leave', 1000, 4000)).toBe(1000);
    // A transaction past the mark ends the log's growth; one row of 4 KB and its index page are a few pages more.
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual((SHORT_LIVED_WAL_PAGES + 8) * (4096 + 24) + 32);
    expect(inFileAlone(path)).toBeGreaterThan(900);
  });
});
