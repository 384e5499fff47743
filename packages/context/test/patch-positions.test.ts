import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { gitApplied, unified } from './support/git-apply-patch.ts';
import { testState } from './support/test-state.ts';

const TWO_LINES = 'a\nb\n';

for (const backend of BACKENDS) {
  describe(`hunk positions at and past the end of the file over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    const open = async (files: Record<string, string>) => {
      ws = await backend.create(files);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    };
    const text = async (p: string) => new TextDecoder().decode(await ws.fs.readBytes(p));
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });

    // git clamps a hunk's line to the file's length (apply.c, find_pos), so an insertion
    // claiming a line past the end goes at the end: ctxfs takes it as git does. Plain
    // `git apply` agrees at the end (a hunk without trailing context must match there),
    // and refuses an insertion without leading context that is not at the start.
    it.each([
      ['past the end', '@@ -10,0 +11 @@\n+X\n', 'a\nb\nX\n', 'a\nb\nX\n'],
      ['one past the last line', '@@ -3,0 +4 @@\n+X\n', 'a\nb\nX\n', 'a\nb\nX\n'],
      ['after the last line', '@@ -2,0 +3 @@\n+X\n', 'a\nb\nX\n', 'a\nb\nX\n'],
      ['after line 1', '@@ -1,0 +2 @@\n+X\n', 'a\nX\nb\n', undefined],
      ['before line 1', '@@ -0,0 +1 @@\n+X\n', 'X\na\nb\n', undefined],
    ])('places an insertion without context %s where git apply --unidiff-zero does', async (_, hunks, want, plain) => {
      await open({ 'a.txt': TWO_LINES });
      const patch = unified(hunks);
      expect(gitApplied(TWO_LINES, patch, true)).toBe(want);
      expect(gitApplied(TWO_LINES, patch, false)).toBe(plain);
      const r = await ctx.applyPatch(patch);
      expect(r.success, r.message).toBe(true);
      expect(await text('a.txt')).toBe(want);
    });

    it.each([
      ['context', '@@ -10,1 +10,2 @@\n b\n+X\n', 'a\nb\nX\n'],
      ['a removed line', '@@ -10 +10 @@\n-b\n+B\n', 'a\nB\n'],
      ['the whole file as context', '@@ -10,2 +10,3 @@\n a\n b\n+X\n', 'a\nb\nX\n'],
    ])('locates a hunk with %s by its content wherever its header points, as git apply does', async (_, hunks, want) => {
      await open({ 'a.txt': TWO_LINES });
      const patch = unified(hunks);
      expect(gitApplied(TWO_LINES, patch, false)).toBe(want);
      const r = await ctx.applyPatch(patch);
      expect(r.success, r.message).toBe(true);
      expect(await text('a.txt')).toBe(want);
    });

    it('reads a unified header inside a `*** Begin Patch` envelope with its numbers, past the end included', async () => {
      await open({ 'a.txt': TWO_LINES });
      const r = await ctx.applyPatch('*** Begin Patch\n*** Update File: a.txt\n@@ -10,0 +11 @@\n+X\n*** End Patch\n');
      expect(r.success, r.message).toBe(true);
      expect(await text('a.txt')).toBe(gitApplied(TWO_LINES, unified('@@ -10,0 +11 @@\n+X\n'), true));
    });

    it('writes nothing when a hunk of a multi-file patch pointing past the end of its file matches nowhere', async () => {
      await open({ 'a.txt': TWO_LINES, 'b.txt': 'p\nq\n' });
      const patch = `${unified('@@ -10,0 +11 @@\n+X\n')}--- a/b.txt\n+++ b/b.txt\n@@ -10,1 +10,2 @@\n zzz\n+Y\n`;
      expect(gitApplied(TWO_LINES, patch, true)).toBeUndefined();
      const r = await ctx.applyPatch(patch);
      expect(r.success).toBe(false);
      expect(r.code).toBe('ECONFLICT');
      expect(r.message).toContain('b.txt');
      expect(await text('a.txt')).toBe(TWO_LINES);
      expect(await text('b.txt')).toBe('p\nq\n');
    });
  });
}
