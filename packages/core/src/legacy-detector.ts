/**
 * Legacy-encoding detection and text format detection. {@link detectLegacy}
 * decodes the lines of a file that hold non-ASCII bytes in every candidate
 * encoding ({@link LEGACY_ENCODINGS}) and keeps the reading that is most
 * plausible as human writing (`text-plausibility.ts`); among the readings
 * that pass, a letter model of the languages (`language-model.ts`) and,
 * lightly, a statistical detector's confidence (chardet's by default)
 * decide. {@link chardetDetector}
 * is every backend's default; `@ctxfs/host` offers jschardet's statistics
 * through {@link rankCandidates}. {@link detectTextFormat} adds the BOM
 * bytes and the line endings, so a text written back can reproduce the
 * file's bytes.
 *
 * @module
 */

import { DETECTION_SAMPLE_BYTES, type DetectOptions, detectEncoding, type EncodingInfo, type LegacyDetector, normalizeEncoding } from './encoding.ts';
import { languageFit } from './language-model.ts';
import { chardetModule } from './lazy-dependencies.ts';
import { implausibility } from './text-plausibility.ts';
import { decodeLikeReader } from './text-roundtrip.ts';

/** Line terminators found in a sample. */
export type LineEnding = 'lf' | 'crlf' | 'mixed' | 'none';

/** Everything needed to write text back the way a file stores it. */
export interface TextFormat extends EncodingInfo {
  /** The byte-order mark bytes at the start (empty when none). */
  readonly bom: Uint8Array;
  readonly lineEnding: LineEnding;
}

/**
 * Every legacy encoding the detector considers, in order of preference when
 * two decode a file to the same text (windows-1252 before ISO-8859-15, whose
 * letters differ in eight positions only).
 */
export const LEGACY_ENCODINGS: readonly string[] = [
  'windows-1252',
  'iso-8859-15',
  'windows-1250',
  'iso-8859-2',
  'windows-1257',
  'iso-8859-13',
  'windows-1254',
  'iso-8859-9',
  'windows-1251',
  'koi8-r',
  'koi8-u',
  'iso-8859-5',
  'windows-1253',
  'iso-8859-7',
  'windows-1255',
  'iso-8859-8',
  'windows-1256',
  'iso-8859-6',
  'windows-874',
  'shift_jis',
  'euc-jp',
  'gb18030',
  'big5',
  'euc-kr',
];

/**
 * Encodings of one script that statistical detectors do not tell apart
 * (ICU's report ISO-8859-7 for Greek whatever its layout, and a windows
 * name only when bytes 0x80-0x9F occur): their vote is for the script, so
 * it counts for each member alike, and plausibility, letter statistics and
 * the order of preference choose among them.
 */
const FAMILIES: ReadonlyArray<readonly string[]> = [
  ['windows-1252', 'iso-8859-1', 'iso-8859-15'],
  ['windows-1250', 'iso-8859-2'],
  ['windows-1257', 'iso-8859-13'],
  ['windows-1254', 'iso-8859-9'],
  ['koi8-r', 'koi8-u'],
  ['windows-1253', 'iso-8859-7'],
  ['windows-1255', 'iso-8859-8'],
  ['windows-1256', 'iso-8859-6'],
];

/** Bytes of evidence the detector scores at most. */
const EVIDENCE_BYTES = 16 * 1024;

/**
 * The lines of `sample` that hold a byte above 0x7F: a file's ASCII (code,
 * markup, English msgids) says nothing about its encoding and drowns the
 * statistics of the few lines that do.
 */
export function legacyEvidence(sample: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.min(sample.length, EVIDENCE_BYTES));
  let n = 0;
  let start = 0;
  while (start < sample.length && n < out.length) {
    let end = sample.indexOf(0x0a, start);
    end = end < 0 ? sample.length : end + 1;
    let high = false;
    for (let i = start; i < end; i++) {
      if ((sample[i] as number) >= 0x80) {
        high = true;
        break;
      }
    }
    if (high) {
      const take = Math.min(end - start, out.length - n);
      out.set(sample.subarray(start, start + take), n);
      n += take;
    }
    start = end;
  }
  return out.subarray(0, n);
}

