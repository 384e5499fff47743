import { CATASTROPHIC_LONG_LINE, CATASTROPHIC_PATTERNS, CATASTROPHIC_SHORT_LINE } from '@ctxfs/conformance';
import { describe, expect, it } from 'vitest';
import { type DetectOptions, encodeText } from '../src/encoding.ts';
import { codePointOffset, compileGrep, scanChunks } from '../src/grep.ts';
import { chardetDetector } from '../src/legacy-detector.ts';
import { ESCAPE_LINE, NOT_UTF8_LINE } from '../src/regex-dialect.ts';
import type { GrepMatch } from '../src/types.ts';
import { npmFile } from './support/npm-package.ts';
import { unitsTouched } from './support/string-work.ts';

const enc = (s: string) => new TextEncoder().encode(s);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Cuts `bytes` into chunks of `size` (the last may be shorter). */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

async function scan(bytes: Uint8Array, pattern: string, size = 65536, limit = 1000, options = {}, detect?: DetectOptions): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  for await (const m of scanChunks('f', chunked(bytes, size), compileGrep(pattern, options), limit, detect)) out.push(m);
  return out;
}

const lineOf = (m: GrepMatch) => [m.line, m.text];

describe('compileGrep', () => {
  it('finds every non-overlapping span', () => {
    expect(compileGrep('aa').spans('aaaaa')).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
    ]);
  });

  it('no match is an empty list', () => {
    expect(compileGrep('x').spans('abc')).toEqual([]);
  });

  it('spans are code points when the line has surrogate pairs', () => {
    expect(compileGrep('b').spans('😀😀b')).toEqual([{ start: 2, end: 3 }]);
    expect(compileGrep('😀+').spans('a😀😀b')).toEqual([{ start: 1, end: 3 }]);
  });

  it('unicode mode: . matches a whole astral character', () => {
    expect(compileGrep('a.b').spans('a😀b')).toEqual([{ start: 0, end: 3 }]);
  });

  it('zero-length matches step over surrogate pairs without splitting them', () => {
    expect(compileGrep('').spans('😀a')).toEqual([
      { start: 0, end: 0 },
      { start: 1, end: 1 },
      { start: 2, end: 2 },
    ]);
    expect(compileGrep('^').spans('abc')).toEqual([{ start: 0, end: 0 }]);
    expect(compileGrep('x*').spans('ab')).toEqual([
      { start: 0, end: 0 },
      { start: 1, end: 1 },
      { start: 2, end: 2 },
    ]);
  });

  it('ignoreCase', () => {
    expect(compileGrep('abc', { ignoreCase: true }).spans('xABCx')).toEqual([{ start: 1, end: 4 }]);
  });

  it('literal escapes every metacharacter', () => {
    const special = '\\^$.*+?()[]{}|/-';
    expect(compileGrep(special, { literal: true }).spans(`x${special}x`)).toEqual([{ start: 1, end: 1 + special.length }]);
    expect(compileGrep('a.b', { literal: true }).spans('axb')).toEqual([]);
  });

  it('any escaped punctuation is that character (as in ripgrep)', () => {
    expect(compileGrep('a\\-b\\/c\\<').spans('a-b/c<')).toEqual([{ start: 0, end: 6 }]);
  });

  it.each(['(', '[a-', '*', 'a{2,1}', '(?<x', '[^]', 'a**'])('bad regex %j is EBADPATTERN, said once', (pattern) => {
    expect(() => compileGrep(pattern)).toThrow(expect.objectContaining({ code: 'EBADPATTERN', op: 'grep' }));
    const err = (() => {
      try {
        compileGrep(pattern);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toMatch(/^EBADPATTERN: invalid regular expression: [a-z]/);
    expect(err?.message).not.toMatch(/invalid regular expression.*invalid regular expression/i);
  });

  it('a non-string pattern is EBADPATTERN', () => {
    expect(() => compileGrep(undefined as unknown as string)).toThrow(expect.objectContaining({ code: 'EBADPATTERN' }));
  });

  it('the matcher is reusable: lastIndex never leaks between lines', () => {
    const m = compileGrep('a');
    expect(m.spans('aaa').length).toBe(3);
    expect(m.spans('a')).toEqual([{ start: 0, end: 1 }]);
  });
});

describe('rustLegacyPattern: what ripgrep is given beside the pattern for legacy-encoded files', () => {
  const none = undefined;
  it.each<[string, { literal?: boolean; ignoreCase?: boolean }, string | undefined]>([
    ['alpha', {}, none], // ASCII text is the same bytes in every ASCII-compatible encoding
    ['al+pha\\b\\d\\w [a-z_]', {}, none],
    ['\\x41\\u0042', {}, none],
    ['a.b', { literal: true }, none],
    ['ALPHA', { ignoreCase: true }, none],
    // Atoms that may match outside ASCII are widened to legacy bytes; ISO-2022-JP's lines come by their escapes.
    ['a.b', {}, ESCAPE_LINE],
    ['[^a]', {}, ESCAPE_LINE],
    ['\\W|\\S|\\D', {}, ESCAPE_LINE],
    ['\\s', {}, ESCAPE_LINE], // Unicode white space: U+00A0 in every 8-bit code page
    ['\\p{Greek}', {}, ESCAPE_LINE],
    ['[а-я]', {}, ESCAPE_LINE],
    ['[a-\\x{ff}]', {}, ESCAPE_LINE],
    ['[[:^alpha:]]', {}, ESCAPE_LINE],
    // Text outside ASCII has no bytes to widen: every line that is not UTF-8 comes along.
    ['café', {}, NOT_UTF8_LINE],
    ['café', { literal: true }, NOT_UTF8_LINE],
    ['\\u00e9', {}, NOT_UTF8_LINE],
    ['\\Qé\\E', {}, NOT_UTF8_LINE],
    ['x.*é', {}, NOT_UTF8_LINE],
  ])('%j %j', (pattern, options, expected) => {
    expect(compileGrep(pattern, options).rustLegacyPattern).toBe(expected);
  });

  it('widens what may match outside ASCII to the bytes of every legacy shape', () => {
    const rust = compileGrep('a.b').rustPattern ?? '';
    for (const shape of ['[\\x80-\\xff]{1,3}', '[\\x80-\\xff][\\x40-\\x7e]', '[\\x81-\\xfe][\\x30-\\x39][\\x81-\\xfe][\\x30-\\x39]'])
      expect(rust).toContain(shape);
    expect(compileGrep('a\\wb').rustPattern).not.toContain('\\x80');
  });
});

describe('codePointOffset', () => {
  it.each<[string, number, number]>([
    ['abc', 0, 0],
    ['abc', 3, 3],
    ['😀abc', 2, 1],
    ['😀abc', 3, 2],
    ['a😀😀b', 5, 3],
    ['日本', 2, 2],
    ['a😀', 2, 2], // an index inside a pair counts the high surrogate as one
  ])('%j at %i → %i', (s, index, expected) => {
    expect(codePointOffset(s, index)).toBe(expected);
  });
});

describe('scanChunks', () => {
  const TEXT = enc('alpha\r\nbeta needle\r\n€uro needle\nlast needle');

  it.each([1, 2, 3, 5, 7, 64, 65536])('gives the same lines for chunks of %i bytes', async (size) => {
    const matches = await scan(TEXT, 'needle', size);
    expect(matches.map(lineOf)).toEqual([
      [2, 'beta needle'],
      [3, '€uro needle'],
      [4, 'last needle'],
    ]);
    expect(matches.map((m) => m.matchStart)).toEqual([5, 5, 5]);
  });

  it('a CR split from its LF by a chunk boundary still ends the line', async () => {
    const bytes = enc('ab\r\ncd\r\n');
    const matches = await scan(bytes, '$', 3);
    expect(matches.map(lineOf)).toEqual([
      [1, 'ab'],
      [2, 'cd'],
    ]);
  });

  it('a lone CR is part of the line, not a terminator', async () => {
    expect((await scan(enc('a\rb\n'), 'b')).map(lineOf)).toEqual([[1, 'a\rb']]);
  });

  it('limit stops after that many lines', async () => {
    const matches = await scan(enc('x\nx\nx\nx\n'), 'x', 1, 2);
    expect(matches.map((m) => m.line)).toEqual([1, 2]);
  });

  it('limit 0 yields nothing', async () => {
    expect(await scan(enc('x\n'), 'x', 65536, 0)).toEqual([]);
  });

  it('binary: a NUL in the first chunk skips the file', async () => {
    expect(await scan(concat(enc('needle\n'), new Uint8Array([0])), 'needle')).toEqual([]);
  });

  it.each([1, 100, 4096])('binary: a NUL within the first 8 KiB skips the file even with %i-byte chunks', async (size) => {
    const bytes = concat(enc('needle\n'), enc('x'.repeat(5000)), new Uint8Array([0]), enc('\n'));
    expect(await scan(bytes, 'needle', size)).toEqual([]);
  });

  it('a NUL after the detection window stops the scan but keeps earlier matches', async () => {
    const bytes = concat(enc('needle 1\n'), enc(`${'x'.repeat(99)}\n`.repeat(700)), new Uint8Array([0]), enc('\nneedle 2\n'));
    const matches = await scan(bytes, 'needle', 65536);
    expect(matches.map(lineOf)).toEqual([[1, 'needle 1']]);
  });

  it.each([1, 2, 65536])('a UTF-8 BOM is stripped with %i-byte chunks', async (size) => {
    const matches = await scan(concat(new Uint8Array([0xef, 0xbb, 0xbf]), enc('needle\n')), '^needle', size);
    expect(matches.map(lineOf)).toEqual([[1, 'needle']]);
  });

  it.each([1, 3, 65536])('UTF-16LE with BOM is decoded with %i-byte chunks', async (size) => {
    const body = 'one\r\ntwo needle\r\n';
    const bytes = new Uint8Array(2 + body.length * 2);
    bytes[0] = 0xff;
    bytes[1] = 0xfe;
    for (let i = 0; i < body.length; i++) bytes[2 + i * 2] = body.charCodeAt(i);
    const matches = await scan(bytes, 'needle', size);
    expect(matches.map(lineOf)).toEqual([[2, 'two needle']]);
    expect(matches[0]?.matchStart).toBe(4);
  });

  it('UTF-16BE with BOM is decoded', async () => {
    const body = 'a\nneedle\n';
    const bytes = new Uint8Array(2 + body.length * 2);
    bytes[0] = 0xfe;
    bytes[1] = 0xff;
    for (let i = 0; i < body.length; i++) bytes[3 + i * 2] = body.charCodeAt(i);
    expect((await scan(bytes, 'needle')).map(lineOf)).toEqual([[2, 'needle']]);
  });

  it('decodes a legacy-encoded file as a text read does: its detector, from its first non-ASCII line', async () => {
    const ru = 'Псевдоним для %s не найден.\nПроверьте имя.\n';
    const detect = { legacyDetector: chardetDetector };
    for (const size of [1, 7, 4096, 65536]) {
      expect((await scan(encodeText(ru, 'koi8-r'), 'имя', size, 1000, {}, detect)).map(lineOf), `koi8-r, chunks of ${size}`).toEqual([[2, 'Проверьте имя.']]);
    }
    // Past the 64 KiB window of ASCII: detected again where the first non-ASCII line starts.
    const late = concat(enc('// ascii\n'.repeat(8000)), encodeText(ru, 'windows-1251'));
    expect((await scan(late, 'для|ascii$', 65536, 1, {}, detect)).map(lineOf)).toEqual([[1, '// ascii']]);
    expect((await scan(late, 'для', 4096, 1000, {}, detect)).map(lineOf)).toEqual([[8001, 'Псевдоним для %s не найден.']]);
    // Without a detector, the fallback every reader has: windows-1252.
    expect((await scan(encodeText('café\n', 'windows-1252'), 'é')).map(lineOf)).toEqual([[1, 'café']]);
  });

  it('valid UTF-8 is never taken for a legacy encoding, nor control bytes for binary', async () => {
    const detect = { legacyDetector: chardetDetector };
    expect((await scan(enc('Псевдоним\n'), 'Псевдоним', 65536, 1000, {}, detect)).map(lineOf)).toEqual([[1, 'Псевдоним']]);
    expect((await scan(enc('bell \u0007 needle\n'), 'needle', 65536, 1000, {}, detect)).map(lineOf)).toEqual([[1, 'bell \u0007 needle']]);
  });

  it('a 4-byte character split over 1-byte chunks keeps code-point spans right', async () => {
    const matches = await scan(enc('😀😀 needle\n'), 'needle', 1);
    expect([matches[0]?.matchStart, matches[0]?.matchEnd]).toEqual([3, 9]);
  });

  it('empty input yields nothing', async () => {
    expect(await scan(new Uint8Array(0), '^')).toEqual([]);
  });

  it('only newlines: every line is empty and numbered', async () => {
    expect((await scan(enc('\n\n\n'), '^$')).map(lineOf)).toEqual([
      [1, ''],
      [2, ''],
      [3, ''],
    ]);
  });

  it('closes the source when the consumer stops early', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<Uint8Array> {
      try {
        yield enc('x\n');
        yield enc('x\n');
      } finally {
        closed = true;
      }
    }
    for await (const _ of scanChunks('f', source(), compileGrep('x'), 10)) break;
    expect(closed).toBe(true);
  });

  it('reports the path it was given', async () => {
    const out: GrepMatch[] = [];
    for await (const m of scanChunks('dir/x.txt', chunked(enc('hit\n'), 10), compileGrep('hit'), 5)) out.push(m);
    expect(out[0]?.path).toBe('dir/x.txt');
  });
});

