/**
 * The shared grep scanner: compiles the pattern once (ripgrep's syntax, run
 * in linear time by `linear-regex.ts`) and scans any byte stream line by
 * line in bounded memory. Binary files are skipped (a NUL in the first 8 KiB,
 * as ripgrep does), UTF-8/UTF-16 BOMs are honoured, `\r\n` endings are not
 * part of the line, and spans are reported in Unicode code points.
 *
 * Backends without a native grep use this; native ones must agree with it.
 *
 * @module
 */

import { concatBytes } from './bytes.ts';
import {
  createDecoder,
  DETECTION_SAMPLE_BYTES,
  DETECTION_WINDOW_BYTES,
  type DetectOptions,
  detectBom,
  detectEncoding,
  type StreamDecoder,
} from './encoding.ts';
import { compileLinearRegex, type LinearRegex } from './linear-regex.ts';
import { LineSplitter } from './lines.ts';
import { requiredLiteral } from './required-literal.ts';
import { detectedDecoder } from './text-reader.ts';
import type { GrepMatch, MatchSpan } from './types.ts';

/** A compiled search pattern. */
export interface GrepMatcher {
  /** The caller's pattern. */
  readonly source: string;
  /**
   * Text every match contains verbatim: a plain case-sensitive pattern
   * itself, or the longest piece a case-sensitive regular expression
   * requires (see `requiredLiteral`). The scanner skips decoded text and
   * lines without it instead of splitting them and running the regex.
   */
  readonly literal?: string | undefined;
  /**
   * The pattern in ripgrep's syntax (Rust's regex crate), matching the same
   * lines or more, or `undefined` when ripgrep cannot be given it. A native
   * search with it must pass every line it finds through {@link spans}.
   */
  readonly rustPattern?: string | undefined;
  /**
   * A second pattern for ripgrep, given beside {@link rustPattern}: the
   * lines of legacy-encoded files that `rustPattern`, reading bytes as
   * UTF-8, could miss come along too. A native search must give a file
   * with a line that is not UTF-8 (`readsAsUtf8`) to the shared scanner,
   * which decodes it as its reads do. `undefined` when every match is
   * ASCII text, which any ASCII-compatible encoding holds as is.
   */
  readonly rustLegacyPattern?: string | undefined;
  /** Every non-overlapping match in `line`, as code-point spans (see {@link compileGrep} for very long lines). */
  spans(line: string): MatchSpan[];
}

/**
 * How much listing one line's spans may cost, in RE2 program steps
 * (characters a search may examine × program size; see
 * `LinearRegex.matchAll`). Listing every match can be quadratic: each search
 * of a pattern with unbounded repetition may look ahead to the end of the
 * line. Past this budget, about a third of a second of re2js, the line's
 * remaining spans are left out. A pattern without unbounded repetition, a
 * plain-text pattern, and a short line (a few hundred characters for an
 * ordinary pattern) always get all of their spans.
 */
const SPAN_STEP_BUDGET = 2 ** 24;
/** ...and, for longer lines, at least this many passes over the line. */
const SPAN_MIN_PASSES = 16;

/**
 * Compiles a grep pattern: ripgrep's syntax, run in linear time by
 * {@link compileLinearRegex} (backreferences and look-around are refused with
 * `EBADPATTERN`). A plain case-sensitive pattern is searched as text.
 *
 * A line's spans are complete unless finding them all would cost more than
 * {@link SPAN_STEP_BUDGET} (a pathological pattern on a very long line): the
 * line is still reported, with its first match exact and the spans found
 * until then.
 *
 * @example
 * ```ts
 * compileGrep('fo+', { ignoreCase: true }).spans('a FOO b'); // [{ start: 2, end: 5 }]
 * ```
 */
export function compileGrep(pattern: string, options: { ignoreCase?: boolean | undefined; literal?: boolean | undefined } = {}): GrepMatcher {
  const regex = compileLinearRegex(pattern, { ignoreCase: options.ignoreCase, literal: options.literal, op: 'grep' });
  const plain = !options.ignoreCase && pattern.length > 0 && (options.literal || !/[\\^$.*+?()[\]{}|]/.test(pattern)) ? pattern : undefined;
  const literal = plain ?? (options.ignoreCase || options.literal ? undefined : requiredLiteral(pattern));
  return {
    source: pattern,
    literal,
    rustPattern: regex.rustSource,
    rustLegacyPattern: regex.rustLegacySource,
    spans: plain === undefined ? (line) => regexSpans(regex, line, literal !== undefined && line.includes(literal)) : (line) => textSpans(line, plain),
  };
}

