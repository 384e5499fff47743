/**
 * What happens when an edit was prepared against an older version of the
 * file: `auto_merge` merges three ways (base = what the editor read, theirs =
 * the file now, yours = the edit applied to the base) and applies a clean
 * merge, `refuse` never merges, and `user_approval` / `review` hand base,
 * both sides and the diffs to a callback — an orchestrator asking a person or
 * a review model — and apply what it returns.
 *
 * @module
 */

import type { ConflictRegion } from '../edits/edit-result.ts';
import { formatUnifiedDiff } from '../history/unified-diff.ts';
import { type MergeConflict, merge3 } from '../merge/merge3.ts';
import { conflictRegions } from './conflict-detector.ts';

/** How stale edits are resolved. */
export type ConflictStrategy = 'auto_merge' | 'refuse' | 'user_approval' | 'review';

/** Everything a person or a reviewer needs to decide a stale edit. */
export interface MergeRequest {
  readonly path: string;
  /** Agent whose edit is stale. */
  readonly agent: string;
  readonly baseVersion: string;
  readonly currentVersion: string;
  /** Who changed the file since the agent read it. */
  readonly changedBy: readonly string[];
  /** What the agent read. */
  readonly base: string;
  /** The file now. */
  readonly theirs: string;
  /** The agent's edit applied to what it read. */
  readonly ours: string;
  /** base → theirs. */
  readonly theirsDiff: string;
  /** base → ours. */
  readonly oursDiff: string;
  /** The clean three-way merge, when there is one. */
  readonly merged: string | undefined;
  /** Colliding regions when the merge is not clean. */
  readonly regions: readonly ConflictRegion[];
  /** The merge with conflict markers (always supplied to callbacks). */
  readonly markedText: string;
}

/** A `user_approval` answer: `true` accepts the clean merge, `false` refuses, or pick a side / supply content. */
export type ApprovalDecision = boolean | { readonly use: 'merged' | 'ours' | 'theirs' } | { readonly content: string };

/** Callbacks and defaults for stale edits. */
export interface ConflictOptions {
  /** Default `auto_merge`. */
  strategy?: ConflictStrategy;
  /** Called for `user_approval`. */
  approve?: (request: MergeRequest) => ApprovalDecision | Promise<ApprovalDecision>;
  /** Called for `review`: the merged content to write, or `undefined` to refuse. */
  review?: (request: MergeRequest) => string | undefined | Promise<string | undefined>;
  /** Include the merge with conflict markers in conflict reports. Default `false`. */
  markers?: boolean;
}

/** Outcome of {@link resolveStale}. */
export type Resolution =
  | { readonly ok: true; readonly text: string; readonly how: 'merged' | 'ours' | 'theirs' | 'reviewed' | 'approved' }
  | {
      readonly ok: false;
      readonly why: 'conflict' | 'refused' | 'declined' | 'no-callback';
      readonly conflicts: readonly MergeConflict[];
      readonly markedText: string;
      readonly message: string;
    };

/**
 * Resolves a stale edit with the chosen strategy.
 *
 * @example
 * ```ts
 * const r = await resolveStale({ path: 'a.txt', agent: 'llm:a', baseVersion, currentVersion, changedBy: ['llm:b'],
 *   base: 'a\nb\nc\n', theirs: 'A\nb\nc\n', ours: 'a\nb\nC\n' }, { strategy: 'auto_merge' });
 * r.ok && r.text; // 'A\nb\nC\n'
 * ```
 */
export async function resolveStale(
  input: {
    path: string;
    agent: string;
    baseVersion: string;
    currentVersion: string;
    changedBy: readonly string[];
    base: string;
    theirs: string;
    ours: string;
  },
  options: ConflictOptions,
): Promise<Resolution> {
  const strategy = options.strategy ?? 'auto_merge';
  const merge = merge3(input.base, input.ours, input.theirs);
  const marked = merge.clean
    ? (merge.text as string)
    : (merge3(input.base, input.ours, input.theirs, { markers: true, labels: { ours: 'yours', theirs: 'current' } }).text as string);
  if (strategy === 'refuse') {
    return { ok: false, why: 'refused', conflicts: merge.conflicts, markedText: marked, message: 'the conflict strategy is refuse' };
  }
  if (strategy === 'auto_merge') {
    if (merge.clean) return { ok: true, text: merge.text as string, how: 'merged' };
    return { ok: false, why: 'conflict', conflicts: merge.conflicts, markedText: marked, message: 'the changes overlap' };
  }
  const request: MergeRequest = {
    ...input,
    theirsDiff: formatUnifiedDiff(input.base, input.theirs, { oldLabel: 'read', newLabel: 'current' }).text,
    oursDiff: formatUnifiedDiff(input.base, input.ours, { oldLabel: 'read', newLabel: 'yours' }).text,
    merged: merge.clean ? merge.text : undefined,
    regions: conflictRegions(merge.conflicts),
    markedText: marked,
  };
  if (strategy === 'review') {
    if (!options.review) {
      return { ok: false, why: 'no-callback', conflicts: merge.conflicts, markedText: marked, message: "strategy 'review' needs a review callback" };
    }
    const text = await options.review(request);
    if (typeof text === 'string') return { ok: true, text, how: 'reviewed' };
    return { ok: false, why: 'declined', conflicts: merge.conflicts, markedText: marked, message: 'the reviewer declined to merge' };
  }
  if (!options.approve) {
    return { ok: false, why: 'no-callback', conflicts: merge.conflicts, markedText: marked, message: "strategy 'user_approval' needs an approve callback" };
  }
  const decision = await options.approve(request);
  if (decision === false) return { ok: false, why: 'declined', conflicts: merge.conflicts, markedText: marked, message: 'the merge was not approved' };
  if (decision === true || (typeof decision === 'object' && 'use' in decision && decision.use === 'merged')) {
    if (merge.clean) return { ok: true, text: merge.text as string, how: 'approved' };
    return {
      ok: false,
      why: 'declined',
      conflicts: merge.conflicts,
      markedText: marked,
      message: 'the merge was approved but the changes overlap, so there is no clean merge to apply',
    };
  }
  if ('content' in decision) return { ok: true, text: decision.content, how: 'approved' };
  return decision.use === 'ours' ? { ok: true, text: input.ours, how: 'ours' } : { ok: true, text: input.theirs, how: 'theirs' };
}
