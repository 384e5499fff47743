/**
 * Default limits shared by every backend (seed figures: 64 KiB chunks,
 * 32 MiB convenience cap, 1,000 grep matches).
 *
 * @module
 */

import { DEFAULT_PATH_LIMITS } from './path.ts';
import type { FilesystemLimits } from './types.ts';

/** Default chunk size of streaming reads. */
export const DEFAULT_CHUNK_SIZE = 64 * 1024;

/** Default cap of the convenience layer. */
export const DEFAULT_MAX_CONVENIENCE_BYTES = 32 * 1024 * 1024;

/** Default `maxMatches` of grep. */
export const DEFAULT_MAX_GREP_MATCHES = 1000;

/** Default number of lines in a `read()` page. */
export const DEFAULT_READ_LINES = 2000;

/** The full default limits object. */
export const DEFAULT_LIMITS: Readonly<FilesystemLimits> = Object.freeze({
  ...DEFAULT_PATH_LIMITS,
  maxConvenienceBytes: DEFAULT_MAX_CONVENIENCE_BYTES,
  chunkSize: DEFAULT_CHUNK_SIZE,
  maxGrepMatches: DEFAULT_MAX_GREP_MATCHES,
});

/** Merges caller overrides into the defaults, rejecting nonsense values. */
export function resolveLimits(overrides: Partial<FilesystemLimits> = {}): Readonly<FilesystemLimits> {
  const merged = { ...DEFAULT_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(merged)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`limit ${key} must be a positive integer, got ${String(value)}`);
    }
  }
  return Object.freeze(merged);
}
