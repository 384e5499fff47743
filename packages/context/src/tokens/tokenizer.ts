/**
 * Token counting with a real BPE tokenizer (o200k, the GPT-4o family
 * vocabulary) rather than a length heuristic: budgets are promises to a model
 * with a hard context limit, and length/4 is off by 2x on code and CJK text.
 *
 * @module
 */

import { createRequire } from 'node:module';
import { TextMemo } from '../content/text-memo.ts';

/** Counts and cuts text in tokens. Replaceable for models with another vocabulary. */
export interface Tokenizer {
  /** Vocabulary name, e.g. `o200k_base`. */
  readonly name: string;
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}

interface O200k {
  countTokens(text: string, options: object): number;
  encode(text: string, options: object): number[];
  decode(tokens: number[]): string;
}

let o200k: O200k | undefined;

// The vocabulary costs ~70 MB of memory and ~100 ms to load; a process that
// only scans or reads never pays for it. Loaded synchronously on first use so
// counting stays a plain function call.
function vocabulary(): O200k {
  o200k ??= createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as O200k;
  return o200k;
}

// File content may legitimately contain strings such as `<|endoftext|>`; they
// are text to count, never control tokens, so no special token is honoured.
const AS_TEXT = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

// The same text is counted again and again: a listing or a read served again
// unchanged is the same string (its delimiters' nonce comes from the content),
// and a call counts its answer to fit it and again to charge it. Counting is
// the costly part of serving it (about 0.4 ms for a 10 KB listing); looking a
// recent text up costs one hash of it. Short texts are counted afresh (the
// lookup would cost about as much), long ones too (file content read once).
const RECENT_MIN_CHARS = 512;
const RECENT_MAX_CHARS = 256 * 1024;
const recentCounts = new TextMemo<number>({ maxTexts: 256, maxChars: 2 * 1024 * 1024 });

/**
 * A run of this many characters with no whitespace is tokenized in slices of
 * {@link RUN_SLICE}: BPE merges a pre-token in time quadratic in its length,
 * and a run of letters (or base64, or a minified bundle's longest words) is
 * one pre-token — one line of 300,000 `x` took over a minute to count, and
 * the whole server waited. Sliced, such a run counts a few tokens more
 * (about 0.1% on base64, 0.4% on minified code); shorter runs, which is all
 * of ordinary text and code, are counted exactly.
 */
const LONG_RUN = 1024;
const RUN_SLICE = 512;

/** `text` cut so that no piece holds a whitespace-free run of {@link LONG_RUN} or more; `undefined` when none does. */
function runSlices(text: string): string[] | undefined {
  if (text.length < LONG_RUN) return undefined;
  let pieces: string[] | undefined;
  let from = 0;
  let run = 0;
  const flush = (runStart: number, runEnd: number) => {
    pieces ??= [];
    if (runStart > from) pieces.push(text.slice(from, runStart));
    for (let i = runStart; i < runEnd; ) {
      let j = Math.min(runEnd, i + RUN_SLICE);
      // Never between the halves of a surrogate pair.
      const c = text.charCodeAt(j);
      if (j < runEnd && c >= 0xdc00 && c <= 0xdfff) j++;
      pieces.push(text.slice(i, j));
      i = j;
    }
    from = runEnd;
  };
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    // The whitespace that ends a pre-token run: space, tab, line breaks, and the rest of \s.
    if (c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a)) {
      if (run >= LONG_RUN) flush(i - run, i);
      run = 0;
    } else run++;
  }
  if (pieces === undefined) return undefined;
  if (from < text.length) pieces.push(text.slice(from));
  return pieces;
}

function countText(text: string): number {
  const pieces = runSlices(text);
  if (pieces === undefined) return vocabulary().countTokens(text, AS_TEXT);
  let n = 0;
  for (const p of pieces) n += vocabulary().countTokens(p, AS_TEXT);
  return n;
}

/**
 * The default tokenizer: o200k_base from gpt-tokenizer, all local.
 *
 * @example
 * ```ts
 * import { o200kTokenizer } from '@ctxfs/context';
 * o200kTokenizer.count('export function main() {}'); // 5
 * ```
 */
export const o200kTokenizer: Tokenizer = {
  name: 'o200k_base',
  count: (text) => {
    if (text.length === 0) return 0;
    if (text.length < RECENT_MIN_CHARS) return vocabulary().countTokens(text, AS_TEXT);
    if (text.length > RECENT_MAX_CHARS) return countText(text);
    return recentCounts.get(text) ?? recentCounts.set(text, countText(text));
  },
  encode: (text) => {
    const pieces = runSlices(text);
    return pieces === undefined ? vocabulary().encode(text, AS_TEXT) : pieces.flatMap((p) => vocabulary().encode(p, AS_TEXT));
  },
  decode: (tokens) => vocabulary().decode(tokens as number[]),
};

/** Where {@link truncateTokens} cuts. */
export type TruncationStrategy = 'start' | 'end' | 'middle';

/** Result of a token-level cut of one string. */
export interface TokenCut {
  readonly text: string;
  readonly tokens: number;
  readonly totalTokens: number;
  readonly truncated: boolean;
}

/**
 * Cuts `text` to at most `maxTokens` tokens: `start` keeps the beginning,
 * `end` the end, `middle` both ends with the middle removed (joined by
 * `marker`, whose tokens count against the budget).
 */
export function truncateTokens(tokenizer: Tokenizer, text: string, maxTokens: number, strategy: TruncationStrategy = 'start', marker = '\n…\n'): TokenCut {
  const ids = tokenizer.encode(text);
  if (ids.length <= maxTokens) return { text, tokens: ids.length, totalTokens: ids.length, truncated: false };
  const budget = Math.max(0, maxTokens);
  let out: string;
  if (strategy === 'start') out = tokenizer.decode(ids.slice(0, budget));
  else if (strategy === 'end') out = tokenizer.decode(ids.slice(ids.length - budget));
  else {
    const room = Math.max(0, budget - tokenizer.count(marker));
    const head = Math.ceil(room / 2);
    const tail = room - head;
    out = tokenizer.decode(ids.slice(0, head)) + marker + (tail > 0 ? tokenizer.decode(ids.slice(ids.length - tail)) : '');
  }
  // Decoding a cut inside a multi-byte character can yield U+FFFD; trim it so
  // the served text never carries a fabricated character.
  out = out.replace(/^\uFFFD+|\uFFFD+$/g, '');
  let tokens = tokenizer.count(out);
  while (tokens > budget && out.length > 0) {
    out = strategy === 'end' ? out.slice(1) : out.slice(0, -1);
    tokens = tokenizer.count(out);
  }
  return { text: out, tokens, totalTokens: ids.length, truncated: true };
}
