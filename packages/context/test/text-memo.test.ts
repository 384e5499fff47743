import { describe, expect, it } from 'vitest';
import { TextMemo } from '../src/content/text-memo.ts';

describe('TextMemo', () => {
  it('returns what was set for an equal text, however that text was built', () => {
    const memo = new TextMemo<number>({ maxTexts: 8, maxChars: 1000 });
    expect(memo.get('alpha beta')).toBeUndefined();
    expect(memo.set('alpha beta', 2)).toBe(2);
    expect(memo.get(['alpha', 'beta'].join(' '))).toBe(2);
  });

  it('lets the least recently used text go past its text or character bound', () => {
    const memo = new TextMemo<string>({ maxTexts: 2, maxChars: 1000 });
    memo.set('a', 'A');
    memo.set('b', 'B');
    memo.get('a');
    memo.set('c', 'C');
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).toEqual(['A', undefined, 'C']);
    const chars = new TextMemo<number>({ maxTexts: 100, maxChars: 10 });
    chars.set('123456', 1);
    chars.set('7890ab', 2);
    expect([chars.get('123456'), chars.get('7890ab')]).toEqual([undefined, 2]);
    // A text longer than the whole bound is not kept.
    chars.set('x'.repeat(11), 3);
    expect(chars.get('x'.repeat(11))).toBeUndefined();
  });
});
