/**
 * PostgreSQL failing under agents that are editing, on a server of this
 * file's own (support/private-postgres.ts) so it can be restarted and
 * stopped: `pg_ctl restart -m fast` in the middle of a run of four agents
 * (four contexts, each its own pool, as four hosts) and the server stopped
 * outright. Every call the fault meets fails with `EUNAVAILABLE`, the
 * location and what to do; each agent retries its write with the same
 * request id, so nothing applies twice. After: every write the agents were
 * told applied is in its file exactly once, with one version and one audit
 * record, no audit record lacks its edit, nothing is left in the journal,
 * and the workspace's audit chain verifies.
 *
 * The server binaries are installed by .ci/system-deps.sh; in CI their
 * absence fails the file.
 */

import { randomUUID } from 'node:crypto';
import { isFsError } from '@ctxfs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, type EditResult } from '../src/index.ts';
import { memoryBackend, type Workspace } from './backends.ts';
import { PrivatePostgres } from './support/private-postgres.ts';

const AGENTS = 4;
const RUN_MS = 6000;
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A hunk inserting `line` after the anchor: a blind retry would insert it twice. */
const insert = (path: string, line: string) => `--- a/${path}\n+++ b/${path}\n@@ -1,2 +1,3 @@\n head\n anchor\n+${line}\n`;

let server: PrivatePostgres | undefined;
beforeAll(async () => {
  server = await PrivatePostgres.start();
}, 120_000);
afterAll(async () => {
  await server?.destroy();
});

/** What one failed attempt said. */
interface Failure {
  readonly code: string;
  readonly text: string;
}

/**
 * One write, retried with its request id while the store is unavailable:
 * the result that ended it, and the failures met before.
 */
async function writeOnce(ctx: ContextLayer, path: string, line: string, failures: Failure[]): Promise<EditResult> {
  const requestId = randomUUID();
  for (let attempt = 0; ; attempt++) {
    let result: EditResult;
    try {
      result = await ctx.applyPatch(insert(path, line), { requestId });
    } catch (err) {
      if (!isFsError(err)) throw err;
      failures.push({ code: err.code, text: `${err.message} ${err.hint ?? ''}` });
      if (attempt > 300) throw err;
      await sleep(50);
      continue;
    }
    if (result.success) return result;
    failures.push({ code: result.code ?? '', text: result.message });
    if (result.code !== 'EUNAVAILABLE' || attempt > 300) return result;
    await sleep(50);
  }
}

/** The checks after a fault: files, versions, audit and journal agree; the chain verifies. */
async function assertAgreement(url: string, ws: Workspace, applied: ReadonlyMap<string, readonly string[]>): Promise<void> {
  const ctx = await createContext({ fs: ws.fs, store: url, agent: 'llm:auditor' });
  try {
    let total = 0;
    for (const [path, lines] of applied) {
      const text = decode(await ws.fs.readBytes(path));
      for (const line of lines)
        expect(
          text.split('\n').filter((l) => l === line),
          `${path}: ${line} once`,
        ).toHaveLength(1);
      // Nothing applied that the agent was not told of (a write it gave up on would show here).
      expect(text.split('\n').length - 4, `${path}: lines inserted`).toBe(lines.length);
      const byAgents = (await ctx.history(path, 1_000_000)).filter((v) => v.op === 'patch');
      expect(byAgents, `${path}: one version per applied write`).toHaveLength(lines.length);
      total += lines.length;
    }
    const [changes] = await ctx.store.all<{ n: number }>("SELECT count(*) AS n FROM audit WHERE change_id IS NOT NULL AND result = 'ok'");
    expect(Number(changes?.n), 'one audit record per applied write').toBe(total);
    const [orphans] = await ctx.store.all<{ n: number }>(
      'SELECT count(*) AS n FROM audit a WHERE a.change_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM history h WHERE h.change_id = a.change_id)',
    );
    expect(Number(orphans?.n), 'no audit record without its edit').toBe(0);
    expect(await ctx.journal.pending()).toEqual([]);
    expect(await ctx.store.verifyAudit()).toMatchObject({ ok: true });
  } finally {
    await ctx.close();
  }
}

