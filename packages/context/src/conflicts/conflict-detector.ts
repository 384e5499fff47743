/**
 * Conflict reports for the three kinds of seed 000 §6: a stale buffer (the
 * file changed since the editor read it), overlapping edits (both sides
 * changed the same lines), and a patch mismatch (hunks whose context is not
 * in the file). Each report names the line ranges involved and the call
 * that gets the editor unstuck.
 *
 * @module
 */

import type { ConflictRegion, EditConflict, LineRange } from '../edits/edit-result.ts';
import { formatUnifiedDiff } from '../history/unified-diff.ts';
import type { MergeConflict } from '../merge/merge3.ts';
import type { HunkFailure } from '../patch/apply-hunks.ts';

function range(r: { start: number; end: number }): LineRange {
  return { start: r.start + 1, end: r.end };
}

function strip(lines: readonly string[]): string[] {
  return lines.map((l) => l.replace(/\r?\n$/, ''));
}

/** Regions of a conflicted three-way merge, in 1-based lines. */
export function conflictRegions(conflicts: readonly MergeConflict[]): ConflictRegion[] {
  return conflicts.map((c) => ({
    base: range(c.base),
    current: range(c.theirs),
    yours: range(c.ours),
    currentLines: strip(c.theirsLines),
    yourLines: strip(c.oursLines),
  }));
}

function fmt(r: LineRange): string {
  return r.end < r.start ? `before line ${r.start}` : r.start === r.end ? `line ${r.start}` : `lines ${r.start}-${r.end}`;
}

/** Describes ranges as `lines 3-5, line 9`. */
export function describeRanges(ranges: readonly LineRange[]): string {
  return ranges.map(fmt).join(', ');
}

/** A stale-buffer report. */
export function staleBuffer(args: {
  path: string;
  baseVersion: string;
  currentVersion: string | undefined;
  changedBy: readonly string[];
  baseText: string | undefined;
  currentText: string | undefined;
}): EditConflict {
  const theirs =
    args.baseText !== undefined && args.currentText !== undefined
      ? formatUnifiedDiff(args.baseText, args.currentText, { oldLabel: 'read', newLabel: 'current' })
      : undefined;
  return {
    type: 'stale_buffer',
    path: args.path,
    baseVersion: args.baseVersion,
    currentVersion: args.currentVersion,
    changedBy: args.changedBy,
    regions: [],
    lines: theirs ? theirs.ranges.map((r) => ({ start: r.newStart, end: r.newEnd })) : [],
    hunks: [],
    theirsDiff: theirs?.text,
    yoursDiff: undefined,
    markedText: undefined,
  };
}

/** An overlapping-edits report from a conflicted merge. */
export function overlappingEdits(args: {
  path: string;
  baseVersion: string;
  currentVersion: string;
  changedBy: readonly string[];
  baseText: string;
  currentText: string;
  yourText: string;
  conflicts: readonly MergeConflict[];
  markedText: string | undefined;
}): EditConflict {
  const regions = conflictRegions(args.conflicts);
  return {
    type: 'overlapping_edits',
    path: args.path,
    baseVersion: args.baseVersion,
    currentVersion: args.currentVersion,
    changedBy: args.changedBy,
    regions,
    lines: regions.map((r) => r.current),
    hunks: [],
    theirsDiff: formatUnifiedDiff(args.baseText, args.currentText, { oldLabel: 'read', newLabel: 'current' }).text,
    yoursDiff: formatUnifiedDiff(args.baseText, args.yourText, { oldLabel: 'read', newLabel: 'yours' }).text,
    markedText: args.markedText,
  };
}

/** A patch-mismatch report. */
export function patchMismatch(path: string, version: string | undefined, failures: readonly HunkFailure[]): EditConflict {
  const lines: LineRange[] = [];
  for (const f of failures) {
    if (f.closest) lines.push({ start: f.closest.startLine, end: f.closest.startLine + f.closest.total - 1 });
    for (const m of f.matches) lines.push({ start: m, end: m });
  }
  return {
    type: 'patch_mismatch',
    path,
    baseVersion: version,
    currentVersion: version,
    changedBy: [],
    regions: [],
    lines,
    hunks: failures,
    theirsDiff: undefined,
    yoursDiff: undefined,
    markedText: undefined,
  };
}
