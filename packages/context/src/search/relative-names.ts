/**
 * Rows named relative to a directory said once: a listing, a glob or a
 * search's file list repeats no prefix its rows share, so a model pays for
 * each path's own part only. The header names the directory (`paths relative
 * to src/`); that directory joined with a row's name is the path to pass on.
 *
 * @module
 */

/**
 * The deepest directory every one of `paths` lies below, or `''` when they
 * share none, or are fewer than two (one path is clearest whole: its header
 * would cost what naming it relative saves).
 *
 * @example
 * ```ts
 * sharedDirectory(['src/a/x.ts', 'src/a/y/z.ts']); // 'src/a'
 * sharedDirectory(['src/x.ts']);                   // ''
 * ```
 */
export function sharedDirectory(paths: readonly string[]): string {
  if (paths.length < 2) return '';
  let dir = (paths[0] as string).slice(0, Math.max(0, (paths[0] as string).lastIndexOf('/')));
  for (const path of paths) {
    while (dir !== '' && !path.startsWith(`${dir}/`)) dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/')));
    if (dir === '') break;
  }
  return dir;
}

/** Characters of a path under `dir` that its name relative to `dir` leaves out. */
export function relativeStart(dir: string): number {
  return dir === '' ? 0 : dir.length + 1;
}

/** What a header adds when its rows are named relative to `dir`: `, paths relative to dir/`, or nothing. */
export function relativeNote(dir: string): string {
  return dir === '' ? '' : `, paths relative to ${dir}/`;
}
