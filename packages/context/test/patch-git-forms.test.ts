import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { parsePatch } from '../src/patch/parse-patch.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

describe("git's quoted paths", () => {
  it('unquotes every escape git writes, octal escapes as UTF-8 bytes', () => {
    const [f] = parsePatch(
      'diff --git "a/x\\ty" "b/x\\ty"\n--- "a/q\\"\\\\\\a\\b\\f\\n\\r\\v\\t\\303\\251"\t2024-01-01\n+++ "b/q\\"\\\\\\a\\b\\f\\n\\r\\v\\t\\303\\251"\n@@ @@\n-a\n+b\n',
    );
    expect(f?.newPath).toBe('q"\\\x07\b\f\n\r\v\té');
    expect(f?.oldPath).toBe(f?.newPath);
  });

  it('unquotes the paths of rename and copy lines, and of a header with one side quoted', () => {
    const [r] = parsePatch(
      'diff --git a/a.txt "b/\\303\\274/\\303\\244.txt"\nsimilarity index 100%\nrename from a.txt\nrename to "\\303\\274/\\303\\244.txt"\n',
    );
    expect(r).toMatchObject({ oldPath: 'a.txt', newPath: 'ü/ä.txt' });
    const [h] = parsePatch('diff --git "a/\\303\\274.txt" b/u.txt\nsimilarity index 100%\n');
    expect(h).toMatchObject({ oldPath: 'ü.txt', newPath: 'u.txt' });
    const [c] = parsePatch('diff --git "a/\\303\\274.txt" b/u.txt\nsimilarity index 100%\ncopy from "\\303\\274.txt"\ncopy to u.txt\n');
    expect(c).toMatchObject({ oldPath: 'ü.txt', newPath: 'u.txt', isCopy: true });
  });
});

