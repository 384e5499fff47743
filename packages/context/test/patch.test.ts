import { CATASTROPHIC_LONG_LINE, CATASTROPHIC_PATTERNS } from '@ctxfs/conformance';
import { describe, expect, it } from 'vitest';
import { npmFile } from '../../core/test/support/npm-package.ts';
import { applyHunks } from '../src/patch/apply-hunks.ts';
import { parsePatch } from '../src/patch/parse-patch.ts';
import { applyLineEdit, replaceText } from '../src/patch/text-edits.ts';

const FILE = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

function apply(original: string, patch: string) {
  const files = parsePatch(patch);
  expect(files).toHaveLength(1);
  return applyHunks(original, (files[0] as (typeof files)[number]).hunks);
}

describe('parsePatch', () => {
  it('reads git headers, paths and hunks', () => {
    const [f] = parsePatch('diff --git a/src/x.ts b/src/x.ts\nindex 1..2 100644\n--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,2 +1,2 @@ fn\n a\n-b\n+c\n');
    expect(f).toMatchObject({ oldPath: 'src/x.ts', newPath: 'src/x.ts', isNew: false, isDelete: false });
    expect(f?.hunks[0]).toMatchObject({
      oldStart: 1,
      newStart: 1,
      lines: [
        { op: ' ', text: 'a' },
        { op: '-', text: 'b' },
        { op: '+', text: 'c' },
      ],
    });
  });

  it('reads several files, new and deleted files', () => {
    const files = parsePatch('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n');
    expect(files.map((f) => [f.oldPath, f.newPath, f.isNew, f.isDelete])).toEqual([
      [undefined, 'new.txt', true, false],
      ['old.txt', undefined, false, true],
    ]);
  });

  it('accepts @@ @@ headers, wrong counts, CRLF patches and no-newline markers', () => {
    const [f] = parsePatch('@@ -1,99 +1,1 @@\r\n-a\r\n+b\r\n\\ No newline at end of file\r\n');
    expect(f?.hunks[0]).toMatchObject({
      lines: [
        { op: '-', text: 'a' },
        { op: '+', text: 'b' },
      ],
      newNoNewline: true,
      oldNoNewline: false,
    });
    const [g] = parsePatch('@@ @@\n x\n-y\n');
    expect(g?.hunks[0]?.oldStart).toBeUndefined();
  });

  it('keeps blank context lines whose space was stripped, but not trailing separators', () => {
    const [f] = parsePatch('@@ @@\n a\n\n-b\n+c\n\n\n');
    expect(f?.hunks[0]?.lines).toEqual([
      { op: ' ', text: 'a' },
      { op: ' ', text: '' },
      { op: '-', text: 'b' },
      { op: '+', text: 'c' },
    ]);
  });
});

