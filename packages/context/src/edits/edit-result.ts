/**
 * The one result shape of every edit operation: applied, merged, or refused
 * with a reason precise enough that the caller (often a model) can fix its
 * call in one step.
 *
 * @module
 */

import type { FsErrorCode } from '@ctxfs/core';
import type { HunkFailure } from '../patch/apply-hunks.ts';

/** A 1-based inclusive line range; `end = start - 1` is an empty range before `start`. */
export interface LineRange {
  readonly start: number;
  readonly end: number;
}

/** One region where two sets of changes collide, in the three versions. */
export interface ConflictRegion {
  /** Lines of the version the editor read. */
  readonly base: LineRange;
  /** Lines of the file as it is now. */
  readonly current: LineRange;
  /** Lines of the editor's intended result. */
  readonly yours: LineRange;
  readonly currentLines: readonly string[];
  readonly yourLines: readonly string[];
}

/** The three conflict kinds (seed 000 §6). */
export type ConflictType = 'stale_buffer' | 'overlapping_edits' | 'patch_mismatch';

/** Why an edit was not applied as given. */
export interface EditConflict {
  readonly type: ConflictType;
  readonly path: string;
  /** Version the edit was based on (what the editor read). */
  readonly baseVersion: string | undefined;
  /** Version on disk now. */
  readonly currentVersion: string | undefined;
  /** Authors of the versions between base and current (who changed it since). */
  readonly changedBy: readonly string[];
  /** Colliding regions (overlapping edits). */
  readonly regions: readonly ConflictRegion[];
  /** Line ranges of the current file involved, 1-based inclusive. */
  readonly lines: readonly LineRange[];
  /** For a patch mismatch: every refused hunk with the closest candidate region. */
  readonly hunks: readonly HunkFailure[];
  /** Changes made since the base (unified diff base → current), when the base content is known. */
  readonly theirsDiff: string | undefined;
  /** The edit's own changes (base → yours). */
  readonly yoursDiff: string | undefined;
  /** The merge with git-style conflict markers — only when asked for (`markers: true`). */
  readonly markedText: string | undefined;
}

/** One file touched by an edit. */
export interface FileChange {
  readonly path: string;
  readonly op: string;
  /** Content hash after the change (`undefined`: deleted). */
  readonly version: string | undefined;
  readonly previousVersion: string | undefined;
  /** History position of the new version. */
  readonly seq: number | undefined;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  readonly merged: boolean;
}

/** Another agent whose last read of a file is older than what is there now. */
export interface StaleReader {
  readonly agent: string;
  readonly sessionId: string;
  readonly version: string;
}

/** Result of every edit operation. */
export interface EditResult {
  /** The change is on disk and recorded as a version (or there was nothing to change). */
  readonly success: boolean;
  /** What happened, or why not and what to do next. */
  readonly message: string;
  /** Stable code of a refusal (`ECONFLICT`, `ENOENT`, `EEXIST`, `EINVAL`, `EBINARY`, ...). */
  readonly code: FsErrorCode | undefined;
  readonly op: string;
  /** The (first) file of the edit. */
  readonly path: string;
  /** Content hash of the file now: the base version for the next edit. */
  readonly version: string | undefined;
  readonly previousVersion: string | undefined;
  /** History position of the new version of `path`. */
  readonly seq: number | undefined;
  /** Unified diff of the change (every file of a patch); `''` when refused or unchanged. */
  readonly diff: string;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** `linesAdded + linesRemoved`. */
  readonly linesChanged: number;
  /** Applied by merging with changes made since the editor's read. */
  readonly merged: boolean;
  /** Nothing changed: the new content equals the current one. */
  readonly unchanged: boolean;
  readonly conflict: EditConflict | undefined;
  /** The exact next call that would help, when refused. */
  readonly next: string | undefined;
  readonly files: readonly FileChange[];
  /** Agents who read an older version and will be refused (or merged) if they edit from it. */
  readonly staleReaders: readonly StaleReader[];
  /** A dry run (`EditOptions.dryRun`): `diff` is what the change would be; nothing was written, recorded or asked. */
  readonly dryRun?: boolean | undefined;
}

/**
 * Who changed a file, for a sentence: `external`, the history's word for a
 * change made outside ctxfs (an editor, git, a build), is said as such, not
 * as a name ("changed by external" read as one); empty when nobody is known.
 *
 * @example
 * ```ts
 * changedByText(['external', 'llm:b']); // 'someone outside ctxfs, llm:b'
 * ```
 */
export function changedByText(authors: readonly string[]): string {
  return [...new Set(authors.map((a) => (a === 'external' ? 'someone outside ctxfs' : a)))].join(', ');
}

/** A result that changed and refused nothing yet: what results built outside the editor start from. */
export function plainResult(op: string, path: string, success: boolean, message: string): EditResult {
  return {
    success,
    message,
    code: undefined,
    op,
    path,
    version: undefined,
    previousVersion: undefined,
    seq: undefined,
    diff: '',
    linesAdded: 0,
    linesRemoved: 0,
    linesChanged: 0,
    merged: false,
    unchanged: false,
    conflict: undefined,
    next: undefined,
    files: [],
    staleReaders: [],
  };
}

/** Builds a refusal. */
export function refusal(
  op: string,
  path: string,
  code: FsErrorCode,
  message: string,
  extra: { conflict?: EditConflict | undefined; next?: string | undefined; version?: string | undefined } = {},
): EditResult {
  return {
    ...plainResult(op, path, false, message),
    code,
    version: extra.version,
    previousVersion: extra.version,
    conflict: extra.conflict,
    next: extra.next,
  };
}

/**
 * `r` with every text that quotes a file — its message, diff and conflict —
 * passed through `mask` (`Redactor.masker` over the contents the call
 * touched), so what an edit serves is masked as a read is.
 */
export function maskedResult(r: EditResult, mask: (text: string) => string): EditResult {
  return { ...r, message: mask(r.message), diff: mask(r.diff), conflict: r.conflict && maskedConflict(r.conflict, mask) };
}

/** {@link maskedResult} of a conflict report: both sides' diffs, the colliding lines, the refused hunks' closest regions. */
export function maskedConflict(c: EditConflict, mask: (text: string) => string): EditConflict {
  const some = (text: string | undefined) => (text === undefined ? undefined : mask(text));
  return {
    ...c,
    regions: c.regions.map((r) => ({ ...r, currentLines: r.currentLines.map(mask), yourLines: r.yourLines.map(mask) })),
    hunks: c.hunks.map((h) => ({
      ...h,
      message: mask(h.message),
      closest: h.closest && { ...h.closest, lines: h.closest.lines.map((l) => ({ ...l, expected: mask(l.expected), actual: some(l.actual) })) },
    })),
    theirsDiff: some(c.theirsDiff),
    yoursDiff: some(c.yoursDiff),
    markedText: some(c.markedText),
  };
}

/** First 12 hex digits of a hash, for messages. */
export function shortHash(sha: string | undefined): string {
  return sha === undefined ? '(none)' : sha.slice(0, 12);
}

/** `"a.ts"` quoted as in a call (one helper for the read and the edit side). */
export { q } from '../retrieval/shared.ts';
