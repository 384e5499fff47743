/**
 * Byte-pair encoding over a {@link BpeVocabulary}, as tiktoken does it:
 * text is split into pre-tokens by the vocabulary's split pattern; a
 * pre-token whose bytes are one token is that token; any other is merged
 * from its bytes, always joining the adjacent pair whose join has the lowest
 * rank. Special tokens are never honoured: file content is text.
 *
 * @module
 */

import type { BpeVocabulary } from './bpe-vocabulary.ts';

/** Pre-tokens remembered with their tokens; cleared whole when full (a generation, not an LRU: cheaper, and a text's pieces repeat within it). */
const PIECE_CACHE_LIMIT = 50_000;

/** Any UTF-16 code unit past U+007F, surrogates included. */
const NON_ASCII = /[\u0080-\uffff]/;

/** A private copy of `pattern`, global: matchAll needs the flag, and the caller's pattern may be shared. */
function globalCopy(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
}

/** Encodes, counts and decodes text with one vocabulary and split pattern. */
export class BpeEncoder {
  readonly #vocabulary: BpeVocabulary;
  readonly #splitSource: RegExp | (() => RegExp);
  #split: RegExp | undefined;
  readonly #asciiSplit: RegExp | undefined;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #scratch = new Uint8Array(1024);
  #pieces = new Map<string, number | readonly number[]>();

  /**
   * @param split - The pre-token pattern, or a function that makes it when
   *   it is first needed (a pattern of Unicode property classes costs
   *   milliseconds to parse, and as much again to compile).
   * @param asciiSplit - Optionally, a pattern that splits every text of ASCII
   *   alone exactly as `split` does and is cheaper to make; such texts are
   *   split with it, so a process that meets no other never makes `split`.
   */
  constructor(vocabulary: BpeVocabulary, split: RegExp | (() => RegExp), asciiSplit?: RegExp) {
    this.#vocabulary = vocabulary;
    this.#splitSource = split;
    this.#asciiSplit = asciiSplit === undefined ? undefined : globalCopy(asciiSplit);
  }

  /** The pattern that splits `text`. */
  #splitOf(text: string): RegExp {
    if (this.#asciiSplit !== undefined && !NON_ASCII.test(text)) return this.#asciiSplit;
    this.#split ??= globalCopy(typeof this.#splitSource === 'function' ? this.#splitSource() : this.#splitSource);
    return this.#split;
  }

  /** How many tokens `text` is. */
  count(text: string): number {
    let n = 0;
    for (const [piece] of text.matchAll(this.#splitOf(text))) {
      const tokens = this.#piece(piece);
      n += typeof tokens === 'number' ? 1 : tokens.length;
    }
    return n;
  }

  /** The tokens of `text`. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const [piece] of text.matchAll(this.#splitOf(text))) {
      const tokens = this.#piece(piece);
      if (typeof tokens === 'number') out.push(tokens);
      else for (const t of tokens) out.push(t);
    }
    return out;
  }

  /**
   * The text of `tokens`. Bytes are decoded once, together, so a character
   * split across tokens is whole; a cut inside one decodes to U+FFFD.
   *
   * @throws {RangeError} for an id the vocabulary does not hold.
   */
  decode(tokens: readonly number[]): string {
    let length = 0;
    for (const t of tokens) {
      const bytes = this.#vocabulary.bytesOf(t);
      if (bytes === undefined) throw new RangeError(`token ${t} is not in the vocabulary (0 to ${this.#vocabulary.size - 1})`);
      length += bytes.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const t of tokens) {
      const bytes = this.#vocabulary.bytesOf(t) as Uint8Array;
      all.set(bytes, at);
      at += bytes.length;
    }
    return this.#decoder.decode(all);
  }

  #piece(piece: string): number | readonly number[] {
    const known = this.#pieces.get(piece);
    if (known !== undefined) return known;
    if (this.#scratch.length < piece.length * 3) this.#scratch = new Uint8Array(piece.length * 3);
    const bytes = this.#scratch;
    const length = this.#encoder.encodeInto(piece, bytes).written;
    const whole = this.#vocabulary.rankOf(bytes, 0, length);
    const tokens = whole >= 0 ? whole : this.#merge(bytes, length);
    if (this.#pieces.size >= PIECE_CACHE_LIMIT) this.#pieces.clear();
    this.#pieces.set(piece, tokens);
    return tokens;
  }

  /** tiktoken's merge: `starts` are the parts' first bytes; `ranks[i]` is the rank of parts i and i + 1 joined. */
  #merge(bytes: Uint8Array, length: number): number[] {
    const vocabulary = this.#vocabulary;
    const starts: number[] = [];
    const ranks: number[] = [];
    for (let i = 0; i <= length; i++) starts.push(i);
    const rankAt = (i: number): number => {
      if (i + 2 >= starts.length) return Number.POSITIVE_INFINITY;
      const r = vocabulary.rankOf(bytes, starts[i] as number, starts[i + 2] as number);
      return r < 0 ? Number.POSITIVE_INFINITY : r;
    };
    for (let i = 0; i < length; i++) ranks.push(rankAt(i));
    for (;;) {
      let lowest = Number.POSITIVE_INFINITY;
      let at = -1;
      for (let i = 0; i < ranks.length; i++) {
        const r = ranks[i] as number;
        if (r < lowest) {
          lowest = r;
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
      ranks.splice(at, 1);
      ranks[at] = rankAt(at);
      if (at > 0) ranks[at - 1] = rankAt(at - 1);
    }
    const out: number[] = [];
    for (let i = 0; i + 1 < starts.length; i++) {
      const r = vocabulary.rankOf(bytes, starts[i] as number, starts[i + 1] as number);
      // Every single byte is a token, and a merge only ever makes tokens.
      if (r < 0) throw new Error('byte-pair merge produced a part the vocabulary does not hold');
      out.push(r);
    }
    return out;
  }
}
