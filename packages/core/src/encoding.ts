/**
 * Text encodings: byte-order marks, binary detection, UTF-8 validation and
 * streaming decoders. One implementation for every backend and layer.
 *
 * Detection order ({@link detectEncoding}): BOM; UTF-16 without BOM;
 * binary; then, from the first line holding a byte above 0x7F or an escape
 * (wherever in the file it is): ISO-2022-JP escapes, UTF-8 (strict, or with
 * a few invalid bytes among many valid sequences: damaged UTF-8 is still
 * UTF-8), and only then a legacy detector (pluggable; `windows-1252` when
 * none is given).
 *
 * @module
 */

import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import { type FsOperation, fsError } from './errors.ts';
import { iconvLite } from './lazy-dependencies.ts';
import { commonCjk, implausibility } from './text-plausibility.ts';

/** Bytes of a file's head inspected for BOM, UTF-16 and binary data; git and ripgrep look at a similar prefix. */
export const DETECTION_SAMPLE_BYTES = 8192;

/**
 * Bytes inspected for the encoding itself, from the first line that holds
 * a non-ASCII byte (or an escape): enough for UTF-8 validation and legacy
 * statistics, bounded so detection never costs the whole of a large file.
 */
export const DETECTION_WINDOW_BYTES = 64 * 1024;

/** What {@link detectEncoding} found. */
export interface EncodingInfo {
  /** Canonical lower-case label (`utf-8`, `utf-16le`, `shift_jis`, ...); `binary` for binary data. */
  readonly encoding: string;
  /** Length of the byte-order mark at the start, 0 if none. */
  readonly bomLength: number;
  /** The sample looks like binary data, not text. */
  readonly binary: boolean;
  /**
   * How the answer was reached; `ascii` means no byte above 0x7F (nor an
   * escape) was seen, so UTF-8 is assumed: a streaming reader that saw only
   * a prefix re-detects when one comes.
   */
  readonly source: 'bom' | 'utf16-heuristic' | 'binary' | 'ascii' | 'utf-8' | 'legacy' | 'explicit';
  /** 0..1; 1 for BOM, explicit and strict UTF-8. */
  readonly confidence: number;
}

/** A detector for legacy (non-Unicode) encodings, e.g. backed by chardet. */
export type LegacyDetector = (sample: Uint8Array) => { encoding: string; confidence: number } | undefined;

/** Options of {@link detectEncoding}. */
export interface DetectOptions {
  /** Called when the sample is neither Unicode nor binary. */
  legacyDetector?: LegacyDetector;
  /** Answer when the legacy detector has none; default `windows-1252`. */
  legacyFallback?: string;
  /**
   * The bytes are a prefix of a longer file, so a sequence cut off at their
   * end is not an error. Default: assumed when at least
   * {@link DETECTION_SAMPLE_BYTES} are given.
   */
  partial?: boolean;
}

/** Returns the encoding and length of a byte-order mark at the start of `bytes`. */
export function detectBom(bytes: Uint8Array): { encoding: string; length: number } | undefined {
  const [b0, b1, b2, b3] = bytes;
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (b0 === 0xff && b1 === 0xfe) {
    if (b2 === 0 && b3 === 0 && bytes.length >= 4) return { encoding: 'utf-32le', length: 4 };
    return { encoding: 'utf-16le', length: 2 };
  }
  if (b0 === 0xfe && b1 === 0xff) return { encoding: 'utf-16be', length: 2 };
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return { encoding: 'utf-32be', length: 4 };
  return undefined;
}

function utf16Heuristic(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = bytes.length - (bytes.length % 2);
  // Too few code units to tell text from a short binary record.
  if (n < 8) return undefined;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenZero++;
    if (bytes[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  // Latin-script text in UTF-16 has a zero high byte in most code units and
  // almost never a zero low byte; so do arrays of small 16-bit integers,
  // which only the characters they decode to tell apart.
  const order = oddZero / pairs > 0.4 && evenZero / pairs < 0.05 ? 'utf-16le' : evenZero / pairs > 0.4 && oddZero / pairs < 0.05 ? 'utf-16be' : undefined;
  return order !== undefined && readsAsWriting(bytes.subarray(0, n), order) ? order : undefined;
}

/**
 * True when `bytes` look like binary data: a NUL byte, or more than 10% of
 * control bytes other than tab, newline, carriage return, form feed, escape.
 */
export function looksBinary(bytes: Uint8Array): boolean {
  let control = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === 0) return true;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b && b !== 0x0b) control++;
  }
  return bytes.length > 0 && control / bytes.length > 0.1;
}

