/**
 * The shared grep scanner: compiles the pattern once and scans any byte
 * stream line by line in bounded memory. Binary files are skipped (a NUL in
 * the first 8 KiB, as ripgrep does), UTF-8/UTF-16 BOMs are honoured, `\r\n` endings are not
 * part of the line, and spans are reported in Unicode code points.
 *
 * Backends without a native grep use this; native ones must agree with it.
 *
 * @module
 */

import { concatBytes } from './bytes.ts';
import { createDecoder, DETECTION_SAMPLE_BYTES, detectBom } from './encoding.ts';
import { FsError } from './errors.ts';
import { LineSplitter } from './lines.ts';
import type { GrepMatch, MatchSpan } from './types.ts';

/** A compiled search pattern. */
export interface GrepMatcher {
  readonly source: string;
  /**
   * Text every match contains verbatim, when the pattern is a plain
   * case-sensitive literal: the scanner skips decoded text without it
   * instead of splitting it into lines and running the regex on each.
   */
  readonly literal?: string | undefined;
  /** Every non-overlapping match in `line`, as code-point spans. */
  spans(line: string): MatchSpan[];
}

function escapeRegExp(text: string): string {
  // Syntax characters only: in Unicode mode escaping anything else (`-`, `/`) is an error.
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * Compiles a grep pattern (JavaScript regular expression syntax, Unicode
 * mode when the pattern allows it).
 *
 * @example
 * ```ts
 * compileGrep('fo+', { ignoreCase: true }).spans('a FOO b'); // [{ start: 2, end: 5 }]
 * ```
 */
export function compileGrep(pattern: string, options: { ignoreCase?: boolean; literal?: boolean } = {}): GrepMatcher {
  if (typeof pattern !== 'string') {
    throw new FsError({ code: 'EBADPATTERN', op: 'grep', path: String(pattern), reason: 'pattern must be a string' });
  }
  const source = options.literal ? escapeRegExp(pattern) : pattern;
  const flags = `g${options.ignoreCase ? 'i' : ''}`;
  let re: RegExp;
  try {
    re = new RegExp(source, `${flags}u`);
  } catch {
    try {
      re = new RegExp(source, flags);
    } catch (err) {
      throw new FsError({ code: 'EBADPATTERN', op: 'grep', path: pattern, reason: `invalid regular expression: ${(err as Error).message}` });
    }
  }
  return {
    source: pattern,
    literal: !options.ignoreCase && pattern.length > 0 && (options.literal || !/[\\^$.*+?()[\]{}|]/.test(pattern)) ? pattern : undefined,
    spans(line: string): MatchSpan[] {
      re.lastIndex = 0;
      const out: MatchSpan[] = [];
      const wide = hasSurrogates(line);
      for (;;) {
        const m = re.exec(line);
        if (m === null) break;
        const start = m.index;
        const end = start + m[0].length;
        out.push(wide ? { start: codePointOffset(line, start), end: codePointOffset(line, end) } : { start, end });
        if (m[0].length === 0) {
          // Step over the empty match (a whole surrogate pair at once).
          if (start >= line.length) break;
          const c = line.charCodeAt(start);
          re.lastIndex = start + (c >= 0xd800 && c <= 0xdbff ? 2 : 1);
        }
      }
      return out;
    },
  };
}

function hasSurrogates(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
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
 * Scans one file's chunks and yields its matching lines, at most `limit`.
 * Stops at a NUL byte found later in a UTF-8 file, as ripgrep does, keeping
 * the matches already found.
 */
export async function* scanChunks(path: string, chunks: AsyncIterable<Uint8Array>, matcher: GrepMatcher, limit: number): AsyncGenerator<GrepMatch> {
  if (limit <= 0) return;
  const iterator = chunks[Symbol.asyncIterator]();
  let count = 0;
  let lineNo = 0;
  const splitter = new LineSplitter();
  let decoder: ReturnType<typeof createDecoder> | undefined;
  let wideEncoding = false;
  const emit = function* (lines: string[]): Generator<GrepMatch> {
    for (const text of lines) {
      lineNo++;
      const spans = matcher.spans(text);
      if (spans.length === 0) continue;
      const first = spans[0] as MatchSpan;
      yield { path, line: lineNo, text, matchStart: first.start, matchEnd: first.end, spans };
      if (++count >= limit) return;
    }
  };
  const literal = matcher.literal;
  const emitText = function* (text: string): Generator<GrepMatch> {
    // Text that cannot hold a match (with the unfinished line before it) only advances the line count.
    if (literal !== undefined && !splitter.pendingIncludes(text, literal)) lineNo += splitter.skip(text);
    else yield* emit(splitter.push(text));
  };
  // Detection needs the first 8 KiB however small the source's first chunks are.
  let head: Uint8Array[] = [];
  let headBytes = 0;
  try {
    for (;;) {
      const next = await iterator.next();
      let chunk: Uint8Array;
      if (decoder === undefined) {
        if (!next.done) {
          head.push(next.value);
          headBytes += next.value.byteLength;
          if (headBytes < DETECTION_SAMPLE_BYTES) continue;
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
          if (hasNul(chunk.subarray(0, DETECTION_SAMPLE_BYTES))) return;
          decoder = createDecoder('utf-8');
          if (bom) chunk = chunk.subarray(bom.length);
        }
      } else {
        if (next.done) break;
        chunk = next.value;
        if (!wideEncoding && hasNul(chunk)) return;
      }
      yield* emitText(decoder.decode(chunk));
      if (count >= limit || next.done) break;
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
