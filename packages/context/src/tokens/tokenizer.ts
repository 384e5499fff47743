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
    if (text.length < RECENT_MIN_CHARS || text.length > RECENT_MAX_CHARS) return vocabulary().countTokens(text, AS_TEXT);
    return recentCounts.get(text) ?? recentCounts.set(text, vocabulary().countTokens(text, AS_TEXT));
  },
  encode: (text) => vocabulary().encode(text, AS_TEXT),
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
