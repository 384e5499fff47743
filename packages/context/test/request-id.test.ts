/**
 * Writes carry a request id, so a retry never applies twice: a call whose
 * answer was lost (the store failed after the write, the connection dropped,
 * the caller timed out) is retried with the same id and answered with the
 * change it made, from this context or another one on the same store (another
 * host). The control: the same insertion without an id applies twice.
 */

import { randomUUID } from 'node:crypto';
import { fsError } from '@ctxfs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, type CrashHook, createContext, withRequestId } from '../src/index.ts';
import { memoryBackend, type Workspace } from './backends.ts';
import { ON_POSTGRES, testState } from './support/test-state.ts';

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A hunk that inserts `line` after `two`: it still applies after it applied once, so a blind retry doubles it. */
const insert = (line: string) => `--- a/a.txt\n+++ b/a.txt\n@@ -2,1 +2,2 @@\n two\n+${line}\n`;

describe('request ids', () => {
  let ws: Workspace | undefined;
  const contexts: ContextLayer[] = [];
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
    await ws?.cleanup();
    ws = undefined;
  });
  const text = async () => decode(await (ws as Workspace).fs.readBytes('a.txt'));

  const open = async (options: { crashHook?: CrashHook; store?: string } = {}) => {
    ws ??= await memoryBackend.create({ 'a.txt': 'one\ntwo\nthree\n' });
    const ctx = await createContext({ fs: ws.fs, store: options.store ?? testState(), agent: 'llm:a', edits: { crashHook: options.crashHook } });
    contexts.push(ctx);
    return ctx;
  };

  it('a retry with the same id answers with the earlier change and writes nothing; without an id the insertion doubles', async () => {
    const ctx = await open();
    const id = randomUUID();
    const first = await ctx.applyPatch(insert('added'), { requestId: id });
    expect(first.success, first.message).toBe(true);
    const retry = await ctx.applyPatch(insert('added'), { requestId: id });
    expect(retry).toMatchObject({ success: true, unchanged: true, version: first.version, seq: first.seq });
    expect(retry.message).toMatch(
      /^Already applied: request "[0-9a-f-]+" changed a\.txt \(version \w+, #2\) in an earlier call whose answer was lost\. Nothing was written again\.$/,
    );
    expect(await text()).toBe('one\ntwo\nadded\nthree\n');
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['patch', 'initial']);
    // The change's id in history and the audit is the request id.
    expect((await ctx.history('a.txt'))[0]?.changeId).toBe(id);
    expect(await ctx.store.all('SELECT op FROM audit WHERE change_id = ?', [id])).toHaveLength(1);

    // Control: the same hunk again without an id applies again.
    const blind = await ctx.applyPatch(insert('added'));
    expect(blind.success).toBe(true);
    expect(await text()).toBe('one\ntwo\nadded\nadded\nthree\n');
  });

  it('an id reused for another call (another file, or an undo of the change) is refused, never answered "already applied"', async () => {
    ws = await memoryBackend.create({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'hello\n' });
    const ctx = await open();
    const id = randomUUID();
    expect((await ctx.replace('a.txt', 'two', 'TWO', { requestId: id })).success).toBe(true);
    const other = await ctx.replace('b.txt', 'hello', 'bye', { requestId: id });
    expect(other).toMatchObject({ success: false, code: 'EINVAL' });
    expect(other.message).toMatch(/was already used by another change \(replace of a\.txt, #2\), not by this replace of b\.txt\. Nothing was written\./);
    expect(decode(await ws.fs.readBytes('b.txt'))).toBe('hello\n');
    const undo = await ctx.undo('a.txt', { requestId: id });
    expect(undo).toMatchObject({ success: false, code: 'EINVAL' });
    expect(await text()).toBe('one\nTWO\nthree\n');
    // The retry of the call itself is still answered with its change.
    expect(await ctx.replace('a.txt', 'two', 'TWO', { requestId: id })).toMatchObject({ success: true, unchanged: true });
  });

  // Sent again with another operation or other arguments on the same file, an id was answered "Already applied"
  // and the new change dropped while reported done (MCP: edit_lines, then replace under one ctxfs/requestId).
  const reusedText = (id: string) =>
    new RegExp(
      `^The request id "${id}" was already used by another call \\(.*\\); this .* so it is not a retry of that call\\. Nothing was written\\. A retry repeats the same call with the same id; give every new call an id of its own\\.$`,
    );

  it('an id sent again with another operation on the same file is refused with EINVAL naming it; the file keeps the first change only', async () => {
    const ctx = await open();
    const id = randomUUID();
    await ctx.readFile('a.txt');
    const first = await withRequestId(id, () => ctx.editLines('a.txt', { kind: 'insert-after', line: 1, text: 'first change\n' }));
    expect(first.success, first.message).toBe(true);
    const second = await withRequestId(id, () => ctx.replace('a.txt', 'one', '1'));
    expect(second).toMatchObject({ success: false, code: 'EINVAL', path: 'a.txt' });
    expect(second.unchanged).not.toBe(true);
    expect(second.message).toMatch(reusedText(id));
    expect(second.message).toContain('(editLines of a.txt, #2); this replace of a.txt is another operation');
    expect(await text()).toBe('one\nfirst change\ntwo\nthree\n');
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['edit-lines', 'initial']);
    // Under a new id the change is made.
    expect((await withRequestId(randomUUID(), () => ctx.replace('a.txt', 'one', '1'))).success).toBe(true);
    expect(await text()).toBe('1\nfirst change\ntwo\nthree\n');
  });

  it('the same operation with other arguments or options is refused; the same call again is still answered "already applied"', async () => {
    const ctx = await open();
    const id = randomUUID();
    const first = await ctx.replace('a.txt', 'two', 'TWO', { requestId: id });
    expect(first.success, first.message).toBe(true);
    const other = await ctx.replace('a.txt', 'three', 'THREE', { requestId: id });
    expect(other).toMatchObject({ success: false, code: 'EINVAL' });
    expect(other.message).toMatch(reusedText(id));
    expect(other.message).toContain('this replace of a.txt has other arguments');
    expect(await ctx.replace('a.txt', 'two', 'TWO', { requestId: id, occurrence: 'all' })).toMatchObject({ success: false, code: 'EINVAL' });
    expect(await ctx.writeFile('a.txt', 'other\n', { requestId: id })).toMatchObject({ success: false, code: 'EINVAL' });
    const retry = await ctx.replace('a.txt', 'two', 'TWO', { requestId: id });
    expect(retry).toMatchObject({ success: true, unchanged: true, version: first.version, seq: first.seq });
    expect(await text()).toBe('one\nTWO\nthree\n');
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['replace', 'initial']);
  });

  it("a call's fingerprint goes when history's retention drops its change", async () => {
    const ctx = await open();
    const id = randomUUID();
    expect((await ctx.replace('a.txt', 'one', '1', { requestId: id })).success).toBe(true);
    expect((await ctx.replace('a.txt', 'two', '2')).success).toBe(true);
    const kept = () => ctx.store.all('SELECT change_id FROM request_calls WHERE change_id = ?', [id]);
    expect(await kept()).toHaveLength(1);
    await ctx.pruneHistory({ maxVersionsPerFile: 1 });
    expect(await kept()).toHaveLength(0);
  });

  // Two contexts on one store, as two hosts: the PostgreSQL project runs it (a SQLite store is one per process).
  it.runIf(ON_POSTGRES)(
    'another context on the same store (another host) retrying the id is answered too, and refuses it sent with other arguments',
    async () => {
      const store = testState();
      const a = await open({ store });
      const b = await open({ store });
      const id = randomUUID();
      expect((await a.replace('a.txt', 'three', 'THREE', { requestId: id })).success).toBe(true);
      const retry = await b.replace('a.txt', 'three', 'THREE', { requestId: id });
      expect(retry).toMatchObject({ success: true, unchanged: true });
      // The call's fingerprint is the store's, not a process's memory.
      expect(await b.replace('a.txt', 'two', 'TWO', { requestId: id })).toMatchObject({ success: false, code: 'EINVAL' });
      expect(await text()).toBe('one\ntwo\nTHREE\n');
      expect((await b.history('a.txt')).map((v) => v.op)).toEqual(['replace', 'initial']);
    },
  );

  it('the record lost after the write: the retry settles the change and answers with it, recorded once', async () => {
    let armed = true;
    let ctx: ContextLayer | undefined;
    ctx = await open({
      crashHook: async (point) => {
        if (point !== 'before-record' || !armed) return;
        armed = false;
        await ctx?.store.run('ALTER TABLE history RENAME TO history_away');
      },
    });
    const id = randomUUID();
    const lost = await ctx.applyPatch(insert('once'), { requestId: id });
    expect(lost.success).toBe(false);
    expect(lost.message).toContain('Do not redo it');
    await ctx.store.run('ALTER TABLE history_away RENAME TO history');
    const retry = await ctx.applyPatch(insert('once'), { requestId: id });
    expect(retry).toMatchObject({ success: true, unchanged: true });
    expect(await text()).toBe('one\ntwo\nonce\nthree\n');
    const history = await ctx.history('a.txt');
    expect(history.map((v) => [v.op, v.changeId === id])).toEqual([
      ['patch', true],
      ['initial', false],
    ]);
    expect(await ctx.store.all('SELECT op FROM audit WHERE change_id = ?', [id])).toHaveLength(1);
    expect((await ctx.store.verifyAudit()).ok).toBe(true);
  });

  it('the intent stored but the answer to it lost: the retry is not refused as in flight, and applies once', async () => {
    const ctx = await open();
    // The store commits the intent, and the caller hears a failure, as when a connection drops between a
    // server's COMMIT and its answer (PostgreSQL restarted under load).
    const store = ctx.store;
    const commit = store.transaction.bind(store);
    let armed = true;
    store.transaction = (async (fn: () => Promise<unknown>, options?: { durable?: boolean }) => {
      const out = await commit(fn, options);
      // The intent's transaction is the one that leaves a row in the journal (durable or not: over the memory backend it is not).
      if (armed && (await store.all('SELECT 1 AS x FROM edit_journal')).length > 0) {
        armed = false;
        throw fsError('EUNAVAILABLE', 'applyPatch', undefined, { reason: 'the connection to the state store was lost' });
      }
      return out;
    }) as typeof store.transaction;
    const id = randomUUID();
    const lost = await ctx.applyPatch(insert('once'), { requestId: id }).catch((err: unknown) => err);
    expect(armed).toBe(false);
    expect(await text()).toBe('one\ntwo\nthree\n');
    const retry = await ctx.applyPatch(insert('once'), { requestId: id });
    expect(retry.success, `${retry.message} (the first call: ${String((lost as { message?: string }).message)})`).toBe(true);
    expect(await text()).toBe('one\ntwo\nonce\nthree\n');
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['patch', 'initial']);
    expect(await ctx.store.all('SELECT change_id FROM edit_journal')).toEqual([]);
  });

  it('the intent stored but a content after it failed: the retry is not refused as in flight, and applies once', async () => {
    const ctx = await open();
    // On PostgreSQL a content the server did not take as a delta (its chain full) is stored after the intent's
    // commit, before any file is written; the server restarting then fails the call with its intent stored.
    const versions = ctx.journal.versions;
    const piped = versions.putBlobPiped.bind(versions);
    let armed = true;
    let declined = false;
    versions.putBlobPiped = async (bytes, near) => {
      await piped(bytes, near);
      declined = armed;
      return { stored: Promise.resolve(!armed) };
    };
    const put = versions.putBlob.bind(versions);
    versions.putBlob = async (bytes, sha256, options) => {
      if (armed && declined) {
        armed = false;
        throw fsError('EUNAVAILABLE', 'applyPatch', undefined, { reason: 'the connection to the state store was lost' });
      }
      return put(bytes, sha256, options);
    };
    const id = randomUUID();
    const lost = await ctx.applyPatch(insert('once'), { requestId: id }).catch((err: unknown) => err);
    expect(armed).toBe(false);
    expect(await text()).toBe('one\ntwo\nthree\n');
    expect(await ctx.store.all('SELECT change_id FROM edit_journal')).toEqual([{ change_id: id }]);
    const retry = await ctx.applyPatch(insert('once'), { requestId: id });
    expect(retry.success, `${retry.message} (the first call: ${String((lost as { message?: string }).message)})`).toBe(true);
    expect(await text()).toBe('one\ntwo\nonce\nthree\n');
    expect((await ctx.history('a.txt')).map((v) => v.op)).toEqual(['patch', 'initial']);
    expect(await ctx.store.all('SELECT change_id FROM edit_journal')).toEqual([]);
  });

  it('a refused call is not remembered: its retry runs again', async () => {
    const ctx = await open();
    const id = randomUUID();
    expect((await ctx.replace('a.txt', 'absent', 'x', { requestId: id })).code).toBe('ENOENT'); // the text is not there
    await (ws as Workspace).fs.writeBytes('a.txt', new TextEncoder().encode('one\nabsent\n'));
    const r = await ctx.replace('a.txt', 'absent', 'present', { requestId: id });
    expect(r.success, r.message).toBe(true);
    expect(await text()).toBe('one\npresent\n');
  });

  it('withRequestId gives the id to every change of the request in turn (id, id#2, …); its retry writes nothing again', async () => {
    const ctx = await open();
    const id = randomUUID();
    // A request of two changes, as a tool making two edits would.
    const request = () => withRequestId(id, async () => [await ctx.applyPatch(insert('first')), await ctx.replace('a.txt', 'three', 'three\nlast')]);
    const done = await request();
    expect(done.map((r) => [r.success, r.unchanged])).toEqual([
      [true, false],
      [true, false],
    ]);
    const history = await ctx.history('a.txt');
    expect(history.slice(0, 2).map((v) => v.changeId)).toEqual([`${id}#2`, id]);
    const retried = await request();
    expect(retried.map((r) => [r.success, r.unchanged, r.version])).toEqual(done.map((r) => [true, true, r.version]));
    expect(await text()).toBe('one\ntwo\nfirst\nthree\nlast\n');
    // Outside the request, the same calls apply again (the control).
    expect((await ctx.applyPatch(insert('first'))).unchanged).toBe(false);
    // An id in the call's own options wins over the request's.
    const own = randomUUID();
    const r = await withRequestId(id, () => ctx.replace('a.txt', 'last', 'end', { requestId: own }));
    expect((await ctx.history('a.txt'))[0]?.changeId).toBe(own);
    expect(r.success).toBe(true);
  });

  it('an id that is empty, too long or holds control characters is refused with EINVAL, nothing written', async () => {
    const ctx = await open();
    for (const id of ['', 'x'.repeat(201), 'a\nb']) {
      const r = await ctx.replace('a.txt', 'one', '1', { requestId: id });
      expect(r).toMatchObject({ success: false, code: 'EINVAL' });
      expect(r.message).toMatch(/is not one: it must be 1 to 200 characters without control characters/);
    }
    expect(await text()).toBe('one\ntwo\nthree\n');
  });
});
