/**
 * Words of a `find` command line shared by the backends that walk with
 * `find` (GNU find on the host, busybox find in a container).
 *
 * @module
 */

/**
 * The words of a clause that makes `find` neither report nor enter entries
 * with one of `names`, matched literally: `( -name a -o -name b ) -prune -o`,
 * with `\`, `*`, `?`, `[` and `]` escaped so no name acts as a pattern. Put
 * them before the action (`-print`, `-printf`, `-exec`). Names no entry can
 * have (`''`, `.`, `..`, or holding `/` or NUL) are left out: they would
 * match nothing, and NUL cannot travel in an argument. With nothing left the
 * answer is empty. The words are raw: a caller passes them as process
 * arguments or quotes each for a shell.
 *
 * @example
 * ```ts
 * findPruneWords(['node_modules', 'x*y']);
 * // ['(', '-name', 'node_modules', '-o', '-name', 'x\\*y', ')', '-prune', '-o']
 * spawn('find', ['.', ...findPruneWords(exclude), '-print0']);
 * ```
 */
export function findPruneWords(names: Iterable<string>): string[] {
  const words: string[] = [];
  for (const name of names) {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) continue;
    words.push(words.length === 0 ? '(' : '-o', '-name', name.replace(/[\\*?[\]]/g, '\\$&'));
  }
  if (words.length > 0) words.push(')', '-prune', '-o');
  return words;
}
