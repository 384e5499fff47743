import { describe, expect, it } from 'vitest';
import { applyHunks } from '../src/patch/apply-hunks.ts';
import { type FilePatch, PatchParseError, parsePatch } from '../src/patch/parse-patch.ts';

const FILE = `${Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

function applyOne(original: string, patch: string) {
  const files = parsePatch(patch);
  expect(files).toHaveLength(1);
  const file = files[0] as FilePatch;
  return applyHunks(original, file.hunks, { ordered: file.format === 'envelope' });
}

function parseError(patch: string): PatchParseError {
  try {
    parsePatch(patch);
  } catch (err) {
    if (err instanceof PatchParseError) return err;
    throw err;
  }
  throw new Error('parsed without an error');
}

describe('hunk header forms', () => {
  const body = ' line 4\n-line 5\n+LINE 5\n line 6\n';
  const expected = FILE.replace('line 5\n', 'LINE 5\n');
  it.each([
    ['@@ @@', undefined],
    ['@@ ... @@', undefined],
    ['@@ … @@', undefined],
    ['@@', undefined],
    ['@@ -4 +4 @@', 4],
    ['@@ -4, +4, @@', 4],
    ['@@ -4,3 @@', 4],
    ['@@ -40,3 @@', 40],
    ['@@ +4,3 @@', undefined],
    ['@@ -4,3 +4,3', 4],
    ['@@ def parse(', undefined],
    ['@@ function parse() @@', undefined],
    ['@@ -4,3 +4,3 @@ function parse() {', 4],
  ])('%s parses as a hunk located by content', (header, oldStart) => {
    const [file] = parsePatch(`${header}\n${body}`);
    expect(file?.hunks).toHaveLength(1);
    expect(file?.hunks[0]?.oldStart).toBe(oldStart);
    expect(applyOne(FILE, `${header}\n${body}`)).toMatchObject({ ok: true, text: expected });
  });

  it('keeps the text after or instead of the numbers as anchors', () => {
    expect(parsePatch(`@@ def parse(\n${body}`)[0]?.hunks[0]?.anchors).toEqual(['def parse(']);
    expect(parsePatch(`@@ -1,2 +1,2 @@ class A\n${body}`)[0]?.hunks[0]?.anchors).toEqual(['class A']);
    expect(parsePatch(`@@ ... @@\n${body}`)[0]?.hunks[0]?.anchors).toEqual([]);
  });

  it('refuses a header whose numbers do not parse, naming the line, instead of reading "no hunks"', () => {
    const err = parseError(`--- a/x\n+++ b/x\n@@ -4,3 +4,3 @@\n${body}@@ -1,2 +x @@\n-line 9\n+LINE 9\n`);
    expect(err.line).toBe(8);
    expect(err.message).toContain('line 8 of the patch');
    expect(err.message).toContain('"@@ -1,2 +x @@"');
    expect(parseError('@@ -a,b +c,d @@\n-x\n+y\n').line).toBe(1);
  });

  it('refuses an unprefixed line inside a hunk rather than silently ending the hunk there', () => {
    const err = parseError(' \n@@ @@\n line 4\nline 5\n-line 6\n+LINE 6\n');
    expect(err.line).toBe(4);
    expect(err.message).toContain('"line 5" is inside a hunk');
    // Prose after the last hunk is still ignored.
    expect(applyOne(FILE, `@@ @@\n${body}\nThat renames it.\n`)).toMatchObject({ ok: true, text: expected });
  });

  it('numbers hunks per file', () => {
    const files = parsePatch('--- a/x\n+++ b/x\n@@ @@\n-a\n+b\n@@ @@\n-c\n+d\n--- a/y\n+++ b/y\n@@ @@\n-e\n+f\n');
    expect(files.map((f) => f.hunks.map((h) => h.index))).toEqual([[1, 2], [1]]);
  });

  it('reads a git rename without changes', () => {
    const [f] = parsePatch('diff --git a/old.ts b/new.ts\nsimilarity index 100%\nrename from old.ts\nrename to new.ts\n');
    expect(f).toMatchObject({ oldPath: 'old.ts', newPath: 'new.ts', hunks: [] });
  });
});

describe('anchors choose among several matches', () => {
  const py = ['class A:', '    def run(self):', '        x = 1', '        return x', '', '    def stop(self):', '        x = 1', '        return x', ''].join(
    '\n',
  );

  it('applies under the anchor that names one place, and refuses naming every place when none does', () => {
    const edit = '         x = 1\n-        return x\n+        return x + 1\n';
    expect(applyOne(py, `@@ def stop(\n${edit}`)).toMatchObject({ ok: true, text: py.replace(/return x\n$/, 'return x + 1\n') });
    expect(applyOne(py, `@@ def run(self):\n${edit}`)).toMatchObject({ ok: true, text: py.replace('return x\n', 'return x + 1\n') });
    const amb = applyOne(py, `@@ class A:\n${edit}`);
    expect(amb).toMatchObject({ ok: false, failures: [{ reason: 'ambiguous', matches: [3, 7] }] });
    if (!amb.ok) expect(amb.failures[0]?.message).toContain('under "class A:"');
    // An anchor naming no line says nothing; still ambiguous.
    expect(applyOne(py, `@@ def nowhere(\n${edit}`)).toMatchObject({ ok: false, failures: [{ reason: 'ambiguous', matches: [3, 7] }] });
  });

  it('refuses when two matches lie under the same git function name', () => {
    const js = ['function f() {', '  a();', '  b();', '  a();', '  b();', '}', ''].join('\n');
    expect(applyOne(js, '@@ -9,2 +9,2 @@ function f() {\n  a();\n- b();\n+ c();\n')).toMatchObject({
      ok: false,
      failures: [{ reason: 'ambiguous', matches: [2, 4] }],
    });
  });

  it('takes the match at the end of the file for a hunk marked *** End of File', () => {
    const text = 'x\ny\nx\ny\n';
    const r = applyOne(text, '*** Begin Patch\n*** Update File: t\n@@\n x\n-y\n+Y\n*** End of File\n*** End Patch\n');
    expect(r).toMatchObject({ ok: true, text: 'x\ny\nx\nY\n' });
  });
});

describe('line endings', () => {
  it("converts CRLF to LF when the removed lines carry the file's \\r and the added lines do not (git's diff of the conversion)", () => {
    expect(applyOne('a\r\nb\r\n', '@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n')).toMatchObject({ ok: true, text: 'a\nb\n' });
  });

  it('converts LF to CRLF the same way, and one line alone', () => {
    expect(applyOne('a\nb\n', '@@ -1,2 +1,2 @@\n-a\n-b\n+a\r\n+b\r\n')).toMatchObject({ ok: true, text: 'a\r\nb\r\n' });
    expect(applyOne('a\r\nb\r\nc\r\n', '@@ -1,3 +1,3 @@\n a\r\n-b\r\n+b\n c\r\n')).toMatchObject({ ok: true, text: 'a\r\nb\nc\r\n' });
  });

  it("keeps CRLF for an LF patch, and for git's diff of an edit to a CRLF file", () => {
    expect(applyOne('a\r\nb\r\n', '@@ @@\n a\n-b\n+B\n')).toMatchObject({ ok: true, text: 'a\r\nB\r\n' });
    expect(applyOne('a\r\nb\r\n', '@@ @@\n a\r\n-b\r\n+B\r\n')).toMatchObject({ ok: true, text: 'a\r\nB\r\n' });
  });

  it('reads a patch sent with CRLF line breaks as an LF patch', () => {
    expect(applyOne('a\nb\n', '--- a/t\r\n+++ b/t\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n')).toMatchObject({ ok: true, text: 'a\nB\n' });
    // Sent with CRLF breaks and converting the file's CRLF to LF: one \r is the break, the other the content.
    expect(applyOne('a\r\nb\r\n', '@@ -1,2 +1,2 @@\r\n-a\r\r\n-b\r\r\n+a\r\n+b\r\n')).toMatchObject({ ok: true, text: 'a\nb\n' });
  });

  it("falls back to the file's endings when the patch's \\r do not match the file", () => {
    // A diff made on a CRLF copy, applied to the LF file: its \r say nothing about this file.
    expect(applyOne('a\nb\n', '@@ @@\n a\r\n-b\r\n+B\r\n')).toMatchObject({ ok: true, text: 'a\nB\n' });
  });
});

describe('wrappers', () => {
  it('takes off a code fence or a heredoc around the whole patch', () => {
    const patch = '--- a/t\n+++ b/t\n@@ @@\n a\n-b\n+B\n';
    for (const wrapped of [
      `\`\`\`diff\n${patch}\`\`\`\n`,
      `\n~~~\n${patch}~~~\n\n`,
      `apply_patch <<'EOF'\n${patch}EOF\n`,
      `\`\`\`patch\r\n${patch.replace(/\n/g, '\r\n')}\`\`\`\r\n`,
    ]) {
      expect(applyOne('a\nb\n', wrapped)).toMatchObject({ ok: true, text: 'a\nB\n' });
    }
  });

  it('reads a unified diff of text about the envelope as a unified diff', () => {
    expect(applyOne('*** Begin Patch\nold\n', '--- a/t\n+++ b/t\n@@ @@\n *** Begin Patch\n-old\n+new\n')).toMatchObject({
      ok: true,
      text: '*** Begin Patch\nnew\n',
    });
  });

  it('refuses a fence that is opened and not closed, naming its line', () => {
    expect(parseError('```diff\n@@ @@\n-a\n+b\n').line).toBe(1);
  });
});

