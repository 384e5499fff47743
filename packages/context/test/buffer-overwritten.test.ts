/**
 * No agent edit is silently lost when a buffer and the disk collide (MCP
 * campaign, session 33). Under `read-write` the disk wins text both changed;
 * the buffer then read clean, a save had nothing to save, and the agent's
 * text there was gone with no way back. Which side wins stays policy: now
 * the agent's text is kept as an undo entry, the buffer's state names the
 * places and the call that brings it back, and that call, made as written,
 * does. Under `admin` the disk's text loses, and a save records it in the
 * file history as an external version first. On memory and host.
 */
import type { Filesystem } from '@ctxfs/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BufferInfo, type ContextLayer, createContext, type SessionBuffers } from '../src/index.ts';
import { type BackendFactory, hostBackend, memoryBackend, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

async function disk(ws: Workspace, path: string): Promise<string> {
  return new TextDecoder().decode(await ws.fs.readBytes(path));
}

/** The API calls a text names, as written (`buffers.undo("a.txt")`, `buffers.save("a.txt", {resolve: "buffer"})`). */
function callsIn(text: string): Array<{ op: string; args: unknown[] }> {
  return [...text.matchAll(/(?<![\w.])((?:buffers\.)?[a-zA-Z]+)\(([^()]*)\)/g)].map((m) => ({
    op: m[1] as string,
    // The API's style leaves option names unquoted.
    args: JSON.parse(`[${(m[2] as string).replace(/([{,]\s*)([A-Za-z_$][\w$]*):/g, '$1"$2":')}]`) as unknown[],
  }));
}

/** Makes `call` on `ctx` (a `buffers.` call on its buffers). */
async function invoke(ctx: ContextLayer, { op, args }: { op: string; args: unknown[] }): Promise<unknown> {
  const [owner, name] = op.startsWith('buffers.') ? [ctx.buffers as unknown, op.slice('buffers.'.length)] : [ctx as unknown, op];
  const method = (owner as Record<string, unknown>)[name];
  expect(typeof method, `${op} is no call of the context layer`).toBe('function');
  return await (method as (...a: unknown[]) => Promise<unknown>).apply(owner, args);
}

/** Makes the one call `note` names, as written, on `ctx`. */
async function makeCall(ctx: ContextLayer, note: string | undefined): Promise<unknown> {
  expect(note, 'the buffer names no call').toBeDefined();
  const calls = callsIn(note as string);
  expect(calls, note).toHaveLength(1);
  return await invoke(ctx, calls[0] as { op: string; args: unknown[] });
}

/**
 * `fs`, where the first compare-and-swap write of `path` is preceded by
 * `change` (a person's write landing between a save's look at the disk and
 * its write): the real backend, with the real write after it.
 */
function personWritesFirst(fs: Filesystem, path: string, change: () => Promise<void>): Filesystem {
  let pending = true;
  return new Proxy(fs, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key !== 'writeBytes') return value.bind(target);
      return async (p: string, bytes: Uint8Array, options?: { ifMatch?: string }) => {
        if (pending && p === path && options?.ifMatch !== undefined) {
          pending = false;
          await change();
        }
        return await target.writeBytes(p, bytes, options);
      };
    },
  });
}

