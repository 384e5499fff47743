import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const text = async (ws: Workspace, p: string) => new TextDecoder().decode(await ws.fs.readBytes(p));
const LINES = `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

for (const backend of BACKENDS) {
  describe(`applyPatch formats over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    const open = async (files: Record<string, string>) => {
      ws = await backend.create(files);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    };
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });

    it('applies one patch to 40 files: more file locks than a PostgreSQL store has lock connections, held by one edit', async () => {
      const names = Array.from({ length: 40 }, (_, i) => `src/m${String(i).padStart(2, '0')}.txt`);
      await open(Object.fromEntries(names.map((n) => [n, 'one\ntwo\n'])));
      const patch = names.map((n) => `--- a/${n}\n+++ b/${n}\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n`).join('');
      const r = await ctx.applyPatch(patch);
      expect(r.success, r.message).toBe(true);
      expect(r.files).toHaveLength(40);
      for (const n of [names[0], names[39]] as string[]) expect(await text(ws, n)).toBe('one\nTWO\n');
    });

    it('numbers the refused hunk within its own file in a multi-file refusal', async () => {
      await open({ 'a.txt': LINES, 'b.txt': 'b1\nb2\n' });
      const r = await ctx.applyPatch('--- a/b.txt\n+++ b/b.txt\n@@ @@\n-b1\n+B1\n--- a/a.txt\n+++ b/a.txt\n@@ @@\n line 10\n-line 11 WRONG\n+x\n');
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.message).toContain('1 of 2 files refused');
      expect(r.message).toContain('- a.txt: The patch does not apply: 1 of 1 hunk refused');
      expect(r.message).toContain('hunk #1 (@@ @@)');
      expect(r.message).not.toContain('hunk #2');
    });

    it('refuses an unparseable hunk header naming the line, not as a patch without hunks', async () => {
      await open({ 'a.txt': LINES });
      const r = await ctx.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ -3,3 +3,+3 @@\n line 3\n-line 4\n+four\n');
      expect(r).toMatchObject({ success: false, code: 'EINVAL' });
      expect(r.message).toContain('line 3 of the patch');
      expect(r.message).toContain('"@@ -3,3 +3,+3 @@"');
      expect(r.message).not.toMatch(/no hunks/);
      expect(await text(ws, 'a.txt')).toBe(LINES);
    });

    it('writes the new endings of a CRLF→LF patch, and keeps CRLF for an LF patch', async () => {
      await open({ 'w.txt': 'one\r\ntwo\r\n', 'k.txt': 'one\r\ntwo\r\n' });
      expect((await ctx.applyPatch('--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-one\r\n-two\r\n+one\n+two\n')).success).toBe(true);
      expect(await text(ws, 'w.txt')).toBe('one\ntwo\n');
      expect((await ctx.applyPatch('--- a/k.txt\n+++ b/k.txt\n@@ @@\n one\n-two\n+TWO\n')).success).toBe(true);
      expect(await text(ws, 'k.txt')).toBe('one\r\nTWO\r\n');
    });

    it('applies a *** Begin Patch envelope — update, add, delete, move — as one change with history and undo', async () => {
      await open({ 'src/app.py': 'def run():\n    x = 1\n    return x\n', 'old.txt': 'bye\n', 'a.txt': 'keep\ndrop\n' });
      const patch = [
        '```',
        '*** Begin Patch',
        '*** Update File: src/app.py',
        '@@ def run():',
        '     x = 1',
        '-    return x',
        '+    return x + 1',
        '*** Add File: docs/new.md',
        '+# New',
        '*** Delete File: old.txt',
        '*** Update File: a.txt',
        '*** Move to: b.txt',
        ' keep',
        '-drop',
        '*** End Patch',
        '```',
        '',
      ].join('\n');
      const r = await ctx.applyPatch(patch, { message: 'envelope' });
      expect(r.success, r.message).toBe(true);
      expect(r.files.map((f) => [f.path, f.op])).toEqual([
        ['src/app.py', 'patch'],
        ['docs/new.md', 'create'],
        ['old.txt', 'delete'],
        // A move is one file of the change, as renameFile reports it: a rename in history both ways.
        ['b.txt', 'rename'],
      ]);
      expect((await ctx.history('a.txt'))[0]).toMatchObject({ op: 'rename', relatedPath: 'b.txt' });
      expect(await text(ws, 'src/app.py')).toBe('def run():\n    x = 1\n    return x + 1\n');
      expect(await text(ws, 'docs/new.md')).toBe('# New\n');
      expect(await ws.fs.exists('old.txt')).toBe(false);
      expect(await ws.fs.exists('a.txt')).toBe(false);
      expect(await text(ws, 'b.txt')).toBe('keep\n');
      const changeId = (await ctx.history('src/app.py'))[0]?.changeId;
      expect((await ctx.history('b.txt'))[0]).toMatchObject({ changeId, message: 'envelope' });
      expect((await ctx.undo('old.txt')).success).toBe(true);
      expect(await text(ws, 'old.txt')).toBe('bye\n');
    });

    it('applies an envelope all or nothing, and refuses ambiguity naming the lines', async () => {
      await open({ 'a.txt': LINES, 'b.txt': 'x\ny\nx\ny\n' });
      const r = await ctx.applyPatch(
        '*** Begin Patch\n*** Update File: a.txt\n@@\n-line 4\n+four\n*** Update File: b.txt\n@@\n x\n-y\n+Y\n*** Add File: c.txt\n+c\n*** End Patch\n',
      );
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.message).toContain('1 of 3 files refused');
      expect(r.message).toContain('matches the file in 2 places (lines 1, 3)');
      expect(r.conflict?.hunks?.[0]?.matches).toEqual([1, 3]);
      expect(await text(ws, 'a.txt')).toBe(LINES);
      expect(await ws.fs.exists('c.txt')).toBe(false);
    });

    it('merges an envelope made from a stale read, through the same stale checks as a diff', async () => {
      await open({ 'a.txt': LINES });
      await ctx.readFile('a.txt');
      await ctx.session({ agent: 'llm:b' }).replace('a.txt', 'line 2\n', 'line two\n');
      const r = await ctx.applyPatch('*** Begin Patch\n*** Update File: a.txt\n@@\n line 17\n-line 18\n+line eighteen\n line 19\n*** End Patch\n');
      expect(r).toMatchObject({ success: true, merged: true });
      expect(await text(ws, 'a.txt')).toBe(LINES.replace('line 2\n', 'line two\n').replace('line 18\n', 'line eighteen\n'));
      const exists = await ctx.applyPatch('*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n');
      expect(exists).toMatchObject({ success: false, code: 'EEXIST' });
      const missing = await ctx.applyPatch('*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n');
      expect(missing).toMatchObject({ success: false, code: 'ENOENT' });
    });
  });
}
