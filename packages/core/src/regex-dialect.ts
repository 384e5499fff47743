/**
 * The regular-expression dialect of ctxfs: the syntax ripgrep accepts (Rust's
 * regex crate, which RE2 shares almost entirely), checked and rewritten for
 * the two engines that run it: re2js in JavaScript and, on the host, ripgrep.
 *
 * What a caller may write, and what it means:
 *
 * - RE2 / Rust syntax: `.`, classes, `\d \w \s \b`, `\p{Greek}`, groups
 *   (`(?:)`, `(?P<name>)`, `(?<name>)`), inline flags `(?imsU)`, greedy and
 *   lazy quantifiers up to `{1000}`, `\A`, `\z`, `\Q…\E`.
 * - JavaScript spellings of code points too: `\u00e9`, `\u{1F600}`, surrogate
 *   pairs `\uD83D\uDE00`, `\cJ`, `\0`.
 * - `\d`, `\w`, `\b` are ASCII (as in JavaScript and RE2); `\s` is Unicode
 *   white space (as in JavaScript and ripgrep); `.` matches anything but
 *   `\n` and `\r`, so a match never eats half of a CRLF.
 * - A line is searched without its terminator, `\n` or `\r\n`: `$` matches
 *   before a CRLF, and `\r` only matches a CR that is text (one not
 *   followed by `\n`, as in `a\rb` or the first CR of `a\r\r\n`).
 * - Refused, because no linear-time engine can run them: backreferences
 *   (`\1`, `\k<name>`, `(?P=name)`), look-around (`(?=`, `(?!`, `(?<=`,
 *   `(?<!`); and atomic groups and possessive quantifiers, which only exist to
 *   tame backtracking that never happens here.
 *
 * The translation is a rewrite of the caller's text, not a new parser of the
 * whole syntax: anything it does not recognise is passed through, and RE2's
 * own parser has the last word on what is valid.
 *
 * @module
 */

/** A pattern both engines can run, or the reason none can. */
export type PatternTranslation =
  | {
      readonly ok: true;
      /** The pattern for re2js, with the meaning documented above. */
      readonly re2: string;
      /**
       * The pattern for Rust's regex crate (ripgrep), matching exactly the same
       * lines or more (a caller re-checks what it reports), or `undefined`
       * when it cannot be written so (a newline in the pattern, a construct
       * whose Rust reading is unknown).
       */
      readonly rust: string | undefined;
      /**
       * No unbounded repetition (`*`, `+`, `{n,}`): a match is never longer
       * than the compiled program, so a search never looks further ahead.
       */
      readonly bounded: boolean;
      /**
       * A second pattern for Rust, given beside {@link rust}: it matches the
       * lines of a legacy-encoded file that `rust`, reading bytes as UTF-8,
       * could miss although the decoded line matches. `undefined` when
       * `rust` sees them all (every match is ASCII text). Either way a
       * caller decodes a line that is not UTF-8 as its file reads, not as
       * UTF-8. See {@link LEGACY_CHARACTER} for why most patterns only need
       * {@link ESCAPE_LINE}.
       */
      readonly rustLegacy: string | undefined;
    }
  | { readonly ok: false; readonly reason: string; readonly hint: string };

/** Options of {@link translatePattern}. */
export interface TranslateOptions {
  /** `.` matches every character, line terminators included (the `s` flag). */
  readonly dotAll?: boolean;
}

type Range = readonly [number, number];

// Unicode White_Space: what ripgrep's `\s` means, and JavaScript's but for U+0085 / U+FEFF.
const SPACE: readonly Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const DIGIT: readonly Range[] = [[0x30, 0x39]];
const WORD: readonly Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const MAX_CODE_POINT = 0x10ffff;

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const PERL_CLASSES: Readonly<Record<string, readonly Range[]>> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};

const hex = (cp: number): string => `\\x{${cp.toString(16)}}`;

/** A class member: ASCII letters and digits as themselves, everything else by number (read alike by both engines). */
function classChar(cp: number): string {
  return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) ? String.fromCodePoint(cp) : hex(cp);
}