describe('applyHunks', () => {
  it('applies a hunk whose line numbers are off', () => {
    const r = apply(FILE, '@@ -30,3 +30,3 @@\n line 10\n-line 11\n+LINE 11\n line 12\n');
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.text).toBe(FILE.replace('line 11\n', 'LINE 11\n'));
  });

  it('applies hunks given out of order', () => {
    const r = apply(FILE, '@@ @@\n line 30\n-line 31\n+X\n@@ @@\n line 2\n-line 3\n+Y\n');
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.text).toBe(FILE.replace('line 31\n', 'X\n').replace('line 3\n', 'Y\n'));
  });

  it('tolerates trailing-whitespace drift and keeps the file text for context', () => {
    const r = apply('a  \nb\nc\n', '@@ @@\n a\n-b\n+B\n c\n');
    expect(r).toMatchObject({ ok: true, text: 'a  \nB\nc\n' });
  });

  it('keeps CRLF endings when the patch uses LF', () => {
    const r = apply('a\r\nb\r\nc\r\n', '@@ @@\n a\n-b\n+B\n+B2\n c\n');
    expect(r).toMatchObject({ ok: true, text: 'a\r\nB\r\nB2\r\nc\r\n' });
  });

  it('keeps a missing final newline', () => {
    expect(apply('a\nb', '@@ @@\n-a\n+A\n b\n')).toMatchObject({ ok: true, text: 'A\nb' });
  });

  it('refuses a hunk whose context matches nowhere, showing the closest region', () => {
    const r = apply(FILE, '@@ -10,3 +10,3 @@\n line 10\n-line eleven\n+X\n line 12\n');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failures[0]).toMatchObject({ reason: 'not-found', closest: { startLine: 10, matched: 2, total: 3 } });
      expect(r.failures[0]?.message).toContain('expected: "line eleven"');
      expect(r.failures[0]?.message).toContain('actual:   "line 11"');
    }
  });

  it('refuses an ambiguous hunk instead of guessing', () => {
    const r = apply('x\ny\nx\ny\n', '@@ @@\n x\n-y\n+Y\n');
    expect(r).toMatchObject({ ok: false, failures: [{ reason: 'ambiguous', matches: [1, 3] }] });
  });

  it('resolves an ambiguous hunk only where the header, corrected by the observed offset, points', () => {
    const text = 'u\nx\ny\nv\nx\ny\nw\n';
    // First hunk is unique and reveals an offset of +2; the second points at line 3 → 5.
    const r = apply(text, '@@ -1,1 +1,1 @@\n-v\n+V\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n');
    expect(r).toMatchObject({ ok: false });
    const r2 = apply(text, '@@ -2,1 +2,1 @@\n-v\n+V\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n');
    expect(r2).toMatchObject({ ok: true, text: 'u\nx\ny\nV\nx\nY\nw\n' });
  });

  it('refuses a pure insertion without anchor', () => {
    expect(apply('a\n', '@@ @@\n+b\n')).toMatchObject({ ok: false, failures: [{ reason: 'no-anchor' }] });
    expect(apply('a\n', '@@ -1,0 +2 @@\n+b\n')).toMatchObject({ ok: true, text: 'a\nb\n' });
  });
});

describe('replaceText', () => {
  it('locates every match of a replace-all right, lines, columns and surrogate pairs alike, in one pass', () => {
    // Before, each match was located by a scan from the start of the text: 150,000 matches took minutes.
    const rows = Array.from({ length: 3000 }, (_, i) => `${'😀'.repeat(i % 3)}const v${i} = 1; // retries = 3${i % 7 === 0 ? ' retries = 3' : ''}`);
    const text = rows.join('\n');
    const r = replaceText(text, 'retries = 3', 'retries = 5', { occurrence: 'all' });
    if (!r.ok) throw new Error(r.message);
    const expected: Array<{ line: number; column: number }> = [];
    rows.forEach((row, i) => {
      for (let at = row.indexOf('retries = 3'); at >= 0; at = row.indexOf('retries = 3', at + 1)) {
        expected.push({ line: i + 1, column: [...row.slice(0, at)].length });
      }
    });
    expect(r.replaced).toBe(expected.length);
    expect(r.locations).toEqual(expected);
  });

  it('needs a unique match by default and says how many there are', () => {
    expect(replaceText('a a', 'a', 'b')).toMatchObject({ ok: false, reason: 'not-unique', matches: 2 });
    expect(replaceText('a b', 'a', 'c')).toMatchObject({ ok: true, text: 'c b', replaced: 1 });
  });

  it('names the first ten positions of a text that occurs thousands of times, and how many more', () => {
    const text = 'x = 1;\n'.repeat(1111);
    const r = replaceText(text, 'x', 'y');
    if (r.ok) throw new Error('replaced a text that is not unique');
    expect(r.matches).toBe(1111);
    expect(r.locations).toHaveLength(1111);
    expect(r.message).toContain('(at 1:1, 2:1, 3:1, 4:1, 5:1, 6:1, 7:1, 8:1, 9:1, 10:1 and 1,101 more)');
    expect(r.message.length).toBeLessThan(250);
    expect(replaceText('a a', 'a', 'b')).toMatchObject({ message: expect.stringContaining('(at 1:1, 1:3)') });
  });

  it('replaces first, all and the n-th occurrence', () => {
    expect(replaceText('a a a', 'a', 'b', { occurrence: 'first' })).toMatchObject({ text: 'b a a' });
    expect(replaceText('a a a', 'a', 'b', { occurrence: 'all' })).toMatchObject({ text: 'b b b', replaced: 3 });
    expect(replaceText('a a a', 'a', 'b', { occurrence: 3 })).toMatchObject({ text: 'a a b' });
    expect(replaceText('a a a', 'a', 'b', { occurrence: 4 })).toMatchObject({ ok: false, reason: 'bad-occurrence' });
  });

  it('reports positions in code points next to emoji and CJK', () => {
    const r = replaceText('😀漢字 key = 1', 'key', 'name');
    expect(r).toMatchObject({ ok: true, text: '😀漢字 name = 1', locations: [{ line: 1, column: 4 }] });
  });

  it('supports regex with capture groups, and refuses a bad regex', () => {
    expect(replaceText('f(1) f(2)', 'f\\((\\d)\\)', 'g[$1]', { regex: true, occurrence: 'all' })).toMatchObject({ text: 'g[1] g[2]' });
    expect(replaceText('x', '(', 'y', { regex: true })).toMatchObject({ ok: false, reason: 'bad-regex' });
  });

  it('treats the search text literally without regex', () => {
    expect(replaceText('a.b axb', 'a.b', 'c')).toMatchObject({ ok: true, text: 'c axb' });
  });
});

