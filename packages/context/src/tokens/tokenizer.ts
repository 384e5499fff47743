/**
 * Token counting with a real BPE tokenizer (o200k, the GPT-4o family
 * vocabulary) rather than a length heuristic: budgets are promises to a model
 * with a hard context limit, and length/4 is off by 2x on code and CJK text.
 *
 * @module
 */

import { createRequire } from 'node:module';
import { TextMemo } from '../content/text-memo.ts';
import { BpeEncoder } from './bpe-encoder.ts';
import { defaultCacheDir, loadVocabulary } from './vocabulary-cache.ts';

/** Counts and cuts text in tokens. Replaceable for models with another vocabulary. */
export interface Tokenizer {
  /** Vocabulary name, e.g. `o200k_base`. */
  readonly name: string;
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}

/**
 * Unicode's White_Space, which tiktoken's `\s` means (Rust's regex). JavaScript's
 * `\s` differs in two characters: it holds U+FEFF and lacks U+0085, and each
 * changes where a pre-token ends (`"\t\t\uFEFF"` is three tokens to tiktoken).
 */
const WHITE_SPACE = '\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** The character classes o200k's pre-token pattern is made of, spelled for one alphabet. */
interface SplitClasses {
  /** Letters the pattern counts as upper case (with marks): `\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}`. */
  readonly upper: string;
  /** Letters the pattern counts as lower case (with marks): `\p{Ll}\p{Lm}\p{Lo}\p{M}`. */
  readonly lower: string;
  /** Letters and numbers: `\p{L}\p{N}`. */
  readonly word: string;
  /** Numbers: `\p{N}`. */
  readonly number: string;
  /** Whitespace: {@link WHITE_SPACE}. */
  readonly space: string;
  /** The contraction `'s`'s letter with its case folds. */
  readonly s: string;
  readonly flags: string;
}

/**
 * o200k's pre-token pattern as tiktoken defines it, in JavaScript's dialect:
 * `\s` spelled as {@link WHITE_SPACE}, and the case-insensitive contractions
 * spelled out with their Unicode case folds (`'ſ` is `'s` to Rust's `(?i)`).
 */
function o200kSplit(c: SplitClasses): RegExp {
  const contraction = `(?:'(?:[${c.s}]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))?`;
  const lead = `[^\\r\\n${c.word}]?`;
  return new RegExp(
    [
      `${lead}[${c.upper}]*[${c.lower}]+${contraction}`,
      `${lead}[${c.upper}]+[${c.lower}]*${contraction}`,
      `[${c.number}]{1,3}`,
      ` ?[^${c.space}${c.word}]+[\\r\\n/]*`,
      `[${c.space}]*[\\r\\n]+`,
      `[${c.space}]+(?![^${c.space}])`,
      `[${c.space}]+`,
    ].join('|'),
    c.flags,
  );
}

/** o200k's pre-token pattern, made on each call (see {@link O200K_SPLIT_ASCII} for why not at load). */
export const o200kUnicodeSplit = (): RegExp =>
  o200kSplit({
    upper: '\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}',
    lower: '\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}',
    word: '\\p{L}\\p{N}',
    number: '\\p{N}',
    space: WHITE_SPACE,
    s: 'sS\u017f',
    flags: 'gu',
  });

/**
 * The same pattern as it acts on text of ASCII alone: each class keeps its
 * ASCII members (no mark, titlecase, modifier or other letter is ASCII, nor
 * any number but the digits, nor U+0085 or U+00A0), so on such text the two
 * match the same pieces. A text of ASCII alone is split with it: compiling
 * the Unicode property classes costs about 5 ms, a tenth of `ctxfs cat`'s
 * own work, and a process whose texts are all ASCII (most source files) never
 * pays it.
 */
export const O200K_SPLIT_ASCII = o200kSplit({ upper: 'A-Z', lower: 'a-z', word: 'A-Za-z0-9', number: '0-9', space: '\\t-\\r ', s: 'sS', flags: 'g' });

let o200k: BpeEncoder | undefined;

// A process that only scans or reads never pays for the vocabulary: it is
// read on first use, synchronously so counting stays a plain function call.
// The ranks are OpenAI's published rank file as gpt-tokenizer ships it; the
// encoder is ours because gpt-tokenizer's loader costs 300–400 ms (see
// bpe-vocabulary.ts) where reading the rank file costs a few tens, and the
// user's cache of the built vocabulary a few (vocabulary-cache.ts).
function vocabulary(): BpeEncoder {
  if (o200k === undefined) {
    const rankFile = createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken');
    o200k = new BpeEncoder(loadVocabulary(rankFile, defaultCacheDir()).vocabulary, o200kUnicodeSplit, O200K_SPLIT_ASCII);
  }
  return o200k;
}

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
    // The whitespace that ends a pre-token run ({@link WHITE_SPACE}).
    if (
      c === 32 ||
      (c >= 9 && c <= 13) ||
      c === 0x85 ||
      c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000
    ) {
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
  if (pieces === undefined) return vocabulary().count(text);
  let n = 0;
  for (const p of pieces) n += vocabulary().count(p);
  return n;
}

/**
 * The default tokenizer: o200k_base (OpenAI's rank file as gpt-tokenizer
 * ships it), all local. Special-token text in files (`<|endoftext|>`) is
 * counted as the text it is, never as a control token.
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
    if (text.length < RECENT_MIN_CHARS) return vocabulary().count(text);
    if (text.length > RECENT_MAX_CHARS) return countText(text);
    return recentCounts.get(text) ?? recentCounts.set(text, countText(text));
  },
  encode: (text) => {
    const pieces = runSlices(text);
    return pieces === undefined ? vocabulary().encode(text) : pieces.flatMap((p) => vocabulary().encode(p));
  },
  decode: (tokens) => vocabulary().decode(tokens),
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