/**
 * Below this many bytes, a whole file is too short for a NUL or a tenth of
 * control bytes to turn up in binary data by chance (about one
 * in eight random bytes is either): a window of machine code, a digest or
 * deflated data reads as ASCII or a legacy code page unless its bytes
 * themselves say otherwise.
 */
const FEW_BYTES = 64;

/**
 * Implausibility points the bytes above 0x7F of a short file may add to its
 * legacy reading; real text adds 2 at most in the corpus (binary-corpus.ts),
 * where machine code, digests and gzip add 5 to 40.
 */
const FEW_BYTES_ODDITIES = 4;

/**
 * A control byte other than tab, line breaks, form feed and escape, or DEL;
 * DOS's end-of-file mark (0x1A) is allowed as the last byte.
 */
function holdsControl(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1b && (b !== 0x1a || i < bytes.length - 1)) || b === 0x7f)
      return true;
  }
  return false;
}

/**
 * What the non-ASCII characters of `text` add to its implausibility: ASCII
 * reads the same in every legacy encoding, so its own oddities (`--outFile`
 * flips case) say nothing of the encoding or of the bytes above 0x7F.
 */
function oddities(text: string, encoding: string): number {
  return implausibility(text, encoding) - implausibility(text.replace(/[\u0080-\u{10ffff}]/gu, ' '), encoding);
}

/**
 * Strict UTF-8 validation (no overlongs, no surrogates, nothing above
 * U+10FFFF). With `allowTruncatedEnd`, an incomplete sequence cut off by the
 * end of a sample is accepted.
 */
export function isValidUtf8(bytes: Uint8Array, allowTruncatedEnd = false): boolean {
  // Node's validator (simdutf) is as strict and many times faster; the walk below is only needed to accept a cut end.
  if (isUtf8(bytes)) return true;
  if (!allowTruncatedEnd) return false;
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    let cp: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
      cp = b & 0x0f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
      cp = b & 0x07;
    } else return false;
    if (i + need >= n) {
      // The sample ends inside this sequence.
      if (!allowTruncatedEnd) return false;
      for (let k = i + 1; k < n; k++) if (((bytes[k] as number) & 0xc0) !== 0x80) return false;
      return true;
    }
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k] as number;
      if ((c & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += need + 1;
  }
  return true;
}

/**
 * Bytes that every detection reads as UTF-8 (or ASCII): valid UTF-8 with no
 * escape byte (ISO-2022-JP is seven-bit; its escapes mark it). Anything else
 * may be a legacy encoding, whose text only a decoder with the file's
 * detected encoding sees.
 *
 * @example
 * ```ts
 * readsAsUtf8(new TextEncoder().encode('café')); // true
 * readsAsUtf8(Uint8Array.of(0x63, 0x61, 0x66, 0xe9)); // false: windows-1252 'café'
 * ```
 */
export function readsAsUtf8(bytes: Uint8Array): boolean {
  return bytes.indexOf(0x1b) < 0 && isUtf8(bytes);
}

const ISO2022JP_ESCAPES = [
  [0x1b, 0x24, 0x42],
  [0x1b, 0x24, 0x40],
  [0x1b, 0x28, 0x4a],
  [0x1b, 0x28, 0x49],
];

/** Seven-bit text with the escape sequences of ISO-2022-JP (JIS X 0208, JIS X 0201). */
export function looksIso2022Jp(sample: Uint8Array): boolean {
  let escaped = false;
  for (let i = 0; i < sample.length; i++) {
    const b = sample[i] as number;
    if (b >= 0x80) return false;
    if (b === 0x1b && !escaped) {
      for (const e of ISO2022JP_ESCAPES) if (sample[i + 1] === e[1] && sample[i + 2] === e[2]) escaped = true;
    }
  }
  return escaped;
}

/**
 * `sample` decoded as UTF-32, or undefined when a unit is no Unicode scalar
 * value (above U+10FFFF, or a surrogate: what most four bytes of binary
 * data are). A unit cut off by the sample's end is dropped.
 */
