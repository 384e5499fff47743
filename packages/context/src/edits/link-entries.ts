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
import { callShape, callText } from '../calls/call-text.ts';
import type { OpClass } from '../safety/policy.ts';
import { type EditResult, plainResult, refusal } from './edit-result.ts';

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

/** What a link's own calls change: the backend, and the registry that must learn of it. */
export interface LinkWorkspace {
  readonly fs: Filesystem;
  readonly registry: { forget(path: string): Promise<unknown> };
}

/** Removes the link `link` itself (nothing when `dryRun`); what it leads to is kept. */
export async function deleteLink(ws: LinkWorkspace, link: string, dryRun: boolean): Promise<EditResult> {
  if (!dryRun) {
    await ws.fs.delete(link);
    await ws.registry.forget(link);
  }
  return linkChanged(
    'delete',
    link,
    `${dryRun ? 'Would delete' : 'Deleted'} the link ${link}; what it leads to is kept. A link has no versions: undo does not bring it back.`,
    dryRun,
  );
}

/** Options of {@link renameLink}. */
export interface RenameLinkOptions {
  readonly overwrite?: boolean | undefined;
  readonly dryRun?: boolean | undefined;
  /**
   * Deletes the file at `path` as a version (a dry run when `dryRun`), so a
   * file the link replaces stays in history. Called only for a regular file
   * under the destination's name, before the link moves.
   */
  readonly deleteFile: (path: string, dryRun: boolean) => Promise<EditResult>;
}

/**
 * Moves the link `link` itself to `target` (the destination with the links
 * in its parent followed); an existing destination is refused unless
 * `overwrite`, and a file it replaces is deleted as a version first, so undo
 * can bring it back. Nothing changes when `dryRun`.
 */
export async function renameLink(ws: LinkWorkspace, link: string, target: string, options: RenameLinkOptions): Promise<EditResult> {
  const slash = target.lastIndexOf('/');
  const name = target.slice(slash + 1);
  const taken = (await ws.fs.list(slash < 0 ? '' : target.slice(0, slash)).catch(() => [])).find((e) => e.name === name);
  if (taken !== undefined && options.overwrite !== true) {
    return refusal(
      'rename',
      target,
      'EEXIST',
      `${target} already exists. Pick another name, or replace it with ${callText('renameFile', [link, target], { overwrite: true })}.`,
    );
  }
  const dryRun = options.dryRun === true;
  // `rename` over a file unlinks it with no version: its content would be gone for good (as `mv link file` loses it).
  const replaced = taken?.kind === 'file' ? await options.deleteFile(target, dryRun) : undefined;
  if (replaced !== undefined && !replaced.success) return replaced;
  if (!dryRun) {
    await ws.fs.rename(link, target, { overwrite: options.overwrite === true });
    // Not `refresh`: it looks through the moved link, so a link to a directory or
    // outside the root failed after the move and the call reported a refusal of a
    // rename it had made. A file the link replaced (`overwrite`) is forgotten too.
    await ws.registry.forget(link);
    await ws.registry.forget(target);
  }
  const moved = linkChanged(
    'rename',
    target,
    `${dryRun ? 'Would move' : 'Moved'} the link ${link} to ${target}; what it leads to is unchanged. A link has no versions: undo does not move it back.`,
    dryRun,
  );
  if (replaced === undefined) return moved;
  // While the link stands under its name, a call on that name reaches what the link leads to, not the old file.
  const kept = `${target}, the file it ${dryRun ? 'would replace, would be' : 'replaced, was'} deleted as a version (its content stays in history): to bring it back, move the link away, then ${callText('undo', [target])}.`;
  const { diff, files, linesRemoved, linesChanged } = replaced;
  return { ...moved, message: `${moved.message} ${kept}`, diff, files, linesRemoved, linesChanged };
}

/**
 * The refusal of a patch that deletes or moves a path that is itself a
 * link: a patch edits what a link leads to, so its delete would remove
 * that file and leave the link; the link's own calls remove or move it.
 * `linkNamed` tells a link (see `PathBoundary.linkNamed`).
 */
export async function linkRemovedByPatch(
  targets: ReadonlyArray<{ path: string; opClass: OpClass }>,
  linkNamed: (op: string, path: string) => Promise<string | undefined>,
): Promise<EditResult | undefined> {
  for (const t of targets) {
    if (t.opClass === 'write') continue;
    const link = await linkNamed('applyPatch', t.path);
    if (link === undefined) continue;
    const verb = t.opClass === 'delete' ? 'delete' : 'move';
    return refusal(
      'patch',
      link,
      'EUNSUPPORTED',
      `${link} is a symbolic link: a patch edits the file a link leads to, and cannot ${verb} the link itself. Nothing was changed. ${verb === 'delete' ? `Delete the link with ${callText('deleteFile', [link])}` : `Move the link with ${callShape('renameFile')}`}, which acts on the link only, and the rest of the patch without it.`,
    );
  }
  return undefined;
}
