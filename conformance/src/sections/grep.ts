/**
 * grep: ripgrep's regular-expression syntax, run in linear time (no pattern
 * stalls a backend: see `regex-catalogue.ts`), one GrepMatch per matching line
 * (1-based line, text without its terminator, code-point spans), binary files
 * skipped, dotfiles skipped unless `dot`, files in path order, lazy.
 *
 * @module
 */

import { compileGrep, encodeText, type GrepMatch, type GrepOptions } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, utf8 } from '../context.ts';
import { CATASTROPHIC_BOUND_MS, CATASTROPHIC_LONG_LINE, CATASTROPHIC_PATTERNS, CATASTROPHIC_SHORT_LINE } from '../regex-catalogue.ts';

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function utf16le(text: string, bom = true): Uint8Array {
  const out = new Uint8Array((bom ? 2 : 0) + text.length * 2);
  let at = 0;
  if (bom) {
    out[0] = 0xff;
    out[1] = 0xfe;
    at = 2;
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[at++] = c & 0xff;
    out[at++] = c >> 8;
  }
  return out;
}

const brief = (m: GrepMatch) => `${m.path}:${m.line}:${m.text}`;

export function grepSection(ctx: SuiteContext): void {
  const grepIn = async (files: Record<string, string | Uint8Array>, pattern: string, options?: GrepOptions) => {
    const fs = await ctx.make({ files });
    return collect(fs.grep(pattern, options));
  };

  describe('lines and spans', () => {
    it('line numbers are 1-based and text has no terminator', async () => {
      const matches = await grepIn({ 'a.txt': 'one\ntwo\nthree\n' }, 'two');
      expect(matches).toEqual([{ path: 'a.txt', line: 2, text: 'two', matchStart: 0, matchEnd: 3, spans: [{ start: 0, end: 3 }] }]);
    });

    it('CRLF lines lose the \\r, and $ matches before it', async () => {
      const matches = await grepIn({ 'crlf.txt': 'a\r\nfoo bar\r\nbaz\r\n' }, 'bar$');
      expect(matches.map((m) => [m.line, m.text, m.matchStart, m.matchEnd])).toEqual([[2, 'foo bar', 4, 7]]);
    });

    it('\\r of a CRLF terminator is never matched', async () => {
      expect(await grepIn({ 'crlf.txt': 'a\r\nb\r\n' }, '\\r')).toEqual([]);
    });

    // A CR not followed by \n is text, in a CRLF file too: the line a read serves holds it, and so does the match.
    const strayCr = { 'stray.txt': 'a\rb\r\nc d\r\nd\r\r\ne\r\n' };
    for (const [pattern, expected] of [
      ['a\\sb', [[1, 'a\rb', 0, 3]]],
      ['a\\Wb', [[1, 'a\rb', 0, 3]]],
      ['a[^x]b', [[1, 'a\rb', 0, 3]]],
      ['d\\s$', [[3, 'd\r', 0, 2]]],
      [
        '\\r',
        [
          [1, 'a\rb', 1, 2],
          [3, 'd\r', 1, 2],
        ],
      ],
      ['\\r$', [[3, 'd\r', 1, 2]]],
      ['^[a-e]$', [[4, 'e', 0, 1]]],
      ['a.b', []],
    ] as Array<[string, Array<[number, string, number, number]>]>) {
      it(`a CR inside a CRLF line is text to ${JSON.stringify(pattern)}`, async () => {
        const matches = await grepIn(strayCr, pattern);
        expect(matches.map((m) => [m.line, m.text, m.matchStart, m.matchEnd])).toEqual(expected);
      });
    }

    it('a lone \\r ending the file ends its last line, as a read has it', async () => {
      const fs = await ctx.make({ files: { 'end.txt': 'x\r\nlast\r' } });
      const text = await fs.openText('end.txt');
      expect(await collect(text.lines())).toEqual(['x', 'last']);
      for (const pattern of ['last', '^last$', 't$']) {
        const matches = await collect(fs.grep(pattern));
        expect(
          matches.map((m) => [m.line, m.text]),
          pattern,
        ).toEqual([[2, 'last']]);
      }
      expect(await collect(fs.grep('\\r'))).toEqual([]);
    });

    it('spans count code points: emoji before the match', async () => {
      const [m] = await grepIn({ 'e.txt': '😀 x foo\n' }, 'foo');
      expect([m?.matchStart, m?.matchEnd]).toEqual([4, 7]);
    });

    it('spans count code points: CJK before the match', async () => {
      const [m] = await grepIn({ 'j.txt': '日本語テキスト\n' }, 'テキ');
      expect([m?.matchStart, m?.matchEnd]).toEqual([3, 5]);
    });

    it('spans count code points: the match itself is an emoji', async () => {
      const [m] = await grepIn({ 'e.txt': 'a😀b😀\n' }, '😀');
      expect(m?.spans).toEqual([
        { start: 1, end: 2 },
        { start: 3, end: 4 },
      ]);
    });

    it('several matches in one line are one GrepMatch with every span', async () => {
      const matches = await grepIn({ 'a.txt': 'foo bar foo\nnone\nfoofoo\n' }, 'foo');
      expect(matches.map((m) => [m.line, m.matchStart, m.matchEnd, m.spans])).toEqual([
        [
          1,
          0,
          3,
          [
            { start: 0, end: 3 },
            { start: 8, end: 11 },
          ],
        ],
        [
          3,
          0,
          3,
          [
            { start: 0, end: 3 },
            { start: 3, end: 6 },
          ],
        ],
      ]);
    });

    it('zero-length matches (^) match every line, empty lines included', async () => {
      const matches = await grepIn({ 'a.txt': 'a\n\nb\n' }, '^');
      expect(matches.map((m) => [m.line, m.text, m.spans])).toEqual([
        [1, 'a', [{ start: 0, end: 0 }]],
        [2, '', [{ start: 0, end: 0 }]],
        [3, 'b', [{ start: 0, end: 0 }]],
      ]);
    });

    it('a final line without newline is searched', async () => {
      const matches = await grepIn({ 'a.txt': 'x\nlast needle' }, 'needle');
      expect(matches.map((m) => [m.line, m.text])).toEqual([[2, 'last needle']]);
    });

    it('a very long line (beyond one chunk) is matched whole', async () => {
      const long = `${'a'.repeat(200_000)}needle${'b'.repeat(1000)}`;
      const [m] = await grepIn({ 'long.txt': `short\n${long}\nafter\n` }, 'needle');
      expect(m?.line).toBe(2);
      expect(m?.text.length).toBe(long.length);
      expect([m?.matchStart, m?.matchEnd]).toEqual([200_000, 200_006]);
    });

    it('a match straddling a 64 KiB boundary is found', async () => {
      const before = 'x'.repeat(65_533);
      const [m] = await grepIn({ 'edge.txt': `${before}needle\n` }, 'needle');
      expect([m?.line, m?.matchStart]).toEqual([1, 65_533]);
    });

    it('a multi-byte character split across a 64 KiB boundary decodes intact', async () => {
      const before = 'x'.repeat(65_535);
      const [m] = await grepIn({ 'edge.txt': `${before}€needle\n` }, '€needle');
      expect([m?.line, m?.matchStart, m?.matchEnd]).toEqual([1, 65_535, 65_542]);
    });
  });

  describe('options', () => {
    const THREE = { 'a.txt': 'hit 1\nhit 2\n', 'b.txt': 'hit 3\nhit 4\n', 'c.txt': 'hit 5\n' };

    it.each([
      [1, ['a.txt:1']],
      [3, ['a.txt:1', 'a.txt:2', 'b.txt:1']],
      [4, ['a.txt:1', 'a.txt:2', 'b.txt:1', 'b.txt:2']],
      [5, ['a.txt:1', 'a.txt:2', 'b.txt:1', 'b.txt:2', 'c.txt:1']],
      [50, ['a.txt:1', 'a.txt:2', 'b.txt:1', 'b.txt:2', 'c.txt:1']],
    ])('maxMatches %i counts lines across files', async (maxMatches, expected) => {
      const matches = await grepIn(THREE, 'hit', { maxMatches });
      expect(matches.map((m) => `${m.path}:${m.line}`)).toEqual(expected);
    });

    it('maxMatches 0 yields nothing', async () => {
      expect(await grepIn(THREE, 'hit', { maxMatches: 0 })).toEqual([]);
    });

    it('maxMatches counts lines, not spans', async () => {
      const matches = await grepIn({ 'a.txt': 'x x x\nx x\n' }, 'x', { maxMatches: 1 });
      expect(matches.map((m) => m.spans.length)).toEqual([3]);
    });

    it('maxMatches defaults to limits.maxGrepMatches', async () => {
      const fs = await ctx.make({ files: { 'many.txt': 'x\n'.repeat(1200) } });
      const matches = await collect(fs.grep('x'));
      expect(matches.length).toBe(Math.min(1200, fs.limits.maxGrepMatches));
    });

    it('a negative maxMatches is EINVAL', async () => {
      const fs = await ctx.make({ files: THREE });
      expect(await codeOf(collect(fs.grep('hit', { maxMatches: -1 })))).toBe('EINVAL');
    });

    it('ignoreCase', async () => {
      const files = { 'a.txt': 'Foo FOO foo\nbar\n' };
      expect((await grepIn(files, 'foo')).map((m) => m.spans.length)).toEqual([1]);
      expect((await grepIn(files, 'foo', { ignoreCase: true })).map((m) => m.spans.length)).toEqual([3]);
    });

    it('ignoreCase folds non-ASCII letters', async () => {
      const matches = await grepIn({ 'a.txt': 'ÄRGER\n' }, 'ärger', { ignoreCase: true });
      expect(matches.map((m) => m.line)).toEqual([1]);
    });

    it('literal treats regex metacharacters as text', async () => {
      const files = { 'a.txt': 'call a.b(x)\naxb(\n' };
      const matches = await grepIn(files, 'a.b(', { literal: true });
      expect(matches.map((m) => [m.line, m.matchStart, m.matchEnd])).toEqual([[1, 5, 9]]);
    });

    it.each(['a+b', '[x]', '^$', '\\d', 'a|b', '{1}', '$^.*'])('literal %j matches only itself', async (pattern) => {
      const matches = await grepIn({ 'a.txt': `zz${pattern}zz\nab\n1\n\nx\n` }, pattern, { literal: true });
      expect(matches.map((m) => [m.line, m.matchStart, m.matchEnd])).toEqual([[1, 2, 2 + [...pattern].length]]);
    });

    it('literal with ignoreCase', async () => {
      const matches = await grepIn({ 'a.txt': 'A.B(\n' }, 'a.b(', { literal: true, ignoreCase: true });
      expect(matches.map((m) => m.line)).toEqual([1]);
    });

    it.each(['(', 'a.b(', '[a-', '*', '(?<', 'a{2,1}'])('bad regex %j is EBADPATTERN', async (pattern) => {
      const fs = await ctx.make({ files: { 'a.txt': 'x\n' } });
      const err = await collect(fs.grep(pattern)).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EBADPATTERN', op: 'grep' });
    });

    it('no match yields nothing', async () => {
      expect(await grepIn(THREE, 'absent')).toEqual([]);
    });
  });

  describe('path and glob', () => {
    const TREE = {
      'c.ts': 'needle\n',
      'src/a.ts': 'needle\n',
      'src/a.md': 'needle\n',
      'src/deep/b.ts': 'needle\n',
      'other/d.ts': 'needle\n',
    };

    it('path: a file searches only that file', async () => {
      const matches = await grepIn(TREE, 'needle', { path: 'src/a.ts' });
      expect(matches.map(brief)).toEqual(['src/a.ts:1:needle']);
    });

    it('path: a directory searches below it, paths stay root-relative', async () => {
      const matches = await grepIn(TREE, 'needle', { path: 'src' });
      expect(matches.map((m) => m.path)).toEqual(['src/a.md', 'src/a.ts', 'src/deep/b.ts']);
    });

    it('path: missing is ENOENT', async () => {
      const fs = await ctx.make({ files: TREE });
      expect(await codeOf(collect(fs.grep('needle', { path: 'nope' })))).toBe('ENOENT');
    });

    it('path: escaping the root is EPATHESCAPE', async () => {
      const fs = await ctx.make({ files: TREE });
      expect(await codeOf(collect(fs.grep('needle', { path: '../' })))).toBe('EPATHESCAPE');
    });

    it('glob without a slash matches the base name at any depth', async () => {
      const matches = await grepIn(TREE, 'needle', { glob: '*.ts' });
      expect(matches.map((m) => m.path)).toEqual(['c.ts', 'other/d.ts', 'src/a.ts', 'src/deep/b.ts']);
    });

    it('glob with a slash matches the relative path', async () => {
      const matches = await grepIn(TREE, 'needle', { glob: 'src/*.ts' });
      expect(matches.map((m) => m.path)).toEqual(['src/a.ts']);
      const deep = await grepIn(TREE, 'needle', { glob: 'src/**/*.ts' });
      expect(deep.map((m) => m.path)).toEqual(['src/a.ts', 'src/deep/b.ts']);
    });

    it('glob is relative to a directory path', async () => {
      const matches = await grepIn(TREE, 'needle', { path: 'src', glob: 'deep/*.ts' });
      expect(matches.map((m) => m.path)).toEqual(['src/deep/b.ts']);
    });

    it('glob with braces', async () => {
      const matches = await grepIn(TREE, 'needle', { glob: '*.{md,ts}', path: 'src' });
      expect(matches.map((m) => m.path)).toEqual(['src/a.md', 'src/a.ts', 'src/deep/b.ts']);
    });

    it('dotfiles and dot directories are skipped unless dot', async () => {
      const files = { '.env': 'needle\n', '.hidden/x.txt': 'needle\n', 'v.txt': 'needle\n' };
      expect((await grepIn(files, 'needle')).map((m) => m.path)).toEqual(['v.txt']);
      expect((await grepIn(files, 'needle', { dot: true })).map((m) => m.path)).toEqual(['.env', '.hidden/x.txt', 'v.txt']);
    });

    it('an explicit dotfile or dot directory path is searched without dot', async () => {
      const files = { '.env': 'needle\n', '.hidden/x.txt': 'needle\n', '.hidden/.inner': 'needle\n' };
      expect((await grepIn(files, 'needle', { path: '.env' })).map((m) => m.path)).toEqual(['.env']);
      expect((await grepIn(files, 'needle', { path: '.hidden' })).map((m) => m.path)).toEqual(['.hidden/x.txt']);
    });

    it('files come in path order (a directory before a sibling that sorts after it), lines ascending', async () => {
      const files = { 'b.txt': 'n\nn\n', 'a.txt': 'n\n', 'a/z.txt': 'n\n', 'A.txt': 'n\n', '_.txt': 'n\n' };
      const matches = await grepIn(files, 'n');
      expect(matches.map((m) => `${m.path}:${m.line}`)).toEqual(['A.txt:1', '_.txt:1', 'a/z.txt:1', 'a.txt:1', 'b.txt:1', 'b.txt:2']);
    });

    it('is lazy: breaking early works and a second search is independent', async () => {
      const fs = await ctx.make({ files: TREE });
      for await (const m of fs.grep('needle')) {
        expect(m.path).toBe('c.ts');
        break;
      }
      expect((await collect(fs.grep('needle'))).length).toBe(5);
    });
  });

  describe('encodings and binary files', () => {
    it('a file with a NUL in its first 8 KiB is skipped', async () => {
      const files = { 'bin.dat': concat(utf8('needle\n'), new Uint8Array([0, 1, 2]), utf8('\nneedle\n')), 't.txt': 'needle\n' };
      expect((await grepIn(files, 'needle')).map((m) => m.path)).toEqual(['t.txt']);
    });

    it('a NUL just before 8 KiB still marks the file binary', async () => {
      const bytes = concat(utf8('needle\n'), utf8('x'.repeat(8000)), new Uint8Array([0]), utf8('\n'));
      expect(await grepIn({ 'b.dat': bytes }, 'needle')).toEqual([]);
    });

    it('a NUL found late (past 64 KiB) keeps the matches found before it and stops', async () => {
      const filler = utf8(`${'x'.repeat(99)}\n`.repeat(700));
      const bytes = concat(utf8('needle one\n'), filler, new Uint8Array([0]), utf8('\nneedle after\n'));
      const matches = await grepIn({ 'late.txt': bytes }, 'needle');
      expect(matches[0]).toMatchObject({ line: 1, text: 'needle one' });
      expect(matches.some((m) => m.text === 'needle after')).toBe(false);
    });

    it('a UTF-8 BOM is not part of the first line', async () => {
      const matches = await grepIn({ 'bom.txt': concat(new Uint8Array([0xef, 0xbb, 0xbf]), utf8('needle\n')) }, '^needle');
      expect(matches.map((m) => [m.line, m.text, m.matchStart])).toEqual([[1, 'needle', 0]]);
    });

    it('a UTF-16LE file with BOM is searched as text', async () => {
      const matches = await grepIn({ 'wide.txt': utf16le('hello\r\nthe needle\r\n') }, 'needle');
      expect(matches.map((m) => [m.line, m.text, m.matchStart])).toEqual([[2, 'the needle', 4]]);
    });

    it('invalid UTF-8 does not hide a match', async () => {
      const bytes = concat(utf8('caf'), new Uint8Array([0xe9]), utf8(' needle\n'));
      const matches = await grepIn({ 'latin.txt': bytes }, 'needle');
      expect(matches.map((m) => [m.line, m.matchStart])).toEqual([[1, 5]]);
    });

    it('legacy-encoded files are searched as text reads decode them: the real text is found, shown and nothing else', async () => {
      const ru = 'Псевдоним для %s не найден.\nПроверьте имя.\n';
      const files: Record<string, Uint8Array> = {
        'koi8.txt': encodeText(ru, 'koi8-r'),
        // Past the first 64 KiB of ASCII: detected where its first non-ASCII line starts.
        'late.txt': concat(utf8('// ascii\n'.repeat(8000)), encodeText(ru, 'windows-1251')),
        // ソ is 0x83 0x5C in Shift_JIS: a backslash to a byte search, none in the text.
        'sjis.txt': encodeText('ソースが見つかりません: %s\nplain ascii\n', 'shift_jis'),
        'latin.txt': encodeText('café crème\nnaïve\n', 'windows-1252'),
        'utf8.txt': utf8('Псевдоним в UTF-8, café\n'),
      };
      const fs = await ctx.make({ files });
      const cases: Array<[string, GrepOptions]> = [
        ['Псевдоним', {}],
        ['имя', { literal: true }],
        ['[а-я]+ для', {}],
        ['ПРОВЕРЬТЕ', { ignoreCase: true }],
        ['見つかり', {}],
        ['café', {}],
        ['na.ve', {}],
        ['%s', {}],
        ['\\\\', {}],
        ['^', {}],
      ];
      for (const [pattern, options] of cases) {
        const matcher = compileGrep(pattern, options);
        const expected: string[] = [];
        for (const path of Object.keys(files).sort()) {
          await using reader = await fs.openText(path);
          let n = 0;
          for await (const line of reader.lines()) {
            n++;
            if (matcher.spans(line).length > 0) expected.push(`${path}:${n}:${line}`);
          }
        }
        expect((await collect(fs.grep(pattern, { ...options, maxMatches: 100_000 }))).map(brief), pattern).toEqual(expected);
      }
      expect((await collect(fs.grep('Псевдоним'))).map(brief)).toEqual([
        'koi8.txt:1:Псевдоним для %s не найден.',
        'late.txt:8001:Псевдоним для %s не найден.',
        'utf8.txt:1:Псевдоним в UTF-8, café',
      ]);
      expect(await collect(fs.grep('\\\\', { path: 'sjis.txt' }))).toEqual([]);
    });

    it('an empty file yields nothing', async () => {
      expect(await grepIn({ 'empty.txt': '' }, '^')).toEqual([]);
    });

    it('empty directories and empty trees yield nothing', async () => {
      const fs = await ctx.make({ dirs: ['e/f'] });
      expect(await collect(fs.grep('x'))).toEqual([]);
    });
  });

  describe('no pattern stalls the search', () => {
    const files = { 'long.txt': `${CATASTROPHIC_LONG_LINE}\n${CATASTROPHIC_SHORT_LINE}\n` };

    for (const { pattern, why, expected } of CATASTROPHIC_PATTERNS) {
      it(`${JSON.stringify(pattern)} (${why}) over a 50 KB line`, async () => {
        const fs = await ctx.make({ files });
        const started = performance.now();
        const outcome = await collect(fs.grep(pattern)).then(
          (matches) => matches.map((m) => m.line),
          (err: unknown) => (err as { code?: string }).code,
        );
        expect(performance.now() - started, `bound ${CATASTROPHIC_BOUND_MS} ms`).toBeLessThan(CATASTROPHIC_BOUND_MS);
        expect(outcome).toEqual(expected);
      });
    }

    it('a refused pattern says why and what to write instead', async () => {
      const fs = await ctx.make({ files });
      const err = await collect(fs.grep('(a)\\1')).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EBADPATTERN', op: 'grep' });
      expect((err as Error).message).toMatch(/backreference/);
      expect((err as { hint: string }).hint).toMatch(/spell the repeated text out/);
    });

    it('the spans of a long line stay exact as far as they go', async () => {
      const fs = await ctx.make({ files });
      const [long, short] = await collect(fs.grep('a(.*z)?'));
      expect(short?.spans).toEqual([0, 1, 2, 3].map((i) => ({ start: i, end: i + 1 })));
      expect([long?.matchStart, long?.matchEnd]).toEqual([0, 1]);
      expect(long?.spans.length).toBeGreaterThan(0);
      expect(long?.spans).toEqual(long?.spans.map((_, i) => ({ start: i, end: i + 1 })));
    });
  });
}
