/**
 * A file open in a session's buffer takes that session's edits and serves
 * its reads (buffers/buffer-routing.ts); files not open, other sessions and
 * a closed buffer's path go to the disk as before. On memory and host.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, sha256Hex } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const A = 'one\ntwo\nthree\nfour\nfive\n';

for (const backend of BACKENDS) {
  describe(`edits and reads of an open file on ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    const disk = async (path: string) => new TextDecoder().decode(await ws.fs.readBytes(path));
    beforeEach(async () => {
      ws = await backend.create({ 'a.txt': A, 'b.txt': 'bee\n', 'crlf.txt': 'x\r\ny\r\n' });
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
    });
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });

    it('a base version the caller names is checked in the buffer too, by content-located edits as by line edits', async () => {
      const read = await ctx.readFile('a.txt');
      await ctx.buffers.open('a.txt');
      const malformed = await ctx.replace('a.txt', 'two', '2', { baseVersion: 'not-a-version' });
      expect(malformed).toMatchObject({ success: false, code: 'EINVAL' });
      const unknown = await ctx.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n', { baseVersion: 'abcdef12' });
      expect(unknown).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(await ctx.buffers.diff('a.txt')).toMatchObject({ status: 'clean', diff: '' });
      // The version the buffer holds is a base that works.
      const ok = await ctx.replace('a.txt', 'two', '2', { baseVersion: read.version });
      expect(ok.success, ok.message).toBe(true);
    });

    it('go to the buffer: replace, line edits, a patch and a whole write change it, reads serve it, the disk is untouched until save', async () => {
      const read0 = await ctx.readFile('a.txt');
      expect(read0.text).not.toContain('buffer=');
      await ctx.buffers.open('a.txt');
      const clean = await ctx.readFile('a.txt');
      expect(clean.text).toContain('buffer="open buffer, same as disk"');
      expect(clean.version).toBe(read0.version);

      const r = await ctx.replace('a.txt', 'two', 'TWO');
      expect(r).toMatchObject({ success: true, op: 'replace', unchanged: false, seq: undefined, next: 'buffers.save("a.txt")' });
      expect(r.message).toContain('not the file on disk: unsaved until buffers.save("a.txt")');
      expect(r.diff).toContain('-two\n+TWO\n');
      // Counted as a disk edit's result counts them: added plus removed.
      expect(r).toMatchObject({ linesAdded: 1, linesRemoved: 1, linesChanged: 2 });
      expect(r.previousVersion).toBe(read0.version);
      expect(await disk('a.txt')).toBe(A);

      // Line numbers of the buffer as last seen (the replace's result counts as seen).
      const l = await ctx.editLines('a.txt', { kind: 'insert-after', line: 5, text: 'six' });
      expect(l).toMatchObject({ success: true, op: 'edit-lines', previousVersion: r.version });
      const p = await ctx.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n TWO\n');
      expect(p).toMatchObject({ success: true, op: 'patch', path: 'a.txt' });
      const shown = await ctx.readLines('a.txt', 1, 6);
      expect(shown.text).toContain('buffer="open buffer, unsaved changes: not on disk"');
      expect(shown.text).toContain('1\tONE\n2\tTWO\n');
      expect(shown.text).toContain('6\tsix\n');
      expect(shown.version).toBe(sha256Hex(new TextEncoder().encode('ONE\nTWO\nthree\nfour\nfive\nsix\n')));
      expect((await ctx.getExcerpt('a.txt', 1)).text).toContain('1\tONE');
      const w = await ctx.writeFile('a.txt', 'whole\n', { baseVersion: shown.version });
      expect(w).toMatchObject({ success: true, op: 'write', linesRemoved: 6, linesAdded: 1 });
      expect(await disk('a.txt')).toBe(A);
      // The registry keeps what is on disk, not the buffer's text.
      expect(ctx.registry.get('a.txt')?.sha256).toBe(read0.version);

      const s = await ctx.buffers.save('a.txt');
      expect(s.saved).toBe(true);
      expect(await disk('a.txt')).toBe('whole\n');
    });

    it('a person’s change on disk is merged into the buffer; an edit made from the text before it is refused, and the save writes both', async () => {
      await ctx.buffers.open('a.txt');
      const before = await ctx.readFile('a.txt');
      await ctx.replace('a.txt', 'five', 'FIVE');
      await ws.external('a.txt', `zero\n${A}`);
      const merged = await ctx.readFile('a.txt');
      expect(merged.text).toContain('>\nzero\none\ntwo\nthree\nfour\nFIVE\n</file');
      expect((await ctx.buffers.status('a.txt'))[0]).toMatchObject({ status: 'disk_changed', dirty: true });
      // A line edit from the version read before the merge would land on the wrong line.
      const stale = await ctx.editLines('a.txt', { kind: 'delete', start: 1, end: 1 }, { baseVersion: before.version });
      expect(stale).toMatchObject({ success: false, code: 'ECONFLICT', next: 'readFile("a.txt")' });
      expect(stale.message).toContain('readFile("a.txt")');
      // checkConflicts looks at the buffer: the read above is its current text; the read before the merge is not.
      expect(await ctx.checkConflicts('a.txt')).toBeUndefined();
      expect(await ctx.checkConflicts('a.txt', before.version)).toMatchObject({ type: 'stale_buffer', currentVersion: merged.version });
      expect((await ctx.editLines('a.txt', { kind: 'delete', start: 1, end: 1 })).success).toBe(true);
      await ws.external('a.txt', `zero\n${A}six\n`);
      expect((await ctx.buffers.save('a.txt')).saved).toBe(true);
      expect(await disk('a.txt')).toBe('one\ntwo\nthree\nfour\nFIVE\nsix\n');
    });

    it('refusals of a buffer edit are results naming the read that shows the buffer', async () => {
      await ctx.buffers.open('a.txt');
      const missing = await ctx.replace('a.txt', 'nowhere', 'x');
      expect(missing).toMatchObject({ success: false, code: 'ENOENT' });
      expect(missing.message).toContain('(open buffer)');
      expect(missing.message).toContain('readFile("a.txt")');
      const twice = await ctx.replace('a.txt', 'o', '0');
      expect(twice).toMatchObject({ success: false, code: 'EINVAL' });
      expect(twice.message).toMatch(/readLines\("a\.txt", \d+, \d+\)/);
      const past = await ctx.editLines('a.txt', { kind: 'delete', start: 40, end: 41 });
      expect(past).toMatchObject({ success: false, code: 'EINVAL' });
      expect(past.message).toContain('readLines("a.txt", 1, 5)');
      expect(await disk('a.txt')).toBe(A);
    });

    it('a patch of several files touching an open one is refused whole, naming it and the calls that free it', async () => {
      await ctx.buffers.open('a.txt');
      await ctx.replace('a.txt', 'one', 'uno');
      const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-two\n+dos\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n';
      const r = await ctx.applyPatch(patch);
      expect(r).toMatchObject({ success: false, code: 'EBUSY', next: 'buffers.save("a.txt")' });
      expect(r.message).toContain('a.txt is open in a buffer');
      expect(r.message).toContain('buffers.close("a.txt", {discard: true})');
      expect(await disk('a.txt')).toBe(A);
      expect(await disk('b.txt')).toBe('bee\n');
      expect((await ctx.buffers.text('a.txt')).text).toBe('uno\ntwo\nthree\nfour\nfive\n');
      // Freed, the same patch goes to the disk, all or nothing as ever.
      await ctx.buffers.save('a.txt');
      await ctx.buffers.close('a.txt');
      expect((await ctx.applyPatch(patch)).success).toBe(true);
      expect(await disk('a.txt')).toBe('uno\ndos\nthree\nfour\nfive\n');
      expect(await disk('b.txt')).toBe('BEE\n');
    });

    it('files not open, other sessions, and a closed buffer’s path go to the disk', async () => {
      await ctx.buffers.open('a.txt');
      expect((await ctx.replace('b.txt', 'bee', 'BEE')).seq).toBeGreaterThan(0);
      expect(await disk('b.txt')).toBe('BEE\n');
      await ctx.replace('a.txt', 'one', 'uno');
      const other = ctx.session({ agent: 'llm:b' });
      expect((await other.readFile('a.txt')).text).toContain('>\none\n');
      expect((await other.replace('a.txt', 'five', 'cinco')).seq).toBeGreaterThan(0);
      expect(await disk('a.txt')).toBe('one\ntwo\nthree\nfour\ncinco\n');
      await ctx.buffers.close('a.txt', { discard: true });
      const read = await ctx.readFile('a.txt');
      expect(read.text).not.toContain('buffer=');
      const w = await ctx.replace('a.txt', 'one', 'eins');
      expect(w.seq).toBeGreaterThan(0);
      expect(await disk('a.txt')).toBe('eins\ntwo\nthree\nfour\ncinco\n');
    });

    it('a read-only buffer refuses edits; delete and rename still act on the disk and the buffer follows', async () => {
      await ctx.buffers.open('b.txt', { permission: 'read-only' });
      const r = await ctx.replace('b.txt', 'bee', 'x');
      expect(r).toMatchObject({ success: false, code: 'EPERM' });
      expect(r.message).toContain('buffers.open("b.txt", {permission: "read-write"})');
      await ctx.buffers.open('crlf.txt');
      expect((await ctx.replace('crlf.txt', 'y', 'Y')).success).toBe(true);
      expect((await ctx.renameFile('crlf.txt', 'moved.txt')).success).toBe(true);
      // The next look at every buffer finds the file under its new name, the unsaved edit kept.
      const moved = (await ctx.buffers.status()).find((b) => b.path === 'moved.txt');
      expect(moved).toMatchObject({ renamedFrom: 'crlf.txt', dirty: true });
      expect((await ctx.buffers.save('moved.txt')).saved).toBe(true);
      expect(await disk('moved.txt')).toBe('x\r\nY\r\n');
    });
  });
}