function decodeUtf32(sample: Uint8Array, enc: 'utf-32le' | 'utf-32be'): string | undefined {
  const view = new DataView(sample.buffer, sample.byteOffset, sample.byteLength);
  const points: number[] = [];
  for (let at = 0; at + 4 <= sample.length; at += 4) {
    const cp = view.getUint32(at, enc === 'utf-32le');
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
    points.push(cp);
  }
  return String.fromCodePoint(...points);
}

/**
 * `sample` decoded as UTF-16, or undefined when it is not well-formed: a
 * high surrogate cut off by the sample's end is dropped, any other lone
 * surrogate fails.
 */
function decodeUtf16(sample: Uint8Array, enc: 'utf-16le' | 'utf-16be'): string | undefined {
  const n = sample.length - (sample.length % 2);
  const last = enc === 'utf-16le' ? sample[n - 1] : sample[n - 2];
  const end = last !== undefined && last >= 0xd8 && last <= 0xdb ? n - 2 : n;
  try {
    return new TextDecoder(enc, { fatal: true, ignoreBOM: true }).decode(sample.subarray(0, end));
  } catch {
    return undefined;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters mean "not text"
const NOT_TEXT = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\ufffe\uffff]/;

const NOT_TEXT_ALL = new RegExp(NOT_TEXT.source, 'g');

const NO_WORDS = /^[\t\n\v\f\r \u00a0\u3000\p{P}\p{Nd}]*$/u;

function utf16Weirdness(sample: Uint8Array, enc: 'utf-16le' | 'utf-16be'): number {
  const text = decodeUtf16(sample, enc);
  if (text === undefined || NOT_TEXT.test(text)) return Number.POSITIVE_INFINITY;
  // The wrong byte order scatters text over unassigned and private code points.
  return (text.match(/[\p{Cn}\p{Co}]/gu) ?? []).length / Math.max(1, text.length);
}

/**
 * Whether `sample` read as UTF-16 in `enc` is writing and not numbers: a
 * control character (U+0001 from the integer 1), unassigned or private
 * code points, or CJK Extension A (what two ASCII bytes of a binary read
 * as: `GIF89a` is `䥇㡆愹`; writing hardly uses those rare Han characters)
 * rule it out, and so does text that reads as no language does.
 */
function readsAsWriting(sample: Uint8Array, enc: 'utf-16le' | 'utf-16be', bom = false): boolean {
  return isWriting(decodeUtf16(sample, enc), bom);
}

/** What {@link readsAsWriting} asks of text decoded from a wide encoding (`undefined`: not well-formed). */
function isWriting(text: string | undefined, bom: boolean): boolean {
  if (text === undefined) return false;
  if (bom) {
    // A byte-order mark is evidence of its own: a file that says it is
    // UTF-16 may hold a stray control character in a hundred code units,
    // or no word at all (`[`, `“{`, a BOM alone), where a guess may not.
    if ((text.match(NOT_TEXT_ALL) ?? []).length > text.length * 0.01) return false;
    if (NO_WORDS.test(text)) return true;
  } else if (NOT_TEXT.test(text)) return false;
  // Writing starts with a character, never with a mark to put on one (a
  // binary's `3B 03` reads as U+033B).
  if (!/[\p{L}\p{N}]/u.test(text) || /^\p{M}/u.test(text)) return false;
  const rare = (text.match(/[\p{Cn}\p{Co}\u3400-\u4dbf]/gu) ?? []).length;
  // A few odd characters in a long text are damage; in a short one, the
  // only evidence there is.
  if (rare > text.length * 0.02) return false;
  if (text.length < SHORT_UTF16_UNITS && scriptsOfShortText(text) > 1) return false;
  // Past those, a mark is enough for a text of any length: what binary data reads as (controls, unassigned and
  // rare code points, lone surrogates) is ruled out above, and mixed writing (`中文a中文b`, emoji between words)
  // need not read as one language does, which the guess without a mark must ask. A few units drawn from binary
  // data still read as Han characters nobody writes or as odd Latin (`üĀøĀx`): a short text keeps to common CJK,
  // and its other letters are judged without the CJK between them.
  if (bom && text.length >= SHORT_UTF16_UNITS) return true;
  if (bom && !(text.match(CJK_ALL) ?? []).every(commonCjk)) return false;
  // A thousand code units show how text reads as well as the whole sample,
  // in a fraction of the time. One oddity is allowed however short the text
  // (`TypeDef` flips case inside a word), then a point in ten units.
  const judged = (bom ? text.replace(CJK_ALL, ' ') : text).slice(0, PLAUSIBILITY_UNITS).replace(/[\ud800-\udbff]$/, '');
  return implausibility(letterShapes(judged)) <= 2 + judged.length * 0.1;
}

const PLAUSIBILITY_UNITS = 1024;

/** A letter standing for each script whose legacy alphabets text-plausibility knows, upper and lower case. */
const SCRIPT_LETTERS: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/\p{Script=Latin}/u, 'A', 'a'],
  [/\p{Script=Cyrillic}/u, 'Б', 'б'],
  [/\p{Script=Greek}/u, 'Β', 'β'],
  [/\p{Script=Hebrew}/u, 'א', 'א'],
  [/\p{Script=Arabic}/u, 'ب', 'ب'],
  [/\p{Script=Thai}/u, 'ก', 'ก'],
];