describe('the *** Begin Patch envelope', () => {
  const envelope = [
    '*** Begin Patch',
    '*** Update File: src/app.py',
    '@@ class App',
    '@@     def run(self):',
    '         x = 1',
    '-        y = 2',
    '+        y = 3',
    '@@',
    '-last',
    '+LAST',
    '*** End of File',
    '*** Add File: docs/new.md',
    '+# New',
    '',
    '+text',
    '*** Delete File: old.txt',
    '*** Update File: a.txt',
    '*** Move to: b.txt',
    ' keep',
    '-drop',
    '*** Update File: c.txt',
    '*** Move to: d.txt',
    '*** End Patch',
  ].join('\n');

  it('parses updates with nested anchors and end-of-file hunks, adds, deletes and moves', () => {
    const files = parsePatch(envelope);
    expect(files.map((f) => [f.oldPath, f.newPath, f.isNew, f.isDelete, f.format, f.hunks.length])).toEqual([
      ['src/app.py', 'src/app.py', false, false, 'envelope', 2],
      [undefined, 'docs/new.md', true, false, 'envelope', 1],
      ['old.txt', undefined, false, true, 'envelope', 0],
      ['a.txt', 'b.txt', false, false, 'envelope', 1],
      ['c.txt', 'd.txt', false, false, 'envelope', 0],
    ]);
    const [app, add, , move] = files;
    expect(app?.hunks.map((h) => [h.index, h.anchors, h.atEnd])).toEqual([
      [1, ['class App', 'def run(self):'], false],
      [2, [], true],
    ]);
    expect(add?.hunks[0]?.lines).toEqual([
      { op: '+', text: '# New' },
      { op: '+', text: '' },
      { op: '+', text: 'text' },
    ]);
    expect(move?.hunks[0]?.lines).toEqual([
      { op: ' ', text: 'keep' },
      { op: '-', text: 'drop' },
    ]);
  });

  it('applies an update, nested anchors choosing the method', () => {
    const py = [
      'class Other:',
      '    def run(self):',
      '        x = 1',
      '        y = 2',
      'class App:',
      '    def run(self):',
      '        x = 1',
      '        y = 2',
      'last',
      '',
    ].join('\n');
    const update = `${envelope.split('*** Add File')[0]}*** End Patch\n`;
    expect(applyOne(py, update)).toMatchObject({ ok: true, text: py.replace(/y = 2\nlast\n$/, 'y = 3\nLAST\n') });
    // The outer anchor alone is enough here; the inner one alone names both methods.
    expect(applyOne(py, update.replace('@@     def run(self):\n', ''))).toMatchObject({ ok: true });
    expect(applyOne(py, update.replace('@@ class App\n@@     def run(self):\n', '@@     def run(self):\n'))).toMatchObject({
      ok: false,
      failures: [{ reason: 'ambiguous', matches: [3, 7] }],
    });
  });

  it('places a hunk whose text repeats between its neighbours, as the format orders hunks', () => {
    const text = ['a', 'x', 'b', 'x', 'c', 'x', ''].join('\n');
    const patch = '*** Begin Patch\n*** Update File: t\n@@\n-b\n+B\n@@\n-x\n+X\n@@\n-c\n+C\n*** End Patch\n';
    expect(applyOne(text, patch)).toMatchObject({ ok: true, text: ['a', 'x', 'B', 'X', 'C', 'x', ''].join('\n') });
    // The same hunks as a unified diff may be in any order, so the repeated one is ambiguous.
    expect(applyOne(text, '@@ @@\n-b\n+B\n@@ @@\n-x\n+X\n@@ @@\n-c\n+C\n')).toMatchObject({
      ok: false,
      failures: [{ reason: 'ambiguous', matches: [2, 4, 6] }],
    });
  });

  it('refuses a pure insertion it cannot place, unless it is marked *** End of File', () => {
    expect(applyOne('a\n', '*** Begin Patch\n*** Update File: t\n@@\n+b\n*** End Patch\n')).toMatchObject({ ok: false, failures: [{ reason: 'no-anchor' }] });
    expect(applyOne('a\n', '*** Begin Patch\n*** Update File: t\n@@\n+b\n*** End of File\n*** End Patch\n')).toMatchObject({ ok: true, text: 'a\nb\n' });
  });

  it.each([
    ['*** Begin Patch\n*** Update File: t\n-a\n+b\n', 4, 'does not end with "*** End Patch"'],
    ['*** Begin Patch\n*** Frobnicate File: t\n*** End Patch\n', 2, 'is not part of the envelope'],
    ['*** Begin Patch\n*** Update File: t\n*** End Patch\n', 2, 'has no hunks'],
    ['*** Begin Patch\n*** Update File: t\n@@\n@@ x\n*** End Patch\n', 3, 'has no lines'],
    ['*** Begin Patch\n*** Add File: t\n+a\n b\n*** End Patch\n', 4, 'does not start with "+"'],
    ['*** Begin Patch\n*** Update File: t\n@@\n-a\nb\n+c\n*** End Patch\n', 5, 'is inside a hunk'],
    ['*** Begin Patch\n*** Update File:\n*** End Patch\n', 2, 'the path is missing'],
  ])('refuses a broken envelope naming the line: %j', (patch, line, message) => {
    const err = parseError(patch);
    expect(err.line).toBe(line);
    expect(err.message).toContain(message);
  });
});
