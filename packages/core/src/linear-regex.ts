/**
 * The one regular-expression engine for patterns that come from callers
 * (grep, the context layer's regex replace): re2js, a port of RE2, whose
 * searches take time linear in the text, so no pattern can stall the process
 * the way a backtracking `RegExp` can (`(a+)+$` over a line of `a`s).
 *
 * The syntax is ripgrep's (see `regex-dialect.ts`); what cannot run in linear
 * time — backreferences, look-around — is refused with `EBADPATTERN`, as is a
 * pattern whose compiled program is so large that even a linear scan would
 * crawl ({@link MAX_PROGRAM_SIZE}).
 *
 * One search is linear; finding every match of a line is not always: after
 * each match the engine may have to look ahead to the end of the text to
 * know the match is over (`a(.*z)?` over `aaaa…`), and the next search
 * starts again just after it. {@link LinearRegex.matchAll} therefore asks the
 * caller, before each further search, whether to go on.
 *
 * @module
 */

import type { RE2JS } from 're2js';
import { FsError, type FsOperation } from './errors.ts';
import { re2jsModule } from './lazy-dependencies.ts';
import { type PatternTranslation, quotePattern, translatePattern } from './regex-dialect.ts';

/**
 * The largest compiled program accepted (RE2's instruction count). A search
 * costs up to this many steps per character, so the cap keeps the worst line
 * within a second or two; ordinary patterns need a few dozen.
 */
export const MAX_PROGRAM_SIZE = 1000;

/** Options of {@link compileLinearRegex}. */
export interface LinearRegexOptions {
  /** Case-insensitive (Unicode simple case folding). */
  readonly ignoreCase?: boolean | undefined;
  /** `^` and `$` also match at `\n` (JavaScript's `m` flag). */
  readonly multiline?: boolean | undefined;
  /** `.` also matches `\n` and `\r` (JavaScript's `s` flag). */
  readonly dotAll?: boolean | undefined;
  /**
   * JavaScript flag letters, read as the options above: `i`, `m`, `s`; `g`,
   * `y`, `u`, `d` are accepted and change nothing (every search is global
   * and by code point). Any other letter is refused.
   */
  readonly flags?: string | undefined;
  /** The pattern is plain text. */
  readonly literal?: boolean | undefined;
  /** The operation a refusal reports (default `grep`). */
  readonly op?: FsOperation | undefined;
  /**
   * How the caller searches for plain text instead, ending the hint of a
   * syntax error (default: grep's `pass { literal: true } to search for the
   * text as-is`).
   */
  readonly literalAdvice?: string | undefined;
}

/** One match, in UTF-16 offsets of the searched text. */
export interface LinearMatch {
  readonly index: number;
  readonly end: number;
  /** Group 0 (the match) and every capture group, `undefined` where a group took no part; empty unless captures were asked for. */
  readonly groups: ReadonlyArray<string | undefined>;
  /** Named groups by name; empty unless captures were asked for. */
  readonly named: Readonly<Record<string, string | undefined>>;
}

/** Options of {@link LinearRegex.matchAll}. */
export interface MatchAllOptions {
  /** Record the capture groups of every match. */
  readonly captures?: boolean;
  /**
   * Asked before every search after the first, with the number of
   * characters the searches so far may have examined (the text left after
   * each search's start, or, for a pattern without unbounded repetition,
   * the way to its match plus the program size); return `false` to stop
   * there.
   */
  readonly keepGoing?: (scanned: number) => boolean;
}

const FLAG_LETTERS = new Set('imsgyud');
const NO_MATCHES: LinearMatch['groups'] = [];
const NO_NAMES: LinearMatch['named'] = Object.freeze({});

/** A compiled pattern; see the module comment. */
export class LinearRegex {
  /** The caller's pattern. */
  readonly source: string;
  /**
   * The pattern in ripgrep's syntax, matching the same lines or more, or
   * `undefined` when ripgrep cannot be given it; a caller must re-check the
   * lines it reports with this regex.
   */
  readonly rustSource: string | undefined;
  /**
   * A second Rust pattern to give ripgrep beside {@link rustSource}, so that
   * the lines of legacy-encoded files it could miss come along too
   * (`PatternTranslation.rustLegacy`); `undefined` when none is needed.
   */
  readonly rustLegacySource: string | undefined;
  readonly #re: RE2JS;
  readonly #bounded: boolean;
  readonly #size: number;
  readonly #names: ReadonlyArray<readonly [string, number]>;

  /** @internal Use {@link compileLinearRegex}. */
  constructor(source: string, rust: { source: string; legacy: string | undefined } | undefined, re: RE2JS, bounded: boolean) {
    this.source = source;
    this.rustSource = rust?.source;
    this.rustLegacySource = rust?.legacy;
    this.#re = re;
    this.#bounded = bounded;
    this.#size = re.programSize();
    this.#names = Object.entries(re.namedGroups());
  }

  /** RE2's instruction count: what one character can cost a search, at worst. */
  get programSize(): number {
    return this.#size;
  }

