import { describe, expect, it } from 'vitest';
import { compileLinearRegex, type LinearMatch, MAX_PROGRAM_SIZE } from '../src/linear-regex.ts';

const all = (pattern: string, text: string, options = {}) =>
  [...compileLinearRegex(pattern, options).matchAll(text, { captures: true })].map((m: LinearMatch) => ({
    at: [m.index, m.end],
    groups: m.groups,
    named: m.named,
  }));

describe('compileLinearRegex', () => {
  it('captures numbered and named groups, undefined where a group took no part', () => {
    expect(all('(?<key>\\w+)=(\\d+)?', 'a=1 b=')).toEqual([
      { at: [0, 3], groups: ['a=1', 'a', '1'], named: { key: 'a' } },
      { at: [4, 6], groups: ['b=', 'b', undefined], named: { key: 'b' } },
    ]);
  });

  it('reads JavaScript flags: i, m, s honoured; g, y, u, d accepted', () => {
    expect(all('^b.c$', 'a\nB\nC', { flags: 'gimsuyd' }).map((m) => m.at)).toEqual([[2, 5]]);
    expect(all('^b$', 'a\nb\n').map((m) => m.at)).toEqual([]);
    expect(all('^b$', 'a\nb\n', { flags: 'm' }).map((m) => m.at)).toEqual([[2, 3]]);
  });

  it('refuses an unknown flag with the ones it takes', () => {
    expect(() => compileLinearRegex('a', { flags: 'v', op: 'replace' })).toThrow(
      expect.objectContaining({ code: 'EBADPATTERN', op: 'replace', reason: 'unknown regular expression flag `v`' }),
    );
  });

  it('ends a syntax error with the advice the caller gives', () => {
    expect(() => compileLinearRegex('(', { literalAdvice: 'drop regex: true' })).toThrow(
      expect.objectContaining({ hint: expect.stringMatching(/, or drop regex: true$/) }),
    );
  });

  it('a literal matches only itself', () => {
    expect(all('a.b(', 'axb( a.b(', { literal: true }).map((m) => m.at)).toEqual([[5, 9]]);
  });

  it('steps over an empty match by a whole code point', () => {
    expect(all('', '😀a').map((m) => m.at)).toEqual([
      [0, 0],
      [2, 2],
      [3, 3],
    ]);
  });

  it('keepGoing stops the listing, and the generator says it did', () => {
    const re = compileLinearRegex('a(.*z)?');
    const seen: number[] = [];
    const run = re.matchAll('a'.repeat(1000), {
      keepGoing: (scanned) => {
        seen.push(scanned);
        return seen.length < 3;
      },
    });
    const got: LinearMatch[] = [];
    let step = run.next();
    for (; !step.done; step = run.next()) got.push(step.value);
    expect(step.value).toBe(false);
    expect(got.map((m) => m.index)).toEqual([0, 1, 2]);
    // An unbounded pattern may look to the end of the text after each match.
    expect(seen).toEqual([1001, 2001, 3000]);
  });

  it('a pattern of bounded length is charged its way to the match, not the rest of the text', () => {
    const seen: number[] = [];
    const re = compileLinearRegex('ab');
    const matches = [
      ...re.matchAll(`ab${'x'.repeat(1000)}ab`, {
        keepGoing: (scanned) => {
          seen.push(scanned);
          return true;
        },
      }),
    ];
    expect(matches.map((m) => m.index)).toEqual([0, 1002]);
    expect(seen[0]).toBe(re.programSize + 1);
  });

  it(`refuses a program over ${MAX_PROGRAM_SIZE} instructions`, () => {
    expect(() => compileLinearRegex('[ab]{600}[cd]{600}')).toThrow(
      expect.objectContaining({ code: 'EBADPATTERN', reason: expect.stringMatching(/too large/) }),
    );
    expect(compileLinearRegex('[ab]{400}').programSize).toBeLessThanOrEqual(MAX_PROGRAM_SIZE);
  });

  it('a non-string pattern is EBADPATTERN', () => {
    expect(() => compileLinearRegex(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'EBADPATTERN', reason: 'pattern must be a string' }));
  });
});