for (const backend of [memoryBackend, hostBackend] as BackendFactory[]) {
  it(`a person’s write between a save’s look and its write, on ${backend.name}: the retry merges, and the agent’s text it overwrote comes back`, async () => {
    const ws = await backend.create({ 'a.txt': 'one\ntwo\nthree\n' });
    const fs = personWritesFirst(ws.fs, 'a.txt', () => ws.external('a.txt', 'one\nperson-two\nthree\nfour\n'));
    const ctx = await createContext({ fs, store: testState(), agent: 'llm:a' });
    try {
      const b = ctx.buffers;
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'agent-two');
      const r = await b.save('a.txt');
      expect(r).toMatchObject({ saved: false, buffer: { settled: 1, winner: 'disk', dirty: false } });
      expect(await disk(ws, 'a.txt')).toBe('one\nperson-two\nthree\nfour\n');
      await makeCall(ctx, r.buffer.overwritten);
      expect((await b.save('a.txt')).saved).toBe(true);
      expect(await disk(ws, 'a.txt')).toBe('one\nagent-two\nthree\nfour\n');
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  describe(`text a collision overwrote is kept, on ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    let b: SessionBuffers;
    beforeEach(async () => {
      ws = await backend.create({ 'a.txt': 'one\ntwo\nthree\n' });
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
      b = ctx.buffers;
    });
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });

    it('read-write: the disk wins, the save has nothing to save, and the call named brings the agent’s text back', async () => {
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'agent-two');
      await ws.external('a.txt', 'one\nperson-two\nthree\nfour\n');
      const r = await b.save('a.txt');
      // The policy holds: the disk's text won, and the buffer is the disk.
      expect(r).toMatchObject({ saved: false, buffer: { settled: 1, winner: 'disk', dirty: false } });
      expect((await b.text('a.txt')).text).toBe('one\nperson-two\nthree\nfour\n');
      expect(r.buffer.overwritten).toContain('line 2');
      await makeCall(ctx, r.buffer.overwritten);
      // Back in the buffer where it was; the disk's other change stays.
      expect((await b.text('a.txt')).text).toBe('one\nagent-two\nthree\nfour\n');
      const [after] = await b.status('a.txt');
      expect(after).toMatchObject({ dirty: true, overwritten: undefined });
      expect((await b.save('a.txt')).saved).toBe(true);
      expect(await disk(ws, 'a.txt')).toBe('one\nagent-two\nthree\nfour\n');
    });

    it('read-write: a buffer that reads clean but keeps the agent’s overwritten text is not closed without discard', async () => {
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'agent-two');
      await ws.external('a.txt', 'one\nperson-two\nthree\n');
      expect((await b.status('a.txt'))[0]).toMatchObject({ dirty: false, settled: 1 });
      const refusal = await b.close('a.txt').then(
        () => undefined,
        (err: { code?: string; reason?: string; hint?: string }) => err,
      );
      expect(refusal).toMatchObject({ code: 'EBUSY', path: 'a.txt', reason: expect.stringContaining('your text at line 2') });
      // The hint's first call brings the text back; then the save it asks for.
      const [undo] = callsIn(refusal?.hint ?? '');
      expect(undo).toEqual({ op: 'buffers.undo', args: ['a.txt', { overwritten: true }] });
      await invoke(ctx, undo as { op: string; args: unknown[] });
      await b.save('a.txt');
      expect(await disk(ws, 'a.txt')).toBe('one\nagent-two\nthree\n');
      expect(await b.close('a.txt')).toMatchObject({ path: 'a.txt' });
      // Dropping it is a choice the call makes.
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'again');
      await ws.external('a.txt', 'one\nperson\nthree\n');
      await b.status('a.txt');
      expect(await b.close('a.txt', { discard: true })).toMatchObject({ path: 'a.txt' });
    });

    it('read-write: behind later edits the same call brings the text back; an undone edit can still be redone', async () => {
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'agent-two');
      await b.replace('a.txt', 'one', 'ONE');
      await b.undo('a.txt');
      await ws.external('a.txt', 'one\nperson-two\nthree\n');
      const [s] = await b.status('a.txt');
      expect(s?.overwritten).toBe(
        'your text at line 2 was replaced by the disk\'s; it is kept: buffers.undo("a.txt", {overwritten: true}) brings it back into the buffer (then save)',
      );
      // The merge did not take the agent's undone edit away.
      expect(s?.redo).toBe(1);
      await b.replace('a.txt', 'three', 'THREE');
      const [later] = await b.status('a.txt');
      expect(later?.overwritten).toBe(s?.overwritten);
      await makeCall(ctx, later?.overwritten);
      expect((await b.text('a.txt')).text).toBe('one\nagent-two\nTHREE\n');
      expect((await b.status('a.txt'))[0]?.overwritten).toBeUndefined();
      // The bringing back is an edit like another: an undo reverts it, and asking again finds nothing.
      await expect(b.undo('a.txt', { overwritten: true })).rejects.toMatchObject({ code: 'EINVAL', path: 'a.txt' });
      await b.undo('a.txt');
      expect((await b.text('a.txt')).text).toBe('one\nperson-two\nTHREE\n');
    });

    it('read-write: the edit call that takes the change in names it; a later merge that overwrites nothing keeps the note', async () => {
      await b.open('a.txt');
      await b.replace('a.txt', 'two', 'agent-two');
      await ws.external('a.txt', 'one\nperson-two\nthree\n');
      const c = await b.change('a.txt', { kind: 'replace', search: 'three', replacement: 'THREE', options: {} });
      expect(c.overwritten).toContain('line 2');
      expect((await b.change('a.txt', { kind: 'replace', search: 'one', replacement: 'ONE', options: {} })).overwritten).toBeUndefined();
      await ws.external('a.txt', 'one\nperson-two\nthree\nfour\n');
      const [s] = await b.status('a.txt');
      expect(s?.overwritten).toContain('line 2');
      await makeCall(ctx, s?.overwritten);
      await b.save('a.txt');
      expect(await disk(ws, 'a.txt')).toBe('ONE\nagent-two\nTHREE\nfour\n');
    });

    it('a save that meets a change on disk made after the edit keeps the agent’s text the same way', async () => {
      await b.open('a.txt');
      await b.replace('a.txt', 'one', 'ONE');
      await b.replace('a.txt', 'three', 'agent-three');
      await ws.external('a.txt', 'one\ntwo\nperson-three\n');
      const r = await b.save('a.txt');
      // What did not collide is saved; the collision went to the disk, and the agent's text is one call away.
      expect(r.saved).toBe(true);
      expect(await disk(ws, 'a.txt')).toBe('ONE\ntwo\nperson-three\n');
      expect(r.buffer.overwritten).toContain('line 3');
      await makeCall(ctx, r.buffer.overwritten);
      await b.save('a.txt');
      expect(await disk(ws, 'a.txt')).toBe('ONE\ntwo\nagent-three\n');
    });

    for (const savedBefore of [false, true]) {
      it(`admin: the agent wins, and the disk’s text is the version the save replaced in the file history (${savedBefore ? 'external, after a save' : 'the first recorded'})`, async () => {
        await b.open('a.txt', { permission: 'admin' });
        if (savedBefore) {
          await b.replace('a.txt', 'one', 'ONE');
          await b.save('a.txt');
        }
        const first = savedBefore ? 'ONE' : 'one';
        await b.replace('a.txt', 'two', 'agent-two');
        await ws.external('a.txt', `${first}\nperson-two\nthree\n`);
        const [s] = await b.status('a.txt');
        expect(s).toMatchObject({ settled: 1, winner: 'buffer' });
        expect(s?.overwritten).toContain("the disk's text at line 2");
        await b.save('a.txt');
        expect(await disk(ws, 'a.txt')).toBe(`${first}\nagent-two\nthree\n`);
        const [saved, replaced] = (await makeCall(ctx, s?.overwritten)) as Array<{ seq: number; author: string }>;
        expect(saved?.author).toBe('llm:a');
        expect(replaced?.author).toBe(savedBefore ? 'external' : 'initial');
        expect((await ctx.getVersion('a.txt', replaced?.seq as number)).text).toBe(`${first}\nperson-two\nthree\n`);
      });
    }

    it('human resolving for the disk keeps the agent’s text too', async () => {
      await b.open('a.txt', { permission: 'human' });
      await b.replace('a.txt', 'two', 'agent-two');
      await ws.external('a.txt', 'one\nperson-two\nthree\n');
      const info: BufferInfo = await b.resolve('a.txt', 'disk');
      expect((await b.text('a.txt')).text).toBe('one\nperson-two\nthree\n');
      expect(info.overwritten).toContain('line 2');
      await makeCall(ctx, info.overwritten);
      expect((await b.text('a.txt')).text).toBe('one\nagent-two\nthree\n');
    });
  });
}
