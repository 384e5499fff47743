/**
 * One session used from two hosts at once: two PostgreSQL stores (as two
 * processes open them) on one schema, each with a context on the same
 * session. A read may start from the spend its handle last saw and confirm
 * it with its charge (SessionContext.speculate); these tests hold it to the
 * answers a refresh before every call gave: the budget is shared, no read
 * is charged or recorded twice, and an agent's stale read is still found.
 * Skipped without CTXFS_TEST_POSTGRES_URL.
 */

import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { PostgresStateStore } from '../src/state/postgres-store.ts';
import { testSchemaName } from './support/test-state.ts';

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
const schemas: string[] = [];
const LINES = Array.from({ length: 400 }, (_, i) => `line ${i}: the shared budget is spent by both hosts, word ${i * 13}`).join('\n');

/** Two contexts on one session, each on a store of its own (one schema): two hosts. */
async function twoHosts(fs: MemoryFilesystem, sessionTokens: number): Promise<{ a: ContextLayer; b: ContextLayer }> {
  const schema = testSchemaName('spend_');
  schemas.push(schema);
  const url = `${PG_URL}${(PG_URL as string).includes('?') ? '&' : '?'}schema=${schema}`;
  const profile = { base: 'small', sessionTokens } as const;
  const a = await createContext({ fs, store: url, profile, agent: 'llm:a' });
  onTestFinished(() => a.close());
  const b = await createContext({ fs, store: url, profile, agent: 'llm:b', sessionId: a.sessionContext.id });
  onTestFinished(() => b.close());
  return { a, b };
}

/** The session's spend and read records as the store holds them. */
async function stored(ctx: ContextLayer): Promise<{ spent: number; reads: number; tokens: number }> {
  const id = ctx.sessionContext.id;
  const s = await ctx.store.get<{ n: number }>('SELECT tokens_served AS n FROM sessions WHERE id = ?', [id]);
  const r = await ctx.store.get<{ n: number; t: number | null }>('SELECT COUNT(*) AS n, SUM(tokens) AS t FROM session_reads WHERE session_id = ?', [id]);
  return { spent: Number(s?.n), reads: Number(r?.n), tokens: Number(r?.t ?? 0) };
}

afterAll(async () => {
  if (PG_URL === undefined || schemas.length === 0) return;
  const admin = await PostgresStateStore.open({ url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schemas[0]}` });
  for (const schema of schemas) await admin.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

describe.skipIf(PG_URL === undefined)('one session on two hosts (PostgreSQL)', () => {
  test("a read's budget counts what the other host served since this host's last call; every read is charged and recorded once", async () => {
    const fs = new MemoryFilesystem({ files: { 'a.txt': LINES, 'b.txt': LINES } });
    const budget = 9000;
    const { a, b } = await twoHosts(fs, budget);
    // Host a has seen the spend (its first call reads it); its later calls may start from what it saw.
    await a.readLines('a.txt', 1, 5);
    await a.readLines('a.txt', 6, 10);
    const served: number[] = [];
    let notice = '';
    for (let i = 0; i < 40 && notice === ''; i++) {
      // The other host spends; this host's next read must know it.
      const other = await b.readLines('b.txt', 1 + ((i * 37) % 300), 100 + ((i * 37) % 300));
      served.push(other.tokens);
      const before = await stored(a);
      const mine = await a.readLines('a.txt', 1 + ((i * 53) % 300), 100 + ((i * 53) % 300));
      served.push(mine.tokens);
      if (mine.view === 'over-budget') {
        notice = mine.text;
        break;
      }
      // Served within what the store said was left when it began, not what this host saw last.
      expect(mine.tokens).toBeLessThanOrEqual(budget - before.spent);
      const after = await stored(a);
      expect(after.spent).toBe(before.spent + mine.tokens);
      expect(after.reads).toBe(before.reads + 1);
    }
    expect(notice).toContain('Session budget spent');
    const end = await stored(a);
    expect(end.spent).toBeLessThanOrEqual(budget);
    // Each read once: what the store charged is what the two hosts served (the first two reads included).
    expect(end.spent).toBe(end.tokens);
    expect(a.sessionContext.tokensServed).toBe(end.spent);
  });

  test('a host whose read found the spend moved serves it once, as after a refresh, and the next read starts from the new spend', async () => {
    const fs = new MemoryFilesystem({ files: { 'a.txt': LINES } });
    const { a, b } = await twoHosts(fs, 1_000_000);
    await a.readFile('a.txt');
    const first = await stored(a);
    // Charged by the other host after this host's last call: this host's next read cannot confirm what it saw.
    await b.sessionContext.charge(1234);
    const r = await a.readLines('a.txt', 1, 3);
    const after = await stored(a);
    expect(after.spent).toBe(first.spent + 1234 + r.tokens);
    expect(after.reads).toBe(first.reads + 1);
    expect(a.sessionContext.tokensServed).toBe(after.spent);
    const again = await a.readLines('a.txt', 4, 6);
    expect((await stored(a)).spent).toBe(after.spent + again.tokens);
  });

  test("an edit from a read the other host's change made stale is merged, not written over it", async () => {
    const fs = new MemoryFilesystem({ files: { 'c.txt': 'one\ntwo\nthree\nfour\nfive\n' } });
    const { a, b } = await twoHosts(fs, 1_000_000);
    await a.readFile('c.txt');
    await a.readFile('c.txt');
    await b.readFile('c.txt');
    expect((await b.replace('c.txt', 'two', 'TWO')).success).toBe(true);
    const edit = await a.replace('c.txt', 'four', 'FOUR');
    expect(edit).toMatchObject({ success: true, merged: true });
    expect(new TextDecoder().decode(await fs.readBytes('c.txt'))).toBe('one\nTWO\nthree\nFOUR\nfive\n');
  });
});
