/**
 * Text format detection for files on disk: the encoding (BOM, UTF-16
 * without BOM, ISO-2022-JP, strict UTF-8, then a statistical detector for
 * legacy encodings), the byte-order mark and the line endings, so a text
 * write back to the file can reproduce its bytes exactly.
 *
 * The legacy detector is pluggable (`DetectOptions.legacyDetector`); the
 * default here is chardet's. A detector's candidates, and the sibling
 * encodings of each (windows-1250 vs ISO-8859-2...), are ranked by
 * {@link rankCandidates}: how plausible the decoded text is (no C1 controls,
 * no symbols inside words, no case flips inside words), which is what
 * separates close single-byte encodings. `@ctxfs/host` plugs jschardet's
 * candidates in, measured more accurate on short text.
 *
 * @module
 */

import chardet from 'chardet';
import iconv from 'iconv-lite';
import {
  DETECTION_SAMPLE_BYTES,
  type DetectOptions,
  detectBom,
  detectEncoding,
  type EncodingInfo,
  type LegacyDetector,
  normalizeEncoding,
} from './encoding.ts';

/** Line terminators found in a sample. */
export type LineEnding = 'lf' | 'crlf' | 'mixed' | 'none';

/** Everything needed to write text back the way a file stores it. */
export interface TextFormat extends EncodingInfo {
  /** The byte-order mark bytes at the start (empty when none). */
  readonly bom: Uint8Array;
  readonly lineEnding: LineEnding;
}

const SIBLINGS: Record<string, readonly string[]> = {
  'windows-1250': ['iso-8859-2'],
  'iso-8859-2': ['windows-1250'],
  'windows-1251': ['koi8-r', 'iso-8859-5', 'koi8-u'],
  'koi8-r': ['windows-1251', 'koi8-u'],
  'iso-8859-5': ['windows-1251', 'koi8-r'],
  'windows-1252': ['iso-8859-1', 'iso-8859-15'],
  'iso-8859-1': ['windows-1252', 'iso-8859-15'],
  'windows-1253': ['iso-8859-7'],
  'iso-8859-7': ['windows-1253'],
  'windows-1254': ['iso-8859-9'],
  'iso-8859-9': ['windows-1254'],
  'windows-1255': ['iso-8859-8'],
  'iso-8859-8': ['windows-1255'],
  'windows-1256': ['iso-8859-6'],
  'iso-8859-6': ['windows-1256'],
};

const MULTI_BYTE_LEGACY = new Set(['shift_jis', 'euc-jp', 'gb18030', 'gbk', 'big5', 'euc-kr', 'iso-2022-jp', 'iso-2022-kr', 'iso-2022-cn']);

function scriptOf(cp: number): number {
  if (cp < 0x250) return 1; // Latin
  if (cp >= 0x370 && cp < 0x400) return 2; // Greek
  if (cp >= 0x400 && cp < 0x530) return 3; // Cyrillic
  if (cp >= 0x590 && cp < 0x600) return 4; // Hebrew
  if (cp >= 0x600 && cp < 0x700) return 5; // Arabic
  if (cp >= 0xe00 && cp < 0xe80) return 6; // Thai
  return 7;
}

/**
 * How implausible `text` is as natural-language text (lower is better):
 * replacement characters and C1 controls weigh most, then symbols inside
 * words, case flips inside words and words mixing scripts.
 */
