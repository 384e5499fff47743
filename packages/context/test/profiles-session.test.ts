import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext, MODEL_PROFILES, resolveProfile, SessionContext, SqliteStateStore } from '../src/index.ts';

const BIG = Array.from({ length: 1200 }, (_, i) => `line ${i}: some content of the auth module, with words ${i * 7}`).join('\n');

describe('model profiles', () => {
  test('small ≈ 8k and large ≈ 200k with per-call and per-session budgets', () => {
    expect(MODEL_PROFILES.small.contextTokens).toBe(8192);
    expect(MODEL_PROFILES.large.contextTokens).toBe(200_000);
    for (const p of Object.values(MODEL_PROFILES)) {
      expect(p.perCallTokens).toBeLessThan(p.contextTokens);
      expect(p.overviewTokens).toBeLessThan(p.contextTokens);
      expect(p.sessionTokens).toBeGreaterThan(p.perCallTokens);
    }
    expect(resolveProfile({ base: 'small', perCallTokens: 900 })).toMatchObject({ contextTokens: 8192, perCallTokens: 900 });
    expect(() => resolveProfile('huge' as 'small')).toThrow(/unknown model profile/);
  });

  test('the same read is shaped per profile: small gets the narrow view, large gets the file', async () => {
    const fs = new MemoryFilesystem({ files: { 'src/auth.txt': BIG } });
    const ctx = await createContext({ fs, profile: 'small', agent: 'llm:ollama' });
    const small = await ctx.readFile('src/auth.txt');
    expect(small.view).toBe('narrow');
    expect(small.tokens).toBeLessThanOrEqual(MODEL_PROFILES.small.perCallTokens);
    const large = await ctx.session({ agent: 'llm:claude', profile: 'large' }).readFile('src/auth.txt');
    expect(large.view).toBe('full');
    expect(large.tokens).toBeLessThanOrEqual(MODEL_PROFILES.large.perCallTokens);
    // A caller cannot ask past the profile's per-call cap.
    const asked = await ctx.readFile('src/auth.txt', { maxTokens: 100_000, strategy: 'start' });
    expect(asked.tokens).toBeLessThanOrEqual(MODEL_PROFILES.small.perCallTokens);
    await ctx.close();
  });

  test('the session budget is enforced: when spent, reads return an over-budget notice instead of content', async () => {
    const fs = new MemoryFilesystem({ files: { 'a.txt': BIG } });
    const ctx = await createContext({ fs, profile: { base: 'small', sessionTokens: 3000 } });
    let served = 0;
    let last = await ctx.readLines('a.txt', 1, 1200);
    for (let i = 0; i < 10 && last.view !== 'over-budget'; i++) {
      served += last.tokens;
      expect(served).toBeLessThanOrEqual(3000);
      last = await ctx.readLines('a.txt', 1, 1200);
    }
    expect(last.view).toBe('over-budget');
    expect(last.text).toContain('Session budget spent');
    expect(ctx.sessionContext.tokensServed).toBeLessThanOrEqual(3000);
    await ctx.close();
  });
});

describe('session context', () => {
  test('records what each agent has seen at which version and detects staleness', async () => {
    const fs = new MemoryFilesystem({ files: { 'src/a.ts': 'export const a = 1;\n' } });
    const store = await SqliteStateStore.open();
    const ctx = await createContext({ fs, store, profile: 'large', agent: 'llm:a' });
    const other = ctx.session({ agent: 'llm:b', sessionId: ctx.sessionContext.id });
    const r1 = await ctx.readFile('src/a.ts');
    await fs.write('src/a.ts', 'export const a = 22;\n');
    const r2 = await other.getOutline('src/a.ts');
    expect(r2.version).not.toBe(r1.version);

    const s = ctx.sessionContext;
    expect(await s.lastRead('llm:a', 'src/a.ts')).toMatchObject({ sha256: r1.version, op: 'readFile', startLine: 1, endLine: 1 });
    expect((await s.lastRead('llm:b', 'src/a.ts'))?.sha256).toBe(r2.version);
    expect(await s.isStale('llm:a', 'src/a.ts', r2.version)).toBe(true);
    expect(await s.isStale('llm:b', 'src/a.ts', r2.version)).toBe(false);
    expect(await s.isStale('llm:c', 'src/a.ts', r2.version)).toBeUndefined();
    expect(await s.readers('src/a.ts')).toEqual([
      { agent: 'llm:a', sha256: r1.version },
      { agent: 'llm:b', sha256: r2.version },
    ]);
    expect((await s.recentReads(10)).map((r) => r.agent)).toEqual(['llm:b', 'llm:a']);
    await ctx.readFile('src/a.ts');
    expect(await s.versionsSeen('llm:a', 'src/a.ts')).toEqual([r1.version, r2.version]);

    // The history survives in the store: a new handle on the same session sees it.
    const resumed = SessionContext.open(store, MODEL_PROFILES.large, s.id);
    expect(await resumed.refresh()).toBe(await s.refresh());
    expect(resumed.tokensServed).toBeGreaterThan(0);
    expect((await resumed.lastRead('llm:b', 'src/a.ts'))?.sha256).toBe(r2.version);
    expect((await store.auditLog({ path: 'src/a.ts' })).map((a) => a.op)).toEqual(['readFile', 'getOutline', 'readFile']);
    await ctx.close();
    await store.close();
  });

  test("a session whose row the store failed to write is written by the next call: one failure is one call's", async () => {
    const store = await SqliteStateStore.open();
    let failures = 1;
    // The store is real; only the session row's first insert is refused, as by a server that was unreachable for a moment.
    const flaky = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'run') {
          return (sql: string, params?: never[]) => {
            if (sql.startsWith('INSERT INTO sessions') && failures-- > 0) return Promise.reject(new Error('the server was unreachable'));
            return target.run(sql, params);
          };
        }
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const s = SessionContext.open(flaky, MODEL_PROFILES.large);
    await expect(s.refresh()).rejects.toThrow('the server was unreachable');
    expect(await s.refresh()).toBe(0);
    await s.recordRead({ agent: 'llm:a', path: 'a.ts', sha256: 'a'.repeat(64), op: 'readFile', tokens: 40 });
    expect(await s.refresh()).toBe(40);
    expect(await store.get('SELECT profile FROM sessions WHERE id = ?', [s.id])).toEqual({ profile: 'large' });
    await store.close();
  });
});