/**
 * `text` with each letter replaced by one of its script and case, CJK
 * letters kept: the plausibility of its shape (scripts mixed in a word,
 * case flipped inside one, symbols between letters) without the judgement
 * of which accented letters belong together, made for legacy code pages,
 * where UTF-16 writes every language (Vietnamese `ộ` and `ư` fit none of
 * their alphabets). Letters of other scripts stand as a Han character
 * does, a script apart that may touch Latin.
 */
function letterShapes(text: string): string {
  return text.replace(/\p{L}/gu, (ch) => {
    let shape = letterShape.get(ch);
    if (shape === undefined) {
      shape = shapeOf(ch);
      letterShape.set(ch, shape);
    }
    return shape;
  });
}

const letterShape = new Map<string, string>();

function shapeOf(letter: string): string {
  if (/[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u.test(letter)) return letter;
  const upper = letter !== letter.toLowerCase();
  for (const [script, capital, small] of SCRIPT_LETTERS) if (script.test(letter)) return upper ? capital : small;
  return '中';
}

/** Below this many code units a UTF-16 reading is held to the characters of a language or two. */
const SHORT_UTF16_UNITS = 32;

/** Latin letters, digits, punctuation, currency signs, marks, ordinary spaces, emoji: what text in any script may hold. */
const ANY_WRITING = /[\t\n\v\f\r \u00a0\u202f\u3000\p{P}\p{Sc}\p{Nd}\p{M}\p{Emoji_Presentation}\p{scx=Latin}]/u;

/**
 * Half-width katakana and Hangul, Arabic presentation forms: letters that
 * only conversion from a legacy code page writes, and what the bytes `FF xx`
 * or `FB xx` of machine code read as.
 */
const LEGACY_FORMS = /[\uff66-\uffdc\ufb50-\ufdff\ufe70-\ufefe]/;

/** The scripts of living languages besides Latin; those of Chinese, Japanese and Korean count as one, which they mix. */
const WRITING_SCRIPTS: readonly RegExp[] = [
  /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]/u,
  ...[
    'Greek',
    'Cyrillic',
    'Armenian',
    'Georgian',
    'Hebrew',
    'Arabic',
    'Devanagari',
    'Bengali',
    'Gurmukhi',
    'Gujarati',
    'Tamil',
    'Telugu',
    'Kannada',
    'Malayalam',
    'Sinhala',
    'Thai',
    'Lao',
    'Tibetan',
    'Myanmar',
    'Khmer',
    'Ethiopic',
  ].map((script) => new RegExp(`\\p{scx=${script}}`, 'u')),
];

/**
 * How many scripts besides Latin a short text writes in; infinite when it
 * holds a character no writing needs (symbols, spaces U+2000 to U+200A,
 * letterlike signs). A few code units of one language use one script at
 * most, while the bytes of a binary read as UTF-16 land anywhere (`р ⠂屁`:
 * Cyrillic, braille and Han; `ȼℋ 欢Ɂ`, with em and en quads).
 */
function scriptsOfShortText(text: string): number {
  const seen = new Set<number>();
  for (const ch of text) {
    if (ANY_WRITING.test(ch)) continue;
    if (LEGACY_FORMS.test(ch)) return Number.POSITIVE_INFINITY;
    const script = WRITING_SCRIPTS.findIndex((re) => re.test(ch));
    if (script < 0) return Number.POSITIVE_INFINITY;
    seen.add(script);
  }
  return seen.size;
}

/**
 * UTF-16 without BOM for text the core heuristic misses (CJK, where zero
 * bytes are rare and fall at both parities): both byte orders are decoded,
 * and the one that reads as assigned, control-free writing wins.
 */