export function implausibility(text: string): number {
  let score = 0;
  let prevLetter = false;
  let prevLower = false;
  let wordScript = 0;
  const chars = [...text];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    const cp = ch.codePointAt(0) as number;
    if (cp === 0xfffd) {
      score += 20;
      continue;
    }
    if (cp >= 0x80 && cp <= 0x9f) {
      score += 3;
      prevLetter = false;
      continue;
    }
    if (cp >= 0xdc80 && cp <= 0xdcff) {
      score += 20;
      continue;
    }
    const letter = /\p{L}/u.test(ch);
    if (letter) {
      const script = scriptOf(cp);
      if (prevLetter && wordScript !== 0 && script !== wordScript && script !== 7 && wordScript !== 7) score += 4;
      const upper = ch !== ch.toLowerCase() && ch === ch.toUpperCase();
      if (prevLetter && prevLower && upper) score += 2;
      prevLower = !upper && ch !== ch.toUpperCase();
      wordScript = prevLetter ? wordScript : script;
      prevLetter = true;
      continue;
    }
    if (cp >= 0xa0 && !/[\p{N}\p{Zs}\p{Pd}\p{Ps}\p{Pe}\p{Pi}\p{Pf}]/u.test(ch)) {
      // A symbol (±, ¤, ¦, ...) between two letters is almost always a mis-decoded letter.
      const next = chars[i + 1];
      if (prevLetter && next !== undefined && /\p{L}/u.test(next)) score += 3;
      else score += 0.5;
    }
    prevLetter = false;
    prevLower = false;
    wordScript = 0;
  }
  return score;
}

/** A candidate encoding with the statistical detector's confidence (0..1). */
export interface EncodingCandidate {
  encoding: string;
  confidence: number;
}

/**
 * Ranks a statistical detector's candidates (plus the sibling encodings of
 * each, e.g. ISO-8859-2 for windows-1250) by the plausibility of the decoded
 * sample, weighted by the detector's confidence, and returns the best.
 * Multi-byte answers the detector is reasonably sure of are kept as they are.
 *
 * @example
 * ```ts
 * const detector: LegacyDetector = (sample) => rankCandidates(sample, myDetector(sample));
 * ```
 */
export function rankCandidates(sample: Uint8Array, candidates: readonly EncodingCandidate[]): EncodingCandidate | undefined {
  const usable = candidates
    .map((c) => ({ encoding: normalizeEncoding(c.encoding), confidence: c.confidence }))
    .filter((c) => !c.encoding.startsWith('utf') && c.encoding !== 'ascii' && !c.encoding.startsWith('mac') && iconv.encodingExists(c.encoding));
  const top = usable[0];
  if (top === undefined) return undefined;
  // Multi-byte detection is reliable; a close single-byte family is not.
  if (MULTI_BYTE_LEGACY.has(top.encoding) && top.confidence >= 0.3) return top;
  const pool = new Map<string, number>();
  for (const c of usable.slice(0, 6)) {
    if (!pool.has(c.encoding)) pool.set(c.encoding, c.confidence);
    for (const s of SIBLINGS[c.encoding] ?? []) if (!pool.has(s) && iconv.encodingExists(s)) pool.set(s, c.confidence * 0.9);
  }
  const buf = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);
  let best: { encoding: string; confidence: number; rank: number } | undefined;
  for (const [encoding, confidence] of pool) {
    let score: number;
    try {
      score = implausibility(iconv.decode(buf, encoding));
    } catch {
      continue;
    }
    // The detector's confidence carries its language model; plausibility
    // overrules it only where the decoded text is clearly damaged.
    const rank = score - confidence * 30;
    if (best === undefined || rank < best.rank) best = { encoding, confidence, rank };
  }
  return best === undefined ? top : { encoding: best.encoding, confidence: best.confidence };
}

/**
 * A legacy detector over chardet's candidates (ICU's n-gram detector),
 * ranked by {@link rankCandidates}.
 *
 * @example
 * ```ts
 * const sample = iconv.encode('Zażółć gęślą jaźń, pchnąć w tę łódź jeża.', 'windows-1250');
 * chardetDetector(sample); // { encoding: 'windows-1250', confidence: ... }
 * ```
 */
export const chardetDetector: LegacyDetector = (sample) =>
  rankCandidates(
    sample,
    chardet.analyse(sample).map((m) => ({ encoding: m.name, confidence: m.confidence / 100 })),
  );