function regexSpans(regex: LinearRegex, line: string, prefiltered: boolean): MatchSpan[] {
  // The DFA answers "does it match" fastest, and most lines do not match; but
  // a line that holds the literal every match needs most likely does, and the
  // search for its spans skips ahead to that literal where the DFA reads
  // every character (on a 100 MB line: 30 ms against 1.6 s).
  if (!prefiltered && !regex.test(line)) return [];
  const maxScanned = Math.max(SPAN_STEP_BUDGET / regex.programSize, SPAN_MIN_PASSES * line.length);
  const toCodePoints = codePointCursor(line);
  const out: MatchSpan[] = [];
  for (const m of regex.matchAll(line, { keepGoing: (scanned) => scanned <= maxScanned })) {
    out.push({ start: toCodePoints(m.index), end: toCodePoints(m.end) });
  }
  return out;
}

/** Occurrences of `text` in `line`; linear, no regex. */
function textSpans(line: string, text: string): MatchSpan[] {
  const out: MatchSpan[] = [];
  const toCodePoints = codePointCursor(line);
  for (let at = line.indexOf(text); at >= 0; at = line.indexOf(text, at + text.length)) {
    out.push({ start: toCodePoints(at), end: toCodePoints(at + text.length) });
  }
  return out;
}

/**
 * Converts ascending UTF-16 indices of `s` into code-point offsets in one
 * pass over the line, however many spans it has (a fresh count per span
 * would be quadratic).
 */
function codePointCursor(s: string): (utf16Index: number) => number {
  if (!hasSurrogates(s)) return (i) => i;
  let at = 0;
  let count = 0;
  return (index) => {
    if (index < at) {
      at = 0;
      count = 0;
    }
    while (at < index) {
      const pair = isHigh(s.charCodeAt(at)) && isLow(s.charCodeAt(at + 1));
      // An index inside a pair counts the high surrogate as one, as codePointOffset does.
      if (pair && at + 1 === index) return count + 1;
      at += pair ? 2 : 1;
      count++;
    }
    return count;
  };
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Any UTF-16 surrogate (no `u` flag: a lone one counts too); the regex engine scans far faster than a loop. */
const SURROGATE = /[\ud800-\udfff]/;

function hasSurrogates(s: string): boolean {
  return SURROGATE.test(s);
}

/** Converts a UTF-16 index into a code-point offset. */
export function codePointOffset(s: string, utf16Index: number): number {
  let n = 0;
  for (let i = 0; i < utf16Index; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < utf16Index) i++;
    n++;
  }
  return n;
}

function hasNul(bytes: Uint8Array): boolean {
  return bytes.indexOf(0) >= 0;
}

/**
 * The match of line `line` of `path` (its `text`, without terminator), or
 * `undefined` when the matcher finds nothing in it: how every search, the
 * JS scanner's and a native tool's re-check alike, turns a line into a
 * {@link GrepMatch}.
 *
 * @example
 * ```ts
 * const matcher = compileGrep('al+pha');
 * lineMatch(matcher, 'notes.txt', 3, 'an alpha here'); // { line: 3, matchStart: 3, matchEnd: 8, … }
 * lineMatch(matcher, 'notes.txt', 4, 'nothing'); // undefined
 * ```
 */
export function lineMatch(matcher: GrepMatcher, path: string, line: number, text: string): GrepMatch | undefined {
  const spans = matcher.spans(text);
  if (spans.length === 0) return undefined;
  const first = spans[0] as MatchSpan;
  return { path, line, text, matchStart: first.start, matchEnd: first.end, spans };
}

/**
 * Scans one file's chunks and yields its matching lines, at most `limit`.
 * The text is decoded as a text read decodes it (`detect`: the backend's
 * detection, its legacy detector), so a legacy-encoded file is searched as
 * the text a model is served. Binary is ripgrep's rule: a NUL among the
 * first {@link DETECTION_SAMPLE_BYTES} (outside UTF-16 with a BOM) skips
 * the file, and a NUL found later ends the search there, the text before
 * it, its unfinished last line included, searched.
 */