export function utf16WithoutBom(sample: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = sample.length - (sample.length % 2);
  if (n < 8) return undefined;
  let zeros = 0;
  for (let i = 0; i < n; i++) if (sample[i] === 0) zeros++;
  // Real UTF-16 text has zero bytes regularly; a stray NUL in text is binary,
  // however short the text (one NUL in 19 code units is over 1%).
  if (zeros < 2 || zeros < (n / 2) * 0.01) return undefined;
  const body = sample.subarray(0, n);
  const weirdness = { 'utf-16le': utf16Weirdness(body, 'utf-16le'), 'utf-16be': utf16Weirdness(body, 'utf-16be') };
  const orders = (['utf-16le', 'utf-16be'] as const).filter((o) => weirdness[o] <= 0.02).sort((a, b) => weirdness[a] - weirdness[b]);
  // Any byte pairs read as CJK, in either order; real text also breaks lines
  // or words, and reads as writing. ASCII with NULs in it, read as UTF-16,
  // has a space or a line break only where a NUL happens to follow one.
  return orders.find((o) => /[\t\n\r \u3000]/.test(decodeUtf16(body, o) ?? '') && readsAsWriting(body, o));
}

/**
 * UTF-16 without BOM for a file of a few bytes with a zero byte at most (a
 * few CJK characters, a Cyrillic word, a space), which the zero-byte
 * heuristics cannot see and which is no text in any other reading: it must
 * read as writing in one byte order only, with no Latin letter (those are
 * ASCII, with a zero byte each) and only Han characters, kana and Hangul
 * that are commonly written. Printable ASCII read as UTF-16 is Han
 * (`declare` is `摥捬慲`), so a byte above 0x7F or a control byte must stand
 * somewhere.
 */
const CJK_ALL = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/gu;

function utf16WithoutZeros(sample: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (sample.length < 8 || sample.length % 2 === 1 || sample.indexOf(0) !== sample.lastIndexOf(0)) return undefined;
  if (!sample.some((b) => b >= 0x80) && !holdsControl(sample)) return undefined;
  const orders = (['utf-16le', 'utf-16be'] as const).filter((o) => readsAsWriting(sample, o));
  const text = orders.length === 1 ? (decodeUtf16(sample, orders[0] as 'utf-16le' | 'utf-16be') ?? '') : '';
  const cjk = text.match(CJK_ALL) ?? [];
  return orders.length === 1 && cjk.every(commonCjk) && !/\p{Script=Latin}/u.test(text) && !counts(text) ? orders[0] : undefined;
}

/** Three code units in a row, each one above the last: an array of indices (`ကခဂ` is 0x1000, 0x1001, 0x1002), not a word. */
function counts(text: string): boolean {
  for (let i = 2; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (text.charCodeAt(i - 1) === c - 1 && text.charCodeAt(i - 2) === c - 2) return true;
  }
  return false;
}

/**
 * Counts well-formed multi-byte UTF-8 sequences and invalid bytes: a file
 * with more of the former is UTF-8 with some damage, not a legacy encoding.
 * A sequence cut off by the end counts as well-formed (a file cut inside its
 * last character is UTF-8 cut short), a lone lead byte there as neither.
 */
export function utf8Shape(sample: Uint8Array): { valid: number; invalid: number } {
  let valid = 0;
  let invalid = 0;
  const n = sample.length;
  for (let i = 0; i < n; ) {
    const b = sample[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
    let ok = need > 0 && i + need < n;
    for (let k = 1; ok && k <= need; k++) if (((sample[i + k] as number) & 0xc0) !== 0x80) ok = false;
    if (ok) {
      valid++;
      i += need + 1;
    } else {
      if (i + need >= n && need > 0) {
        // Cut off by the end, of a sample or of a file cut inside its last
        // character: a lead byte with its continuations so far is UTF-8 cut
        // short; a lone lead byte says nothing either way.
        let tail = true;
        for (let k = i + 1; k < n; k++) if (((sample[k] as number) & 0xc0) !== 0x80) tail = false;
        if (tail) {
          if (n - i > 1) valid++;
          break;
        }
      }
      invalid++;
      i++;
    }
  }
  return { valid, invalid };
}

/**
 * Counts the lines holding non-ASCII bytes that are well-formed UTF-8 and
 * those that are not: a UTF-8 file with a line pasted from a legacy one has
 * few multi-byte sequences but as many good lines as bad, where a legacy
 * file's lines are valid UTF-8 only by rare coincidence.
 */
export function utf8Lines(sample: Uint8Array, allowTruncatedEnd: boolean): { valid: number; invalid: number } {
  let valid = 0;
  let invalid = 0;
  for (let start = 0; start < sample.length; ) {
    let end = sample.indexOf(0x0a, start);
    end = end < 0 ? sample.length : end + 1;
    const line = sample.subarray(start, end);
    if (firstSignificant(line) >= 0 && line.some((b) => b >= 0x80)) {
      if (isValidUtf8(line, allowTruncatedEnd && end === sample.length)) valid++;
      else invalid++;
    }
    start = end;
  }
  return { valid, invalid };
}

/** Index of the first byte above 0x7F or escape (0x1B) at or after `from`; -1 when none. */
function firstSignificant(bytes: Uint8Array, from = 0): number {
  for (let i = from; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b >= 0x80 || b === 0x1b) return i;
  }
  return -1;
}

