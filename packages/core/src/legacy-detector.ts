/**
 * Text format detection for files on disk: the encoding (BOM, UTF-16
 * without BOM, ISO-2022-JP, strict UTF-8, then a statistical detector for
 * legacy encodings), the byte-order mark and the line endings, so a text
 * write back to the file can reproduce its bytes exactly.
 *
 * The legacy detector is chardet (ICU's n-gram detector), measured more
 * accurate than jschardet on the multilingual corpus of `@ctxfs/host`'s
 * tests; its candidates, and the sibling encodings of each (windows-1250 vs
 * ISO-8859-2...), are then ranked by how plausible the decoded text is
 * (no C1 controls, no symbols inside words, no case flips inside words),
 * which is what separates close single-byte encodings.
 *
 * @module
 */

import chardet from 'chardet';
import iconv from 'iconv-lite';
import { DETECTION_SAMPLE_BYTES, type DetectOptions, detectBom, detectEncoding, type EncodingInfo, type LegacyDetector, normalizeEncoding } from './encoding.ts';

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
      score += 10;
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

function chardetCandidates(sample: Uint8Array): Array<{ encoding: string; confidence: number }> {
  const out: Array<{ encoding: string; confidence: number }> = [];
  for (const m of chardet.analyse(sample)) {
    const enc = normalizeEncoding(m.name);
    if (enc === 'ascii' || enc === 'utf-8' || enc.startsWith('utf-') || enc.startsWith('utf')) continue;
    if (!iconv.encodingExists(enc)) continue;
    out.push({ encoding: enc, confidence: m.confidence / 100 });
  }
  return out;
}

/**
 * The default legacy detector: chardet's candidates (and their sibling
 * encodings), ranked by the plausibility of the decoded sample.
 *
 * @example
 * ```ts
 * const sample = iconv.encode('Zażółć gęślą jaźń, pchnąć w tę łódź jeża.', 'windows-1250');
 * chardetDetector(sample); // { encoding: 'windows-1250', confidence: ... }
 * ```
 */
export const chardetDetector: LegacyDetector = (sample) => {
  const candidates = chardetCandidates(sample);
  if (candidates.length === 0) return undefined;
  const top = candidates[0] as { encoding: string; confidence: number };
  // Multi-byte detection by chardet is reliable; a close single-byte family is not.
  if (MULTI_BYTE_LEGACY.has(top.encoding) && top.confidence >= 0.3) return top;
  const pool = new Map<string, number>();
  for (const c of candidates.slice(0, 6)) {
    if (!pool.has(c.encoding)) pool.set(c.encoding, c.confidence);
    for (const s of SIBLINGS[c.encoding] ?? []) if (!pool.has(s) && iconv.encodingExists(s)) pool.set(s, c.confidence * 0.9);
  }
  const buf = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);
  let best: { encoding: string; confidence: number; score: number } | undefined;
  for (const [encoding, confidence] of pool) {
    let score: number;
    try {
      score = implausibility(iconv.decode(buf, encoding));
    } catch {
      continue;
    }
    // Confidence breaks near-ties; plausibility decides real differences.
    const rank = score - confidence * 2;
    if (best === undefined || rank < best.score) best = { encoding, confidence, score: rank };
  }
  return best === undefined ? top : { encoding: best.encoding, confidence: best.confidence };
};

const ISO2022JP_ESCAPES = [
  [0x1b, 0x24, 0x42],
  [0x1b, 0x24, 0x40],
  [0x1b, 0x28, 0x4a],
  [0x1b, 0x28, 0x49],
];

function looksIso2022Jp(sample: Uint8Array): boolean {
  let escape = false;
  for (let i = 0; i < sample.length; i++) {
    const b = sample[i] as number;
    if (b >= 0x80) return false;
    if (b === 0x1b && !escape) {
      for (const e of ISO2022JP_ESCAPES) if (sample[i + 1] === e[1] && sample[i + 2] === e[2]) escape = true;
    }
  }
  return escape;
}

/** UTF-16 without BOM for text the core heuristic misses (e.g. CJK, where few code units have a zero byte). */
function utf16WithoutBom(sample: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = sample.length - (sample.length % 2);
  if (n < 8) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (sample[i] === 0) even++;
    if (sample[i + 1] === 0) odd++;
  }
  if (even + odd === 0 || (even > 0 && odd > 0)) return undefined;
  const enc = odd > 0 ? 'utf-16le' : 'utf-16be';
  let text: string;
  try {
    text = new TextDecoder(enc, { fatal: true }).decode(sample.subarray(0, n));
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters mean "not text"
  if (/[\u0000-\u0008\u000e-\u001f\ufffe\uffff]/.test(text)) return undefined;
  // Binary data decoded as UTF-16 scatters over unassigned and private code points.
  const weird = (text.match(/[\p{Cn}\p{Co}]/gu) ?? []).length;
  return weird <= text.length * 0.02 ? enc : undefined;
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
