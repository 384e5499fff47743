/**
 * How a session's calls are described to the safety layer: their paths
 * normalized once (or the error that normalizing gave, recorded like any
 * other), the paths a patch touches with what it does to each, what a
 * result reports for the audit and the budgets, and the preview of a change
 * a person is asked to approve.
 *
 * @module
 */

import { type FsError, isFsError } from '@ctxfs/core';
import type { EditResult } from '../edits/edit-result.ts';
import type { PlannedFile } from '../edits/file-editor.ts';
import { formatUnifiedDiff } from '../history/unified-diff.ts';
import { type FilePatch, PatchParseError, parsePatch } from '../patch/parse-patch.ts';
import { contextPath, type PathTarget } from '../paths/context-path.ts';
import type { Served } from '../retrieval/shared.ts';
import type { ChangePreview } from '../safety/approval.ts';
import type { OpClass } from '../safety/policy.ts';
import type { CallOutcome } from '../safety/safety-layer.ts';

/** Paths normalized by core's path module; the first failure kept as the call's error. */
export function normalized(
  op: string,
  inputs: readonly string[],
  target: PathTarget = 'file',
  hostRoots: readonly string[] = [],
): { paths: string[]; invalid: FsError | undefined } {
  const paths: string[] = [];
  for (const input of inputs) {
    try {
      paths.push(contextPath(input, op, target, hostRoots));
    } catch (err) {
      if (!isFsError(err)) throw err;
      return { paths: inputs.map(String), invalid: err };
    }
  }
  return { paths, invalid: undefined };
}

/** A read's outcome: the tokens and bytes served, and the version it was. */
export function servedOutcome(r: Served): CallOutcome {
  return { result: 'ok', tokens: r.tokens, bytes: Buffer.byteLength(r.text), before: r.version ? { [r.path]: r.version } : undefined };
}

/** An edit's outcome: applied or refused, each file's version before and after, the size of the change. */
export function editOutcome(r: EditResult): CallOutcome {
  const before: Record<string, string | null> = {};
  const after: Record<string, string | null> = {};
  for (const f of r.files) {
    before[f.path] = f.previousVersion ?? null;
    after[f.path] = f.version ?? null;
  }
  // A dry run changed nothing: its record has no versions before and after, only the diff it showed.
  const changed = r.files.length > 0 && r.dryRun !== true;
  return {
    result: r.success ? 'ok' : 'refused',
    code: r.code,
    bytes: Buffer.byteLength(r.diff),
    before: changed ? before : undefined,
    after: changed ? after : undefined,
    diff: r.success ? { files: r.files.length, added: r.linesAdded, removed: r.linesRemoved } : undefined,
  };
}

/**
 * What a patch does to which paths, for the policy: an update is a write, a
 * new file a write, a deletion a delete, a move a rename of its old path and
 * a write of its new one. A patch that does not parse names no path (its
 * refusal says why); a path that does not normalize is left to the edit,
 * which refuses it.
 */
export function patchTargets(patch: string, headerless: string | undefined): Array<{ path: string; opClass: OpClass }> {
  let files: FilePatch[];
  try {
    files = parsePatch(patch);
  } catch (err) {
    if (err instanceof PatchParseError) return headerless === undefined ? [] : [{ path: headerless, opClass: 'write' }];
    throw err;
  }
  const out: Array<{ path: string; opClass: OpClass }> = [];
  const add = (raw: string | undefined, opClass: OpClass): void => {
    if (raw === undefined) return;
    const { paths, invalid } = normalized('applyPatch', [raw]);
    if (invalid === undefined) out.push({ path: paths[0] as string, opClass });
  };
  for (const fp of files) {
    const single = files.length === 1 ? headerless : undefined;
    if (fp.isDelete) add(fp.oldPath ?? single, 'delete');
    else if (fp.oldPath !== undefined && fp.newPath !== undefined && fp.oldPath !== fp.newPath && !fp.isNew) {
      add(fp.oldPath, 'rename');
      add(fp.newPath, 'write');
    } else add(fp.newPath ?? fp.oldPath ?? single, 'write');
  }
  return out;
}

/** The diff of each planned file, as a person is shown it before approving. */
export function previews(plans: readonly PlannedFile[]): ChangePreview[] {
  return plans.map((p) => {
    const d = formatUnifiedDiff(p.beforeText, p.afterText, { oldLabel: `a/${p.path}`, newLabel: p.bytes === null ? '/dev/null' : `b/${p.path}` });
    return { path: p.path, diff: d.text, added: d.linesAdded, removed: d.linesRemoved };
  });
}
