/**
 * `.gitignore` rules for enumeration on request: each `.gitignore` applies
 * to the directory it sits in and everything below; a pattern with a slash
 * (other than a trailing one) is anchored to that directory, one without
 * matches a name at any depth; a trailing slash matches directories only;
 * `!` re-includes; the last matching rule wins; a file inside an ignored
 * directory stays ignored (the directory is never entered), as in git.
 *
 * @module
 */

import { picomatchModule } from './lazy-dependencies.ts';

/** One compiled line of a `.gitignore`. */
export interface IgnoreRule {
  /** Directory (workspace path) of the `.gitignore` the rule comes from. */
  readonly base: string;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  readonly test: (relative: string, name: string) => boolean;
}

/**
 * Compiles the text of a `.gitignore` found in directory `base`.
 *
 * @example
 * ```ts
 * const rules = parseGitignore('dist/\n*.log\n!keep.log\n', '');
 * isIgnored(rules, 'a/b.log', false); // true
 * isIgnored(rules, 'keep.log', false); // false
 * ```
 */
export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1);
    let dirOnly = false;
    if (line.endsWith('/')) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    if (line === '') continue;
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    const isMatch = picomatchModule()(line, { dot: true });
    const test = anchored ? (relative: string) => isMatch(relative) : (_relative: string, name: string) => isMatch(name);
    rules.push({ base, negate, dirOnly, test });
  }
  return rules;
}

/** True when the last rule matching `path` ignores it. */
export function isIgnored(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  let ignored = false;
  for (const r of rules) {
    if (r.dirOnly && !isDirectory) continue;
    if (r.base !== '' && !path.startsWith(`${r.base}/`)) continue;
    const relative = r.base === '' ? path : path.slice(r.base.length + 1);
    if (r.test(relative, name)) ignored = !r.negate;
  }
  return ignored;
}

/**
 * A matcher for a list of gitignore-style patterns (one rule a line, as in a
 * `.gitignore` at the root), answering for a path the way git answers for a
 * file: a path is matched when the last rule matching it, or a directory
 * above it, says so — a file inside a matched directory stays matched,
 * whatever a later `!` says of the file alone.
 *
 * @example
 * ```ts
 * const m = compilePathPatterns(['secrets/', '*.pem', '!public.pem', '/build']);
 * m('secrets/db/pass.txt'); // true (inside a matched directory)
 * m('certs/public.pem');    // false (re-included)
 * m('src/build');           // false (anchored to the root)
 * ```
 */
export function compilePathPatterns(patterns: readonly string[]): (path: string, isDirectory?: boolean) => boolean {
  const rules = parseGitignore(patterns.join('\n'), '');
  if (rules.length === 0) return () => false;
  return (path, isDirectory = false) => {
    // Every directory above the path first: a matched one settles it.
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
      if (isIgnored(rules, path.slice(0, slash), true)) return true;
    }
    return isIgnored(rules, path, isDirectory);
  };
}
