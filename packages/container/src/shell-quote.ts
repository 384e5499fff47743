/**
 * Quoting for the POSIX shell inside the container. Every caller-controlled
 * string reaches `sh` only through {@link shellQuote}, so no path can become
 * code.
 *
 * @module
 */

/**
 * Quotes `value` as one shell word: single quotes, with embedded single
 * quotes closed, escaped and reopened.
 *
 * @example
 * ```ts
 * shellQuote("it's"); // 'it'\''s'
 * ```
 */
export function shellQuote(value: string): string {
  if (value.includes('\n') || value.includes('\0')) {
    // The helper session reads one request per line; a newline would split it.
    throw new Error('cannot quote a string with a newline or NUL for the helper session');
  }
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Quotes each word and joins them with spaces. */
export function shellWords(values: readonly string[]): string {
  return values.map(shellQuote).join(' ');
}
