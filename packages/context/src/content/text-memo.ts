/**
 * A memo of values computed from texts (a token count, the secrets found),
 * for texts served again and again unchanged. Bounded by entry count and by
 * characters kept; least recently used first out.
 *
 * @module
 */

import { LruCache } from './lru.ts';

/**
 * Values by text. Each text is kept as a copy of its own: a text cut from a
 * larger one (a line of a file, a row built around it) shares that larger
 * string's memory, and keeping the cut would keep the whole file alive.
 *
 * @example
 * ```ts
 * const counts = new TextMemo<number>({ maxTexts: 64, maxChars: 1 << 20 });
 * const n = counts.get(text) ?? counts.set(text, count(text));
 * ```
 */
export class TextMemo<V> {
  readonly #cache: LruCache<string, V>;

  constructor(limits: { readonly maxTexts: number; readonly maxChars: number }) {
    this.#cache = new LruCache<string, V>(limits.maxTexts, limits.maxChars);
  }

  get(text: string): V | undefined {
    return this.#cache.get(text);
  }

  /** Remembers `value` for `text` and returns it. */
  set(text: string, value: V): V {
    // Concatenating then slicing makes V8 flatten into a new string: the copy holds no reference to `text`'s parent.
    this.#cache.set(` ${text}`.slice(1), value, text.length);
    return value;
  }
}
