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