/**
 * Where the encoding shows: from the start of the line holding the first
 * non-ASCII byte (or escape), {@link DETECTION_WINDOW_BYTES} long. A file
 * whose first 8 KiB are ASCII is not UTF-8 for that: the window starts
 * where its text does.
 */
export function detectionWindow(bytes: Uint8Array): { start: number; end: number } | undefined {
  const first = firstSignificant(bytes);
  if (first < 0) return undefined;
  const start = bytes.lastIndexOf(0x0a, first) + 1;
  return { start, end: Math.min(bytes.length, start + DETECTION_WINDOW_BYTES) };
}

/**
 * Guesses the encoding of a file from its bytes (the whole file, or a
 * prefix with `partial`).
 *
 * @example
 * ```ts
 * detectEncoding(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69])); // { encoding: 'utf-8', bomLength: 3, ... }
 * detectEncoding(new Uint8Array([0x00, 0x01, 0x02]));               // { encoding: 'binary', binary: true, ... }
 * ```
 */
export function detectEncoding(bytes: Uint8Array, options: DetectOptions = {}): EncodingInfo {
  const head = bytes.subarray(0, DETECTION_SAMPLE_BYTES);
  const bom = detectBom(head);
  // A whole file of UTF-16 is whole code units: an odd length leaves BOM-less
  // UTF-16 nothing to stand on, and a BOM no text to stand on when the code
  // units are too few to outweigh the odd byte.
  const whole = !(options.partial ?? bytes.length >= DETECTION_SAMPLE_BYTES);
  const halfUnit = head.length % 2 === 1 && whole;
  const few = whole && bytes.length < FEW_BYTES;
  if (bom) {
    // A BOM is two bytes that binary data holds as often as any other two:
    // what follows must read as text too.
    const body = head.subarray(bom.length);
    if (bom.encoding === 'utf-16le' || bom.encoding === 'utf-16be') {
      if ((halfUnit && body.length < SHORT_UTF16_UNITS * 2) || !readsAsWriting(body, bom.encoding, true)) return BINARY;
    } else if (bom.encoding === 'utf-32le' || bom.encoding === 'utf-32be') {
      // `FF FE 00 00` is also the 32-bit integer 0xFEFF, as code that handles byte-order marks stores it.
      if ((whole && body.length % 4 !== 0) || !isWriting(decodeUtf32(body.subarray(0, 4096), bom.encoding), true)) return BINARY;
    }
    return { encoding: bom.encoding, bomLength: bom.length, binary: false, source: 'bom', confidence: 1 };
  }
  const utf16 = halfUnit ? undefined : utf16Heuristic(head);
  if (utf16) return { encoding: utf16, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.8 };
  if (looksBinary(head) || (few && holdsControl(head))) {
    const wide = halfUnit ? undefined : (utf16WithoutBom(head) ?? (few ? utf16WithoutZeros(head) : undefined));
    if (wide) return { encoding: wide, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.7 };
    return BINARY;
  }
  const at = detectionWindow(bytes);
  if (at === undefined) return { encoding: 'utf-8', bomLength: 0, binary: false, source: 'ascii', confidence: 1 };
  const window = bytes.subarray(at.start, at.end);
  if (looksIso2022Jp(window)) return { encoding: 'iso-2022-jp', bomLength: 0, binary: false, source: 'legacy', confidence: 0.95 };
  const cut = at.end < bytes.length || (options.partial ?? bytes.length >= DETECTION_SAMPLE_BYTES);
  if (isValidUtf8(window, cut)) return { encoding: 'utf-8', bomLength: 0, binary: false, source: 'utf-8', confidence: 1 };
  // A few invalid bytes among many valid sequences: damaged UTF-8 (a stray byte,
  // a pasted legacy line, a cut last character), decoded lossily and written
  // back byte for byte, never a legacy encoding.
  const shape = utf8Shape(window);
  const damagedUtf8: EncodingInfo = { encoding: 'utf-8', bomLength: 0, binary: false, source: 'utf-8', confidence: 0.6 };
  if (shape.valid > 0 && shape.invalid <= shape.valid) return damagedUtf8;
  if (shape.valid > 0) {
    const lines = utf8Lines(window, cut);
    if (lines.valid >= lines.invalid) return damagedUtf8;
  }
  const legacy = options.legacyDetector === undefined ? undefined : askLegacyDetector(options.legacyDetector, window);
  const answered = legacy !== undefined && isSupportedEncoding(legacy.encoding);
  const found: EncodingInfo = answered
    ? { encoding: normalizeEncoding(legacy.encoding), bomLength: 0, binary: false, source: 'legacy', confidence: legacy.confidence }
    : { encoding: options.legacyFallback ?? 'windows-1252', bomLength: 0, binary: false, source: 'legacy', confidence: 0.3 };
  // A whole file whose only non-ASCII byte is a UTF-8 lead byte at its very
  // end was cut inside its last character, unless that byte reads as
  // plausible text in the legacy answer (`Insă` is Romanian, `InsĂ` is not).
  const end = window[window.length - 1] ?? 0;
  if (!cut && shape.valid === 0 && shape.invalid === 0 && end >= 0xc2 && end <= 0xf4) {
    const tail = window.subarray(window.lastIndexOf(0x0a) + 1);
    if (implausibility(createDecoder(found.encoding).decode(tail), found.encoding) > 0) return damagedUtf8;
  }
  // The detector's answer is the most plausible reading there is: when even
  // that reads as no writing, the bytes were never text.
  if (few && answered && oddities(createDecoder(found.encoding).decode(window), found.encoding) > FEW_BYTES_ODDITIES) {
    const wide = utf16WithoutZeros(bytes);
    return wide ? { encoding: wide, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.5 } : BINARY;
  }
  return { ...found, encoding: chineseLabel(found.encoding, bytes) };
}

