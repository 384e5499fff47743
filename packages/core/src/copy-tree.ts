/**
 * What a recursive copy may recreate: the rules a backend's copy of a tree
 * follows, whether it walks the tree through the primitives (the base) or
 * copies it in one native command (a container's `cp -R`), checked on the
 * whole source before anything is written.
 *
 * @module
 */

import { FsError } from './errors.ts';
import type { FileEntry } from './types.ts';

/** One entry of a recursive copy: the source entry, where it goes, and for a link its text (in `readLink`'s form). */
export interface CopyStep {
  readonly entry: FileEntry;
  readonly target: string;
  readonly link?: string;
}

/**
 * Whether the text of a symbolic link, placed at `linkPath` (normalized,
 * from the workspace root), leads out of the root: a relative text whose
 * `..` climb above the root at any step, read from the link's directory. A
 * text with a leading `/` is in the form `readLink` gives a target inside
 * the root, so it never does. Lexical, as `cp -R` recreates the text: the
 * same text one directory shallower may climb out where the original did not.
 *
 * @example
 * ```ts
 * linkTextLeavesRoot('deep/er/up', '../../top.txt'); // false
 * linkTextLeavesRoot('er/up', '../../top.txt');      // true
 * ```
 */
export function linkTextLeavesRoot(linkPath: string, text: string): boolean {
  if (text.startsWith('/')) return false;
  let depth = linkPath.split('/').length - 1;
  for (const seg of text.split('/')) {
    if (seg === '..') depth--;
    else if (seg !== '' && seg !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}

/**
 * The refusal of a recursive copy whose tree holds a link that leads, or
 * from the copy's place would lead, out of the workspace: recreating it
 * would make a new way out. Names the link, never where it leads.
 */
export function copiedLinkLeavesRoot(path: string, dest: string): FsError {
  return new FsError({
    code: 'EPATHESCAPE',
    op: 'copy',
    path,
    dest,
    reason: 'the copied tree holds a symbolic link that leads outside the workspace, or would from where the copy is made',
    hint: 'nothing was copied: delete or replace that link, or copy the entries beside it one by one, then copy again',
  });
}

/** The refusal of a recursive copy whose tree holds a FIFO, socket or device, which no backend can copy. */
export function uncopyableEntry(path: string, dest: string): FsError {
  return new FsError({
    code: 'EINVAL',
    op: 'copy',
    path,
    dest,
    reason: 'the copied tree holds a special file (a FIFO, socket or device), which cannot be copied',
    hint: 'nothing was copied: move the special file out of the tree, or copy the entries beside it one by one, then copy again',
  });
}

/** The refusal of a recursive copy whose tree holds a link, on a backend that makes none (`capabilities.symlinks` false). */
export function uncopyableLink(path: string, dest: string): FsError {
  return new FsError({
    code: 'EUNSUPPORTED',
    op: 'copy',
    path,
    dest,
    reason: 'the copied tree holds a symbolic link, and this workspace does not make links',
    hint: 'nothing was copied: copy the entries beside the link one by one, then copy again',
  });
}
