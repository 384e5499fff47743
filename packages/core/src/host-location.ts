/**
 * Where a path of the host's own filesystem really is, for the checks that
 * keep ctxfs's state out of a workspace: a state directory or file named
 * through a link, or not created yet, must still be recognised as inside
 * the workspace it would land in.
 *
 * @module
 */

import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * The real path of `path`, or, where it does not exist yet, of its nearest
 * existing ancestor with the rest of `path` joined on.
 *
 * @example
 * ```ts
 * realpathOfNearest('/tmp/link-to-ws/not-yet/state.db'); // '/home/me/ws/not-yet/state.db'
 * ```
 */
export function realpathOfNearest(path: string): string {
  let cur = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync.native(cur), ...rest.reverse());
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return resolve(path);
      rest.push(basename(cur));
      cur = parent;
    }
  }
}

/**
 * Whether host path `child` is `parent` or below it (both absolute, as
 * given: resolve links first with {@link realpathOfNearest}).
 *
 * @example
 * ```ts
 * isHostPathInside('/home/me/ws', '/home/me/ws/.git'); // true
 * isHostPathInside('/home/me/ws', '/home/me/ws2');     // false
 * ```
 */
export function isHostPathInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