/** Labels whose files the WHATWG GBK decoder reads: GBK and its subset GB2312 (the name jschardet gives). */
const GBK_LABELS = new Set(['gbk', 'gb2312', 'x-gbk']);

/**
 * Whether `bytes` hold a four-byte GB18030 sequence (lead, digit, lead,
 * digit): the only bytes that tell a GB18030 file from a GBK one, which
 * decode alike otherwise.
 */
function holdsFourByteGb18030(bytes: Uint8Array): boolean {
  for (let i = 0; i + 1 < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b < 0x81 || b === 0xff) continue;
    const second = bytes[i + 1] as number;
    if (second >= 0x30 && second <= 0x39) {
      const third = bytes[i + 2] ?? 0;
      const fourth = bytes[i + 3] ?? 0;
      if (third >= 0x81 && third <= 0xfe && fourth >= 0x30 && fourth <= 0x39) return true;
    }
    // A two-byte character: its trail byte leads nothing.
    i++;
  }
  return false;
}

/**
 * The name of a Chinese legacy file by what its bytes hold: GB18030 only
 * where a four-byte sequence shows it (statistics cannot tell, and call all
 * of them GB18030, the superset), GBK otherwise. An edit writes in the
 * encoding named: a GBK file given an emoji would become a GB18030 one, which
 * the tools that read it as GBK cannot read, and is refused instead.
 */
function chineseLabel(encoding: string, bytes: Uint8Array): string {
  if (encoding === 'gb18030') return holdsFourByteGb18030(bytes) ? encoding : 'gbk';
  if (GBK_LABELS.has(encoding)) return holdsFourByteGb18030(bytes) ? 'gb18030' : encoding;
  return encoding;
}

const BINARY: EncodingInfo = { encoding: 'binary', bomLength: 0, binary: true, source: 'binary', confidence: 0.9 };

