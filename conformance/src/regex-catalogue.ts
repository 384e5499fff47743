/**
 * Known catastrophic regular expressions: patterns that make a backtracking
 * engine (V8's `RegExp`, PCRE) take exponential or quadratic time on a line
 * of a few dozen characters, and backreference cases no engine can run in
 * linear time. grep must answer every one of them at once, over long lines,
 * on every backend: the accepted ones with the right lines, the rest with
 * `EBADPATTERN`.
 *
 * @module
 */

/** Line 1 of the searched file: 50 KB of `a` that end in a character no pattern expects. */
export const CATASTROPHIC_LONG_LINE = `${'a'.repeat(50_000)}!`;
/** Line 2: short, so that anchored patterns have something to match. */
export const CATASTROPHIC_SHORT_LINE = 'aaaa';

/** One pattern and what grep answers over the two lines above. */
export interface CatastrophicCase {
  readonly pattern: string;
  /** Why a backtracking engine chokes on it. */
  readonly why: string;
  /** Matching line numbers (1 = the long line, 2 = the short one), or `EBADPATTERN`. */
  readonly expected: readonly number[] | 'EBADPATTERN';
}

/** The catalogue. */
export const CATASTROPHIC_PATTERNS: readonly CatastrophicCase[] = [
  { pattern: '(a+)+$', why: 'nested quantifiers', expected: [2] },
  { pattern: '(a*)*$', why: 'nested stars', expected: [1, 2] },
  { pattern: '((a+)+)+$', why: 'triply nested quantifiers', expected: [2] },
  { pattern: '(a+a+)+b', why: 'adjacent overlapping quantifiers', expected: [] },
  { pattern: '(a|a)*$', why: 'alternation of the same thing', expected: [1, 2] },
  { pattern: '(a|aa)+$', why: 'overlapping alternation', expected: [2] },
  { pattern: '^(a|a?)+$', why: 'alternation with an optional twin', expected: [2] },
  { pattern: '(\\w|\\d)+$', why: 'alternation of overlapping classes', expected: [2] },
  { pattern: '([a-z]+)*[0-9]', why: 'a starred group before a character that never comes', expected: [] },
  { pattern: '(.*a){20}', why: 'repeated greedy dot-star', expected: [1] },
  { pattern: '(a?){30}a{30}', why: 'the classic a?ⁿaⁿ', expected: [1] },
  { pattern: '^(\\w+\\s?)*$', why: 'words and optional spaces', expected: [2] },
  {
    pattern: '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$',
    why: 'the OWASP e-mail validation ReDoS',
    expected: [],
  },
  { pattern: '^(https?:\\/\\/)?([\\da-z.-]+)\\.([a-z.]{2,6})([\\/\\w .-]*)*\\/?$', why: 'the classic URL validation ReDoS', expected: [] },
  { pattern: 'a(.*z)?', why: 'every match looks ahead to the end of the line: quadratic to list', expected: [1, 2] },
  { pattern: '^(a+)\\1*$', why: 'backreference', expected: 'EBADPATTERN' },
  { pattern: '(a*)*\\1', why: 'backreference behind nested stars', expected: 'EBADPATTERN' },
  { pattern: '(?=(a+))a*b\\1', why: 'look-ahead capture and backreference', expected: 'EBADPATTERN' },
  { pattern: '^(?!(a+)+$)', why: 'negative look-ahead around nested quantifiers', expected: 'EBADPATTERN' },
  { pattern: '(?<=(a+)+)b', why: 'look-behind around nested quantifiers', expected: 'EBADPATTERN' },
  { pattern: '(?<x>a+)\\k<x>', why: 'named backreference', expected: 'EBADPATTERN' },
  { pattern: '(a|b){600}', why: 'a program too large to scan a line quickly', expected: 'EBADPATTERN' },
];

/** Generous bound on one case, in milliseconds: hang prevention, not a speed target (see bench/). */
export const CATASTROPHIC_BOUND_MS = 15_000;
