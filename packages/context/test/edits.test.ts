import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, type EditSettings } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
const text = async (ws: Workspace, p: string) => new TextDecoder().decode(await ws.fs.readBytes(p));
const LINES = `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

for (const backend of BACKENDS) {
  describe(`edits over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    const open = async (files: Record<string, string>, edits?: EditSettings) => {
      ws = await backend.create(files);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', edits });
      return ctx;
    };
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });

    it('writeFile creates and overwrites, with one result shape, diff and versions', async () => {
      await open({ 'a.txt': 'one\ntwo\n' });
      const created = await ctx.writeFile('dir/new.txt', 'hello\n', { message: 'add' });
      expect(created).toMatchObject({ success: true, op: 'write', path: 'dir/new.txt', linesAdded: 1, linesRemoved: 0, linesChanged: 1, merged: false });
      expect(created.version).toBe(sha('hello\n'));
      expect(created.diff).toContain('--- /dev/null\n+++ b/dir/new.txt\n@@ -0,0 +1 @@\n+hello\n');
      await ctx.readFile('a.txt');
      const w = await ctx.writeFile('a.txt', 'one\nTWO\n', { author: 'user', message: 'caps' });
      expect(w.success).toBe(true);
      expect(w.diff).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n');
      expect(w.seq).toBe(2);
      expect(await text(ws, 'a.txt')).toBe('one\nTWO\n');
      const hist = await ctx.history('a.txt');
      expect(hist.map((v) => [v.seq, v.op, v.author, v.message])).toEqual([
        [2, 'write', 'user', 'caps'],
        [1, 'initial', 'initial', undefined],
      ]);
      expect(ctx.registry.get('a.txt')?.sha256).toBe(sha('one\nTWO\n'));
      expect((await ctx.sessionContext.lastRead('llm:a', 'a.txt'))?.sha256).toBe(sha('one\nTWO\n'));
      const same = await ctx.writeFile('a.txt', 'one\nTWO\n');
      expect(same).toMatchObject({ success: true, unchanged: true, diff: '' });
      expect(await ctx.history('a.txt')).toHaveLength(2);
    });

    it('merges a stale edit that does not overlap, and says so', async () => {
      await open({ 'a.txt': LINES });
      const b = ctx.session({ agent: 'llm:b' });
      await ctx.readFile('a.txt');
      await b.readFile('a.txt');
      const first = await b.replace('a.txt', 'line 2\n', 'line two\n');
      expect(first.success).toBe(true);
      expect(first.staleReaders.map((r) => r.agent)).toEqual(['llm:a']);
      const second = await ctx.editLines('a.txt', { kind: 'replace', start: 18, end: 18, text: 'line eighteen' });
      expect(second).toMatchObject({ success: true, merged: true });
      expect(second.message).toMatch(/merged/);
      const now = await text(ws, 'a.txt');
      expect(now).toContain('line two\n');
      expect(now).toContain('line eighteen\n');
      expect(now.split('\n')).toHaveLength(21);
    });

    it('refuses new text holding half of a UTF-16 pair (a new file, a replace, a line edit), writing nothing', async () => {
      await open({ 'a.txt': 'one\ntwo\n' });
      const created = await ctx.writeFile('b.txt', 'x \ud83d\n');
      expect(created).toMatchObject({ success: false, code: 'EINVAL' });
      expect(created.message).toMatch(/U\+D83D \(line 1\), half of a character's UTF-16 pair/);
      expect(await ws.fs.exists('b.txt')).toBe(false);
      await ctx.readFile('a.txt');
      const replaced = await ctx.replace('a.txt', 'two', 'tw\udc00o');
      expect(replaced).toMatchObject({ success: false, code: 'EINVAL' });
      const edited = await ctx.editLines('a.txt', { kind: 'insert-before', line: 2, text: '\ud83d' });
      expect(edited).toMatchObject({ success: false, code: 'EINVAL' });
      expect(edited.message).toMatch(/line 2/);
      expect(await text(ws, 'a.txt')).toBe('one\ntwo\n');
      // A whole pair is a character like any other.
      expect(await ctx.replace('a.txt', 'two', 'two \ud83d\ude00')).toMatchObject({ success: true });
      expect(await text(ws, 'a.txt')).toBe('one\ntwo 😀\n');
    });

    it("names other agents a change made stale, not the editing agent's own other sessions (which stay in staleReaders)", async () => {
      await open({ 'a.txt': LINES });
      // As at a terminal: each command its own session of one agent.
      const earlier = ctx.session({ agent: 'cli' });
      const now = ctx.session({ agent: 'cli' });
      await earlier.readFile('a.txt');
      const own = await now.replace('a.txt', 'line 2\n', 'line two\n');
      expect(own.success).toBe(true);
      expect(own.staleReaders.map((r) => r.sessionId)).toEqual([earlier.sessionContext.id]);
      expect(own.message).not.toMatch(/stale/);
      await ctx.readFile('a.txt');
      const both = await now.replace('a.txt', 'line 3\n', 'line three\n');
      expect(both.staleReaders.map((r) => r.agent).sort()).toEqual(['cli', 'llm:a']);
      expect(both.message).toMatch(/Now stale for: llm:a\.$/m);
    });

    it('after a merged edit, the next edit from the same stale view is merged again, not misplaced', async () => {
      await open({ 'a.txt': LINES });
      const b = ctx.session({ agent: 'llm:b' });
      await ctx.readFile('a.txt');
      await b.readFile('a.txt');
      expect((await b.editLines('a.txt', { kind: 'insert-before', line: 1, text: 'b1\nb2\nb3\n' })).success).toBe(true);
      // A still counts lines as it read them: line 10 is "line 10".
      const first = await ctx.editLines('a.txt', { kind: 'replace', start: 10, end: 10, text: 'TEN' });
      expect(first.merged).toBe(true);
      const second = await ctx.editLines('a.txt', { kind: 'replace', start: 12, end: 12, text: 'TWELVE' });
      expect(second).toMatchObject({ success: true, merged: true });
      const now = (await text(ws, 'a.txt')).split('\n');
      expect(now.slice(0, 3)).toEqual(['b1', 'b2', 'b3']);
      expect(now[12]).toBe('TEN');
      expect(now[14]).toBe('TWELVE');
      expect(now.filter((l) => l === 'line 12')).toEqual([]);
    });

    it('names only who changed the file after the read, even when the version read was never recorded', async () => {
      await open({ 'a.txt': LINES });
      await ctx.editLines('a.txt', { kind: 'replace', start: 1, end: 1, text: 'mine' });
      // Changed outside ctxfs twice: the agent reads the first of those, which no version records.
      await ws.fs.writeBytes('a.txt', new TextEncoder().encode((await text(ws, 'a.txt')).replace('line 5\n', 'outside 5\n')));
      await ctx.readFile('a.txt');
      await ws.fs.writeBytes('a.txt', new TextEncoder().encode((await text(ws, 'a.txt')).replace('outside 5\n', 'again 5\n')));
      const r = await ctx.editLines('a.txt', { kind: 'replace', start: 5, end: 5, text: 'A5' });
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.conflict?.changedBy).toEqual(['external']);
      expect(r.message).not.toMatch(/by [^.]*(initial|default)/);
      // The history's word for it is not a name: "changed since you read it by external" read as one.
      expect(r.message).toContain('a.txt changed since you read it by someone outside ctxfs,');
    });

    it('refuses overlapping stale edits with line ranges and the next call', async () => {
      await open({ 'a.txt': LINES });
      const b = ctx.session({ agent: 'llm:b' });
      await ctx.readFile('a.txt');
      await b.readFile('a.txt');
      expect((await b.editLines('a.txt', { kind: 'replace', start: 5, end: 6, text: 'B5\nB6\n' })).success).toBe(true);
      const before = await text(ws, 'a.txt');
      const r = await ctx.editLines('a.txt', { kind: 'replace', start: 6, end: 6, text: 'A6' }, { markers: true });
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.conflict?.type).toBe('overlapping_edits');
      expect(r.conflict?.changedBy).toEqual(['llm:b']);
      expect(r.conflict?.lines[0]).toEqual({ start: 5, end: 6 });
      expect(r.conflict?.regions[0]?.currentLines).toEqual(['B5', 'B6']);
      expect(r.conflict?.markedText).toContain('<<<<<<< yours');
      expect(r.message).toContain('lines 5-6');
      expect(r.next).toBe('readLines("a.txt", 5, 6)');
      expect(await text(ws, 'a.txt')).toBe(before);
      // After re-reading, the same edit applies.
      await ctx.readLines('a.txt', 5, 6);
      expect((await ctx.editLines('a.txt', { kind: 'replace', start: 6, end: 6, text: 'A6' })).success).toBe(true);
    });

    it('a version read again is not asked of the store again; a prune keeps what was read', async () => {
      await open({ 'a.txt': LINES });
      const asked: string[] = [];
      const get = ctx.store.get.bind(ctx.store);
      ctx.store.get = ((sql: string, params?: readonly unknown[]) => {
        if (sql.includes('FROM blobs WHERE sha256')) asked.push(sql);
        return get(sql, params as never);
      }) as typeof ctx.store.get;
      await ctx.readFile('a.txt');
      expect(asked.length).toBeGreaterThan(0);
      asked.length = 0;
      for (let i = 0; i < 4; i++) await ctx.readFile('a.txt');
      expect(asked).toEqual([]);
      // No version refers to a read's base, but the read does: a prune keeps it (before, it removed it,
      // and a prune with room to spare turned the agent's next stale edit into a refusal).
      await ctx.pruneHistory({ maxVersionsPerFile: 1 });
      expect(await ctx.versions.hasBlob(sha(LINES))).toBe(true);
      await ctx.readFile('a.txt');
      expect(await ctx.versions.hasBlob(sha(LINES))).toBe(true);
      // So a stale edit of that read is still merged.
      await ws.external('a.txt', LINES.replace('line 1\n', 'LINE 1\n'));
      expect(await ctx.replace('a.txt', 'line 20', 'line twenty')).toMatchObject({ success: true, merged: true });
    });

    it("strategy 'refuse' reports a stale buffer; an unstored base cannot be merged", async () => {
      await open({ 'a.txt': LINES }, { strategy: 'refuse', rememberReadsUpTo: 0 });
      await ctx.readFile('a.txt');
      await ws.external('a.txt', LINES.replace('line 1\n', 'LINE 1\n'));
      const r = await ctx.replace('a.txt', 'line 20', 'line twenty');
      expect(r.success).toBe(false);
      expect(r.conflict?.type).toBe('stale_buffer');
      expect(r.message).toMatch(/not stored/);
      expect(r.next).toBe('readFile("a.txt")');
      // History never saw the version that was read: the edited file is its first version.
      const hist = await ctx.history('a.txt');
      expect(hist.map((v) => v.op)).toEqual(['initial']);
    });

    it('user_approval and review callbacks get base, both sides and diffs', async () => {
      const seen: string[] = [];
      await open(
        { 'a.txt': 'a\nb\nc\n' },
        {
          strategy: 'user_approval',
          approve: (req) => {
            seen.push(req.base, req.theirs, req.ours, req.theirsDiff, req.oursDiff);
            return { content: 'decided\n' };
          },
        },
      );
      const b = ctx.session({ agent: 'llm:b' });
      await ctx.readFile('a.txt');
      await b.writeFile('a.txt', 'a\nB\nc\n');
      const r = await ctx.writeFile('a.txt', 'A\nb\nc\n');
      expect(r).toMatchObject({ success: true, merged: true });
      expect(seen.slice(0, 3)).toEqual(['a\nb\nc\n', 'a\nB\nc\n', 'A\nb\nc\n']);
      expect(seen[3]).toContain('+B');
      expect(await text(ws, 'a.txt')).toBe('decided\n');
      const rev = await ctx.writeFile('a.txt', 'x\n', { baseVersion: sha('a\nB\nc\n'), strategy: 'review', review: () => undefined });
      expect(rev.success).toBe(false);
      expect(rev.message).toMatch(/declined/);
      const noCb = await ctx.writeFile('a.txt', 'x\n', { baseVersion: sha('a\nB\nc\n'), strategy: 'review' });
      expect(noCb.message).toMatch(/needs a review callback/);
    });

    it('checkConflicts reports a stale read without editing', async () => {
      await open({ 'a.txt': LINES });
      expect(await ctx.checkConflicts('a.txt')).toBeUndefined();
      await ctx.readFile('a.txt');
      expect(await ctx.checkConflicts('a.txt')).toBeUndefined();
      await ctx.session({ agent: 'llm:b' }).replace('a.txt', 'line 7\n', 'SEVEN\n');
      const c = await ctx.checkConflicts('a.txt');
      expect(c).toMatchObject({ type: 'stale_buffer', changedBy: ['llm:b'], lines: [{ start: 7, end: 7 }] });
      expect(c?.theirsDiff).toContain('-line 7\n+SEVEN\n');
    });

    it('a content-located edit whose text is only in the current file applies there', async () => {
      await open({ 'a.txt': LINES });
      await ctx.readFile('a.txt');
      await ctx.session({ agent: 'llm:b' }).replace('a.txt', 'line 7\n', 'SEVEN\n');
      // The stale reader names text it could only know from a newer view: found in the file as it is.
      const r = await ctx.replace('a.txt', 'SEVEN', 'seven');
      expect(r).toMatchObject({ success: true, merged: false });
      const p = await ctx.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ @@\n seven\n-line 8\n+eight\n');
      expect(p.success).toBe(true);
      // A line edit has no text to locate by: from the stale read it merges (line 9 as read).
      expect((await ctx.editLines('a.txt', { kind: 'delete', start: 9, end: 9 })).success).toBe(true);
      expect((await text(ws, 'a.txt')).split('\n').slice(6, 9)).toEqual(['seven', 'eight', 'line 10']);
    });

    it('an edited file that was indexed for imports is re-indexed', async () => {
      await open({
        'src/a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
        'src/b.ts': 'export const b = 1;\n',
        'src/c.ts': 'export const c = 2;\n',
      });
      await ctx.scan();
      await ctx.indexRelations();
      expect((await ctx.relations.importers('src/b.ts')).map((r) => r.source)).toEqual(['src/a.ts']);
      await ctx.replace('src/a.ts', "./b.ts'", "./c.ts'");
      expect(await ctx.relations.importers('src/b.ts')).toEqual([]);
      expect((await ctx.relations.importers('src/c.ts')).map((r) => r.source)).toEqual(['src/a.ts']);
      await ctx.deleteFile('src/a.ts');
      expect(await ctx.relations.importers('src/c.ts')).toEqual([]);
    });

    it('explicit baseVersion: full hash, prefix, unknown and malformed', async () => {
      await open({ 'a.txt': 'x\n' });
      const v = sha('x\n');
      expect((await ctx.writeFile('a.txt', 'y\n', { baseVersion: v.slice(0, 8) })).success).toBe(true);
      const stale = await ctx.writeFile('a.txt', 'z\n', { baseVersion: v, strategy: 'refuse' });
      expect(stale).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect((await ctx.writeFile('a.txt', 'z\n', { baseVersion: 'abcdef123' })).code).toBe('ECONFLICT');
      expect((await ctx.writeFile('a.txt', 'z\n', { baseVersion: 'v5' })).code).toBe('EINVAL');
      // Deleted since the version named: writing would bring it back over that deletion.
      await ws.fs.delete('a.txt');
      const gone = await ctx.writeFile('a.txt', 'z\n', { baseVersion: sha('y\n') });
      expect(gone).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(gone.message).toContain(`a.txt was deleted since version ${sha('y\n').slice(0, 12)}`);
      expect(await ws.fs.exists('a.txt')).toBe(false);
      expect((await ctx.writeFile('a.txt', 'z\n', { baseVersion: 'v5' })).code).toBe('EINVAL');
      expect((await ctx.writeFile('a.txt', 'z\n')).success).toBe(true);
    });

    it("a refusal the filesystem gives names the path in the text a model reads, not only in the result's path", async () => {
      await open({ 'd/x.txt': 'x\n', f: 'f\n' });
      const dir = await ctx.deleteFile('d');
      expect(dir).toMatchObject({ success: false, code: 'EISDIR', path: 'd' });
      expect(dir.message).toMatch(/^d: is a directory/);
      const patch = await ctx.applyPatch('--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+x\n');
      expect(patch).toMatchObject({ success: false, code: 'EISDIR' });
      expect(patch.message).toMatch(/^d: is a directory/);
    });

    it('replace: unique by default, first, all, nth, regex, and its refusals', async () => {
      await open({ 'r.txt': 'foo bar foo\nfoo\n' });
      const dup = await ctx.replace('r.txt', 'foo', 'X');
      expect(dup).toMatchObject({ success: false, code: 'EINVAL' });
      expect(dup.message).toMatch(/3 times \(at 1:1, 1:9, 2:1\)/);
      expect((await ctx.replace('r.txt', 'foo', 'F', { occurrence: 2 })).success).toBe(true);
      expect(await text(ws, 'r.txt')).toBe('foo bar F\nfoo\n');
      expect((await ctx.replace('r.txt', 'foo', 'G', { occurrence: 'first' })).success).toBe(true);
      expect((await ctx.replace('r.txt', '(\\w)oo', '$1$1', { regex: true, occurrence: 'all' })).success).toBe(true);
      expect(await text(ws, 'r.txt')).toBe('G bar F\nff\n');
      expect((await ctx.replace('r.txt', 'nope', 'x')).code).toBe('ENOENT');
      // Plain text with regex-looking characters is matched literally.
      await ctx.writeFile('r2.txt', 'a-b/c (d) [e] $1\n');
      expect((await ctx.replace('r2.txt', 'a-b/c (d) [e] $1', 'ok')).success).toBe(true);
      expect(await text(ws, 'r2.txt')).toBe('ok\n');
      expect((await ctx.replace('r.txt', 'F', 'x', { occurrence: 4 })).code).toBe('EINVAL');
      expect((await ctx.replace('r.txt', '(', 'x', { regex: true })).code).toBe('EBADPATTERN');
      expect((await ctx.replace('missing.txt', 'a', 'b')).code).toBe('ENOENT');
      expect((await ctx.replace('../out.txt', 'a', 'b')).code).toBe('EPATHESCAPE');
    });

    it("a path that does not resolve is named in the refusal: which of a rename's two paths is wrong", async () => {
      await open({ 'a.txt': 'a\n' });
      const to = await ctx.renameFile('a.txt', '../x.txt');
      expect(to).toMatchObject({ success: false, code: 'EPATHESCAPE' });
      expect(to.message).toMatch(/^\.\.\/x\.txt: path climbs above the workspace root; /);
      const from = await ctx.renameFile('../a.txt', 'b.txt');
      expect(from.message).toMatch(/^\.\.\/a\.txt: path climbs above the workspace root; /);
      expect((await ctx.createFile('../evil', 'x')).message).toMatch(/^\.\.\/evil: /);
      expect(await text(ws, 'a.txt')).toBe('a\n');
    });

    it('line edits: replace, insert before/after, delete, out of range', async () => {
      await open({ 'l.txt': 'a\nb\nc\n' });
      expect((await ctx.editLines('l.txt', { kind: 'insert-before', line: 1, text: '0\n' })).success).toBe(true);
      expect((await ctx.editLines('l.txt', { kind: 'insert-after', line: 4, text: 'd' })).success).toBe(true);
      const del = await ctx.editLines('l.txt', { kind: 'delete', start: 2, end: 3 });
      expect(del).toMatchObject({ success: true, linesRemoved: 2, linesAdded: 0 });
      expect(await text(ws, 'l.txt')).toBe('0\nc\nd\n');
      const bad = await ctx.editLines('l.txt', { kind: 'replace', start: 3, end: 9, text: 'x' });
      expect(bad).toMatchObject({ success: false, code: 'EINVAL' });
      expect(bad.message).toMatch(/past the end.*3 line/);
    });

    it('keeps CRLF, BOM, missing final newline and legacy encodings', async () => {
      await open({ 'crlf.txt': 'a\r\nb\r\nc', 'bom.txt': '\ufeffx\ny\n' });
      expect((await ctx.replace('crlf.txt', 'b', 'B')).success).toBe(true);
      expect(await text(ws, 'crlf.txt')).toBe('a\r\nB\r\nc');
      expect((await ctx.editLines('crlf.txt', { kind: 'insert-after', line: 1, text: 'new\n' })).success).toBe(true);
      expect(await text(ws, 'crlf.txt')).toBe('a\r\nnew\r\nB\r\nc');
      expect((await ctx.replace('bom.txt', 'y', 'Y')).success).toBe(true);
      expect(Array.from((await ws.fs.readBytes('bom.txt')).subarray(0, 3))).toEqual([0xef, 0xbb, 0xbf]);
      // The BOM is part of line 1's bytes in the diff, as git has it: git apply takes the diff onto the old bytes.
      const before = await ws.fs.readBytes('bom.txt');
      const first = await ctx.replace('bom.txt', 'x', 'X');
      expect(first.diff).toContain('\n-\ufeffx\n+\ufeffX\n');
      const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bom-diff-'));
      try {
        execFileSync('git', ['init', '-q', dir]);
        writeFileSync(join(dir, 'bom.txt'), before);
        writeFileSync(join(dir, 'p.diff'), first.diff);
        execFileSync('git', ['apply', 'p.diff'], { cwd: dir });
        expect(readFileSync(join(dir, 'bom.txt'))).toEqual(Buffer.from(await ws.fs.readBytes('bom.txt')));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      // windows-1252 bytes stay windows-1252.
      await ws.fs.writeBytes('latin.txt', Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
      expect((await ctx.replace('latin.txt', 'café', 'cafés')).success).toBe(true);
      expect(Array.from(await ws.fs.readBytes('latin.txt'))).toEqual([0x63, 0x61, 0x66, 0xe9, 0x73, 0x0a]);
      await ws.fs.writeBytes('bin.dat', Uint8Array.from([0, 1, 2, 3, 0, 0, 9]));
      expect((await ctx.replace('bin.dat', 'a', 'b')).code).toBe('EBINARY');
    });

    it('a replace across lines of a CRLF file matches the lines as served and keeps CRLF', async () => {
      // Lines are served without their endings, so a model writes "\n" between them.
      await open({ 'w.txt': 'line one\r\nline two\r\nline three\r\n', 'mixed.txt': 'a\nb\r\nc\n' });
      const r = await ctx.replace('w.txt', 'line two\nline three', 'line 2\nline 2.5\nline 3');
      expect(r.success, r.message).toBe(true);
      expect(await text(ws, 'w.txt')).toBe('line one\r\nline 2\r\nline 2.5\r\nline 3\r\n');
      // What the file holds as it is still matches first: a bare LF there stays a bare LF.
      expect((await ctx.replace('mixed.txt', 'a\nb', 'A\nB')).success).toBe(true);
      expect(await text(ws, 'mixed.txt')).toBe('A\nB\r\nc\n');
      expect((await ctx.replace('mixed.txt', 'B\nc', 'B\nC')).success).toBe(true);
      expect(await text(ws, 'mixed.txt')).toBe('A\nB\r\nC\n');
    });

    it('Unicode: edits next to emoji and CJK land where intended', async () => {
      await open({ 'u.txt': '👋🏽 こんにちは 世界\n🎉 end 🎉\n' });
      expect((await ctx.replace('u.txt', '世界', 'せかい')).success).toBe(true);
      const dup = await ctx.replace('u.txt', '🎉', '✨');
      expect(dup.message).toContain('at 2:1, 2:7');
      expect((await ctx.replace('u.txt', '🎉', '✨', { occurrence: 2 })).success).toBe(true);
      expect((await ctx.editLines('u.txt', { kind: 'insert-after', line: 1, text: '中文 🀄' })).success).toBe(true);
      expect(await text(ws, 'u.txt')).toBe('👋🏽 こんにちは せかい\n中文 🀄\n🎉 end ✨\n');
      const p = await ctx.applyPatch('--- a/u.txt\n+++ b/u.txt\n@@ @@\n 中文 🀄\n-🎉 end ✨\n+🎊 end ✨\n');
      expect(p.success).toBe(true);
      expect(await text(ws, 'u.txt')).toBe('👋🏽 こんにちは せかい\n中文 🀄\n🎊 end ✨\n');
    });

    it('create, delete and rename are versions; undo brings a deleted file back', async () => {
      await open({ 'a.txt': 'A\n' });
      expect((await ctx.createFile('a.txt', 'x')).code).toBe('EEXIST');
      expect((await ctx.createFile('b.txt', 'B\n')).success).toBe(true);
      const del = await ctx.deleteFile('a.txt');
      expect(del).toMatchObject({ success: true, version: undefined, linesRemoved: 1 });
      expect(await ws.fs.exists('a.txt')).toBe(false);
      expect(ctx.registry.get('a.txt')).toBeUndefined();
      const missing = await ctx.deleteFile('a.txt');
      expect(missing.code).toBe('ENOENT');
      // No advice to create what is being deleted.
      expect(missing.message).toBe('a.txt does not exist. Check the path (glob("**/a.txt") finds it by name).');
      const un = await ctx.undo('a.txt');
      expect(un.success).toBe(true);
      expect(await text(ws, 'a.txt')).toBe('A\n');
      const ren = await ctx.renameFile('b.txt', 'sub/c.txt');
      expect(ren).toMatchObject({ success: true, path: 'sub/c.txt' });
      expect(ren.diff).toContain('rename from b.txt\nrename to sub/c.txt');
      expect(await ws.fs.exists('b.txt')).toBe(false);
      expect(await text(ws, 'sub/c.txt')).toBe('B\n');
      expect((await ctx.history('sub/c.txt'))[0]).toMatchObject({ op: 'rename', relatedPath: 'b.txt' });
      expect((await ctx.history('b.txt'))[0]).toMatchObject({ op: 'rename', sha256: undefined });
      expect((await ctx.renameFile('sub/c.txt', 'a.txt')).code).toBe('EEXIST');
      // Undone: the name back, from either path.
      expect((await ctx.undo('sub/c.txt')).success).toBe(true);
      expect([await text(ws, 'b.txt'), await ws.fs.exists('sub/c.txt')]).toEqual(['B\n', false]);
      expect((await ctx.renameFile('b.txt', 'a.txt', { overwrite: true })).success).toBe(true);
      expect(await text(ws, 'a.txt')).toBe('B\n');
    });

    it('a rename onto a name ending in "/" gives the call that moves the file into that directory', async () => {
      await open({ 'a.ts': 'A\n', 'src/b.ts': 'B\n' });
      const into = await ctx.renameFile('a.ts', 'src/');
      expect(into).toMatchObject({ success: false, code: 'EISDIR', path: 'src/' });
      // Not "remove the slash": src is a directory, and a rename onto it fails again.
      expect(into.message).toContain('renameFile("a.ts", "src/a.ts")');
      expect(into.message).not.toContain('remove the trailing slash');
      expect(await ws.fs.exists('a.ts')).toBe(true);
      const follow = await ctx.renameFile('a.ts', 'src/a.ts');
      expect(follow.success).toBe(true);
      expect(await text(ws, 'src/a.ts')).toBe('A\n');
      // Into a directory that does not exist yet, and from a nested source: the base name goes on.
      expect((await ctx.renameFile('src/b.ts', 'lib//')).message).toContain('renameFile("src/b.ts", "lib/b.ts")');
    });

    it('a stale delete is refused', async () => {
      await open({ 'a.txt': 'A\n' });
      await ctx.readFile('a.txt');
      await ctx.session({ agent: 'llm:b' }).writeFile('a.txt', 'B\n');
      const r = await ctx.deleteFile('a.txt');
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.conflict?.type).toBe('stale_buffer');
      expect(await ws.fs.exists('a.txt')).toBe(true);
    });

    it('applyPatch: multi-file, new and deleted files, all or nothing', async () => {
      await open({ 'a.txt': LINES, 'b.txt': 'b1\nb2\n', 'gone.txt': 'bye\n' });
      const ok = await ctx.applyPatch(
        [
          '--- a/a.txt',
          '+++ b/a.txt',
          '@@ -3,3 +3,3 @@',
          ' line 3',
          '-line 4',
          '+line four',
          ' line 5',
          '--- /dev/null',
          '+++ b/new/file.txt',
          '@@ -0,0 +1,2 @@',
          '+n1',
          '+n2',
          '--- a/gone.txt',
          '+++ /dev/null',
          '@@ -1 +0,0 @@',
          '-bye',
          '',
        ].join('\n'),
        { message: 'three files' },
      );
      expect(ok.success).toBe(true);
      expect(ok.files.map((f) => [f.path, f.op])).toEqual([
        ['a.txt', 'patch'],
        ['new/file.txt', 'create'],
        ['gone.txt', 'delete'],
      ]);
      expect(await text(ws, 'new/file.txt')).toBe('n1\nn2\n');
      expect(await ws.fs.exists('gone.txt')).toBe(false);
      const hist = await ctx.history('a.txt');
      expect(hist[0]?.changeId).toBe((await ctx.history('new/file.txt'))[0]?.changeId);

      const before = { a: await text(ws, 'a.txt'), b: await text(ws, 'b.txt') };
      const bad = await ctx.applyPatch(
        '--- a/b.txt\n+++ b/b.txt\n@@ @@\n-b1\n+B1\n--- a/a.txt\n+++ b/a.txt\n@@ -10,3 +10,3 @@\n line 10\n-line 11 WRONG\n+x\n line 12\n',
      );
      expect(bad).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(bad.message).toMatch(/1 of 2 files refused/);
      expect(bad.message).toMatch(/Closest region: lines 10-12 \(2 of 3 lines match\)/);
      expect(bad.conflict?.type).toBe('patch_mismatch');
      expect(bad.conflict?.lines[0]).toEqual({ start: 10, end: 12 });
      expect({ a: await text(ws, 'a.txt'), b: await text(ws, 'b.txt') }).toEqual(before);

      const amb = await ctx.applyPatch('@@ @@\n-b1\n+B\n', { path: 'b.txt' });
      expect(amb.success).toBe(true);
      expect((await ctx.applyPatch('@@ @@\n-x\n+y\n')).message).toMatch(/no file headers/);
      expect((await ctx.applyPatch('not a patch')).code).toBe('EINVAL');
      expect((await ctx.applyPatch('--- a/missing.txt\n+++ b/missing.txt\n@@ @@\n-a\n+b\n')).code).toBe('ENOENT');
      expect((await ctx.applyPatch('--- /dev/null\n+++ b/b.txt\n@@ @@\n+x\n')).code).toBe('EEXIST');
    });

    it('a write that fails midway puts the earlier files back and records nothing', async () => {
      await open({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const real = ws.fs;
      const failing = new Proxy(real, {
        get(target, prop, receiver) {
          if (prop === 'writeBytes') {
            return async (p: string, data: Uint8Array, o?: object) => {
              if (p === 'b.txt') throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
              return target.writeBytes(p, data, o);
            };
          }
          const v = Reflect.get(target, prop, receiver);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const c2 = await createContext({ fs: failing, store: ctx.store });
      const r = await c2.applyPatch('--- a/a.txt\n+++ b/a.txt\n@@ @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ @@\n-b\n+B\n');
      expect(r.success).toBe(false);
      expect(r.message).toMatch(/could not be written.*put back/s);
      expect(await text(ws, 'a.txt')).toBe('a\n');
      expect(await text(ws, 'b.txt')).toBe('b\n');
      expect(await c2.journal.pending()).toEqual([]);
      expect((await c2.history('a.txt')).map((v) => v.op)).toEqual(['initial']);
    });

    it('history, getVersion, getDiff with current/disk, rollback and repeated undo', async () => {
      await open({ 'h.txt': 'v1\n' });
      await ctx.writeFile('h.txt', 'v2\n');
      await ctx.writeFile('h.txt', 'v3\n');
      expect((await ctx.getVersion('h.txt', 1)).text).toBe('v1\n');
      expect((await ctx.getVersion('h.txt', 'previous')).text).toBe('v2\n');
      expect((await ctx.getVersion('h.txt', sha('v2\n').slice(0, 10))).meta?.seq).toBe(2);
      expect((await ctx.getDiff('h.txt', 1, 'current')).diff).toContain('-v1\n+v3\n');
      await ws.external('h.txt', 'v4 external\n');
      const d = await ctx.getDiff('h.txt');
      expect(d.diff).toContain('-v3\n+v4 external\n');
      expect(d.from).toMatch(/^current/);
      const hist = await ctx.history('h.txt');
      expect(hist[0]).toMatchObject({ op: 'external', author: 'external', seq: 4 });
      const rb = await ctx.rollback('h.txt', 1);
      expect(rb).toMatchObject({ success: true, seq: 5 });
      expect(await text(ws, 'h.txt')).toBe('v1\n');
      expect((await ctx.undo('h.txt')).success).toBe(true);
      expect(await text(ws, 'h.txt')).toBe('v4 external\n');
      // The agent's next own change (#3) touches the line the external change (#4) rewrote: refused, nothing changed.
      expect((await ctx.undo('h.txt')).code).toBe('ECONFLICT');
      expect(await text(ws, 'h.txt')).toBe('v4 external\n');
      // Someone else's change is reverted only when named.
      expect((await ctx.undo('h.txt', { change: 4 })).success).toBe(true);
      expect(await text(ws, 'h.txt')).toBe('v3\n');
      expect((await ctx.undo('h.txt')).success).toBe(true);
      expect(await text(ws, 'h.txt')).toBe('v2\n');
      expect((await ctx.undo('h.txt')).success).toBe(true);
      expect(await text(ws, 'h.txt')).toBe('v1\n');
      expect((await ctx.undo('h.txt')).code).toBe('ENOENT');
      expect((await ctx.rollback('h.txt', 99)).code).toBe('ENOENT');
      await expect(ctx.getVersion('h.txt', 'nope')).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it("undo walks back through the agent's own changes, keeping an external change made between them", async () => {
      await open({ 'u.txt': LINES });
      await ctx.replace('u.txt', 'line 2\n', 'TWO\n'); // #2
      await ctx.replace('u.txt', 'line 19\n', 'NINETEEN\n'); // #3
      await ws.external('u.txt', (await text(ws, 'u.txt')).replace('line 10\n', 'TEN\n')); // #4, recorded as external
      const u1 = await ctx.undo('u.txt'); // reverts #3; the person's TEN stays
      expect(u1.success, u1.message).toBe(true);
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 2\n', 'TWO\n').replace('line 10\n', 'TEN\n'));
      const u2 = await ctx.undo('u.txt'); // reverts #2
      expect(u2.success, u2.message).toBe(true);
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 10\n', 'TEN\n'));
      const u3 = await ctx.undo('u.txt'); // nothing of the agent's is left; the person's change is named, not reverted
      expect(u3).toMatchObject({ success: false, code: 'ENOENT' });
      expect(u3.message).toContain('#4 (external)');
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 10\n', 'TEN\n'));
      expect((await ctx.history('u.txt')).filter((v) => v.op === 'undo').map((v) => v.undoOf)).toEqual([2, 3]);
    });

    it('undo of one earlier change keeps later ones, and refuses when they overlap', async () => {
      await open({ 'u.txt': LINES });
      await ctx.replace('u.txt', 'line 2\n', 'TWO\n'); // #2
      await ctx.replace('u.txt', 'line 19\n', 'NINETEEN\n'); // #3
      await ctx.replace('u.txt', 'line 3\n', 'THREE\n'); // #4, next to #2
      const r = await ctx.undo('u.txt', { change: 3 });
      expect(r).toMatchObject({ success: true });
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 2\n', 'TWO\n').replace('line 3\n', 'THREE\n'));
      const before = await text(ws, 'u.txt');
      const clash = await ctx.undo('u.txt', { change: 2 });
      expect(clash).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(clash.message).toMatch(/later changes touch the same lines \(current lines 2-3\)/);
      expect(clash.next).toBe('readLines("u.txt", 2, 3)');
      expect(await text(ws, 'u.txt')).toBe(before);
      expect((await ctx.undo('u.txt', { change: 1 })).code).toBe('ENOENT');
    });

    it('an undo that meets many overlapping later changes names the first ten places and how many more', async () => {
      const rows = Array.from({ length: 160 }, (_, i) => `row ${i + 1}`);
      await open({ 'm.txt': `${rows.join('\n')}\n` });
      // #2 changes every eighth row; #3 changes the same rows again, so undoing #2 conflicts at 20 separate places.
      await ctx.writeFile('m.txt', `${rows.map((r, i) => (i % 8 === 0 ? `${r} a` : r)).join('\n')}\n`);
      await ctx.writeFile('m.txt', `${rows.map((r, i) => (i % 8 === 0 ? `${r} b` : r)).join('\n')}\n`);
      const clash = await ctx.undo('m.txt', { change: 2 });
      expect(clash).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(clash.message).toContain('(current lines 1-1, 9-9, 17-17, 25-25, 33-33, 41-41, 49-49, 57-57, 65-65, 73-73 and 10 more)');
    });

    it('undo of an undo (by its change number) brings the change back: a redo, never a silent no-op', async () => {
      await open({ 'u.txt': LINES });
      await ctx.replace('u.txt', 'line 2\n', 'TWO\n'); // #2
      await ctx.replace('u.txt', 'line 19\n', 'NINETEEN\n'); // #3
      const undone = await ctx.undo('u.txt'); // #4 reverts #3
      expect(undone).toMatchObject({ success: true, seq: 4 });
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 2\n', 'TWO\n'));
      const redo = await ctx.undo('u.txt', { change: 4 });
      expect(redo, redo.message).toMatchObject({ success: true, linesAdded: 1, linesRemoved: 1 });
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 2\n', 'TWO\n').replace('line 19\n', 'NINETEEN\n'));
      // The plain undo after it takes back the redo, the newest change of this agent's.
      expect((await ctx.undo('u.txt')).success).toBe(true);
      expect(await text(ws, 'u.txt')).toBe(LINES.replace('line 2\n', 'TWO\n'));
    });

    it('retention keeps the newest versions by count and by bytes', async () => {
      await open({ 'r.txt': 'start\n' });
      for (let i = 0; i < 12; i++) await ctx.writeFile('r.txt', `${'x'.repeat(2000)}${i}\n`.repeat(5 + i));
      expect(await ctx.history('r.txt', 100)).toHaveLength(13);
      const byCount = await ctx.pruneHistory({ maxVersionsPerFile: 5 });
      expect(byCount.versionsRemoved).toBe(8);
      const left = await ctx.history('r.txt', 100);
      expect(left.map((v) => v.seq)).toEqual([13, 12, 11, 10, 9]);
      const byBytes = await ctx.pruneHistory({ maxBytes: 1 });
      expect(byBytes.versionsRemoved).toBe(4);
      expect((await ctx.history('r.txt', 100)).map((v) => v.seq)).toEqual([13]);
      expect((await ctx.getVersion('r.txt', 'current')).text).toBe(await text(ws, 'r.txt'));
      expect((await ctx.rollback('r.txt', 9)).code).toBe('ENOENT');
    });
  });
}

describe('a refused edit says what to read, in a call that works in a small profile', () => {
  // A file far over the small profile's budget, where readFile(path) serves no content.
  const big = Array.from({ length: 600 }, (_, i) => `export const value${i} = compute(${i}); // step ${i % 7 === 0 ? 'retry' : 'next'}\n`).join('');
  it.each(BACKENDS.map((b) => [b.name, b] as const))('%s', async (_name, backend) => {
    const ws = await backend.create({ 'src/values.ts': big });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    try {
      const small = ctx.session({ agent: 'llm:small', profile: 'small' });
      await small.readLines('src/values.ts', 1, 10);
      const ambiguous = await small.replace('src/values.ts', '// step retry', '// step again');
      expect(ambiguous.success).toBe(false);
      expect(ambiguous.next).toBe('readLines("src/values.ts", 1, 11)');
      const missing = await small.replace('src/values.ts', 'compute(9999)', 'x');
      // Not a grep of the text not found, which finds nothing: the longest start of it the file holds.
      expect(missing.next).toBe('grep("compute(99", {path: "src/values.ts", literal: true})');
      const outOfRange = await small.editLines('src/values.ts', { kind: 'replace', start: 700, end: 701, text: 'x' });
      expect(outOfRange.success).toBe(false);
      expect(outOfRange.next).toBe('readLines("src/values.ts", 581, 600)');
      // A range written backwards: the lines it named, not the end of the file.
      const backwards = await small.editLines('src/values.ts', { kind: 'replace', start: 50, end: 42, text: 'x' });
      expect(backwards.success).toBe(false);
      expect(backwards.next).toBe('readLines("src/values.ts", 42, 50)');
      expect((await small.readLines('src/values.ts', 42, 50)).view).toBe('lines');
      const around = await small.readLines('src/values.ts', 1, 11);
      expect(around.view).toBe('lines');
      expect(around.tokens).toBeLessThanOrEqual(1500);
      const found = await small.grep('compute(99', { path: 'src/values.ts', literal: true });
      expect(found.tokens).toBeLessThanOrEqual(1500);
      expect(found.counts.shown).toBeGreaterThan(0);
      expect(await ws.fs.read('src/values.ts').then((p) => p.lines.length)).toBe(600);
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});
