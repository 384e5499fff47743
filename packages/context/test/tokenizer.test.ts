import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import fc from 'fast-check';
import { get_encoding } from 'tiktoken';
import { describe, expect, test } from 'vitest';
import { o200kTokenizer, truncateTokens } from '../src/index.ts';
import { BpeEncoder } from '../src/tokens/bpe-encoder.ts';
import { BpeVocabulary } from '../src/tokens/bpe-vocabulary.ts';
import { O200K_SPLIT_ASCII, o200kUnicodeSplit } from '../src/tokens/tokenizer.ts';
import { loadVocabulary } from '../src/tokens/vocabulary-cache.ts';
import { nodeTypesText } from './support/node-types.ts';
import { npmPackage } from './support/npm-package.ts';

/**
 * The reference ours must equal token for token: tiktoken, OpenAI's own Rust
 * encoder built to WebAssembly. (gpt-tokenizer, whose rank file we read, is
 * not one: it splits U+FEFF, one o200k token, into two.)
 */
const tiktoken = get_encoding('o200k_base');
const reference = { encode: (text: string): number[] => [...tiktoken.encode(text, [], [])] };

describe('tokenizer', () => {
  test('counts with the real o200k vocabulary, not length/4', () => {
    expect(o200kTokenizer.count('')).toBe(0);
    expect(o200kTokenizer.count('hello world')).toBe(2);
    // CJK and code differ sharply from the length/4 heuristic.
    const cjk = '日本語のテキストは文字ごとにトークンが多い。';
    expect(o200kTokenizer.count(cjk)).not.toBe(Math.ceil(cjk.length / 4));
    expect(o200kTokenizer.decode(o200kTokenizer.encode('const x = 1;'))).toBe('const x = 1;');
  });

  test('a whitespace-free run of 1,024 characters or more is tokenized in slices of 512, so one pathological line cannot stall a call', () => {
    // Before: BPE merged one 300,000-letter pre-token for over a minute (vitest's timeout ends this test long before).
    const line = 'x'.repeat(300_000);
    const slice = o200kTokenizer.count('x'.repeat(512));
    expect(o200kTokenizer.count(line)).toBe(slice * ((300_000 / 512) | 0) + o200kTokenizer.count('x'.repeat(300_000 % 512)));
    expect(o200kTokenizer.decode(o200kTokenizer.encode(line))).toBe(line);
    expect(o200kTokenizer.encode(line)).toHaveLength(o200kTokenizer.count(line));
    // A slice never splits a surrogate pair, and text around the run is counted as it is.
    const emoji = `${'😀'.repeat(700)}`;
    expect(o200kTokenizer.decode(o200kTokenizer.encode(`a b ${emoji} c`))).toBe(`a b ${emoji} c`);
    const cut = truncateTokens(o200kTokenizer, `intro\n${line}\noutro\n`, 1000, 'middle');
    expect(cut).toMatchObject({ truncated: true });
    expect(cut.tokens).toBeLessThanOrEqual(1000);
    // Runs below the threshold are counted exactly, as the vocabulary itself counts them.
    const short = `${'y'.repeat(1023)} ${'z'.repeat(10)}\n`.repeat(3);
    expect(o200kTokenizer.count(short)).toBe(reference.encode(short).length);
  });

  test('a text counted again, before or after the memo of recent counts let it go, has its exact count', () => {
    // Real text nobody here wrote: Node's type declarations, cut into pieces of many sizes
    // (below the memo's floor, in its range, above its ceiling) summing past what the memo holds.
    const dom = nodeTypesText();
    expect(dom.length).toBeGreaterThan(2_000_000);
    const pieces: string[] = [];
    for (let at = 0, i = 0; at < dom.length; i++) {
      const size = [100, 600, 5_000, 40_000, 300_000][i % 5] as number;
      pieces.push(dom.slice(at, at + size));
      at += size;
    }
    const exact = pieces.map((p) => o200kTokenizer.encode(p).length);
    for (const [i, p] of pieces.entries()) expect(o200kTokenizer.count(p)).toBe(exact[i]);
    for (const [i, p] of [...pieces.entries()].reverse()) expect(o200kTokenizer.count(p)).toBe(exact[i]);
    // A text equal to a remembered one but built anew is the same text.
    const again = `${pieces[1]}`.split('').join('');
    expect(o200kTokenizer.count(again)).toBe(exact[1]);
    expect(o200kTokenizer.count(`${pieces[1]}x`)).toBe(o200kTokenizer.encode(`${pieces[1]}x`).length);
  });

  test('special-token text in files is counted as text, never rejected', () => {
    expect(o200kTokenizer.count('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  test.each(['start', 'end', 'middle'] as const)('truncation %s stays within the budget', (strategy) => {
    const text = Array.from({ length: 500 }, (_, i) => `line ${i} — ünïcödé 🚀 text`).join('\n');
    for (const max of [1, 10, 57, 300]) {
      const cut = truncateTokens(o200kTokenizer, text, max, strategy);
      expect(cut.truncated).toBe(true);
      expect(o200kTokenizer.count(cut.text)).toBeLessThanOrEqual(max);
      expect(cut.text).not.toMatch(/^\uFFFD|\uFFFD$/);
    }
    const head = truncateTokens(o200kTokenizer, text, 50, strategy).text;
    if (strategy === 'start') expect(head.startsWith('line 0')).toBe(true);
    if (strategy === 'end') expect(head.endsWith('line 499 — ünïcödé 🚀 text')).toBe(true);
    if (strategy === 'middle') {
      expect(head.startsWith('line 0')).toBe(true);
      expect(head.endsWith('🚀 text')).toBe(true);
    }
    expect(truncateTokens(o200kTokenizer, 'short', 100, strategy)).toMatchObject({ text: 'short', truncated: false });
  });
});

describe('the encoder equals tiktoken token for token', () => {
  // Real text nobody here wrote, in many scripts: TypeScript's diagnostics in its
  // 13 translations (Czech to Traditional Chinese) and moment's 130-odd locale
  // sources (Arabic, Hindi, Thai, Georgian, Hebrew, …), beside Node's type declarations.
  const documents = (): [string, string][] => {
    const ts = npmPackage('typescript', '5.9.3');
    const moment = npmPackage('moment', '2.30.1');
    const out: [string, string][] = [];
    for (const lang of readdirSync(join(ts, 'lib'), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      out.push([`typescript/${lang.name}`, readFileSync(join(ts, 'lib', lang.name, 'diagnosticMessages.generated.json'), 'utf8')]);
    }
    for (const f of readdirSync(join(moment, 'locale')).sort()) out.push([`moment/${f}`, readFileSync(join(moment, 'locale', f), 'utf8')]);
    const types = realpathSync(join(import.meta.dirname, '../../../node_modules/@types/node'));
    for (const f of ['fs.d.ts', 'crypto.d.ts', 'http.d.ts']) out.push([`@types/node/${f}`, readFileSync(join(types, f), 'utf8')]);
    return out;
  };

  test('on real multilingual documents: the same tokens, and decoding gives the text back', () => {
    const docs = documents();
    expect(docs.filter(([name]) => name.startsWith('typescript/')).length).toBeGreaterThanOrEqual(13);
    expect(docs.filter(([name]) => name.startsWith('moment/')).length).toBeGreaterThan(100);
    let tokens = 0;
    for (const [name, text] of docs) {
      // Sliced runs are ours alone (see runSlices); these documents have none.
      const ours = o200kTokenizer.encode(text);
      const theirs = reference.encode(text);
      if (ours.length !== theirs.length || ours.some((t, i) => t !== theirs[i])) expect.fail(`${name}: tokens differ from tiktoken's`);
      expect(o200kTokenizer.count(text), name).toBe(theirs.length);
      expect(o200kTokenizer.decode(ours), name).toBe(text);
      tokens += ours.length;
    }
    expect(tokens).toBeGreaterThan(1_000_000);
  });

  // Characters assigned in Unicode 17.0 (September 2025): Node 24's tables know their
  // classes (letter, mark, number), tiktoken 1.0.22's regex tables (Unicode 16) do not,
  // so the two split text around them differently. Found by encoding every code point
  // both ways; these ranges are the whole difference.
  const UNICODE_17: readonly (readonly [number, number])[] = [
    [0x088f, 0x088f],
    [0x0c5c, 0x0c5c],
    [0x0cdc, 0x0cdc],
    [0x1acf, 0x1add],
    [0x1ae0, 0x1aeb],
    [0xa7ce, 0xa7cf],
    [0xa7d2, 0xa7d2],
    [0xa7d4, 0xa7d4],
    [0xa7f1, 0xa7f1],
    [0x10940, 0x10959],
    [0x10ec5, 0x10ec7],
    [0x10efa, 0x10efb],
    [0x11b60, 0x11b67],
    [0x11db0, 0x11ddb],
    [0x11de0, 0x11de9],
    [0x16ea0, 0x16eb8],
    [0x16ebb, 0x16ed3],
    [0x16ff2, 0x16ff6],
    [0x187f8, 0x187ff],
    [0x18d09, 0x18d1e],
    [0x18d80, 0x18df2],
    [0x1e6c0, 0x1e6de],
    [0x1e6e0, 0x1e6f5],
    [0x1e6fe, 0x1e6ff],
    [0x2b73a, 0x2b73f],
    [0x2cea2, 0x2cead],
    [0x323b0, 0x33479],
  ];
  const withoutUnicode17 = (text: string): string =>
    Array.from(text, (ch) => {
      const cp = ch.codePointAt(0) as number;
      return UNICODE_17.some(([from, to]) => cp >= from && cp <= to) ? '?' : ch;
    }).join('');

  test('on generated text: any code points, lone surrogates, special-token text, line breaks of every kind', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }).map(withoutUnicode17),
      fc.string({ unit: 'binary', maxLength: 40 }).map(withoutUnicode17),
      fc.constantFrom(
        '<|endoftext|>',
        '<|im_start|>',
        '\r\n',
        '\r',
        '\u2028',
        '\t\t',
        "'S",
        "don't",
        '123456789',
        ' \u00a0 ',
        '\ufeff',
        '\u0085',
        '\u1680',
        '\u202f',
        "'ſ",
        "'K",
        'ǅungla',
        '\ud800',
        '\udfff',
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        const theirs = reference.encode(text);
        expect(o200kTokenizer.encode(text)).toEqual(theirs);
        expect(o200kTokenizer.count(text)).toBe(theirs.length);
      }),
      { numRuns: 3000 },
    );
  });

  describe('ASCII text, split with the pattern of ASCII classes', () => {
    const vocabulary = loadVocabulary(createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken'), null).vocabulary;
    /** An encoder that splits every text with o200k's Unicode pattern, never the ASCII one. */
    const unicodeOnly = new BpeEncoder(vocabulary, o200kUnicodeSplit);
    const ascii = (text: string): boolean => !/[\u0080-\uffff]/.test(text);

    test("real ASCII sources (TypeScript's lib and Node's type declarations) split and encode as tiktoken and the Unicode pattern do", () => {
      const lib = join(npmPackage('typescript', '5.9.3'), 'lib');
      const types = realpathSync(join(import.meta.dirname, '../../../node_modules/@types/node'));
      const sources = [
        ...readdirSync(lib)
          .filter((f) => /^lib\..*\.d\.ts$/.test(f))
          .map((f) => join(lib, f)),
        ...readdirSync(types)
          .filter((f) => f.endsWith('.d.ts'))
          .map((f) => join(types, f)),
      ]
        .map((f) => [f, readFileSync(f, 'utf8')] as const)
        .filter(([, text]) => ascii(text));
      expect(sources.length).toBeGreaterThan(80);
      let tokens = 0;
      for (const [name, text] of sources) {
        const theirs = reference.encode(text);
        const ours = o200kTokenizer.encode(text);
        if (ours.length !== theirs.length || ours.some((t, i) => t !== theirs[i])) expect.fail(`${name}: tokens differ from tiktoken's`);
        expect(unicodeOnly.count(text), name).toBe(theirs.length);
        tokens += theirs.length;
      }
      expect(tokens).toBeGreaterThan(400_000);
    });

    test('generated ASCII, every code point 0 to 127, splits as the Unicode pattern splits it, and as tiktoken does', () => {
      const piece = fc.oneof(
        fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
        fc.constantFrom("'S", "'s", "don'T", "'LL", "'re", 'ABCdef', 'abcDEF', '12345', '\r\n', '\v\f', ' \t\n', '  x', '/*/', '\n/'),
      );
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 16 }), (parts) => {
          const text = parts.join('');
          const theirs = reference.encode(text);
          expect(new BpeEncoder(vocabulary, o200kUnicodeSplit, O200K_SPLIT_ASCII).encode(text)).toEqual(theirs);
          expect(unicodeOnly.encode(text)).toEqual(theirs);
        }),
        { numRuns: 3000 },
      );
    });

    test('the Unicode pattern is made only when a text that is not ASCII alone is met', () => {
      let made = 0;
      const encoder = new BpeEncoder(
        vocabulary,
        () => {
          made++;
          return o200kUnicodeSplit();
        },
        O200K_SPLIT_ASCII,
      );
      expect(encoder.count('export const x = 1;\n')).toBe(reference.encode('export const x = 1;\n').length);
      expect(made).toBe(0);
      expect(encoder.count('const café = 1;')).toBe(reference.encode('const café = 1;').length);
      expect(encoder.count('naïve')).toBe(reference.encode('naïve').length);
      expect(made).toBe(1);
    });
  });

  test('decoding a cut inside a character gives U+FFFD for it, never bytes of another call', () => {
    const ids = o200kTokenizer.encode('日本語');
    expect(o200kTokenizer.decode(ids)).toBe('日本語');
    // A token cut from the middle of a character stands alone as U+FFFD; the next call starts clean.
    const emoji = o200kTokenizer.encode('🦀');
    if (emoji.length > 1) expect(o200kTokenizer.decode(emoji.slice(0, 1))).toMatch(/^\uFFFD+$/);
    expect(o200kTokenizer.decode(o200kTokenizer.encode('ok'))).toBe('ok');
    expect(() => o200kTokenizer.decode([-1])).toThrow(/not in the vocabulary/);
    expect(() => o200kTokenizer.decode([200_000])).toThrow(/not in the vocabulary/);
  });
});