describe('replaceText with regex: true runs in linear time', () => {
  it('a bad regex is refused once, with what to do', () => {
    const r = replaceText('x', '(', 'y', { regex: true });
    expect(r).toMatchObject({ ok: false, reason: 'bad-regex' });
    expect(r.ok ? '' : r.message).toBe(
      "Invalid regular expression: missing closing ): `(`. Fix the syntax (ripgrep's: no backreferences or look-around), or leave out regex to match the text as written.",
    );
  });

  it.each([
    ['(\\w)\\1', /^Backreference `\\1` is not supported\. Backreferences can take exponential time/],
    ['(?<=a)b', /^Look-behind `\(\?<=` is not supported\. Look-around is not in the linear-time engine/],
    ['a', /^Unknown regular expression flag `x`/, 'x'],
  ])('%j is refused with a reason and a way out', (search, message, flags = '') => {
    const r = replaceText('aab', search, 'z', { regex: true, flags });
    expect(r.ok ? '' : r.message).toMatch(message);
  });

  it('$1, $<name>, $& and $$ expand; i, m and s flags apply', () => {
    expect(replaceText('Key=1\nkey=2', '^(?<k>key)=(\\d)$', '$<k>:$2 ($&) $$', { regex: true, occurrence: 'all', flags: 'im' })).toMatchObject({
      ok: true,
      text: 'Key:1 (Key=1) $\nkey:2 (key=2) $',
    });
    expect(replaceText('a\nb', 'a.b', 'x', { regex: true })).toMatchObject({ ok: false, reason: 'not-found' });
    expect(replaceText('a\nb', 'a.b', 'x', { regex: true, flags: 's' })).toMatchObject({ ok: true, text: 'x' });
  });

  it('. never takes the \\r of a CRLF ending', () => {
    expect(replaceText('a = 1;\r\nb = 2;\r\n', '(\\w) = .*', '$1', { regex: true, occurrence: 'all' })).toMatchObject({ ok: true, text: 'a\r\nb\r\n' });
  });

  it('an empty match steps over a whole emoji', () => {
    expect(replaceText('😀a', '', '-', { regex: true, occurrence: 'all' })).toMatchObject({ ok: true, text: '-😀-a-' });
  });

  it('catastrophic patterns answer at once over a 50 KB line', () => {
    for (const { pattern, expected } of CATASTROPHIC_PATTERNS) {
      if (pattern === 'a(.*z)?') continue; // quadratic to list: below
      const started = performance.now();
      const r = replaceText(CATASTROPHIC_LONG_LINE, pattern, 'x', { regex: true, occurrence: 'first' });
      expect(performance.now() - started, pattern).toBeLessThan(5_000);
      if (expected === 'EBADPATTERN') expect(r, pattern).toMatchObject({ ok: false, reason: 'bad-regex' });
      else expect(r.ok, pattern).toBe(expected.includes(1));
    }
  });

  it('a search whose matches would take quadratic time to list is refused after a bounded time', () => {
    const started = performance.now();
    const r = replaceText(CATASTROPHIC_LONG_LINE, 'a(.*z)?', 'x', { regex: true, occurrence: 'all' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(r).toMatchObject({ ok: false, reason: 'bad-regex' });
    expect(r.ok ? '' : r.message).toMatch(/^The regular expression takes too long on this file \(stopped after \d+ match\(es\) in 2 s\)/);
  });

  it('gives what a JavaScript replace gives on real files (pinned npm packages), LF and CRLF', () => {
    const lodash = npmFile('lodash@4.17.21', 'lodash.js');
    const ru = npmFile('moment@2.30.1', 'locale/ru.js');
    const cases: Array<[string, string, string, string]> = [
      [lodash, '(\\w+)\\.prototype\\.(\\w+) = ', '$2 of $1 = ', ''],
      [lodash, 'function (?<name>\\w+)\\((\\w+)\\)', 'function $<name>(/* $2 */)', ''],
      [lodash, '^\\s*\\* @param \\{(\\w+)\\}', '* @arg {$1}', 'm'],
      [lodash, 'return (.*);$', 'return ($1);', 'm'],
      [ru, '([а-яё]+)ь', '$1Ь', 'i'],
    ];
    for (const [text, search, replacement, flags] of cases) {
      for (const eol of ['\n', '\r\n']) {
        const input = eol === '\n' ? text : text.replace(/\n/g, '\r\n');
        const r = replaceText(input, search, replacement, { regex: true, occurrence: 'all', flags });
        const v8 = input.replace(new RegExp(search, `g${flags}u`), replacement);
        // In m mode JavaScript's ^ and $ also match next to a lone \r (so `^\s*` there eats the \n of a CRLF); ours only at \n.
        if (eol === '\r\n' && flags.includes('m')) continue;
        expect(r.ok && r.replaced > 10, search).toBe(true);
        expect(r.ok ? r.text === v8 : false, `${search} ${JSON.stringify(eol)}`).toBe(true);
      }
    }
  });
});

describe('applyLineEdit', () => {
  it('replaces, inserts and deletes line ranges keeping endings', () => {
    expect(applyLineEdit('a\r\nb\r\nc\r\n', { kind: 'replace', start: 2, end: 2, text: 'B\nB2' })).toMatchObject({ ok: true, text: 'a\r\nB\r\nB2\r\nc\r\n' });
    expect(applyLineEdit('a\nb\n', { kind: 'insert-before', line: 1, text: 'z\n' })).toMatchObject({ text: 'z\na\nb\n' });
    expect(applyLineEdit('a\nb', { kind: 'insert-after', line: 2, text: 'c' })).toMatchObject({ text: 'a\nb\nc' });
    expect(applyLineEdit('a\nb\nc\n', { kind: 'delete', start: 1, end: 2 })).toMatchObject({ text: 'c\n', linesRemoved: 2 });
  });

  it('refuses ranges outside the file', () => {
    expect(applyLineEdit('a\n', { kind: 'delete', start: 2, end: 3 })).toMatchObject({ ok: false });
    expect(applyLineEdit('a\n', { kind: 'replace', start: 0, end: 1, text: '' })).toMatchObject({ ok: false });
  });
});