const ISO2022JP_ESCAPES = [
  [0x1b, 0x24, 0x42],
  [0x1b, 0x24, 0x40],
  [0x1b, 0x28, 0x4a],
  [0x1b, 0x28, 0x49],
];

function looksIso2022Jp(sample: Uint8Array): boolean {
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
function utf16WithoutBom(sample: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = sample.length - (sample.length % 2);
  if (n < 8) return undefined;
  let zeros = 0;
  for (let i = 0; i < n; i++) if (sample[i] === 0) zeros++;
  // Real UTF-16 text has zero bytes regularly; one stray NUL in text is binary.
  if (zeros < (n / 2) * 0.01) return undefined;
  const body = sample.subarray(0, n);
  const le = utf16Weirdness(body, 'utf-16le');
  const be = utf16Weirdness(body, 'utf-16be');
  const best = Math.min(le, be);
  if (best > 0.02) return undefined;
  return le <= be ? 'utf-16le' : 'utf-16be';
}

/**
 * Counts well-formed multi-byte UTF-8 sequences and invalid bytes: a file
 * with more of the former is UTF-8 with some damage, not a legacy encoding.
 */
function utf8Shape(sample: Uint8Array): { valid: number; invalid: number } {
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
      if (i + need >= n && need > 0) break; // cut off by the end of the sample
      invalid++;
      i++;
    }
  }
  return { valid, invalid };
}

/** Line terminators of a sample (`mixed` when both kinds occur). */
export function detectLineEnding(text: string): LineEnding {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 0x0d) crlf++;
    else lf++;
  }
  if (crlf === 0 && lf === 0) return 'none';
  if (crlf > 0 && lf > 0) return 'mixed';
  return crlf > 0 ? 'crlf' : 'lf';
}

/**
 * Detects encoding, BOM and line endings from the first bytes of a file.
 * Order: BOM; ISO-2022-JP escapes; UTF-16 without BOM; binary; strict UTF-8;
 * the legacy detector (default {@link chardetDetector}).
 *
 * @example
 * ```ts
 * detectTextFormat(new Uint8Array([0xff, 0xfe, 0x61, 0x00, 0x0d, 0x00, 0x0a, 0x00]));
 * // { encoding: 'utf-16le', bomLength: 2, lineEnding: 'crlf', ... }
 * ```
 */
export function detectTextFormat(sample: Uint8Array, options: DetectOptions = {}): TextFormat {
  const head = sample.subarray(0, DETECTION_SAMPLE_BYTES);
  let info: EncodingInfo;
  if (detectBom(head) === undefined && looksIso2022Jp(head)) {
    info = { encoding: 'iso-2022-jp', bomLength: 0, binary: false, source: 'legacy', confidence: 0.95 };
  } else {
    info = detectEncoding(head, { legacyDetector: options.legacyDetector ?? chardetDetector, legacyFallback: options.legacyFallback });
    if (info.source === 'legacy') {
      const shape = utf8Shape(head);
      if (shape.valid > 0 && shape.invalid <= shape.valid) info = { encoding: 'utf-8', bomLength: 0, binary: false, source: 'utf-8', confidence: 0.6 };
    }
    if (info.binary) {
      const wide = utf16WithoutBom(head);
      if (wide) info = { encoding: wide, bomLength: 0, binary: false, source: 'utf16-heuristic', confidence: 0.7 };
    }
  }
  const bom = head.slice(0, info.bomLength);
  let lineEnding: LineEnding = 'none';
  if (!info.binary) {
    try {
      const body = head.subarray(info.bomLength);
      const text =
        info.encoding === 'utf-8' || info.encoding === 'iso-2022-jp' || info.encoding.startsWith('utf-16')
          ? new TextDecoder(info.encoding).decode(body)
          : iconv.decode(Buffer.from(body.buffer, body.byteOffset, body.byteLength), info.encoding);
      lineEnding = detectLineEnding(text);
    } catch {
      lineEnding = 'none';
    }
  }
  return { ...info, bom, lineEnding };
}