describe('reading a tiktoken rank file', () => {
  const file = (text: string) => new TextEncoder().encode(text);

  test('ranks map to their bytes and back, padding of every length included', () => {
    const v = BpeVocabulary.fromTiktoken(file('IQ== 0\nSGk= 1\nSGV5 2\n/w== 3\n'));
    expect(v.size).toBe(4);
    expect([...(v.bytesOf(1) ?? [])]).toEqual([0x48, 0x69]);
    expect(new TextDecoder().decode(v.bytesOf(2))).toBe('Hey');
    expect(v.rankOf(new Uint8Array([0xff]), 0, 1)).toBe(3);
    expect(v.rankOf(new Uint8Array([0x48, 0x65, 0x79]), 0, 3)).toBe(2);
    expect(v.rankOf(new Uint8Array([0x48, 0x65]), 0, 2)).toBe(-1);
    expect(v.bytesOf(4)).toBeUndefined();
  });

  test('tokens crowded onto one home slot are all found, the index growing where they would sit too far from it', () => {
    // Two-byte tokens whose FNV-1a hashes share their low 6 bits: 40 ranks take 64 slots, one home for all.
    const fnv = (a: number, b: number) => Math.imul(Math.imul(0x811c9dc5 ^ a, 0x01000193) ^ b, 0x01000193) >>> 0;
    const crowd: number[][] = [];
    for (let a = 0; a < 256 && crowd.length < 41; a++) for (let b = 0; b < 256 && crowd.length < 41; b++) if ((fnv(a, b) & 63) === 17) crowd.push([a, b]);
    // The 41st is no token: its lookup walks the same crowd to a miss.
    const absent = crowd.pop() ?? [];
    const v = BpeVocabulary.fromTiktoken(file(crowd.map((t, rank) => `${Buffer.from(t).toString('base64')} ${rank}\n`).join('')));
    expect(v.toArrays().index.length).toBeGreaterThan(64);
    expect(crowd.map((t) => v.rankOf(new Uint8Array(t), 0, 2))).toEqual(crowd.map((_, rank) => rank));
    expect(v.rankOf(new Uint8Array(absent), 0, 2)).toBe(-1);
  });

  test('a lookup in an index with no empty slot ends (a miss), as a damaged one must not spin', () => {
    const { blob, offsets, index } = BpeVocabulary.fromTiktoken(file('IQ== 0\nSGk= 1\nSGV5 2\n/w== 3\n')).toArrays();
    for (const junk of [-1, 0x7fffffff, 1, 1 << 20]) {
      const full = BpeVocabulary.fromArrays({ blob, offsets, index: new Int32Array(index.length).fill(junk) });
      expect(full.rankOf(new Uint8Array([0x48, 0x65]), 0, 2)).toBe(-1);
    }
  });

  test.each([
    ['a rank out of order', 'IQ== 1\n', /rank 1 where 0 was due/],
    ['a digit outside base64', 'I*== 0\n', /not base64/],
    ['a line with no rank', 'IQ==\n', /a line without its rank/],
    ['a truncated token', 'IQ', /a line without its rank/],
  ])('refuses %s', (_what, text, message) => {
    expect(() => BpeVocabulary.fromTiktoken(file(text))).toThrow(message);
  });
});
