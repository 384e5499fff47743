/**
 * A model profile for timing context-layer reads: the `large` profile with a
 * session budget no run spends. With the default million tokens, a few
 * thousand reads of a 1 KB file spend it, and every read after that is a
 * refusal — cheaper than a read, and not what a case means to time.
 *
 * @module
 */

/** The `large` profile, its session budget unbounded. */
export const UNSPENT_PROFILE = { base: 'large', sessionTokens: Number.MAX_SAFE_INTEGER } as const;
