/**
 * Symbolic links as entries of their own. Every other call follows a link
 * inside the root (an edit of `link/a.ts` edits `real/a.ts`, one file under
 * one key); deleting or renaming a link acts on the link, as `rm` and `mv`
 * do, never on the file it leads to. A link holds no content, so it has no
 * versions: undo does not bring a deleted one back.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { type EditResult, plainResult } from './edit-result.ts';

/**
 * The workspace path of the entry `path` names, with the links in its parent
 * followed, when that entry is itself a symbolic link; otherwise undefined.
 * Told by its parent's listing: `stat` follows the link, and a dangling one
 * stats as missing.
 *
 * @example
 * ```ts
 * await linkEntry(fs, 'docs/latest', (p) => fs.realpath(p)); // 'docs/latest' when it is a link to docs/v2
 * ```
 */
export async function linkEntry(fs: Filesystem, path: string, linkFree: (path: string) => Promise<string>): Promise<string | undefined> {
  if (path === '' || !fs.capabilities.symlinks) return undefined;
  const slash = path.lastIndexOf('/');
  const parent = slash < 0 ? '' : await linkFree(path.slice(0, slash));
  const name = path.slice(slash + 1);
  const entries = await fs.list(parent).catch(() => []);
  if (!entries.some((e) => e.name === name && e.kind === 'symlink')) return undefined;
  return parent === '' ? name : `${parent}/${name}`;
}

/** The result of a link removed or moved: a change with no version and no lines. */
export function linkChanged(op: string, path: string, message: string, dryRun: boolean): EditResult {
  return { ...plainResult(op, path, true, message), ...(dryRun ? { dryRun: true } : {}) };
}