export async function* scanChunks(
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  matcher: GrepMatcher,
  limit: number,
  detect?: DetectOptions,
): AsyncGenerator<GrepMatch> {
  if (limit <= 0) return;
  const iterator = chunks[Symbol.asyncIterator]();
  let count = 0;
  let lineNo = 0;
  const splitter = new LineSplitter();
  let decoder: StreamDecoder | undefined;
  let wideEncoding = false;
  const literal = matcher.literal;
  const emit = function* (lines: string[]): Generator<GrepMatch> {
    for (const text of lines) {
      lineNo++;
      // One indexOf rules out most lines before the regex engine sees them.
      if (literal !== undefined && !text.includes(literal)) continue;
      const match = lineMatch(matcher, path, lineNo, text);
      if (match === undefined) continue;
      yield match;
      if (++count >= limit) return;
    }
  };
  const emitText = function* (text: string): Generator<GrepMatch> {
    if (literal === undefined) {
      yield* emit(splitter.push(text));
      return;
    }
    // Text that cannot hold a match (with the unfinished line before it) only advances the line count.
    if (!splitter.pendingIncludes(text, literal)) {
      lineNo += splitter.skip(text);
      return;
    }
    // Only the lines holding the literal are cut out; the others are counted.
    const found = splitter.pushIncluding(text, literal);
    const base = lineNo;
    for (let i = 0; i < found.lines.length; i++) {
      const match = lineMatch(matcher, path, base + (found.indexes[i] as number) + 1, found.lines[i] as string);
      if (match === undefined) continue;
      yield match;
      if (++count >= limit) return;
    }
    lineNo = base + found.completed;
  };
  // Detection takes the window a text read detects on, however small the source's first chunks are.
  let head: Uint8Array[] = [];
  let headBytes = 0;
  try {
    for (;;) {
      const next = await iterator.next();
      let chunk: Uint8Array;
      if (decoder === undefined) {
        if (!next.done) {
          // Held past the next request, so copied: a chunk is lent only until then.
          head.push(next.value.slice());
          headBytes += next.value.byteLength;
          if (headBytes < DETECTION_WINDOW_BYTES) continue;
        }
        if (headBytes === 0) break;
        chunk = head.length === 1 ? (head[0] as Uint8Array) : concatBytes(head);
        head = [];
        const bom = detectBom(chunk);
        if (bom?.encoding.startsWith('utf-16')) {
          wideEncoding = true;
          decoder = createDecoder(bom.encoding);
          chunk = chunk.subarray(bom.length);
        } else {
          // Binary as ripgrep sees it: a NUL among the first bytes.
          if (hasNul(chunk.subarray(0, DETECTION_SAMPLE_BYTES))) return;
          // The window a text reader detects on: the file's first 64 KiB, all of it when shorter.
          const ended = next.done === true && chunk.byteLength <= DETECTION_WINDOW_BYTES;
          const info = detectEncoding(chunk.subarray(0, DETECTION_WINDOW_BYTES), { ...detect, partial: !ended });
          // Control bytes, or a NUL further on, are text to ripgrep: searched as UTF-8, as before a NUL.
          const usable = info.binary || /^utf-(16|32)/.test(info.encoding) ? { ...info, encoding: 'utf-8', source: 'utf-8' as const } : info;
          decoder = detectedDecoder(usable, ended, { path, detect });
          if (bom) chunk = chunk.subarray(bom.length);
        }
      } else {
        if (next.done) break;
        chunk = next.value;
      }
      // A NUL past the detection window ends the search there, as if the file ended (ripgrep stops at it too).
      const nul = wideEncoding ? -1 : chunk.indexOf(0);
      if (nul >= 0) chunk = chunk.subarray(0, nul);
      yield* emitText(decoder.decode(chunk));
      if (count >= limit || next.done || nul >= 0) break;
    }
    if (count >= limit) return;
    if (decoder) {
      yield* emitText(decoder.end());
      if (count >= limit) return;
    }
    yield* emit(splitter.end());
  } finally {
    await iterator.return?.();
  }
}
