/**
 * A search call's input, checked before any I/O: paths resolved to their
 * canonical form (core's `resolvePath`), counts and limits validated, and
 * patterns compiled, each failure an `FsError` with a stable code, the
 * offending value and a hint a model can act on.
 *
 * @module
 */

import { compileFileFilter, compileGlob, compileGrep, type FsError, fsError, type GrepMatcher, isFsError, resolvePath } from '@ctxfs/core';
import { callShape, callText } from '../calls/call-text.ts';
import type { SearchOp } from './search-result.ts';

/** Longest grep pattern or symbol query accepted. */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * The canonical workspace path of a caller's path or cwd (`''` for the
 * root): `src/../lib/` and `lib` are the same key.
 */
export function searchPath(input: string | undefined, op: SearchOp): string {
  if (input === undefined) return '';
  return resolvePath(input, op).path;
}

/** A whole number in `[min, max]`, or the default. */
export function count(value: number | undefined, name: string, op: SearchOp, fallback: number, min = 0, max = 100_000): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw fsError('EINVAL', op, undefined, {
      reason: `${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
      hint: `pass ${name} as a whole number between ${min} and ${max}, or leave it out (default ${fallback})`,
    });
  }
  return value;
}

/** An `FsError` with a hint added when it has none of its own. */
function withHint(err: FsError, op: SearchOp, hint: string): FsError {
  return fsError(err.code, op, err.path, { reason: err.reason, hint, cause: err });
}

/**
 * Compiles a grep pattern the way the backends will run it, refusing what
 * cannot work line by line: empty, too long, or spanning lines.
 */
export function grepMatcher(
  pattern: unknown,
  options: {
    literal?: boolean;
    ignoreCase?: boolean;
    /** The caller's call with the pattern searched as written, for the hint of a pattern that does not compile. */
    asLiteral?: () => string;
  },
): GrepMatcher {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw fsError('EBADPATTERN', 'grep', String(pattern), {
      reason: 'the pattern must be a non-empty string',
      hint: `pass the text or regular expression to find; to list files use ${callShape('glob')} or ${callText('listFiles', [])}`,
    });
  }
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw fsError('EBADPATTERN', 'grep', `${pattern.slice(0, 40)}…`, {
      reason: `the pattern is ${pattern.length} characters, over the limit of ${MAX_PATTERN_LENGTH}`,
      hint: 'search for a shorter distinctive part of the text',
    });
  }
  if (/[\r\n]/.test(pattern)) {
    throw fsError('EBADPATTERN', 'grep', pattern, {
      reason: 'grep matches one line at a time, so a pattern with a line break never matches',
      hint: `search for one line of the text (the most distinctive), then ${callShape('readLines')} around the match`,
    });
  }
  try {
    return compileGrep(pattern, options);
  } catch (err) {
    if (!isFsError(err)) throw err;
    throw withHint(
      err,
      'grep',
      options.literal
        ? 'check the pattern'
        : `fix the regular expression (RE2 syntax: no backreferences or lookaround), or search for the text as written with ${options.asLiteral?.() ?? callText('grep', [pattern], { literal: true })}`,
    );
  }
}

/**
 * Compiles a glob with `compile`, refusing what no glob can be (empty,
 * too long, several lines) and giving each failure a hint.
 */
function checkedGlob(pattern: unknown, op: SearchOp, example: string, compile: (glob: string) => unknown): string {
  if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH || /[\0\r\n]/.test(pattern)) {
    throw fsError('EBADPATTERN', op, String(pattern).slice(0, 80), {
      reason: 'the glob must be a non-empty pattern on one line',
      hint: `pass a pattern such as ${example}`,
    });
  }
  try {
    compile(pattern);
  } catch (err) {
    if (!isFsError(err)) throw err;
    const hint =
      err.code === 'EPATHESCAPE'
        ? 'write the pattern relative to the workspace root, without ".." (pass {cwd} to start in a directory)'
        : `write the glob in picomatch syntax, such as ${example}`;
    throw withHint(err, op, hint);
  }
  return pattern;
}

/** Checks a grep `glob` (ripgrep's `-g` rules: a name pattern, or a path pattern with `/`). */
export function fileFilter(glob: string | undefined, op: SearchOp): string | undefined {
  return glob === undefined ? undefined : checkedGlob(glob, op, '"*.ts" or "src/**/*.py"', (g) => compileFileFilter(g));
}

/**
 * Checks a glob pattern for `glob` and `listFiles`: picomatch syntax,
 * relative to its cwd, never absolute or climbing (`EPATHESCAPE`).
 */
export function globPattern(pattern: unknown, op: SearchOp): string {
  return checkedGlob(pattern, op, '"**/*.ts" or "src/*.{js,mjs}"', (g) => compileGlob(g));
}