/** The tree `git apply` makes of `files` with `patch`: the oracle for what a patch means. */
function gitApplied(files: Record<string, string>, patch: string): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-git-apply-'));
  try {
    execFileSync('git', ['init', '-q', dir]);
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), c);
    }
    execFileSync('git', ['apply', '-'], { cwd: dir, input: patch, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Record<string, string> = {};
    const walk = (d: string, rel: string) => {
      for (const n of readdirSync(d)) {
        if (n === '.git') continue;
        const r = rel ? `${rel}/${n}` : n;
        if (statSync(join(d, n)).isDirectory()) walk(join(d, n), r);
        else out[r] = readFileSync(join(d, n), 'utf8');
      }
    };
    walk(dir, '');
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const backend of BACKENDS) {
  describe(`applyPatch on git's own forms over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    let given: Record<string, string>;
    const open = async (files: Record<string, string>) => {
      given = files;
      ws = await backend.create(files);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    };
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });
    /** The workspace's files among `paths` (those the test and git know of). */
    const tree = async (paths: Iterable<string>) => {
      const out: Record<string, string> = {};
      for (const p of new Set(paths)) {
        try {
          // A BOM is kept: it is part of what git writes.
          out[p] = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await ws.fs.readBytes(p));
        } catch {
          // absent
        }
      }
      return out;
    };
    const expectAsGit = async (patch: string) => {
      const want = gitApplied(given, patch);
      expect(await tree([...Object.keys(given), ...Object.keys(want)])).toEqual(want);
    };

    /** Applies `patch` to `files` and expects the tree git apply makes. */
    const appliesAsGit = async (files: Record<string, string>, patch: string) => {
      await open(files);
      const r = await ctx.applyPatch(patch);
      expect(r.success, r.message).toBe(true);
      await expectAsGit(patch);
    };

    it('applies a git copy as a new file and keeps the source, as git apply does', async () => {
      await open({ 'a.txt': 'one\ntwo\n' });
      const patch =
        'diff --git a/a.txt b/c.txt\nsimilarity index 50%\ncopy from a.txt\ncopy to c.txt\n--- a/a.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n';
      const r = await ctx.applyPatch(patch);
      expect(r.success, r.message).toBe(true);
      await expectAsGit(patch);
      const pure = 'diff --git a/a.txt b/d.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to d.txt\n';
      expect((await ctx.applyPatch(pure)).success).toBe(true);
      expect(await tree(['a.txt', 'c.txt', 'd.txt'])).toEqual({ 'a.txt': 'one\ntwo\n', 'c.txt': 'one\nTWO\n', 'd.txt': 'one\ntwo\n' });
    });

    it.each([
      [
        { 'k.txt': 'k\n' },
        'diff --git "a/donn\\303\\251es/\\303\\251.txt" "b/donn\\303\\251es/\\303\\251.txt"\nnew file mode 100644\nindex 0000000..587be6b\n--- /dev/null\n+++ "b/donn\\303\\251es/\\303\\251.txt"\n@@ -0,0 +1 @@\n+x\n',
      ],
      [
        { 'a.txt': 'a\nb\n' },
        'diff --git a/a.txt "b/\\303\\274/\\303\\244.txt"\nsimilarity index 100%\nrename from a.txt\nrename to "\\303\\274/\\303\\244.txt"\n',
      ],
      [
        { 'café.md': 'a\nb\n' },
        'diff --git "a/caf\\303\\251.md" "b/caf\\303\\251.md"\nindex 422c2b7..55dce13 100644\n--- "a/caf\\303\\251.md"\n+++ "b/caf\\303\\251.md"\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n',
      ],
    ])('takes git-quoted paths as git apply does (%o)', appliesAsGit);

    it('takes diff -ruN output (old/ and new/ trees, absent files dated the epoch) as patch -p1 does', async () => {
      await open({ 'src/a.txt': 'a\nb\nc\n', 'src/gone.txt': 'g\n' });
      const at = '\t2026-12-06 04:08:32.215027243 +0000';
      const epoch = '\t1970-01-01 00:00:00.000000000 +0000';
      const r = await ctx.applyPatch(
        `--- old/src/a.txt${at}\n+++ new/src/a.txt${at}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n` +
          `--- old/src/gone.txt${at}\n+++ new/src/gone.txt${epoch}\n@@ -1 +0,0 @@\n-g\n` +
          `--- old/src/new.txt${epoch.replace('1970-01-01 00', '1969-12-31 16').replace('+0000', '-0800')}\n+++ new/src/new.txt${at}\n@@ -0,0 +1 @@\n+n\n`,
      );
      expect(r.success, r.message).toBe(true);
      expect(await tree(['src/a.txt', 'src/gone.txt', 'src/new.txt', 'old/src/a.txt', 'new/src/a.txt'])).toEqual({
        'src/a.txt': 'a\nB\nc\n',
        'src/new.txt': 'n\n',
      });
    });

    it('takes diff -u f.orig f as a change of the file that exists, as patch -p0 does, not as a rename', async () => {
      await open({ 'conf.ini': 'x=1\ny=2\n', 'keep.ini': 'k=1\n' });
      const r = await ctx.applyPatch(
        '--- conf.ini.orig\t2024-01-01 00:00:00 +0000\n+++ conf.ini\t2024-01-01 00:00:01 +0000\n@@ -1,2 +1,2 @@\n x=1\n-y=2\n+y=3\n',
      );
      expect(r.success, r.message).toBe(true);
      // Only the old name exists: it is the file.
      const back = await ctx.applyPatch('--- keep.ini\n+++ keep.ini.new\n@@ -1 +1 @@\n-k=1\n+k=2\n');
      expect(back.success, back.message).toBe(true);
      expect(await tree(['conf.ini', 'conf.ini.orig', 'keep.ini', 'keep.ini.new'])).toEqual({ 'conf.ini': 'x=1\ny=3\n', 'keep.ini': 'k=2\n' });
    });

    it.each(['a.txt', './a.txt', 'x/../a.txt'])('applies an envelope moving a file onto itself (Move to: %s) as an update', async (to) => {
      await open({ 'a.txt': 'A\n' });
      const r = await ctx.applyPatch(`*** Begin Patch\n*** Update File: a.txt\n*** Move to: ${to}\n@@\n-A\n+B\n*** End Patch\n`);
      expect(r.success, r.message).toBe(true);
      expect(r.files.map((f) => [f.path, f.op])).toEqual([['a.txt', 'patch']]);
      expect(await tree(['a.txt'])).toEqual({ 'a.txt': 'B\n' });
    });

    it('refuses a mode-only git diff as EUNSUPPORTED saying the mode was not changed, not as a patch without hunks', async () => {
      await open({ 'run.sh': 'echo hi\n' });
      const r = await ctx.applyPatch('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n');
      expect(r).toMatchObject({ success: false, code: 'EUNSUPPORTED', path: 'run.sh' });
      expect(r.message).toContain('mode change of run.sh (100644 → 100755) was not made');
      expect(r.message).not.toMatch(/no hunks/);
    });

    it('applies the content of a patch that also changes a mode, and says the mode was not changed', async () => {
      await open({ 'run.sh': 'echo hi\n', 'b.txt': 'b\n' });
      const r = await ctx.applyPatch(
        'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\ndiff --git a/b.txt b/b.txt\nindex 1..2 100644\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n',
      );
      expect(r.success, r.message).toBe(true);
      expect(r.message).toContain('mode change of run.sh (100644 → 100755) was not made');
      expect(await tree(['b.txt', 'run.sh'])).toEqual({ 'b.txt': 'B\n', 'run.sh': 'echo hi\n' });
    });

    it.each([
      'diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n',
      'diff --git a/img.png b/img.png\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZQzU|;|M00aO5\n\nliteral 0\nHcmV?d00001\n\n',
      'Binary files old/img.png and new/img.png differ\n',
    ])('refuses a binary section as EUNSUPPORTED, saying to write the file whole (%#)', async (binary) => {
      await open({ 'img.png': 'x', 'b.txt': 'b\n' });
      const r = await ctx.applyPatch(`--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n${binary}`);
      expect(r).toMatchObject({ success: false, code: 'EUNSUPPORTED' });
      expect(r.path).toMatch(/img\.png$/);
      expect(r.message).toContain('writeFile(');
      expect(await tree(['b.txt'])).toEqual({ 'b.txt': 'b\n' });
    });

    it.each([
      [{ 'a.txt': 'a\nb\nc\nd\ne\nf\n' }, '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n--- a/a.txt\n+++ b/a.txt\n@@ -5,2 +5,2 @@\n e\n-f\n+F\n'],
      [{ 'a.txt': 'a\nb\n' }, '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-A\n+AA\n b\n'],
      [
        { 'a.txt': 'old\n' },
        'diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\ndiff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+new\n',
      ],
      [{ 'k.txt': 'k\n' }, '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n'],
    ])('applies several sections of one file in order, as git apply does (%#)', appliesAsGit);

    it('refuses several sections of one file all or nothing when a later one does not apply', async () => {
      await open({ 'a.txt': 'a\nb\n', 'b.txt': 'b\n' });
      const r = await ctx.applyPatch(
        '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+AA\n b\n',
      );
      expect(r).toMatchObject({ success: false, code: 'ECONFLICT' });
      expect(r.message).toContain('Section 2 of 2 for a.txt');
      expect(await tree(['a.txt', 'b.txt'])).toEqual({ 'a.txt': 'a\nb\n', 'b.txt': 'b\n' });
      const gone = await ctx.applyPatch('--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n');
      expect(gone).toMatchObject({ success: false, code: 'ENOENT', path: 'a.txt' });
    });

    it('refuses a file changed in several sections when one renames onto it, saying to send it apart', async () => {
      await open({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const r = await ctx.applyPatch(
        'diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\ndiff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-a\n+C\n',
      );
      expect(r).toMatchObject({ success: false, code: 'EINVAL', path: 'c.txt' });
      expect(r.message).toContain('as a patch of its own');
    });

    it.each([
      '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-\ufeffa\n+\ufeffA\n b\n c\n',
      '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n \ufeffa\n-b\n+B\n c\n',
      'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n \ufeffa\n b\n c\n+d\n',
    ])("applies a git-made hunk whose line 1 carries the file's BOM with one BOM, as git apply does (%#)", (patch) =>
      appliesAsGit({ 'a.txt': '\ufeffa\nb\nc\n' }, patch),
    );

    it('refuses a binary deletion with deleteFile as the next call, which works', async () => {
      await open({ 'img.png': 'x' });
      const r = await ctx.applyPatch('diff --git a/img.png b/img.png\ndeleted file mode 100644\nindex 1..0\nBinary files a/img.png and /dev/null differ\n');
      expect(r).toMatchObject({ success: false, code: 'EUNSUPPORTED', path: 'img.png', next: 'deleteFile("img.png")' });
      expect((await ctx.deleteFile('img.png')).success).toBe(true);
    });

    it('refuses a copy onto an existing file and changes nothing', async () => {
      await open({ 'a.txt': 'one\n', 'c.txt': 'other\n' });
      const r = await ctx.applyPatch('diff --git a/a.txt b/c.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to c.txt\n');
      expect(r).toMatchObject({ success: false, code: 'EEXIST', path: 'c.txt', next: 'readFile("c.txt")' });
      expect(await tree(['a.txt', 'c.txt'])).toEqual({ 'a.txt': 'one\n', 'c.txt': 'other\n' });
    });
  });
}
