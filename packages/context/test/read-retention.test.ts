import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { type ContextLayer, type ContextSession, createContext, openStateStore, type StateStore } from '../src/index.ts';
import { testState } from './support/test-state.ts';

const DAY = 24 * 60 * 60 * 1000;

async function count(store: StateStore, table: string, sessionId?: string): Promise<number> {
  const row = await store.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM ${table}${sessionId === undefined ? '' : ' WHERE session_id = ?'}`,
    sessionId === undefined ? [] : [sessionId],
  );
  return Number(row?.n ?? 0);
}

/** a.ts read 5 times, changed on disk, read 3 times more; b.ts read twice: 10 rows. */
async function readMuch(ctx: ContextLayer, fs: MemoryFilesystem): Promise<void> {
  for (let i = 0; i < 5; i++) await ctx.readFile('a.ts');
  await fs.writeBytes('a.ts', new TextEncoder().encode('export const a = 2;\n'));
  for (let i = 0; i < 3; i++) await ctx.readLines('a.ts', 1, 1);
  for (let i = 0; i < 2; i++) await ctx.readFile('b.ts');
}

/**
 * Changes `path` outside the session, then edits its first line with a
 * review that declines: refused (false) when the edit is found stale, i.e.
 * based on the session's last read; applied (true) when it has none.
 */
async function editAfterChange(session: ContextSession, fs: MemoryFilesystem, path: string): Promise<boolean> {
  await fs.writeBytes(path, new TextEncoder().encode('export const changed = "by someone else";\n'));
  const r = await session.editLines(
    path,
    { kind: 'replace', start: 1, end: 1, text: 'export const mine = 1;' },
    { strategy: 'review', review: () => undefined },
  );
  return r.success;
}

describe('read retention', () => {
  test('repeated reads of a version fold to their first and last rows; what edits ask of the reads is unchanged', async () => {
    const fs = new MemoryFilesystem({ files: { 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 1;\n' } });
    const ctx = await createContext({ fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
    const session = ctx.sessionContext;
    await readMuch(ctx, fs);
    expect(await count(ctx.store, 'session_reads', session.id)).toBe(10);
    const before = {
      lastA: await session.lastRead('llm:a', 'a.ts'),
      lastB: await session.lastRead('llm:a', 'b.ts'),
      seenA: await session.versionsSeen('llm:a', 'a.ts'),
    };
    expect(before.seenA).toHaveLength(2);

    const r = await ctx.pruneReads({ maxIdleMs: Number.POSITIVE_INFINITY });
    // a.ts: 5 reads of the first version keep 2, 3 of the second keep 2; b.ts's 2 stay.
    expect(r).toEqual({ repeatsRemoved: 4, idleSessions: 0, idleReadsRemoved: 0 });
    expect(await count(ctx.store, 'session_reads', session.id)).toBe(6);
    expect(await session.lastRead('llm:a', 'a.ts')).toEqual(before.lastA);
    expect(await session.lastRead('llm:a', 'b.ts')).toEqual(before.lastB);
    expect(await session.versionsSeen('llm:a', 'a.ts')).toEqual(before.seenA);
    // Folded once, nothing is left to fold.
    expect((await ctx.pruneReads({ maxIdleMs: Number.POSITIVE_INFINITY })).repeatsRemoved).toBe(0);

    // The last read is still the base of an edit that names none: stale reads are still caught.
    expect(await editAfterChange(ctx, fs, 'b.ts')).toBe(false);
    await ctx.close();
  });

  test('a session idle past the limit keeps its last read of each file: its next edit is still checked against it', async () => {
    const fs = new MemoryFilesystem({ files: { 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 1;\n' } });
    const ctx = await createContext({ fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
    const old = ctx.session({ agent: 'llm:old' });
    await old.readFile('a.ts');
    await old.readFile('b.ts');
    await readMuch(ctx, fs);
    // It saw a.ts at both versions: 3 rows, no repeats.
    await old.readFile('a.ts');
    const oldId = old.sessionContext.id;
    const last = await old.sessionContext.lastRead('llm:old', 'a.ts');
    expect(await old.sessionContext.versionsSeen('llm:old', 'a.ts')).toHaveLength(2);
    const spent = await old.sessionContext.refresh();
    // Forty days without a read.
    const then = Date.now() - 40 * DAY;
    await ctx.store.run('UPDATE read_heads SET read_ms = ? WHERE session_id = ?', [then, oldId]);
    await ctx.store.run('UPDATE session_reads SET read_ms = ? WHERE session_id = ?', [then, oldId]);

    const r = await ctx.pruneReads();
    expect(r).toEqual({ repeatsRemoved: 4, idleSessions: 1, idleReadsRemoved: 1 });
    expect(await count(ctx.store, 'session_reads', oldId)).toBe(2);
    expect(await count(ctx.store, 'read_heads', oldId)).toBe(2);
    expect(await old.sessionContext.lastRead('llm:old', 'a.ts')).toEqual({ ...last, at: new Date(then) });
    expect(await old.sessionContext.versionsSeen('llm:old', 'a.ts')).toEqual([last?.sha256]);
    expect(await old.sessionContext.refresh()).toBe(spent);
    // Back after the pause, its line edit of a file changed since is still caught as stale.
    expect(await editAfterChange(old, fs, 'a.ts')).toBe(false);
    // The live session lost only repeats.
    expect(await count(ctx.store, 'session_reads', ctx.sessionContext.id)).toBe(6);
    await expect(ctx.pruneReads({ maxIdleMs: -1 })).rejects.toThrow(/maxIdleMs/);
    await ctx.close();
  });

  test('readRetention is applied when a layer opens', async () => {
    const store = await openStateStore(testState());
    const fs = new MemoryFilesystem({ files: { 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 1;\n' } });
    const first = await createContext({ fs, store, agent: 'llm:a', safety: { policyFiles: false } });
    await readMuch(first, fs);
    await first.close();
    expect(await count(store, 'session_reads')).toBe(10);
    const second = await createContext({ fs, store, agent: 'llm:a', safety: { policyFiles: false }, readRetention: {} });
    expect(await count(store, 'session_reads')).toBe(6);
    await second.close();
    await store.close();
  });
});
