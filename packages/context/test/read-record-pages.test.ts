/**
 * What a read's record costs the SQLite store: the pages its commit writes
 * to the write-ahead log (each a frame: the COMMIT's CPU is mostly these),
 * and migration 15, which took the table of reads off AUTOINCREMENT, on a
 * store file written by schema 14.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { MIGRATIONS, MODEL_PROFILES, SessionContext, SqliteStateStore } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ctxfs-read-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

/** A WAL frame: its 24-byte header and one page (the store's pages are SQLite's default 4 KiB). */
const FRAME = 24 + 4096;
const SHA = (n: number) => n.toString(16).padStart(64, '0');

type Row = Record<string, unknown>;
const rows = (store: SqliteStateStore, sql: string) => store.database.db.prepare(sql).all() as Row[];

describe("a read's record in the SQLite store", () => {
  test('writes the session charge, the read row, its index entry and the head: no page more', async () => {
    const path = join(dir, 'pages.db');
    const store = await SqliteStateStore.open({ path });
    const session = SessionContext.open(store, MODEL_PROFILES.large);
    const read = { agent: 'llm:a', path: 'src/a.ts', sha256: SHA(1), op: 'readFile', tokens: 300 };
    // The clock held still: the head's read time is then the same bytes at every read, as it is for reads within a millisecond.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 1) });
    for (let i = 0; i < 50; i++) await session.recordRead(read);
    const db = store.database.db;
    db.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA wal_autocheckpoint = 0');
    const before = statSync(`${path}-wal`).size;
    const reads = 400;
    for (let i = 0; i < reads; i++) await session.recordRead(read);
    const frames = (statSync(`${path}-wal`).size - before) / FRAME / reads;
    // Four pages with the table's counter in sqlite_sequence (4.4 with page splits), three without (3.4).
    expect(frames).toBeLessThan(3.7);
    expect(frames).toBeGreaterThanOrEqual(3);
    expect((await session.refresh()) >= 450 * 300).toBe(true);
    await store.close();
  });

  test('migration 15 takes a schema-14 file off AUTOINCREMENT and keeps every read, its id and what the session answers', async () => {
    const path = join(dir, 'v14.db');
    const old = await SqliteStateStore.open({ path, migrations: MIGRATIONS.filter((m) => m.version <= 14) });
    const s = SessionContext.open(old, MODEL_PROFILES.large, 'resumed');
    await s.recordRead({ agent: 'llm:a', path: 'a.ts', sha256: SHA(1), op: 'readFile', tokens: 10 });
    await s.recordRead({ agent: 'llm:a', path: 'b.ts', sha256: SHA(2), op: 'readLines', startLine: 2, endLine: 5, tokens: 4 });
    await s.recordRead({ agent: 'llm:b', path: 'a.ts', sha256: SHA(1), op: 'readFile', tokens: 10 });
    await s.recordRead({ agent: 'llm:a', path: 'a.ts', sha256: SHA(3), op: 'readFile', tokens: 12 });
    // A read pruned from the middle leaves a gap the ids keep.
    await old.run('DELETE FROM session_reads WHERE id = 2');
    const written = rows(old, 'SELECT * FROM session_reads ORDER BY id');
    expect(rows(old, "SELECT seq FROM sqlite_sequence WHERE name = 'session_reads'")).toEqual([{ seq: 4 }]);
    await old.close();

    const store = await SqliteStateStore.open({ path });
    expect(await store.schemaVersion()).toBe(15);
    expect(rows(store, 'SELECT * FROM session_reads ORDER BY id')).toEqual(written);
    const [table] = rows(store, "SELECT sql FROM sqlite_master WHERE name = 'session_reads'");
    expect(String(table?.sql)).not.toMatch(/AUTOINCREMENT/i);
    expect(rows(store, "SELECT name FROM sqlite_sequence WHERE name = 'session_reads'")).toEqual([]);
    expect(rows(store, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'session_reads'")).toEqual([{ name: 'session_reads_agent_path' }]);
    const plan = rows(store, "EXPLAIN QUERY PLAN SELECT * FROM session_reads WHERE session_id = 'x' AND agent = 'y' AND path = 'z' ORDER BY id DESC LIMIT 1");
    expect(plan.map((r) => String(r.detail)).join(' ')).toContain('session_reads_agent_path');

    const resumed = SessionContext.open(store, MODEL_PROFILES.large, 'resumed');
    expect((await resumed.lastRead('llm:a', 'a.ts'))?.sha256).toBe(SHA(3));
    expect(await resumed.versionsSeen('llm:a', 'a.ts')).toEqual([SHA(1), SHA(3)]);
    expect((await resumed.recentReads(10)).map((r) => `${r.agent} ${r.path}`)).toEqual(['llm:a a.ts', 'llm:b a.ts', 'llm:a a.ts']);
    // A new read follows the newest: ordered after every read the session had.
    await resumed.recordRead({ agent: 'llm:a', path: 'b.ts', sha256: SHA(4), op: 'readFile', tokens: 1 });
    expect(rows(store, 'SELECT MAX(id) AS id FROM session_reads')).toEqual([{ id: 5 }]);
    expect((await resumed.recentReads(1))[0]?.sha256).toBe(SHA(4));
    expect(await resumed.refresh()).toBe(37);
    await store.close();
  });
});