describe('PostgreSQL faults under editing agents', () => {
  it('the server binaries are there (in CI their absence fails)', () => {
    if (server === undefined && !process.env.CI) {
      console.warn('\n!! SKIPPING PostgreSQL fault tests: no server binaries under /usr/lib/postgresql (bash .ci/system-deps.sh installs them)\n');
      return;
    }
    expect(server, 'PostgreSQL server binaries (see .ci/system-deps.sh)').toBeDefined();
  });

  it('restarted (pg_ctl restart -m fast) mid-run: calls fail with EUNAVAILABLE and what to do, retries apply once, everything reconciles', async (t) => {
    if (server === undefined) return t.skip();
    const pg = server;
    const url = pg.url(`restart_${Date.now().toString(36)}`);
    const files = Object.fromEntries(Array.from({ length: AGENTS }, (_, i) => [`f${i}.txt`, 'head\nanchor\ntail\n']));
    const ws = await memoryBackend.create(files);
    const contexts = await Promise.all(Array.from({ length: AGENTS }, (_, i) => createContext({ fs: ws.fs, store: url, agent: `llm:agent-${i}` })));
    const applied = new Map<string, string[]>();
    const failures: Failure[] = [];
    let replays = 0;
    let restarts = 0;
    try {
      const deadline = Date.now() + RUN_MS;
      const agents = contexts.map(async (ctx, i) => {
        const path = `f${i}.txt`;
        const mine: string[] = [];
        applied.set(path, mine);
        for (let k = 0; Date.now() < deadline; k++) {
          const r = await writeOnce(ctx, path, `agent-${i} write-${k}`, failures);
          expect(r.success, r.message).toBe(true);
          if (r.unchanged) replays++;
          mine.push(`agent-${i} write-${k}`);
        }
      });
      const faults = (async () => {
        await sleep(RUN_MS / 4);
        await pg.restart();
        restarts++;
        await sleep(RUN_MS / 4);
        await pg.restart();
        restarts++;
      })();
      await Promise.all([...agents, faults]);
    } finally {
      for (const ctx of contexts) await ctx.close().catch(() => undefined);
    }
    const writes = [...applied.values()].reduce((n, l) => n + l.length, 0);
    console.log(
      `[pg restart] ${AGENTS} agents, ${restarts} restarts, ${RUN_MS / 1000} s: ${writes} writes applied, ${failures.length} failed attempts retried, ${replays} answered as already applied`,
    );
    // The restarts met calls in flight, and each said what happened and what to do.
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.code).toBe('EUNAVAILABLE');
      // The server's address and socket directory are the host's, not the model's to see.
      expect(f.text).not.toContain(pg.dir);
      expect(f.text).toMatch(/PostgreSQL server at /);
      expect(f.text).toMatch(/check that the server is running/);
      expect(f.text).toMatch(/retry/);
    }
    await assertAgreement(url, ws, applied);
    await ws.cleanup();
  }, 120_000);

  it('stopped: a write fails with EUNAVAILABLE and nothing is written; started again, its retry applies once', async (t) => {
    if (server === undefined) return t.skip();
    const pg = server;
    const url = pg.url(`stopped_${Date.now().toString(36)}`);
    const ws = await memoryBackend.create({ 'f.txt': 'head\nanchor\ntail\n' });
    const ctx = await createContext({ fs: ws.fs, store: url, agent: 'llm:agent' });
    const failures: Failure[] = [];
    try {
      expect((await writeOnce(ctx, 'f.txt', 'before the stop', failures)).success).toBe(true);
      await pg.stop();
      const requestId = randomUUID();
      const down = await ctx.applyPatch(insert('f.txt', 'while stopped'), { requestId }).catch((err: unknown) => err);
      const said = isFsError(down)
        ? { code: down.code, text: `${down.message} ${down.hint}` }
        : { code: (down as EditResult).code, text: (down as EditResult).message };
      expect(said.code).toBe('EUNAVAILABLE');
      expect(said.text).not.toContain(pg.dir);
      expect(said.text).toMatch(/PostgreSQL server at .* cannot be reached/);
      expect(said.text).toMatch(/check that the server is running/);
      expect(decode(await ws.fs.readBytes('f.txt'))).toBe('head\nanchor\nbefore the stop\ntail\n');
      await pg.startServer();
      const again = await ctx.applyPatch(insert('f.txt', 'while stopped'), { requestId });
      expect(again.success, again.message).toBe(true);
      const retried = await ctx.applyPatch(insert('f.txt', 'while stopped'), { requestId });
      expect(retried).toMatchObject({ success: true, unchanged: true });
    } finally {
      await ctx.close().catch(() => undefined);
    }
    await assertAgreement(url, ws, new Map([['f.txt', ['before the stop', 'while stopped']]]));
    await ws.cleanup();
  }, 120_000);
});