function rangesText(ranges: readonly Range[]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`)).join('');
}

// Characters that mean something outside a class in Rust's syntax, so stay escaped there.
const RUST_META = new Set('\\.+*?()|[]{}^$#&-~');
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;

/**
 * The bytes one character outside ASCII may be in a file ripgrep cannot
 * read as UTF-8: an invalid UTF-8 sequence (1 to 3 bytes, all ≥ 0x80, which
 * the JavaScript scanner decodes into U+FFFD), or a character of a legacy
 * encoding: one byte ≥ 0x80 (the 8-bit code pages), two or three (EUC),
 * a lead byte and an ASCII trail byte (Shift_JIS, Big5, GBK), or four
 * bytes of GB18030. The scanner decodes a legacy-encoded file as it reads;
 * ripgrep sees the raw bytes, which no Unicode class matches. An atom that
 * may match a character outside ASCII (`.`, `\\s`, `\\W`, a negated or a
 * non-ASCII class, `\\p{…}`) is therefore widened for Rust to match these
 * bytes too, so every line the scanner would find comes along. Two kinds of
 * line are left: ISO-2022-JP's, whose characters are pairs of ASCII bytes
 * between escapes ({@link ESCAPE_LINE} brings them), and the lines a
 * pattern's own non-ASCII text matches ({@link NOT_UTF8_LINE}).
 */
const LEGACY_CHARACTER = '(?-u:[\\x80-\\xff]{1,3}|[\\x80-\\xff][\\x40-\\x7e]|[\\x81-\\xfe][\\x30-\\x39][\\x81-\\xfe][\\x30-\\x39])';
const REPLACEMENT_CHARACTER = 0xfffd;

/**
 * The end of a line for Rust. ripgrep reads a CRLF file's line with its CR
 * (its `--crlf` would take `\r` out of every class and refuse it in a
 * pattern, losing lines whose CR is text), and `$` matches only before the
 * `\n`; the scanner's line ends before the CR.
 */
const RUST_LINE_END = '(?:\\x{d}?$)';

function widened(rust: string): string {
  return `(?:${rust}|${LEGACY_CHARACTER})`;
}

/** Lines holding an escape byte: ISO-2022-JP's (seven-bit, its escapes switch to JIS X 0208). */
export const ESCAPE_LINE = '(?-u:\\x1b)';

/** A valid UTF-8 sequence of two to four bytes (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF). */
const UTF8_SEQUENCE =
  '[\\xc2-\\xdf][\\x80-\\xbf]|\\xe0[\\xa0-\\xbf][\\x80-\\xbf]|[\\xe1-\\xec\\xee\\xef][\\x80-\\xbf]{2}|\\xed[\\x80-\\x9f][\\x80-\\xbf]' +
  '|\\xf0[\\x90-\\xbf][\\x80-\\xbf]{2}|[\\xf1-\\xf3][\\x80-\\xbf]{3}|\\xf4[\\x80-\\x8f][\\x80-\\xbf]{2}';
/** What ends a sequence early: a byte that is not a continuation byte, or the line's end. */
const CUT = '(?:[\\x00-\\x7f\\xc0-\\xff]|$)';
/** A byte at a sequence's start that begins no valid sequence, every way one can fail. */
const UTF8_ERROR = [
  '[\\x80-\\xc1\\xf5-\\xff]',
  `[\\xc2-\\xdf]${CUT}`,
  '\\xe0(?:[\\x00-\\x9f\\xc0-\\xff]|$)',
  '\\xed(?:[\\x00-\\x7f\\xa0-\\xff]|$)',
  `[\\xe1-\\xec\\xee\\xef]${CUT}`,
  `[\\xe0-\\xef][\\x80-\\xbf]${CUT}`,
  '\\xf0(?:[\\x00-\\x8f\\xc0-\\xff]|$)',
  '\\xf4(?:[\\x00-\\x7f\\x90-\\xff]|$)',
  `[\\xf1-\\xf3]${CUT}`,
  `[\\xf0-\\xf4][\\x80-\\xbf]${CUT}`,
  `[\\xf0-\\xf4][\\x80-\\xbf]{2}${CUT}`,
].join('|');

/**
 * Lines that do not read as UTF-8 (core's `readsAsUtf8`): an escape byte,
 * or an invalid byte. Sequences are only cut apart from a line's start or
 * an ASCII byte, so the valid sequences before an error are matched whole
 * and the error is found where a decoder finds it; a line of valid UTF-8
 * never matches. A pattern with text outside ASCII (`é`, `Псевдоним`) has
 * no bytes to widen: with this beside it, every line of a file that may be
 * legacy-encoded comes along. It costs ripgrep its literal prefilter, so
 * it is given only to such patterns.
 */
export const NOT_UTF8_LINE = `(?-u:\\x1b|(?:^|[\\x00-\\x7f])(?:${UTF8_SEQUENCE})*(?:${UTF8_ERROR}))`;

/** A single character outside a class, written for RE2 and for Rust. */
function literal(cp: number): [string, string | undefined] {
  // ripgrep refuses a pattern with a newline in it (lines are searched one by one). A CR it takes as any
  // character (without `--crlf`, which would refuse it and take it out of every class).
  if (cp === 0x0a) return [hex(cp), undefined];
  if (cp === REPLACEMENT_CHARACTER) return [hex(cp), widened(hex(cp))];
  const ch = String.fromCodePoint(cp);
  if (cp < 0x20 || cp === 0x7f) return [hex(cp), hex(cp)];
  if (RUST_META.has(ch)) return [`\\${ch}`, `\\${ch}`];
  return [ch, ch];
}

function refuse(reason: string, hint: string): PatternTranslation {
  return { ok: false, reason, hint };
}

const BACKREFERENCE_HINT =
  'backreferences can take exponential time, so the linear-time engine (ripgrep syntax) has none: spell the repeated text out (e.g. `(ab)ab` for `(ab)\\1`), or match more loosely and check the result';
const LOOKAROUND_HINT =
  'look-around is not in the linear-time engine (ripgrep syntax): match the surrounding text as part of the pattern (e.g. `const alpha` for `(?<=const )alpha`) and use a group for the part you need';
const NO_BACKTRACKING_HINT = 'matching never backtracks here, so it is not needed';

interface Escape {
  readonly next: number;
  /** A single code point, usable as a class range end. */
  readonly cp?: number;
  /** A Perl class letter (`d`, `W`, ...). */
  readonly perl?: string;
  /** Text to copy as it is (e.g. `\p{Greek}`, `\b`); RE2 judges it. */
  readonly raw?: string;
  /** Rust reads `raw` alike. */
  readonly rustOk?: boolean;
  /** A refusal. */
  readonly refusal?: PatternTranslation;
}

/** Reads a code point written `\xHH`, `\x{H…}`, `\uHHHH` (a surrogate pair as two), `\u{H…}`, `\UHHHHHHHH` or `\cX`, at `i` (the backslash). */
function codePointEscape(p: string, i: number): { cp: number; next: number } | undefined {
  const kind = p[i + 1];
  const braced = /^\{([0-9a-fA-F]{1,8})\}/.exec(p.slice(i + 2, i + 13));
  if ((kind === 'x' || kind === 'u') && braced) return { cp: Number.parseInt(braced[1] as string, 16), next: i + 2 + braced[0].length };
  const fixed = kind === 'x' ? 2 : kind === 'u' ? 4 : kind === 'U' ? 8 : 0;
  if (fixed > 0) {
    const digits = p.slice(i + 2, i + 2 + fixed);
    if (!new RegExp(`^[0-9a-fA-F]{${fixed}}$`).test(digits)) return undefined;
    const cp = Number.parseInt(digits, 16);
    if (kind === 'u' && cp >= 0xd800 && cp <= 0xdbff) {
      const low = /^\\u(d[c-f][0-9a-f]{2})/i.exec(p.slice(i + 6, i + 12));
      if (low) return { cp: 0x10000 + ((cp - 0xd800) << 10) + (Number.parseInt(low[1] as string, 16) - 0xdc00), next: i + 12 };
    }
    return { cp, next: i + 2 + fixed };
  }
  if (kind === 'c' && /^[A-Za-z]$/.test(p[i + 2] ?? '')) return { cp: (p.charCodeAt(i + 2) as number) % 32, next: i + 3 };
  return undefined;
}

const CONTROL_ESCAPES: Readonly<Record<string, number>> = { a: 0x07, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

/** Reads the escape at `i` (a backslash), in or out of a class. */
function readEscape(p: string, i: number, inClass: boolean): Escape {
  const c = p[i + 1];
  if (c === undefined) return { next: i + 1, raw: '\\', rustOk: false }; // RE2 reports the trailing backslash
  const numbered = codePointEscape(p, i);
  if (numbered) return numbered;
  if (Object.hasOwn(PERL_CLASSES, c)) return { next: i + 2, perl: c };
  if (Object.hasOwn(CONTROL_ESCAPES, c)) return { next: i + 2, cp: CONTROL_ESCAPES[c] as number };
  if (c === '0' && !/[0-9]/.test(p[i + 2] ?? '')) return { next: i + 2, cp: 0 };
  if (!inClass && c >= '1' && c <= '9') {
    const ref = /^\d+/.exec(p.slice(i + 1))?.[0] as string;
    return { next: i + 1, refusal: refuse(`backreference \`\\${ref}\` is not supported`, BACKREFERENCE_HINT) };
  }
  if (!inClass && c === 'k' && p[i + 2] === '<') {
    const name = /^\\k<[^>]*>?/.exec(p.slice(i))?.[0] as string;
    return { next: i + 2, refusal: refuse(`backreference \`${name}\` is not supported`, BACKREFERENCE_HINT) };
  }
  if (c === 'p' || c === 'P') {
    const name = p[i + 2] === '{' ? /^\{[^}]*\}?/.exec(p.slice(i + 2))?.[0] : p[i + 2];
    const raw = `\\${c}${name ?? ''}`;
    return { next: i + raw.length, raw, rustOk: true };
  }
  if (inClass && c === 'b') return { next: i + 2, cp: 0x08 }; // backspace, as in JavaScript
  if (ASCII_PUNCTUATION.test(c)) return { next: i + 2, cp: c.charCodeAt(0) };
  // Anything else (`\b`, `\A`, `\z`, `\Q`, an unknown letter) is the caller's business.
  return { next: i + 2, raw: `\\${c}`, rustOk: false };
}