describe('scanChunks literal skipping', () => {
  it('finds exactly what the regex path finds, at the same line numbers, across chunk boundaries', async () => {
    const { compileGrep, scanChunks } = await import('@ctxfs/core');
    let seed = 5;
    const rand = (n: number) => {
      // Math.imul keeps the product exact; the high bits are the random ones.
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const words = ['alpha', 'beta', 'needle', 'nee', 'dle', 'gamma', '😀', '漢字', '\r\n', '\n', '\n', ' '];
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: 50 + rand(400) }, () => words[rand(words.length)]).join('');
      const bytes = new TextEncoder().encode(text);
      const size = 1 + rand(40);
      const chunked = async function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
      };
      const fast = compileGrep('needle');
      expect(fast.literal).toBe('needle');
      // The same search as a regex, with no literal hint, takes the line-by-line regex path.
      const slow = compileGrep('(?:needle)');
      expect(slow.literal).toBeUndefined();
      const a: unknown[] = [];
      for await (const m of scanChunks('f', chunked(), fast, 10_000)) a.push(m);
      const b: unknown[] = [];
      for await (const m of scanChunks('f', chunked(), slow, 10_000)) b.push(m);
      expect(a, `round ${round}`).toEqual(b);
    }
  });

  it('offers a literal only for plain case-sensitive patterns', async () => {
    const { compileGrep } = await import('@ctxfs/core');
    expect(compileGrep('a.b').literal).toBeUndefined();
    expect(compileGrep('a.b', { literal: true }).literal).toBe('a.b');
    expect(compileGrep('abc', { ignoreCase: true }).literal).toBeUndefined();
    expect(compileGrep('plain words-here').literal).toBe('plain words-here');
  });
});

