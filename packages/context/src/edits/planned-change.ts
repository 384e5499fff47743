/**
 * A change as planned, before anything is written: each file's content
 * before and after. The editor commits plans (`FileEditor.commit`) or, for
 * a dry run, answers with their diff (`FileEditor.preview`); both describe a
 * change the same way, from here.
 *
 * @module
 */

import { formatUnifiedDiff } from '../history/unified-diff.ts';
import { type FileVersion, sha256Hex, type VersionOp } from '../history/version-store.ts';
import { type EditResult, type FileChange, refusal } from './edit-result.ts';
import type { FileText } from './file-text.ts';

/** One planned file change. */
export interface PlannedFile {
  readonly path: string;
  readonly op: VersionOp;
  /** The file now (`undefined`: absent). */
  readonly current: FileText | undefined;
  /** New bytes, or `null` to delete. */
  readonly bytes: Uint8Array | null;
  /** Text before/after, for the diff. */
  readonly beforeText: string;
  readonly afterText: string;
  readonly merged: boolean;
  /**
   * For a merged edit: the file as the editor believes it to be (what it
   * read plus its own edit). Recorded as its read, so its next edit — made
   * from that belief — is merged again instead of landing on shifted lines.
   */
  readonly editorView?: Uint8Array | undefined;
  /**
   * For a rename: the source path (this entry is the destination). `bytes`
   * may differ from the source's (a patch that moves and changes a file):
   * the file is renamed, keeping its mode, then written.
   */
  readonly renameFrom?: string | undefined;
  /**
   * The other path of a move made as a write and a delete (a rename over an
   * existing file): recorded in history, so undo knows the change for a move.
   */
  readonly relatedPath?: string | undefined;
  readonly undoOf?: number | undefined;
}

/** The plans that change something: a rename, a delete of a file that is there, new bytes. */
export function changing(plans: readonly PlannedFile[]): PlannedFile[] {
  return plans.filter(
    (p) => p.renameFrom !== undefined || (p.bytes === null ? p.current !== undefined : p.current === undefined || sha256Hex(p.bytes) !== p.current.sha256),
  );
}

/** The answer to a change that changes nothing: a success, `unchanged`. */
export function noChange(op: string, first: PlannedFile | undefined): EditResult {
  const primary = first?.path ?? '';
  return {
    ...refusal(op, primary, 'EINVAL', `No change: the new content of ${primary} equals the current one.`, { version: first?.current?.sha256 }),
    success: true,
    code: undefined,
    unchanged: true,
  };
}

/** `text` with the UTF-8 byte-order mark in front when `bytes` (its file's) begin with one and the decoded text does not. */
function withBom(text: string, bytes: Uint8Array | null | undefined): string {
  const bom = bytes != null && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bom && !text.startsWith('\uFEFF') ? `\uFEFF${text}` : text;
}

/** The unified diff of `effective` plans, git's labels, with each file's counts and (once recorded) its new version. */
export function changeDiff(
  effective: readonly PlannedFile[],
  recorded: readonly FileVersion[],
): { files: FileChange[]; diff: string; added: number; removed: number } {
  const files: FileChange[] = [];
  let diff = '';
  let added = 0;
  let removed = 0;
  for (const p of effective) {
    const beforeLabel = p.renameFrom !== undefined ? `a/${p.renameFrom}` : p.current ? `a/${p.path}` : '/dev/null';
    const afterLabel = p.bytes === null && p.renameFrom === undefined ? '/dev/null' : `b/${p.path}`;
    // A UTF-8 BOM is part of line 1's bytes, as git diffs them: without it `git apply` of the diff fails on line 1.
    const d = formatUnifiedDiff(withBom(p.beforeText, p.current?.bytes), withBom(p.afterText, p.bytes), { oldLabel: beforeLabel, newLabel: afterLabel });
    if (p.renameFrom !== undefined) diff += `rename from ${p.renameFrom}\nrename to ${p.path}\n`;
    diff += d.text;
    added += d.linesAdded;
    removed += d.linesRemoved;
    const v = recorded.filter((r) => r.path === p.path).at(-1);
    files.push({
      path: p.path,
      op: p.op,
      version: v?.sha256,
      previousVersion: p.current?.sha256,
      seq: v?.seq,
      linesAdded: d.linesAdded,
      linesRemoved: d.linesRemoved,
      merged: p.merged,
    });
  }
  return { files, diff, added, removed };
}