/**
 * Checks `pattern` and writes it for RE2 and for Rust; see the module
 * comment for the dialect.
 *
 * @example
 * ```ts
 * translatePattern('\\bfoo\\u00e9.');
 * // { ok: true, re2: '\\bfooé[^\\x{a}\\x{d}]', rust: '(?-u:\\b)fooé(?:[^\\x{a}\\x{d}]|(?-u:[\\x80-\\xff]{1,3}|…))', bounded: true, rustLegacy: NOT_UTF8_LINE }
 * translatePattern('(a)\\1'); // { ok: false, reason: 'backreference `\\1` is not supported', hint: '…' }
 * ```
 */
export function translatePattern(pattern: string, options: TranslateOptions = {}): PatternTranslation {
  const first = translate(pattern, options.dotAll === true);
  // Under an inline `(?s)` a dot is left to RE2, which the flag governs; dots rewritten before the flag was seen are redone.
  return first.dotAllSeen && !options.dotAll ? translate(pattern, true).result : first.result;
}

function translate(p: string, dotAll: boolean): { result: PatternTranslation; dotAllSeen: boolean } {
  let re2 = '';
  let rust: string | undefined = '';
  let dotAllSeen = false;
  let bounded = true;
  // Whether an atom may match outside ASCII, and whether the pattern's own text does.
  let asciiOnly = true;
  let textOutsideAscii = false;
  // Right after a quantifier a `+` is possessive and a `?` makes it lazy.
  let afterQuantifier = false;
  // `b` is the Rust text; `undefined` means Rust cannot be given the pattern.
  const emit = (a: string, b: string | undefined): void => {
    re2 += a;
    rust = rust === undefined || b === undefined ? undefined : rust + b;
  };
  const same = (text: string): void => emit(text, text);
  const done = (result: PatternTranslation) => ({ result, dotAllSeen });
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    const wasQuantifier: boolean = afterQuantifier;
    afterQuantifier = false;
    if (c === '\\') {
      const e = readEscape(p, i, false);
      if (e.refusal) return done(e.refusal);
      if (e.perl !== undefined) {
        const negated = e.perl === e.perl.toUpperCase();
        // `\\s` is Unicode white space (U+00A0 is a byte of every 8-bit code page); `\\d` and `\\w` are ASCII.
        const wide = negated || e.perl === 's';
        if (wide) asciiOnly = false;
        const text = `[${negated ? '^' : ''}${rangesText(PERL_CLASSES[e.perl.toLowerCase()] as readonly Range[])}]`;
        emit(text, wide ? widened(text) : text);
      } else if (e.cp !== undefined) {
        if (e.cp > 0x7f && e.cp !== REPLACEMENT_CHARACTER) textOutsideAscii = true;
        const [a, b] = literal(e.cp);
        emit(a, b);
      } else if (e.raw === '\\b' || e.raw === '\\B') {
        // Rust's word boundary is Unicode-aware unless told otherwise; RE2's is ASCII.
        emit(e.raw, `(?-u:${e.raw})`);
      } else if (e.raw === '\\A' || e.raw === '\\z') {
        // Every line is searched on its own: its start and end are ripgrep's `^` and `$`.
        emit(e.raw, e.raw === '\\A' ? '^' : RUST_LINE_END);
      } else if (e.raw?.startsWith('\\p') || e.raw?.startsWith('\\P')) {
        asciiOnly = false;
        emit(e.raw, widened(e.raw));
      } else if (e.raw === '\\Q') {
        const end = p.indexOf('\\E', e.next);
        const quoted = quotePattern(p.slice(e.next, end < 0 ? p.length : end));
        if (quoted.ok) {
          emit(quoted.re2, quoted.rust);
          if (quoted.rustLegacy !== undefined) textOutsideAscii = true;
        }
        i = end < 0 ? p.length : end + 2;
        continue;
      } else {
        emit(e.raw ?? '', undefined);
      }
      i = e.next;
      continue;
    }
    if (c === '[') {
      const cls = readClass(p, i);
      if (!cls.asciiOnly) asciiOnly = false;
      emit(cls.re2, cls.rust !== undefined && !cls.asciiOnly ? widened(cls.rust) : cls.rust);
      i = cls.next;
      continue;
    }
    if (c === '(') {
      const rest = p.slice(i, i + 4);
      if (rest.startsWith('(?=') || rest.startsWith('(?!')) return done(refuse(`look-ahead \`${rest.slice(0, 3)}\` is not supported`, LOOKAROUND_HINT));
      if (rest.startsWith('(?<=') || rest.startsWith('(?<!')) return done(refuse(`look-behind \`${rest}\` is not supported`, LOOKAROUND_HINT));
      if (rest.startsWith('(?>')) return done(refuse('atomic group `(?>` is not supported', `write a plain group \`(?:…)\`: ${NO_BACKTRACKING_HINT}`));
      if (rest.startsWith('(?P=')) return done(refuse('backreference `(?P=name)` is not supported', BACKREFERENCE_HINT));
      const named = /^\(\?P?<([^>]*)>/.exec(p.slice(i));
      if (named) {
        same(`(?P<${named[1]}>`);
        i += named[0].length;
        continue;
      }
      const flags = /^\(\?([A-Za-z-]*)([):])/.exec(p.slice(i));
      if (flags) {
        if ((flags[1] as string).split('-')[0]?.includes('s')) dotAllSeen = true;
        same(flags[0]);
        i += flags[0].length;
        continue;
      }
      same('(');
      i++;
      continue;
    }
    if (c === '.') {
      asciiOnly = false;
      const dot = dotAll ? '.' : `[^${hex(0x0a)}${hex(0x0d)}]`;
      emit(dot, widened(dot));
      i++;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      if (c === '+' && wasQuantifier) {
        return done(refuse(`possessive quantifier \`${p.slice(i - 1, i + 1)}\` is not supported`, `drop the last \`+\`: ${NO_BACKTRACKING_HINT}`));
      }
      same(c);
      i++;
      if (c !== '?') bounded = false;
      // A `?` right after a quantifier makes it lazy; after that nothing more attaches.
      afterQuantifier = !(c === '?' && wasQuantifier);
      continue;
    }
    if (c === '{') {
      const repeat = /^\{\d+(,\d*)?\}/.exec(p.slice(i));
      if (repeat) {
        if (repeat[1] === ',') bounded = false;
        same(repeat[0]);
        i += repeat[0].length;
        afterQuantifier = true;
      } else {
        // Not a repetition: RE2 reads a literal brace, Rust needs it escaped.
        emit('{', '\\{');
        i++;
      }
      continue;
    }
    if (c === '}' || c === ']') {
      emit(c, `\\${c}`);
      i++;
      continue;
    }
    if (c === '$') {
      emit(c, RUST_LINE_END);
      i++;
      continue;
    }
    if (c === '^' || c === '|' || c === ')') {
      same(c);
      i++;
      continue;
    }
    const cp = p.codePointAt(i) as number;
    if (cp > 0x7f && cp !== REPLACEMENT_CHARACTER) textOutsideAscii = true;
    const [a, b] = cp < 0x20 || cp === REPLACEMENT_CHARACTER ? literal(cp) : [String.fromCodePoint(cp), String.fromCodePoint(cp)];
    emit(a, b);
    i += cp > 0xffff ? 2 : 1;
  }
  const rustLegacy = textOutsideAscii ? NOT_UTF8_LINE : asciiOnly ? undefined : ESCAPE_LINE;
  return done({ ok: true, re2, rust, bounded, rustLegacy });
}