describe('the dialect: ripgrep syntax, refused where no linear engine can go', () => {
  const spans = (pattern: string, line: string, options = {}) =>
    compileGrep(pattern, options)
      .spans(line)
      .map((s) => [s.start, s.end]);

  it.each([
    ['(a)\\1', /backreference `\\1`/, /spell the repeated text out/],
    ['(?<w>a)\\k<w>', /backreference `\\k<w>`/, /spell the repeated text out/],
    ['(?P<w>a)(?P=w)', /backreference `\(\?P=name\)`/, /spell the repeated text out/],
    ['(?=a)b', /look-ahead `\(\?=`/, /match the surrounding text/],
    ['a(?!b)', /look-ahead `\(\?!`/, /match the surrounding text/],
    ['(?<=const )alpha', /look-behind `\(\?<=`/, /`const alpha`/],
    ['(?<!x)y', /look-behind `\(\?<!`/, /match the surrounding text/],
    ['(?>a+)b', /atomic group/, /plain group `\(\?:…\)`/],
    ['a++b', /possessive quantifier `\+\+`/, /drop the last `\+`/],
    ['a{2}+', /possessive quantifier `\}\+`/, /drop the last `\+`/],
    ['(\\w{1,900}x)+', /pattern too large .* the limit is 1,000/, /smaller count/],
  ])('%j is refused: %s', (pattern, reason, hint) => {
    let err: { code?: string; reason?: string; hint?: string } | undefined;
    try {
      compileGrep(pattern);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err?.code).toBe('EBADPATTERN');
    expect(err?.reason).toMatch(reason);
    expect(err?.hint).toMatch(hint);
  });

  it('JavaScript spellings of code points work: \\u, \\u{}, surrogate pairs, \\c, \\0', () => {
    expect(spans('\\u00e9\\u{1F600}\\uD83D\\uDE00', 'xé😀😀')).toEqual([[1, 4]]);
    expect(spans('a\\cIb', 'a\tb')).toEqual([[0, 3]]);
    expect(spans('\\x41\\x{42}', 'AB')).toEqual([[0, 2]]);
  });

  it('\\d, \\w and \\b are ASCII; \\s is Unicode white space', () => {
    expect(spans('\\d+', '٣3')).toEqual([[1, 2]]);
    expect(spans('\\w+', 'naïve')).toEqual([
      [0, 2],
      [3, 5],
    ]);
    expect(spans('\\bve', 'naïve')).toEqual([[3, 5]]);
    expect(spans('a\\sb', 'a\u00a0b a\u3000b a\vb')).toEqual([
      [0, 3],
      [4, 7],
      [8, 11],
    ]);
    expect(spans('[^\\s]+', 'x\u00a0y')).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(spans('\\S', '\u2028')).toEqual([]);
  });

  it('. matches neither \\n nor \\r (a lone CR stays in a line), unless (?s)', () => {
    expect(spans('a.b', 'a\rb axb')).toEqual([[4, 7]]);
    expect(spans('(?s)a.b', 'a\rb')).toEqual([[0, 3]]);
  });

  it('RE2 and Rust spellings: (?P<name>), (?<name>), \\Q…\\E, POSIX classes, \\p{…}, inline flags, lazy quantifiers', () => {
    expect(spans('(?P<a>x)(?<b>y)', 'xy')).toEqual([[0, 2]]);
    expect(spans('\\Qa.b(\\E', 'axb( a.b(')).toEqual([[5, 9]]);
    expect(spans('[[:upper:]]+', 'abCDe')).toEqual([[2, 4]]);
    expect(spans('\\p{Greek}+', 'x αβ y')).toEqual([[2, 4]]);
    expect(spans('(?i)straße', 'STRASSE Straße')).toEqual([[8, 14]]);
    expect(spans('<.+?>', '<a><b>')).toEqual([
      [0, 3],
      [3, 6],
    ]);
  });

  it('ignoreCase folds Unicode letters', () => {
    expect(spans('ärger', 'ÄRGER', { ignoreCase: true })).toEqual([[0, 5]]);
  });

  it('hands ripgrep a rendering that matches the same lines or more', () => {
    const rust = (pattern: string, literal = false) => compileGrep(pattern, { literal }).rustPattern;
    expect(rust('\\bword\\B')).toBe('(?-u:\\b)word(?-u:\\B)');
    expect(rust('\\d\\w')).toBe('[0-9][0-9A-Z\\x{5f}a-z]');
    // What may match outside ASCII (U+FFFD of invalid UTF-8, a legacy character) also matches the raw bytes there.
    const bytes = '(?-u:[\\x80-\\xff]{1,3}|[\\x80-\\xff][\\x40-\\x7e]|[\\x81-\\xfe][\\x30-\\x39][\\x81-\\xfe][\\x30-\\x39])';
    expect(rust('\\W')).toBe(`(?:[^0-9A-Z\\x{5f}a-z]|${bytes})`);
    expect(rust('[a-z]')).toBe('[a-z]');
    expect(rust('[^a-z]')).toBe(`(?:[^a-z]|${bytes})`);
    // ripgrep sees a CRLF line with its CR, which the scanner's line ends before.
    expect(rust('\\Aa|b\\z')).toBe('^a|b(?:\\x{d}?$)');
    expect(rust('b$')).toBe('b(?:\\x{d}?$)');
    expect(rust('(?<n>a)\\Qa.b\\E{x}')).toBe('(?P<n>a)a\\.b\\{x\\}');
    expect(rust('a\\nb')).toBeUndefined();
    expect(rust('a\\rb')).toBe('a\\x{d}b');
    expect(rust('[\\r]$')).toBe('[\\x{d}](?:\\x{d}?$)');
    expect(rust('a.b(', true)).toBe('a\\.b\\(');
  });
});

