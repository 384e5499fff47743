/**
 * Buffers (issue #15): an agent's open file kept in step with the disk by
 * its permission, on memory and host.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, mergeSides, sha256Hex } from '../src/index.ts';
import { type BackendFactory, hostBackend, memoryBackend, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

async function disk(ws: Workspace, path: string): Promise<string> {
  return new TextDecoder().decode(await ws.fs.readBytes(path));
}

/** A text of a few short lines from a small alphabet, so random edits collide often. */
const textArb = fc.array(fc.stringMatching(/^[ab😀 \t]{0,6}$/u), { maxLength: 6 }).map((ls) => ls.map((l) => `${l}\n`).join(''));
/** `base` with a few random splices. */
const editedArb = (base: string) =>
  fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.stringMatching(/^[xy\n]{0,3}$/)), { maxLength: 3 }).map((edits) => {
    let t = [...base];
    for (const [at, del, ins] of edits) {
      const i = t.length === 0 ? 0 : at % (t.length + 1);
      t = [...t.slice(0, i), ...ins, ...t.slice(i + del)];
    }
    return t.join('');
  });
const tripleArb = textArb.chain((base) => fc.tuple(fc.constant(base), editedArb(base), editedArb(base)));

describe('mergeSides', () => {
  it('is the other side when one side is unchanged, either side when both agree, and settles every collision for the winner', () => {
    fc.assert(
      fc.property(tripleArb, ([base, ours, theirs]) => {
        for (const rule of ['disk', 'buffer', 'ask'] as const) {
          expect(mergeSides(base, base, theirs, rule).text).toBe(theirs);
          expect(mergeSides(base, ours, base, rule).text).toBe(ours);
          expect(mergeSides(base, ours, ours, rule).text).toBe(ours);
        }
        const disk = mergeSides(base, ours, theirs, 'disk');
        const buffer = mergeSides(base, ours, theirs, 'buffer');
        expect(disk.collisions.length).toBe(buffer.collisions.length);
        if (disk.collisions.length === 0) expect(buffer.text).toBe(disk.text);
        // A winner's text is in the result, region by region, and never half of each side.
        for (const c of disk.collisions) expect(disk.text).toContain(c.disk);
        for (const c of buffer.collisions) expect(buffer.text).toContain(c.buffer);
        // No code point is ever split.
        expect(disk.text.isWellFormed() && buffer.text.isWellFormed()).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('merges two edits of one line at different columns by character', () => {
    const r = mergeSides('let alpha = 1;\n', 'let alphabet = 1;\n', 'let alpha = 2;\n', 'ask');
    expect(r).toEqual({ text: 'let alphabet = 2;\n', collisions: [], level: 'word' });
  });
  it('reports the same characters changed by both, and settles them by the rule', () => {
    const ask = mergeSides('x = 1\n', 'x = 2\n', 'x = 3\n', 'ask');
    expect(ask.collisions).toHaveLength(1);
    expect(ask.text).toBe('x = 2\n');
    expect(mergeSides('x = 1\ny\n', 'x = 2\ny!\n', 'x = 3\ny\n', 'disk').text).toBe('x = 3\ny!\n');
    expect(mergeSides('x = 1\ny\n', 'x = 2\ny\n', 'x = 3\ny?\n', 'buffer').text).toBe('x = 2\ny?\n');
  });
  it('keeps an emoji whole and CRLF line endings', () => {
    const r = mergeSides('a😀b\r\nc\r\n', 'a😀B\r\nc\r\n', 'A😀b\r\nc\r\n', 'ask');
    expect(r.text).toBe('A😀B\r\nc\r\n');
  });
});

for (const backend of [memoryBackend, hostBackend] as BackendFactory[]) {
  describe(`buffers on ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    beforeEach(async () => {
      ws = await backend.create({ 'a.txt': 'one\ntwo\nthree\n', 'crlf.txt': 'x\r\ny\r\n', 'dir/e.txt': 'a😀b\n' });
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    });
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });

    it('opens, edits in memory, reports status and diff, saves as a version', async () => {
      const b = ctx.buffers;
      const opened = await b.open('a.txt');
      expect(opened).toMatchObject({ path: 'a.txt', status: 'clean', permission: 'read-write', bufferVersion: 1, onDisk: true });
      const edited = await b.replace('a.txt', 'two', 'TWO');
      expect(edited).toMatchObject({ status: 'modified', dirty: true, bufferVersion: 2, undo: 1 });
      expect(await disk(ws, 'a.txt')).toBe('one\ntwo\nthree\n');
      const d = await b.diff('a.txt');
      expect(d.text).toMatch(/^\[file:a\.txt\]\nstatus: modified\ndisk_mtime: \d{4}-.*\nbuffer_version: 2\n---\n--- disk\n\+\+\+ buffer\n/);
      expect(d.diff).toContain('-two\n+TWO\n');
      const saved = await b.save('a.txt', { message: 'capitals' });
      expect(saved.saved).toBe(true);
      expect(saved.buffer).toMatchObject({ status: 'clean', dirty: false });
      expect(await disk(ws, 'a.txt')).toBe('one\nTWO\nthree\n');
      const history = await ctx.history('a.txt');
      expect(history[0]).toMatchObject({ author: 'llm:a', message: 'capitals', seq: saved.edit?.seq });
      expect((await b.list()).map((r) => [r.path, r.loaded, r.dirty, r.permission])).toEqual([['a.txt', true, false, 'read-write']]);
      const listed = await b.list({ pattern: '**/*.txt' });
      expect(listed.map((r) => `${r.path}:${r.loaded}:${r.size}`)).toEqual(['a.txt:true:14', 'crlf.txt:false:6', 'dir/e.txt:false:7']);
      await b.close('a.txt');
      expect(await b.status()).toEqual([]);
    });

    it('every edit operation applies to the buffer; positions are code points; CRLF is kept', async () => {
      const b = ctx.buffers;
      await b.open('dir/e.txt');
      await b.edit('dir/e.txt', { kind: 'splice', at: 2, remove: 1, insert: 'B' });
      expect((await b.text('dir/e.txt')).text).toBe('a😀B\n');
      await b.edit('dir/e.txt', { kind: 'splice', at: 1, remove: 1, insert: '🙂' });
      expect((await b.text('dir/e.txt')).text).toBe('a🙂B\n');
      await expect(b.edit('dir/e.txt', { kind: 'splice', at: 9, remove: 0, insert: '' })).rejects.toMatchObject({ code: 'EINVAL' });
      await b.open('crlf.txt');
      await b.edit('crlf.txt', { kind: 'edit-lines', edit: { kind: 'insert-after', line: 1, text: 'mid' } });
      await b.replace('crlf.txt', 'y', 'Y', { occurrence: 'first' });
      await b.replace('crlf.txt', '\\b([xY])\\b', '[$1]', { regex: true, occurrence: 'all' });
      await b.edit('crlf.txt', { kind: 'patch', patch: '@@ -1,2 +1,2 @@\n [x]\n-mid\n+middle\n' });
      expect((await b.text('crlf.txt')).text).toBe('[x]\r\nmiddle\r\n[Y]\r\n');
      await b.save('crlf.txt');
      expect(await disk(ws, 'crlf.txt')).toBe('[x]\r\nmiddle\r\n[Y]\r\n');
      await expect(b.replace('crlf.txt', 'nothing', 'x')).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(b.replace('crlf.txt', 'x', 'y', { bufferVersion: 1 })).rejects.toMatchObject({ code: 'ECONFLICT' });
    });

    it('read-write: a person’s change merges in; where both changed the same text the disk wins', async () => {
      const b = ctx.buffers;
      await b.open('a.txt');
      await b.replace('a.txt', 'one', 'ONE');
      await ws.external('a.txt', 'one\ntwo\nthree\nfour\n');
      const s = (await b.status('a.txt'))[0];
      expect(s).toMatchObject({ status: 'disk_changed', dirty: true });
      // The registry learnt of the change the buffer saw.
      expect(ctx.registry.get('a.txt')?.sha256).toBe(s?.diskVersion);
      expect((await b.text('a.txt')).text).toBe('ONE\ntwo\nthree\nfour\n');
      await b.replace('a.txt', 'two', 'agent-two');
      await ws.external('a.txt', 'one\nperson-two\nthree\nfour\n');
      const after = await b.status('a.txt');
      expect(after[0]).toMatchObject({ settled: 1, winner: 'disk' });
      await b.save('a.txt');
      expect(await disk(ws, 'a.txt')).toBe('ONE\nperson-two\nthree\nfour\n');
    });

    it('admin: the agent wins collisions', async () => {
      const b = ctx.buffers;
      await b.open('a.txt', { permission: 'admin' });
      await b.replace('a.txt', 'two', 'agent');
      await ws.external('a.txt', 'one\nperson\nthree\nfour\n');
      await b.save('a.txt');
      expect(await disk(ws, 'a.txt')).toBe('one\nagent\nthree\nfour\n');
    });

    it('human: a collision is surfaced, save is refused until the agent decides', async () => {
      const b = ctx.buffers;
      await b.open('a.txt', { permission: 'human' });
      await b.replace('a.txt', 'two', 'agent');
      await ws.external('a.txt', 'one\nperson\nthree\nfour\n');
      const s = (await b.status('a.txt'))[0];
      expect(s).toMatchObject({ status: 'conflict', collisions: 1, next: 'buffers.diff("a.txt")' });
      expect((await b.diff('a.txt')).text).toContain('collisions: 1');
      await expect(b.save('a.txt')).rejects.toMatchObject({ code: 'ECONFLICT' });
      expect(await disk(ws, 'a.txt')).toBe('one\nperson\nthree\nfour\n');
      const saved = await b.save('a.txt', { resolve: 'buffer' });
      expect(saved.saved).toBe(true);
      expect(await disk(ws, 'a.txt')).toBe('one\nagent\nthree\nfour\n');
    });

    it('read-only: follows the disk, refuses edits', async () => {
      const b = ctx.buffers;
      await b.open('a.txt', { permission: 'read-only' });
      await expect(b.replace('a.txt', 'two', 'x')).rejects.toMatchObject({
        code: 'EPERM',
        hint: expect.stringContaining('buffers.open("a.txt", {permission: "read-write"})'),
      });
      await expect(b.save('a.txt')).rejects.toMatchObject({ code: 'EPERM' });
      await ws.external('a.txt', 'changed\n');
      expect((await b.text('a.txt')).text).toBe('changed\n');
      // The call the refusal names works: opened again, writable.
      expect(await b.open('a.txt', { permission: 'read-write' })).toMatchObject({ permission: 'read-write' });
      await b.replace('a.txt', 'changed', 'edited');
    });

    it('undo reverts an edit but keeps a change merged from disk since; redo applies it again', async () => {
      const b = ctx.buffers;
      await b.open('a.txt');
      await b.replace('a.txt', 'one', 'ONE');
      await ws.external('a.txt', 'one\ntwo\nthree\nfour\n');
      await b.undo('a.txt');
      expect((await b.text('a.txt')).text).toBe('one\ntwo\nthree\nfour\n');
      await b.redo('a.txt');
      expect((await b.text('a.txt')).text).toBe('ONE\ntwo\nthree\nfour\n');
      await expect(b.redo('a.txt')).rejects.toMatchObject({ code: 'EINVAL' });
    });

    it('follows a rename on disk and a deletion; unsaved edits outlive the deletion and a save recreates the file', async () => {
      const b = ctx.buffers;
      await b.open('a.txt');
      await ws.fs.rename('a.txt', 'b.txt');
      const s = (await b.status())[0];
      expect(s).toMatchObject({ path: 'b.txt', renamedFrom: 'a.txt', status: 'clean' });
      await b.replace('b.txt', 'one', 'ONE');
      await ws.external('b.txt', null);
      // Before: under read-write the deletion emptied the buffer and the unsaved edit was gone.
      expect((await b.status('b.txt'))[0]).toMatchObject({ onDisk: false, dirty: true, winner: 'buffer' });
      await b.save('b.txt');
      expect(await disk(ws, 'b.txt')).toBe('ONE\ntwo\nthree\n');
      await b.open('crlf.txt', { permission: 'admin' });
      await b.replace('crlf.txt', 'x', 'X');
      await ws.external('crlf.txt', null);
      await b.save('crlf.txt');
      expect(await disk(ws, 'crlf.txt')).toBe('X\r\ny\r\n');
    });

    it('a dirty buffer is closed only when told to drop its changes; unknown buffers say how to open them', async () => {
      const b = ctx.buffers;
      await b.open('a.txt');
      await b.replace('a.txt', 'one', '1');
      await expect(b.close('a.txt')).rejects.toMatchObject({ code: 'EBUSY' });
      await b.close('a.txt', { discard: true });
      await expect(b.save('a.txt')).rejects.toMatchObject({ code: 'ENOENT', hint: expect.stringContaining('buffers.open("a.txt")') });
      expect((await b.status('a.txt'))[0]).toMatchObject({ status: 'clean', bufferVersion: 1 });
      await expect(b.open('missing.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('auto-save writes every edit and never echoes its own write back as a disk change', async () => {
      const b = ctx.buffers;
      await b.open('a.txt', { autoSave: true });
      const r = await b.replace('a.txt', 'one', 'uno');
      expect(r).toMatchObject({ status: 'clean', dirty: false });
      expect(await disk(ws, 'a.txt')).toBe('uno\ntwo\nthree\n');
      const s = (await b.status('a.txt'))[0];
      expect(s).toMatchObject({ status: 'clean', bufferVersion: 2 });
    });
  });
}

describe('buffers and the rest of the context layer', () => {
  it('a path the policy keeps read-only opens read-only; a denied path does not open', async () => {
    const ws = await memoryBackend.create({ 'vendor/lib.js': 'x\n', 'secret/key.txt': 'k\n', 'a.txt': 'a\n' });
    const ctx = await createContext({
      fs: ws.fs,
      store: testState(),
      safety: { policyFiles: false, policy: { readOnly: ['vendor/'], rules: [{ effect: 'deny', paths: ['secret/'] }] } },
    });
    try {
      expect(await ctx.buffers.open('vendor/lib.js', { permission: 'admin' })).toMatchObject({ permission: 'read-only' });
      await expect(ctx.buffers.open('secret/key.txt')).rejects.toMatchObject({ code: 'EDENIED' });
      await ctx.buffers.open('a.txt');
      await ctx.store.flushAudit(); // the records of reads are written a batch at a time
      const records = (await ctx.store.all("SELECT op, result FROM audit WHERE op LIKE 'buffers.%' ORDER BY id")) as Array<{ op: string; result: string }>;
      expect(records.map((r) => `${r.op} ${r.result}`)).toEqual(['buffers.open ok', 'buffers.open denied', 'buffers.open ok']);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  it('two agents hold one file: each save merges the other’s, nothing is lost', async () => {
    const ws = await hostBackend.create({ 'shared.txt': 'one\ntwo\nthree\n' });
    const ctx = await createContext({ fs: ws.fs, store: testState() });
    try {
      const a = ctx.session({ agent: 'llm:a' }).buffers;
      const b = ctx.session({ agent: 'llm:b' }).buffers;
      await a.open('shared.txt');
      await b.open('shared.txt');
      await a.replace('shared.txt', 'one', 'ONE');
      await b.replace('shared.txt', 'three', 'THREE');
      await a.save('shared.txt');
      await b.save('shared.txt');
      expect(await disk(ws, 'shared.txt')).toBe('ONE\ntwo\nTHREE\n');
      expect((await a.text('shared.txt')).text).toBe('ONE\ntwo\nTHREE\n');
      const authors = (await ctx.history('shared.txt')).map((v) => v.author);
      expect(authors.slice(0, 2)).toEqual(['llm:b', 'llm:a']);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});

describe('saving while a person keeps writing', () => {
  it('a person appending with compare-and-swap and an agent saving its buffer: no update of either is lost', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const ws = await memoryBackend.create({ 'log.txt': `${lines}\n` });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    const turns = async () => {
      for (let t = Math.floor(Math.random() * 30); t > 0; t--) await Promise.resolve();
    };
    try {
      const b = ctx.buffers;
      await b.open('log.txt');
      const person = (async () => {
        for (let i = 0; i < 60; i++) {
          for (;;) {
            const bytes = await ws.fs.readBytes('log.txt');
            await turns();
            const text = `${new TextDecoder().decode(bytes)}P${i}\n`;
            try {
              await ws.fs.writeBytes('log.txt', new TextEncoder().encode(text), { ifMatch: sha256Hex(bytes) });
              break;
            } catch (err) {
              if ((err as { code?: string }).code !== 'ECONFLICT') throw err;
            }
          }
          await turns();
        }
      })();
      const agent = (async () => {
        for (let j = 0; j < 30; j++) {
          await b.edit('log.txt', { kind: 'splice', at: 0, remove: 0, insert: `A${j}\n` });
          const r = await b.save('log.txt');
          expect(r.saved || r.edit?.code === 'ECONFLICT').toBe(true);
          await turns();
        }
      })();
      await Promise.all([person, agent]);
      await b.save('log.txt');
      const final = await disk(ws, 'log.txt');
      for (let i = 0; i < 60; i++) expect(final).toContain(`P${i}\n`);
      for (let j = 0; j < 30; j++) expect(final).toContain(`A${j}\n`);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});
