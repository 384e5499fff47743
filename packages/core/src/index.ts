/**
 * `@ctxfs/core` — the Filesystem protocol and everything every backend
 * shares: paths, errors, limits, streams, text decoding, glob and grep.
 *
 * @example
 * ```ts
 * import { resolvePath, isFsError } from '@ctxfs/core';
 * resolvePath('src/../README.md', 'stat').path; // 'README.md'
 * ```
 *
 * @module
 */

export * from './byte-reader.ts';
export * from './byte-writer.ts';
export * from './bytes.ts';
export * from './digest.ts';
export * from './encoding.ts';
export * from './errors.ts';
export * from './filesystem-base.ts';
export * from './find-words.ts';
export * from './gitignore.ts';
export * from './glob.ts';
export * from './grep.ts';
export * from './host-location.ts';
export * from './if-match.ts';
export * from './language-model.ts';
export * from './lazy-module.ts';
export * from './legacy-detector.ts';
export * from './limits.ts';
export * from './linear-regex.ts';
export * from './lines.ts';
export * from './path.ts';
export * from './poll-watch.ts';
export * from './required-literal.ts';
export * from './shell-quote.ts';
export * from './text-plausibility.ts';
export * from './text-reader.ts';
export * from './text-roundtrip.ts';
export type * from './types.ts';
export * from './walk.ts';
export * from './watch.ts';
