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

/** Compiles `.gitignore` text to a path predicate (workspace-relative paths). */
export function compileGitignore(text: string): (path: string) => boolean {
  const filters: Array<(path: string) => boolean> = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    line = line.replace(/^\\([#!])/, '$1').replace(/\/+$/, '');
    if (line === '' || line === '/') continue;
    const anchored = line.startsWith('/') || line.includes('/');
    const pattern = line.replace(/^\//, '');
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
