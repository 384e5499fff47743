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
import { implausibility } from './text-plausibility.ts';

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
  // almost never a zero low byte.
  if (oddZero / pairs > 0.4 && evenZero / pairs < 0.05) return 'utf-16le';
  if (evenZero / pairs > 0.4 && oddZero / pairs < 0.05) return 'utf-16be';
  return undefined;
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

function utf16Weirdness(sample: Uint8Array, enc: 'utf-16le' | 'utf-16be'): number {
  let text: string;
  try {
    text = new TextDecoder(enc, { fatal: true }).decode(sample);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters mean "not text"
  if (/[\u0000-\u0008\u000e-\u001f\ufffe\uffff]/.test(text)) return Number.POSITIVE_INFINITY;
  // The wrong byte order scatters text over unassigned and private code points.
  return (text.match(/[\p{Cn}\p{Co}]/gu) ?? []).length / Math.max(1, text.length);
}

/**
 * UTF-16 without BOM for text the core heuristic misses (CJK, where zero
 * bytes are rare and fall at both parities): both byte orders are decoded,
 * and the one that reads as assigned, control-free text wins.
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
  const le = utf16Weirdness(body, 'utf-16le');
  const be = utf16Weirdness(body, 'utf-16be');
  const best = Math.min(le, be);
  if (best > 0.02) return undefined;
  const wide = le <= be ? 'utf-16le' : 'utf-16be';
  // Any byte pairs read as CJK; real text also breaks lines or words. ASCII
  // with NULs in it, read as UTF-16, has a space or a line break only where a
  // NUL happens to follow one.
  return /[\t\n\r \u3000]/.test(new TextDecoder(wide).decode(body)) ? wide : undefined;
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
  if (bom) return { encoding: bom.encoding, bomLength: bom.length, binary: false, source: 'bom', confidence: 1 };
  const utf16 = utf16Heuristic(head);
  if (utf16) return { encoding: utf16, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.8 };
  if (looksBinary(head)) {
    const wide = utf16WithoutBom(head);
    if (wide) return { encoding: wide, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.7 };
    return { encoding: 'binary', bomLength: 0, binary: true, source: 'binary', confidence: 0.9 };
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
  const found: EncodingInfo =
    legacy && isSupportedEncoding(legacy.encoding)
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
  return found;
}

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