/** A bracketed class at `i`, with Perl classes and code-point escapes spelled as ranges both engines read alike. */
function readClass(p: string, i: number): { re2: string; rust: string | undefined; asciiOnly: boolean; next: number } {
  let j = i + 1;
  const negated = p[j] === '^';
  if (negated) j++;
  // A negated class, a Unicode property or a member above U+007F may match outside ASCII.
  let asciiOnly = !negated;
  let body = '';
  let rustOk = true;
  const covers = (_lo: number, hi: number): void => {
    if (hi > 0x7f) asciiOnly = false;
  };
  // One member: a code point (possibly a range end), or a set.
  const member = (at: number): { cp?: number; text: string; next: number } => {
    if (p[at] === '[' && p[at + 1] === ':') {
      const posix = /^\[:(\^?)[a-z]+:\]/.exec(p.slice(at));
      if (posix) {
        // POSIX classes are ASCII; a negated one is not.
        if (posix[1] === '^') asciiOnly = false;
        return { text: posix[0], next: at + posix[0].length };
      }
    }
    if (p[at] === '\\') {
      const e = readEscape(p, at, true);
      if (e.perl !== undefined) {
        const ranges = PERL_CLASSES[e.perl] as readonly Range[];
        for (const [lo, hi] of ranges) covers(lo, hi);
        return { text: rangesText(ranges), next: e.next };
      }
      if (e.cp !== undefined) return { cp: e.cp, text: classChar(e.cp), next: e.next };
      // A Unicode property, or an escape RE2 judges.
      asciiOnly = false;
      if (!e.rustOk) rustOk = false;
      return { text: e.raw ?? '', next: e.next };
    }
    const cp = p.codePointAt(at) as number;
    return { cp, text: classChar(cp), next: at + (cp > 0xffff ? 2 : 1) };
  };
  let first = true;
  while (j < p.length) {
    if (p[j] === ']' && !first) {
      const text = `[${negated ? '^' : ''}${body}]`;
      return { re2: text, rust: rustOk ? text : undefined, asciiOnly, next: j + 1 };
    }
    first = false;
    const a = member(j);
    if (a.cp !== undefined && p[a.next] === '-' && a.next + 1 < p.length && p[a.next + 1] !== ']') {
      const b = member(a.next + 1);
      if (b.cp !== undefined) {
        covers(a.cp, b.cp);
        body += `${a.text}-${b.text}`;
        j = b.next;
        continue;
      }
    }
    if (a.cp !== undefined) covers(a.cp, a.cp);
    body += a.text;
    j = a.next;
  }
  // Unterminated: hand RE2 the caller's text so that it names the problem.
  return { re2: p.slice(i), rust: undefined, asciiOnly: false, next: p.length };
}

/**
 * `text` as a pattern that matches exactly that text, for both engines.
 *
 * @example
 * ```ts
 * quotePattern('a.b(');  // { ok: true, re2: 'a\\.b\\(', rust: 'a\\.b\\(', bounded: true, rustLegacy: undefined }
 * ```
 */
export function quotePattern(text: string): PatternTranslation {
  let re2 = '';
  let rust: string | undefined = '';
  let outsideAscii = false;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp > 0x7f) outsideAscii = true;
    const [a, b] = literal(cp);
    re2 += a;
    rust = rust === undefined || b === undefined ? undefined : rust + b;
  }
  return { ok: true, re2, rust, bounded: true, rustLegacy: outsideAscii ? NOT_UTF8_LINE : undefined };
}
