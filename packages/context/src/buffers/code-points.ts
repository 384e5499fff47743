/**
 * Positions in code points (what a person counts as characters, and what
 * seed 003 asks for), converted to the UTF-16 indices JavaScript strings use,
 * so an emoji or a CJK supplementary character is one position, never half.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';

/**
 * The UTF-16 index of code point `at` in `text`; `at` may equal the length
 * (the end). Throws `EINVAL` past the end.
 *
 * @example
 * ```ts
 * utf16Index('a😀b', 2); // 3
 * ```
 */
export function utf16Index(text: string, at: number, path = ''): number {
  if (!Number.isSafeInteger(at) || at < 0) {
    throw fsError('EINVAL', 'edit', path, { reason: `position ${at} is not a non-negative integer`, hint: 'positions count code points from 0' });
  }
  let i = 0;
  let n = 0;
  while (n < at) {
    if (i >= text.length) {
      throw fsError('EINVAL', 'edit', path, {
        reason: `position ${at} is past the end of the buffer (${codePointLength(text)} code points)`,
        hint: 'positions count code points from 0; the end is the buffer length',
      });
    }
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
    n++;
  }
  return i;
}

/** The number of code points in `text`. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