/** Windows whose legacy detection is remembered, per detector. */
const LEGACY_ANSWERS_KEPT = 1024;
const legacyAnswers = new WeakMap<LegacyDetector, Map<string, ReturnType<LegacyDetector>>>();

/**
 * The detector's answer for `window`, remembered by the window's content: a
 * detector's statistics cost milliseconds a window, and every search of a
 * workspace meets the same legacy-encoded files again (a hash of the window
 * costs a few microseconds). A detector answers from the sample alone, so
 * an equal window has an equal answer.
 */
function askLegacyDetector(detector: LegacyDetector, window: Uint8Array): ReturnType<LegacyDetector> {
  let answers = legacyAnswers.get(detector);
  if (answers === undefined) {
    answers = new Map();
    legacyAnswers.set(detector, answers);
  }
  const key = hash('sha1', window, 'base64');
  if (answers.has(key)) {
    const known = answers.get(key);
    // Most recently used last: the first key is the one to let go.
    answers.delete(key);
    answers.set(key, known);
    return known;
  }
  const answer = detector(window);
  answers.set(key, answer);
  if (answers.size > LEGACY_ANSWERS_KEPT) answers.delete(answers.keys().next().value as string);
  return answer;
}

/** Lower-cases and canonicalizes common aliases (`utf8` → `utf-8`). */
export function normalizeEncoding(label: string): string {
  const l = label.trim().toLowerCase();
  switch (l) {
    case 'utf8':
    case 'unicode-1-1-utf-8':
      return 'utf-8';
    case 'utf16le':
    case 'ucs2':
    case 'ucs-2':
      return 'utf-16le';
    case 'utf16be':
      return 'utf-16be';
    case 'utf32le':
      return 'utf-32le';
    case 'utf32be':
      return 'utf-32be';
    case 'latin1':
      return 'iso-8859-1';
    case 'sjis':
    case 'shift-jis':
      return 'shift_jis';
    default:
      return l;
  }
}

function textDecoderSupports(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/** True when ctxfs can decode `label` (WHATWG label or iconv-lite name). */
export function isSupportedEncoding(label: string): boolean {
  const l = normalizeEncoding(label);
  return textDecoderSupports(l) || iconvLite().encodingExists(l);
}

/** An incremental decoder: feed byte chunks, get text. */
export interface StreamDecoder {
  readonly encoding: string;
  decode(chunk: Uint8Array): string;
  /** Flushes a trailing incomplete sequence. */
  end(): string;
}

/**
 * Creates a streaming decoder. The WHATWG `TextDecoder` is used where it knows
 * the label (it supports `fatal`); iconv-lite covers the rest (UTF-32 and
 * others). A BOM is not stripped here: callers skip `bomLength` bytes.
 */
export function createDecoder(label: string, options: { fatal?: boolean; op?: FsOperation; path?: string } = {}): StreamDecoder {
  const encoding = normalizeEncoding(label);
  const fail = (err: unknown) => fsError('EDECODE', options.op ?? 'read', options.path, { reason: `invalid ${encoding} data`, cause: err });
  if (textDecoderSupports(encoding)) {
    const td = new TextDecoder(encoding, { fatal: options.fatal ?? false, ignoreBOM: true });
    return {
      encoding,
      decode(chunk) {
        try {
          return td.decode(chunk, { stream: true });
        } catch (err) {
          throw fail(err);
        }
      },
      end() {
        try {
          return td.decode();
        } catch (err) {
          throw fail(err);
        }
      },
    };
  }
  if (!iconvLite().encodingExists(encoding)) {
    throw fsError('EINVAL', options.op ?? 'read', options.path, {
      reason: `unknown encoding '${label}'`,
      hint: 'pass a WHATWG encoding label such as utf-8, utf-16le, shift_jis or windows-1252',
    });
  }
  const dec = iconvLite().getDecoder(encoding, { stripBOM: false });
  return {
    encoding,
    decode: (chunk) => dec.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
    end: () => dec.end() ?? '',
  };
}

/** Encodes text for writing in `label` (UTF-8 fast path, iconv-lite otherwise). */
export function encodeText(text: string, label = 'utf-8'): Uint8Array {
  const encoding = normalizeEncoding(label);
  if (encoding === 'utf-8') return new TextEncoder().encode(text);
  if (!iconvLite().encodingExists(encoding)) {
    throw fsError('EINVAL', 'write', undefined, { reason: `unknown encoding '${label}'` });
  }
  return iconvLite().encode(text, encoding);
}