  /** Whether the pattern matches anywhere in `text` (the fastest question). */
  test(text: string): boolean {
    return this.#re.test(text);
  }

  /**
   * Every non-overlapping match, left to right; after an empty match the
   * next search starts one code point further, as JavaScript's `u` mode
   * does. Returns `true` when the text was searched to the end, `false`
   * when `keepGoing` stopped it.
   */
  *matchAll(text: string, options: MatchAllOptions = {}): Generator<LinearMatch, boolean> {
    const matcher = this.#re.matcher(text);
    let from = 0;
    let scanned = 0;
    while (from <= text.length) {
      if (scanned > 0 && options.keepGoing !== undefined && !options.keepGoing(scanned)) return false;
      if (!matcher.find(from)) return true;
      const index = matcher.start();
      const end = matcher.end();
      // Past its match a search looks ahead at most a match's length, which only a bounded pattern limits.
      scanned += this.#bounded ? index - from + this.#size + 1 : text.length - from + 1;
      yield options.captures ? this.#captured(matcher, index, end) : { index, end, groups: NO_MATCHES, named: NO_NAMES };
      from = end > index ? end : end + (isHighSurrogate(text.charCodeAt(end)) && end + 1 < text.length ? 2 : 1);
    }
    return true;
  }

  #captured(matcher: ReturnType<RE2JS['matcher']>, index: number, end: number): LinearMatch {
    const groups: Array<string | undefined> = [];
    for (let g = 0; g <= matcher.groupCount(); g++) groups.push(matcher.group(g) ?? undefined);
    const named: Record<string, string | undefined> = {};
    for (const [name, g] of this.#names) named[name] = groups[g];
    return { index, end, groups, named };
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function refusal(pattern: string, op: FsOperation, reason: string, hint?: string): FsError {
  return new FsError({ code: 'EBADPATTERN', op, path: pattern, reason, hint });
}

function readFlags(pattern: string, options: LinearRegexOptions, op: FsOperation): { ignoreCase: boolean; multiline: boolean; dotAll: boolean } {
  const flags = options.flags ?? '';
  for (const letter of flags) {
    if (!FLAG_LETTERS.has(letter)) {
      throw refusal(
        pattern,
        op,
        `unknown regular expression flag \`${letter}\``,
        'use the flags i (ignore case), m (^ and $ at line ends) and s (. matches newlines)',
      );
    }
  }
  return {
    ignoreCase: options.ignoreCase === true || flags.includes('i'),
    multiline: options.multiline === true || flags.includes('m'),
    dotAll: options.dotAll === true || flags.includes('s'),
  };
}

/**
 * Compiles a caller's pattern for linear-time matching, or throws
 * `EBADPATTERN` saying why it cannot run and what to write instead.
 *
 * @example
 * ```ts
 * const re = compileLinearRegex('(?<key>\\w+)=(\\d+)', { flags: 'i' });
 * [...re.matchAll('a=1 b=2', { captures: true })].map((m) => m.named.key); // ['a', 'b']
 * compileLinearRegex('(a)\\1'); // throws EBADPATTERN: backreference `\1` is not supported
 * ```
 */
export function compileLinearRegex(pattern: string, options: LinearRegexOptions = {}): LinearRegex {
  const op = options.op ?? 'grep';
  if (typeof pattern !== 'string') throw refusal(String(pattern), op, 'pattern must be a string');
  const { ignoreCase, multiline, dotAll } = readFlags(pattern, options, op);
  const translated: PatternTranslation = options.literal ? quotePattern(pattern) : translatePattern(pattern, { dotAll });
  if (!translated.ok) throw refusal(pattern, op, translated.reason, translated.hint);
  const { RE2JS, RE2JSSyntaxException } = re2jsModule();
  const engineFlags = (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (multiline ? RE2JS.MULTILINE : 0) | (dotAll ? RE2JS.DOTALL : 0);
  let re: RE2JS;
  try {
    re = RE2JS.compile(translated.re2, engineFlags);
  } catch (err) {
    if (!(err instanceof RE2JSSyntaxException)) throw err;
    // RE2 quotes the offending part of the pattern it was given; show it only when the caller wrote it so.
    const fragment = err.getPattern();
    const where = fragment && fragment.length > 0 && pattern.includes(fragment) ? `: \`${fragment}\`` : '';
    const advice = options.literalAdvice ?? 'pass { literal: true } to search for the text as-is';
    throw refusal(
      pattern,
      op,
      `invalid regular expression: ${err.getDescription()}${where}`,
      `fix the syntax (ripgrep's: no backreferences or look-around), or ${advice}`,
    );
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw refusal(
      pattern,
      op,
      `pattern too large to search in bounded time (${size.toLocaleString('en')} instructions, the limit is ${MAX_PROGRAM_SIZE.toLocaleString('en')})`,
      'repetition counts multiply the size: use a smaller count or an open one (`\\w+` rather than `\\w{1,900}`), or split the search',
    );
  }
  const rust = multiline || dotAll || translated.rust === undefined ? undefined : { source: translated.rust, legacy: translated.rustLegacy };
  return new LinearRegex(pattern, rust, re, translated.bounded);
}
