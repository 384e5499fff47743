/**
 * What a search covers: the registry's ignore rules (`.git`, `node_modules`,
 * the root `.gitignore`, the layer's own list), split into the names the
 * backend leaves out natively and a check for the rest, and the sensitive
 * files a search leaves out unless asked. Rules apply below the scope a
 * caller names: asking for `node_modules/lodash` by name searches it.
 *
 * @module
 */

import { fsError, isFsError, unfollowedLink } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import type { Workspace } from '../retrieval/shared.ts';
import { currentCall } from '../safety/safety-layer.ts';
import type { SearchOp } from './search-result.ts';

/** The ignore rules of one call. */
export interface SearchScope {
  /** Canonical path searched (`''` is the root). */
  readonly path: string;
  readonly kind: 'file' | 'directory';
  /** Names for the backend to leave out (grep's `exclude`, glob's `ignore`); empty with `includeIgnored`. */
  readonly exclude: readonly string[];
  /** Whether `path` (a file or directory below the scope) lies in what the registry ignores, or the policy withholds from this caller. */
  ignored(path: string): boolean;
  /** Whether `path` is a sensitive file (credentials by convention). */
  sensitive(path: string): boolean;
}

/**
 * The scope of a call on `path`: it must exist (`ENOENT` with a hint
 * otherwise); ignore rules are read afresh (the root `.gitignore` may have
 * changed since the last scan).
 */
export async function searchScope(ws: Workspace, op: SearchOp, path: string, includeIgnored: boolean): Promise<SearchScope> {
  let kind: 'file' | 'directory';
  try {
    const st = await ws.fs.stat(path);
    // A stat follows the links it can: one that stats as a link leads out of the root or loops, refused as a read
    // of it is (EPATHESCAPE, ELOOP), not as a wrong argument.
    if (st.kind === 'symlink') throw await unfollowedLink(ws.fs, op, path);
    if (st.kind !== 'file' && st.kind !== 'directory') throw fsError('EINVAL', op, path, { reason: `'${path}' is a ${st.kind}, not a file or directory` });
    kind = st.kind;
  } catch (err) {
    if (!isFsError(err, 'ENOENT') && !isFsError(err, 'ENOTDIR')) throw err;
    throw fsError('ENOENT', op, path, {
      reason: `no file or directory '${path}'`,
      hint: `${callText('listFiles', [])} shows the top of the tree; ${callText('glob', [`**/${path.slice(path.lastIndexOf('/') + 1)}`])} finds it by name`,
    });
  }
  const registry = ws.registry;
  const names = includeIgnored ? [] : await registry.excludedNames();
  const start = path === '' ? 0 : path.length + 1;
  // Directories already judged: a search meets the same few thousand again and again.
  const judged = new Map<string, boolean>();
  // What the policy keeps from this caller is left out like an ignored path, whatever the flags say.
  const withheld = currentCall()?.withheld;
  const ignored = (p: string): boolean => (withheld !== undefined && p !== '' && withheld(p)) || ruleIgnored(p);
  const ruleIgnored = (p: string): boolean => {
    if (includeIgnored || p.length < start) return false;
    for (let slash = p.indexOf('/', start); ; slash = p.indexOf('/', slash + 1)) {
      const at = slash < 0 ? p : p.slice(0, slash);
      let out = judged.get(at);
      if (out === undefined) {
        out = registry.isIgnored(at);
        if (slash >= 0) judged.set(at, out);
      }
      if (out) return true;
      if (slash < 0) return false;
    }
  };
  return { path, kind, exclude: names, ignored, sensitive: (p) => registry.isSensitive(p) };
}

/**
 * The registered sensitive files below `scope` (all of them for a file
 * scope that is one) that a search with `includeSensitive` would show, for
 * the note that says they were left out.
 */
export function sensitiveIn(ws: Workspace, scope: SearchScope): string[] {
  // What the policy withholds is never mentioned: asking with includeSensitive would not show it either.
  if (scope.kind === 'file') return scope.sensitive(scope.path) && !scope.ignored(scope.path) ? [scope.path] : [];
  // Sensitive files are few: the registry finds them by a flag, without building every record below the scope.
  return ws.registry.sensitiveFiles(scope.path === '' ? undefined : scope.path).filter((p) => !scope.ignored(p));
}
