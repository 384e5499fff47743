/**
 * The longest piece of plain text every match of a regular expression must
 * contain (`function` in `function\s+\w+\s*\(`), found without running it.
 * A search skips text that lacks the piece with one `indexOf` instead of
 * running the regex engine over every line, as ripgrep's literal
 * prefilter does. Deliberately conservative: anything it does not fully
 * understand (an alternation at the top, inline flags, an escape it cannot
 * read) yields no piece, which costs speed, never a match.
 *
 * @module
 */

/** Escapes after which a character is literal: ASCII punctuation (ripgrep's syntax allows escaping any). */
const PUNCTUATION = /[!-/:-@[-`{-~]/;
/** A counted repetition at the start of the text: `{2}`, `{1,}`, `{0,3}`. */
const COUNTED = /^\{(\d+)(,\d*)?\}/;
/** Escapes whose length is fixed without braces: `\x41`, `\u0041`, `\U00000041`, `\pL`. */
const FIXED_ESCAPE_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8, p: 1, P: 1 };

/** Index just past the group that starts at `i` (`(`), or -1 when it does not close. */
function skipGroup(p: string, i: number): number {
  let depth = 0;
  for (let k = i; k < p.length; k++) {
    const c = p[k];
    if (c === '\\') k++;
    else if (c === '[') {
      k = skipClass(p, k) - 1;
      if (k < 0) return -1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return k + 1;
  }
  return -1;
}

/** Index just past the character class that starts at `i` (`[`), nested classes included, or -1. */
function skipClass(p: string, i: number): number {
  let k = i + 1;
  if (p[k] === '^') k++;
  // A `]` first in a class is a member, not its end.
  if (p[k] === ']') k++;
  for (; k < p.length; k++) {
    const c = p[k];
    if (c === '\\') k++;
    else if (c === '[') {
      const end = skipClass(p, k);
      if (end < 0) return -1;
      k = end - 1;
    } else if (c === ']') return k + 1;
  }
  return -1;
}

/** Index just past the escape at `i` (`\` then a letter or digit), or -1 when it cannot be read. */
function skipEscape(p: string, i: number): number {
  const c = p[i + 1] as string;
  const fixed = FIXED_ESCAPE_DIGITS[c];
  if (fixed === undefined) return i + 2;
  if (p[i + 2] === '{') {
    const close = p.indexOf('}', i + 3);
    return close < 0 ? -1 : close + 1;
  }
  return i + 2 + fixed;
}

/**
 * The longest run of literal text that every match of `pattern` (ripgrep's
 * syntax, case-sensitive) contains, or `undefined` when there is none worth
 * searching for (shorter than 2 characters) or the pattern is beyond this
 * reading.
 *
 * @example
 * ```ts
 * requiredLiteral('function\\s+[A-Za-z_$][\\w$]*\\s*\\('); // 'function'
 * requiredLiteral('import (\\w+) from'); // 'import '
 * requiredLiteral('foo|bar'); // undefined: either may match alone
 * ```
 */
export function requiredLiteral(pattern: string): string | undefined {
  const runs: string[] = [];
  let run = '';
  const endRun = () => {
    if (run.length > 0) runs.push(run);
    run = '';
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    let atom: string | undefined;
    let next: number;
    if (c === '|') return undefined;
    if (c === '(') {
      // Inline flags (`(?i)`, `(?x)`, `(?s:...)`) change what the text around means: not read.
      if (pattern[i + 1] === '?' && /[a-zA-OQ-Z-]/.test(pattern[i + 2] ?? '')) return undefined;
      next = skipGroup(pattern, i);
    } else if (c === '[') next = skipClass(pattern, i);
    else if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) return undefined;
      if (PUNCTUATION.test(e)) {
        atom = e;
        next = i + 2;
      } else next = skipEscape(pattern, i);
    } else if (c === '.' || c === '^' || c === '$') next = i + 1;
    else if (c === '?' || c === '*' || c === '+' || c === '{' || c === ')') {
      // A repetition of what was not a single literal character (a group, a class): nothing to take back.
      const counted = c === '{' ? COUNTED.exec(pattern.slice(i)) : null;
      if (c === '{' && counted === null) return undefined;
      if (c === ')') return undefined;
      next = i + (counted?.[0].length ?? 1);
    } else {
      atom = String.fromCodePoint(pattern.codePointAt(i) as number);
      next = i + atom.length;
    }
    if (next < 0) return undefined;
    i = next;
    if (atom === undefined) {
      endRun();
      continue;
    }
    // What follows the character may make it optional or repeat it.
    const q = pattern[i];
    const counted = q === '{' ? COUNTED.exec(pattern.slice(i)) : null;
    if (q === '{' && counted === null) return undefined;
    if (q === '?' || q === '*' || (counted !== null && Number(counted[1]) === 0)) {
      endRun();
    } else if (q === '+' || counted !== null) {
      run += atom;
      endRun();
    } else {
      run += atom;
      continue;
    }
    i += counted?.[0].length ?? 1;
    // The lazy mark after a repetition.
    if (pattern[i] === '?') i++;
  }
  endRun();
  let best: string | undefined;
  for (const r of runs) if (r.length >= 2 && (best === undefined || r.length > best.length)) best = r;
  return best;
}