function decodeCandidate(bytes: Uint8Array, encoding: string): string | undefined {
  try {
    return new TextDecoder(encoding).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A candidate encoding with a statistical detector's confidence (0..1). */
export interface EncodingCandidate {
  encoding: string;
  confidence: number;
}

/** Statistics of a detector over the evidence lines (chardet's, jschardet's...). */
export type EncodingStatistics = (evidence: Uint8Array) => readonly EncodingCandidate[];

/**
 * How much a statistical detector's full confidence weighs against
 * implausibility points: little, since on the few lines of a short or
 * mostly-ASCII file its statistics are noise (weights chosen on CKEditor's
 * catalogues of the encoding corpus, moment's locales held out).
 */
const STATISTICS_WEIGHT = 1;

/** Implausibility points one nat of language fit is worth. */
const LANGUAGE_WEIGHT = 0.1;

/** Readings more implausible than the cleanest by this much are out of the running. */
const LANGUAGE_MARGIN = 12;

/** A lead over the runner-up, in implausibility points, that makes the answer half sure. */
const SURE_MARGIN = 10;

/**
 * Picks the legacy encoding under which `sample` reads most plausibly as
 * human writing ({@link implausibility}: alphabets, scripts, case, symbols,
 * invalid sequences); between readings about as clean, the letters of the
 * language they fit best ({@link languageFit}: `Wstaw tabelę`, not
 * `Wstaw tabelê`) and a statistical detector's confidence (Big5 and GB18030
 * both decode Chinese text to Han characters; only character frequencies
 * tell which is right) decide. Encodings that decode the sample to the same text
 * count once, under the first name of {@link LEGACY_ENCODINGS}.
 *
 * @example
 * ```ts
 * detectLegacy(iconv.encode('Přidat řádek', 'windows-1250')); // { encoding: 'windows-1250', ... }
 * ```
 */
export function detectLegacy(sample: Uint8Array, statistics: EncodingStatistics = chardetStatistics): EncodingCandidate | undefined {
  const evidence = legacyEvidence(sample);
  if (evidence.length === 0) return undefined;
  const byText = new Map<string, { encoding: string; confidence: number; penalty: number }>();
  for (const encoding of LEGACY_ENCODINGS) {
    const text = decodeCandidate(evidence, encoding);
    if (text !== undefined && !byText.has(text)) byText.set(text, { encoding, confidence: 0, penalty: implausibility(text, encoding) });
  }
  // A detector's vote for one member of a family is a vote for the script.
  const votes = new Map<string, number>();
  for (const c of statistics(evidence)) {
    const name = normalizeEncoding(c.encoding);
    votes.set(name, Math.max(votes.get(name) ?? 0, c.confidence));
  }
  for (const family of FAMILIES) {
    const vote = Math.max(0, ...family.map((e) => votes.get(e) ?? 0));
    if (vote > 0) for (const e of family) votes.set(e, vote);
  }
  // A vote vouches for the text it decodes to, under whatever name:
  // ISO-8859-1 reads as windows-1252 does, GBK as GB18030.
  for (const [name, confidence] of votes) {
    const text = decodeCandidate(evidence, name);
    const candidate = text === undefined ? undefined : byText.get(text);
    if (candidate) candidate.confidence = Math.max(candidate.confidence, confidence);
  }
  // Letter statistics only for readings plausible enough to win: the rest lose on their penalty.
  let cleanest = Number.POSITIVE_INFINITY;
  for (const c of byText.values()) cleanest = Math.min(cleanest, c.penalty);
  const running = [...byText].filter(([, c]) => c.penalty <= cleanest + LANGUAGE_MARGIN);
  for (const c of byText.values()) if (c.penalty > cleanest + LANGUAGE_MARGIN) c.penalty = Number.POSITIVE_INFINITY;
  if (running.length > 1) for (const [text, c] of running) c.penalty -= LANGUAGE_WEIGHT * languageFit(text);
  let best: { encoding: string; confidence: number; rank: number } | undefined;
  let second = Number.POSITIVE_INFINITY;
  for (const c of byText.values()) {
    const rank = c.penalty - STATISTICS_WEIGHT * c.confidence;
    if (best === undefined || rank < best.rank) {
      if (best) second = best.rank;
      best = { encoding: c.encoding, confidence: c.confidence, rank };
    } else if (rank < second) second = rank;
  }
  if (best === undefined) return undefined;
  // Confidence: how clearly the winner beats the runner-up.
  const margin = Number.isFinite(second) ? second - best.rank : SURE_MARGIN;
  return { encoding: best.encoding, confidence: Math.max(0.05, Math.min(0.99, margin / (margin + SURE_MARGIN))) };
}

/** chardet's (ICU's) candidates for the evidence, confidence 0..1. */
export const chardetStatistics: EncodingStatistics = (evidence) =>
  chardetModule()
    .analyse(evidence)
    .map((m) => ({ encoding: m.name, confidence: m.confidence / 100 }));

/**
 * Ranks a statistical detector's candidates by plausibility: the detector
 * plugged into {@link detectLegacy} as its statistics. Kept for detectors
 * that have their own candidate list (`@ctxfs/host`'s jschardet).
 *
 * @example
 * ```ts
 * const detector: LegacyDetector = (sample) => rankCandidates(sample, myDetector(sample));
 * ```
 */
export function rankCandidates(sample: Uint8Array, candidates: readonly EncodingCandidate[]): EncodingCandidate | undefined {
  return detectLegacy(sample, () => candidates);
}

/**
 * The default legacy detector of every backend: {@link detectLegacy} with
 * chardet's statistics.
 *
 * @example
 * ```ts
 * const sample = iconv.encode('Zażółć gęślą jaźń, pchnąć w tę łódź jeża.', 'windows-1250');
 * chardetDetector(sample); // { encoding: 'windows-1250', confidence: ... }
 * ```
 */
export const chardetDetector: LegacyDetector = (sample) => detectLegacy(sample);

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
 * Detects encoding, BOM and line endings of a file's bytes: core's
 * {@link detectEncoding} with {@link chardetDetector} as the legacy
 * detector unless another is given. Pass the whole file when it is at hand
 * (non-ASCII text that starts late is found wherever it is); a prefix of a
 * longer file with `partial: true`.
 *
 * @example
 * ```ts
 * detectTextFormat(new Uint8Array([0xff, 0xfe, 0x61, 0x00, 0x0d, 0x00, 0x0a, 0x00]));
 * // { encoding: 'utf-16le', bomLength: 2, lineEnding: 'crlf', ... }
 * ```
 */
export function detectTextFormat(bytes: Uint8Array, options: DetectOptions = {}): TextFormat {
  const info = detectEncoding(bytes, { ...options, legacyDetector: options.legacyDetector ?? chardetDetector });
  const bom = bytes.slice(0, info.bomLength);
  let lineEnding: LineEnding = 'none';
  if (!info.binary) {
    // Line endings are a property of the first lines; a bounded prefix tells.
    const body = bytes.subarray(info.bomLength, info.bomLength + DETECTION_SAMPLE_BYTES);
    try {
      lineEnding = detectLineEnding(decodeLikeReader(body, info.encoding));
    } catch {
      lineEnding = 'none';
    }
  }
  return { ...info, bom, lineEnding };
}
