/**
 * Quoting for the POSIX shell inside the container. Every caller-controlled
 * string reaches `sh` only through {@link shellQuote}, so no path can become
 * code; the quoting is core's, the newline guard is the helper session's.
 *
 * @module
 */

import { shellQuote as quoteWord } from '@ctxfs/core';

/**
 * Quotes `value` as one shell word (core's `shellQuote`), refusing a
 * newline: the helper session reads one request per line, and a newline
 * would split it.
 *
 * @example
 * ```ts
 * shellQuote("it's"); // 'it'\''s'
 * ```
 */
export function shellQuote(value: string): string {
  if (value.includes('\n')) throw new Error('cannot quote a string with a newline for the helper session');
  return quoteWord(value);
}

/** Quotes each word and joins them with spaces. */
export function shellWords(values: readonly string[]): string {
  return values.map(shellQuote).join(' ');
}
