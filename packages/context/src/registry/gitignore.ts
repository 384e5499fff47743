/**
 * The root `.gitignore`, read as the registry's ignore list: build output,
 * virtual environments and caches that a repository already declares need
 * not be walked, hashed or shown to a model. Its lines are matched as git
 * matches them (core's `compilePathPatterns`: wildmatch, anchoring, `!`
 * re-including, a file inside an ignored directory staying ignored). Where
 * the caller does not say whether a path is a directory, a `name/` rule
 * leaves out a file of that name too: the registry asks before it knows.
 *
 * @module
 */

import { compilePathPatterns, ignoredNames, parseGitignore } from '@ctxfs/core';

/**
 * Compiles `.gitignore` text to a path predicate (workspace-relative paths).
 * `isDirectory` says what the path is; unknown, it is judged as a directory.
 */
export function compileGitignore(text: string): (path: string, isDirectory?: boolean) => boolean {
  const matches = compilePathPatterns(text.split(/\r?\n/));
  return (path, isDirectory = true) => matches(path, isDirectory);
}

/**
 * The patterns of a `.gitignore` that are plain names (`dist`, `.venv`,
 * `target/`) that no later `!` line could bring back: they mean "this name
 * at any depth", which a walk can leave out natively without entering the
 * directory.
 */
export function gitignoreNames(text: string): string[] {
  return ignoredNames(parseGitignore(text, '')).filter(isPlainName);
}

/** A name without glob syntax: it matches only itself. */
export function isPlainName(pattern: string): boolean {
  return /^[^/*?[\]{}()!+@\\]+$/.test(pattern);
}
