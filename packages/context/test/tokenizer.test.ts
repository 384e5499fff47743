import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { o200kTokenizer, truncateTokens } from '../src/index.ts';

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
    const vocabulary = createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens(t: string, o: object): number };
    const short = `${'y'.repeat(1023)} ${'z'.repeat(10)}\n`.repeat(3);
    expect(o200kTokenizer.count(short)).toBe(vocabulary.countTokens(short, { disallowedSpecial: new Set(), allowedSpecial: new Set() }));
  });

  test('a text counted again, before or after the memo of recent counts let it go, has its exact count', () => {
    // Real text nobody here wrote: Node's type declarations, cut into pieces of many sizes
    // (below the memo's floor, in its range, above its ceiling) summing past what the memo holds.
    const types = realpathSync(join(import.meta.dirname, '../../../node_modules/@types/node'));
    const dom = readdirSync(types)
      .filter((f) => f.endsWith('.d.ts'))
      .sort()
      .map((f) => readFileSync(join(types, f), 'utf8'))
      .join('\n');
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