describe('no pattern stalls the scanner (the catalogue shared with the conformance suite)', () => {
  for (const { pattern, why, expected } of CATASTROPHIC_PATTERNS) {
    it(`${JSON.stringify(pattern)}: ${why}`, () => {
      const started = performance.now();
      let outcome: number[] | string;
      try {
        const matcher = compileGrep(pattern);
        outcome = [CATASTROPHIC_LONG_LINE, CATASTROPHIC_SHORT_LINE].flatMap((line, i) => (matcher.spans(line).length > 0 ? [i + 1] : []));
      } catch (err) {
        outcome = (err as { code: string }).code;
      }
      expect(outcome).toEqual(expected);
      // Hang prevention only; bench/ measures speed.
      expect(performance.now() - started).toBeLessThan(5_000);
    });
  }

  it('a line of a few hundred characters gets every span even when listing them is quadratic', () => {
    const line = 'a'.repeat(500);
    expect(compileGrep('a(.*z)?').spans(line)).toEqual(Array.from({ length: 500 }, (_, i) => ({ start: i, end: i + 1 })));
  });

  it('a long line keeps its first span exact and a prefix of the rest when listing them all would be quadratic', () => {
    const spans = compileGrep('a(.*z)?').spans(CATASTROPHIC_LONG_LINE);
    expect(spans.length).toBeGreaterThan(16);
    expect(spans.length).toBeLessThan(50_000);
    expect(spans).toEqual(spans.map((_, i) => ({ start: i, end: i + 1 })));
  });

  it('a pattern of bounded length lists every span of a long line', () => {
    expect(compileGrep('[ab]').spans(CATASTROPHIC_LONG_LINE).length).toBe(50_000);
    expect(compileGrep('(?:)').spans('x'.repeat(100_000)).length).toBe(100_001);
  });

  it('code-point spans of a long astral line are counted in one pass', () => {
    const line = '😀'.repeat(100_000);
    const started = performance.now();
    const spans = compileGrep('[😀]').spans(line);
    expect(spans.length).toBe(100_000);
    expect(spans[99_999]).toEqual({ start: 99_999, end: 100_000 });
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('scanChunks: a NUL past the detection window', () => {
  it.each([65536, 4096, 1])('ends the search there, keeping the lines before it in the same chunk (%i-byte chunks)', async (size) => {
    const bytes = concat(enc(`${'x'.repeat(99)}\n`.repeat(90)), enc('needle before\nneedle partial'), new Uint8Array([0]), enc(' rest\nneedle after\n'));
    const matches = await scan(bytes, 'needle', size);
    expect(matches.map(lineOf)).toEqual([
      [91, 'needle before'],
      [92, 'needle partial'],
    ]);
  });
});

describe('agrees with V8 on ordinary patterns over real files (pinned npm packages)', () => {
  const FILES: Array<[string, string]> = [
    ['lodash@4.17.21', 'lodash.js'],
    ['moment@2.30.1', 'locale/ru.js'],
    ['moment@2.30.1', 'locale/zh-cn.js'],
    ['emojilib@2.4.0', 'emojis.json'],
  ];
  // Patterns whose meaning is the same in both dialects on these files (no `\\s` next to U+FEFF or U+0085, no `.` next to U+2028).
  const PATTERNS = [
    'function\\s+\\w+',
    'require\\([\'"][^\'"]+[\'"]\\)',
    '\\bvar\\b',
    'undefined|null|NaN',
    '[A-Z][a-z]+Error',
    '^\\s*//',
    '\\d+\\.\\d+',
    'return\\s+[^;]+;',
    '(\\w+)\\s*=\\s*function',
    "'[^']*'",
    '[а-яё]+',
    '[\\u4e00-\\u9fff]{2,}',
    '[^\\x00-\\x7f]+',
    '.',
    '',
    '\\b',
  ];
  const lines = FILES.flatMap(([spec, file]) => npmFile(spec, file).split(/\r?\n/));

  it('reads enough real text', () => {
    expect(lines.length).toBeGreaterThan(17_000);
    expect(lines.some((l) => /[\u{1F300}-\u{1FAFF}]/u.test(l))).toBe(true);
  });

  it.each(PATTERNS)('%j: the same spans on every line', (pattern) => {
    const ours = compileGrep(pattern);
    const v8 = new RegExp(pattern, 'gu');
    let matched = 0;
    for (const line of lines) {
      const expected: Array<{ start: number; end: number }> = [];
      for (const m of line.matchAll(v8)) expected.push({ start: codePointOffset(line, m.index), end: codePointOffset(line, m.index + m[0].length) });
      const got = ours.spans(line);
      if (got.length > 0) matched++;
      if (JSON.stringify(got) !== JSON.stringify(expected)) expect({ line, got }).toEqual({ line, got: expected });
    }
    expect(matched).toBeGreaterThan(0);
  });
});

describe('a single giant line through the scanner costs linear work', () => {
  const CHUNKS = 2000;
  const piece = new TextEncoder().encode('function f(a,b){return a*b};'.repeat(35)); // 1,015 bytes, no newline
  const total = CHUNKS * piece.byteLength;
  async function* chunks(tail: string): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < CHUNKS; i++) yield piece;
    yield new TextEncoder().encode(tail);
  }

  it.each([
    ['a plain literal (the skipping path)', 'NEEDLE_AT_THE_END'],
    ['a regular expression (the splitting path)', 'NEEDLE_[A-Z_]+END'],
  ])('%s', async (_what, pattern) => {
    const found: GrepMatch[] = [];
    const units = await unitsTouched(async () => {
      for await (const m of scanChunks('min.js', chunks('NEEDLE_AT_THE_END'), compileGrep(pattern), 10)) found.push(m);
    });
    expect(found.map((m) => [m.line, m.matchStart])).toEqual([[1, total]]);
    // A few passes (the regex engine's searches of the finished line count whole each time); per-chunk re-joining would be about CHUNKS / 2.
    expect(units).toBeLessThan(16 * total);
  });
});
