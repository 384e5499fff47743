/**
 * The root `.gitignore`, read as the registry's ignore list: build output,
 * virtual environments and caches that a repository already declares need
 * not be walked, hashed or shown to a model. A subset of git's rules: plain
 * patterns match a name at any depth, a leading or inner `/` anchors to the
 * root, a trailing `/` is accepted (directories and files alike are left
 * out); negations (`!`) are not supported and are skipped.
 *
 * @module
 */

import { compileFileFilter } from '@ctxfs/core';

/** One usable pattern of a `.gitignore`: the pattern, and whether it is anchored to the root. */
interface GitignorePattern {
  readonly pattern: string;
  readonly anchored: boolean;
}

function* patternsOf(text: string): Generator<GitignorePattern> {
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    line = line.replace(/^\\([#!])/, '$1').replace(/\/+$/, '');
    if (line === '' || line === '/') continue;
    yield { pattern: line.replace(/^\//, ''), anchored: line.startsWith('/') || line.includes('/') };
  }
}

/** Compiles `.gitignore` text to a path predicate (workspace-relative paths). */
export function compileGitignore(text: string): (path: string) => boolean {
  const filters: Array<(path: string) => boolean> = [];
  for (const { pattern, anchored } of patternsOf(text)) {
    try {
      if (anchored) {
        // A pattern with a slash matches the whole relative path (`./x` forces that for a bare name).
        const self = compileFileFilter(pattern.includes('/') ? pattern : `./${pattern}`, true);
        const inside = compileFileFilter(`${pattern}/**`, true);
        filters.push((p) => self(p) || inside(p));
      } else filters.push(compileFileFilter(pattern, true));
    } catch {
      // A pattern picomatch cannot compile is skipped, as git skips what it cannot parse.
    }
  }
  return (path) => filters.some((f) => f(path));
}

/**
 * The patterns of a `.gitignore` that are plain names (`dist`, `.venv`,
 * `target/`): they mean "this name at any depth", which a walk can leave
 * out natively without entering the directory.
 */
export function gitignoreNames(text: string): string[] {
  const names: string[] = [];
  for (const { pattern, anchored } of patternsOf(text)) if (!anchored && isPlainName(pattern)) names.push(pattern);
  return names;
}

/** A name without glob syntax: it matches only itself. */
export function isPlainName(pattern: string): boolean {
  return /^[^/*?[\]{}()!+@\\]+$/.test(pattern);
}
