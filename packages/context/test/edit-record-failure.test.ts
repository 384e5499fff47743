/**
 * The state store failing between an edit's write and its record: the files
 * already hold the new content, so the edit reports that it was written but
 * not recorded, and the next call that reaches the store records it — once,
 * as the edit it was, not as an outside change followed later by a second
 * copy from recovery.
 *
 * The failure is real: the version table is taken away under the commit (both
 * stores), and on PostgreSQL the server also drops every connection of the
 * store mid-edit.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, type CrashHook, createContext } from '../src/index.ts';
import { memoryBackend, type Workspace } from './backends.ts';
import { ON_POSTGRES, testState } from './support/test-state.ts';

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

describe('an edit whose record fails', () => {
  let ws: Workspace;
  let ctx: ContextLayer;
  afterEach(async () => {
    await ctx?.close();
    await ws?.cleanup();
  });

  /** Opens a context whose next edit meets `fail` just before its record is written. */
  const open = async (fail: (ctx: ContextLayer) => Promise<void>, state = testState()) => {
    ws = await memoryBackend.create({ 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    let armed = false;
    const hook: CrashHook = async (point) => {
      if (point !== 'before-record' || !armed) return;
      armed = false;
      await fail(ctx);
    };
    ctx = await createContext({ fs: ws.fs, store: state, agent: 'llm:a', edits: { crashHook: hook } });
    return {
      arm: () => {
        armed = true;
      },
    };
  };

  const assertRecordedOnce = async () => {
    expect(await ctx.journal.pending()).toEqual([]);
    expect((await ctx.history('a.txt')).map((v) => [v.op, v.author])).toEqual([
      ['replace', 'llm:a'],
      ['initial', 'initial'],
    ]);
    // And the next edit builds on it as on any recorded one.
    const next = await ctx.replace('a.txt', 'ONE', '1');
    expect(next.success, next.message).toBe(true);
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['replace', 'replace', 'initial']);
    expect(decode(await ws.fs.readBytes('a.txt'))).toBe('1\ntwo\n');
  };

  it('says it was written, and the next call records it once, before reading the disk', async () => {
    const { arm } = await open(async (c) => {
      await c.store.run('ALTER TABLE history RENAME TO history_away');
    });
    await ctx.readFile('a.txt');
    arm();
    const r = await ctx.replace('a.txt', 'one', 'ONE');
    expect(r.success).toBe(false);
    expect(r.message).toMatch(/was written .*a\.txt now holds the new content.* could not record it/);
    expect(r.message).toContain('Do not redo it');
    expect(r.next).toBe('readFile("a.txt")');
    expect(decode(await ws.fs.readBytes('a.txt'))).toBe('ONE\ntwo\n');
    expect(await ctx.journal.pending()).toHaveLength(1);
    expect(ctx.journal.unsettled).toBe(true);

    // While the store still fails, a call goes on and meets the failure itself; nothing is settled wrongly.
    await ctx.readFile('b.txt').catch(() => undefined);
    expect(await ctx.journal.pending()).toHaveLength(1);

    await ctx.store.run('ALTER TABLE history_away RENAME TO history');
    const read = await ctx.readFile('a.txt');
    expect(read.text).toContain('ONE');
    expect(ctx.journal.unsettled).toBe(false);
    await assertRecordedOnce();
  });

  it("another writer's next edit records the change as its author's, not as an outside edit, and the author's own next call does not record it again", async () => {
    // Two writers on one store (a file both processes open, or one PostgreSQL schema); the first is alive throughout.
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-stranded-'));
    const state = ON_POSTGRES ? testState() : join(dir, 'state.db');
    let other: ContextLayer | undefined;
    try {
      const { arm } = await open(async (c) => {
        await c.store.run('ALTER TABLE history RENAME TO history_away');
      }, state);
      other = await createContext({ fs: ws.fs, store: state, agent: 'llm:b' });
      await ctx.readFile('a.txt');
      arm();
      const r = await ctx.replace('a.txt', 'one', 'ONE');
      expect(r.success).toBe(false);
      expect(r.message).toContain('was written');
      await other.store.run('ALTER TABLE history_away RENAME TO history');

      // Before the edit, a look at the history leaves the unrecorded change to its writer.
      expect((await other.history('a.txt')).map((v) => v.op)).toEqual(['initial']);
      await other.readFile('a.txt');
      const b = await other.replace('a.txt', 'two', 'TWO');
      expect(b.success, b.message).toBe(true);
      const history = async () => (await other?.history('a.txt'))?.map((v) => [v.op, v.author]);
      expect(await history()).toEqual([
        ['replace', 'llm:b'],
        ['replace', 'llm:a'],
        ['initial', 'initial'],
      ]);
      expect(await other.journal.pending()).toEqual([]);
      // The first writer's audit record travelled with its change (beside the refusal its call answered with).
      const applied = (await other.store.auditLog({ path: 'a.txt' })).filter((a) => a.op === 'replace' && a.result === 'ok');
      expect(applied.map((a) => [a.agent, (a.params as { recovered?: boolean }).recovered])).toEqual([
        ['llm:b', undefined],
        ['llm:a', true],
      ]);

      // Its writer, alive, finds the change recorded and records nothing again.
      await ctx.readFile('a.txt');
      expect(ctx.journal.unsettled).toBe(false);
      expect(await history()).toHaveLength(3);
      expect(decode(await ws.fs.readBytes('a.txt'))).toBe('ONE\nTWO\n');
    } finally {
      await other?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(ON_POSTGRES)('the server dropping every connection of the store mid-edit: recorded once by the next call', async () => {
    const app = `ctxfs_test_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.CTXFS_TEST_POSTGRES_URL });
    await admin.connect();
    try {
      const { arm } = await open(async () => {
        const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
        expect(killed.rowCount).toBeGreaterThan(0);
      }, `${testState()}&application_name=${app}`);
      await ctx.readFile('a.txt');
      arm();
      const r = await ctx.replace('a.txt', 'one', 'ONE');
      // A dropped connection may cost the record or only its answer; either way the edit is in history once.
      if (!r.success) {
        expect(r.code).toBe('EUNAVAILABLE');
        expect(r.message).toContain('was written');
      }
      expect(decode(await ws.fs.readBytes('a.txt'))).toBe('ONE\ntwo\n');
      await ctx.readFile('a.txt');
      await assertRecordedOnce();
    } finally {
      await admin.end();
    }
  });
});
