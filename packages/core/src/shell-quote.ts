/**
 * Quoting for a POSIX shell: how a string becomes one word that `sh` reads
 * back as exactly that string, never as code. The container backend quotes
 * every path its helper runs through it; the CLI quotes the arguments of
 * the commands its hints print.
 *
 * @module
 */

/**
 * `value` as one single-quoted shell word: a single quote inside is closed,
 * escaped and reopened (`'\''`). A NUL cannot be in a shell word at all, so
 * it is refused rather than cut short.
 *
 * @example
 * ```ts
 * shellQuote("it's"); // 'it'\''s'
 * ```
 */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new Error('a shell word cannot hold a NUL byte');
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Characters that no POSIX shell treats specially anywhere in an argument (not `=`: a first word `a=b` is an assignment). */
const PLAIN_WORD = /^[\w@%+:,./-]+$/;

/**
 * `value` as one shell argument, quoted only when it needs to be, so a
 * printed command stays readable: `src/a.ts` bare, `it's.ts` quoted.
 *
 * @example
 * ```ts
 * shellArgument('src/a.ts'); // src/a.ts
 * shellArgument('{"path":"a b"}'); // '{"path":"a b"}'
 * ```
 */
export function shellArgument(value: string): string {
  return PLAIN_WORD.test(value) ? value : shellQuote(value);
}
