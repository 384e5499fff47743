/**
 * Merging a buffer with the disk when both changed since they were last in
 * step. The line merge (`merge3`, git's rules) goes first; where it finds
 * overlapping lines, the same three texts are merged again by character
 * (two people typing on one line at different columns do not collide), and
 * only text both sides changed at the same characters is a collision. The
 * choice and its figures are in bench/src/suites/buffers.ts.
 *
 * @module
 */

import { diffWordsWithSpace } from 'diff';
import { merge3 } from '../merge/merge3.ts';
import type { CollisionRule } from './sync-permission.ts';

/** One change of one side, in base coordinates (UTF-16, end exclusive). */
interface Change {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** Whole lines of the base where both sides changed the same text. */
export interface Collision {
  /** Where, in the base text (UTF-16 indices, end exclusive, at line starts). */
  readonly start: number;
  readonly end: number;
  readonly base: string;
  /** Those lines as the buffer has them. */
  readonly buffer: string;
  /** Those lines as the disk has them. */
  readonly disk: string;
}

/** Result of {@link mergeSides}. */
export interface SidesMerge {
  /** The merged text; with collisions, each resolved by the rule (`ask`: the buffer's text is kept, nothing merged). */
  readonly text: string;
  readonly collisions: readonly Collision[];
  /** `line`: merge3 was clean; `word`: the word merge was needed; `whole`: too large to merge by word, a side taken whole. */
  readonly level: 'line' | 'word' | 'whole';
}

/** Beyond this many milliseconds, a word diff gives up (a formatter rewrote a large file). */
const WORD_DIFF_TIMEOUT_MS = 200;

function changes(base: string, side: string): Change[] | undefined {
  const parts = diffWordsWithSpace(base, side, { timeout: WORD_DIFF_TIMEOUT_MS });
  if (parts === undefined) return undefined;
  const out: Change[] = [];
  let at = 0;
  let open: { start: number; end: number; text: string } | undefined;
  for (const p of parts) {
    if (!p.added && !p.removed) {
      if (open) out.push(open);
      open = undefined;
      at += p.value.length;
      continue;
    }
    open ??= { start: at, end: at, text: '' };
    if (p.removed) {
      at += p.value.length;
      open.end = at;
    } else open.text += p.value;
  }
  if (open) out.push(open);
  return out;
}

/** Two changes collide when their base ranges overlap, or both insert at one point, or one inserts inside the other's range. */
function collide(a: Change, b: Change): boolean {
  if (a.start === b.start && a.end === b.end && a.text === b.text) return false;
  if (a.start === a.end && b.start === b.end) return a.start === b.start;
  if (a.start === a.end) return a.start > b.start && a.start < b.end;
  if (b.start === b.end) return b.start > a.start && b.start < a.end;
  return a.start < b.end && b.start < a.end;
}

/** `base` with `list` (sorted, not overlapping) applied between `from` and `to`. */
function applyChanges(base: string, list: readonly Change[], from = 0, to = base.length): string {
  let out = '';
  let at = from;
  let last: Change | undefined;
  for (const c of list) {
    if (last && last.start === c.start && last.end === c.end && last.text === c.text) continue;
    out += base.slice(at, c.start) + c.text;
    at = c.end;
    last = c;
  }
  return out + base.slice(at, to);
}

function byPosition(a: Change, b: Change): number {
  // Same start: an insertion before a replacement that begins there.
  return a.start - b.start || a.end - a.start - (b.end - b.start);
}

function lineStart(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl < 0 ? text.length : nl + 1;
}

function inside(c: Change, r: { start: number; end: number }): boolean {
  return c.start === c.end ? c.start >= r.start && c.start < r.end : c.start < r.end && c.end > r.start;
}

/**
 * The base lines around colliding changes, grown until no change of either
 * side straddles their edge: within them one side's text is taken whole, so
 * a collision never leaves half of each side's words interleaved.
 */
function collisionRegions(base: string, pairs: ReadonlyArray<readonly [Change, Change]>, all: readonly Change[]): Array<{ start: number; end: number }> {
  const regions = pairs
    .map(([a, b]) => ({ start: lineStart(base, Math.min(a.start, b.start)), end: lineEnd(base, Math.max(a.end, b.end, Math.min(a.start, b.start) + 1) - 1) }))
    .sort((a, b) => a.start - b.start);
  let grown = true;
  while (grown) {
    grown = false;
    for (const r of regions) {
      for (const c of all) {
        if (!inside(c, r) || (c.start >= r.start && c.end <= r.end)) continue;
        r.start = Math.min(r.start, lineStart(base, c.start));
        r.end = Math.max(r.end, lineEnd(base, Math.max(c.end - 1, c.start)));
        grown = true;
      }
    }
    regions.sort((a, b) => a.start - b.start);
    for (let i = regions.length - 1; i > 0; i--) {
      const prev = regions[i - 1] as { start: number; end: number };
      const cur = regions[i] as { start: number; end: number };
      if (cur.start < prev.end) {
        prev.end = Math.max(prev.end, cur.end);
        regions.splice(i, 1);
        grown = true;
      }
    }
  }
  return regions;
}

/**
 * Merges `buffer` and `disk`, both derived from `base`; `rule` settles the
 * collisions (`ask`: none is settled and the buffer's text is returned).
 *
 * @example
 * ```ts
 * mergeSides('let a = 1;\n', 'let ab = 1;\n', 'let a = 2;\n', 'ask'); // { text: 'let ab = 2;\n', collisions: [], level: 'word' }
 * ```
 */
export function mergeSides(base: string, buffer: string, disk: string, rule: CollisionRule): SidesMerge {
  const lines = merge3(base, buffer, disk);
  if (lines.clean) return { text: lines.text as string, collisions: [], level: 'line' };
  const mine = changes(base, buffer);
  const theirs = mine && changes(base, disk);
  if (mine === undefined || theirs === undefined) {
    const collision: Collision = { start: 0, end: base.length, base, buffer, disk };
    return { text: rule === 'disk' ? disk : buffer, collisions: [collision], level: 'whole' };
  }
  const pairs: Array<readonly [Change, Change]> = [];
  let j = 0;
  for (const m of mine) {
    while (j < theirs.length && (theirs[j] as Change).end < m.start) j++;
    for (let k = j; k < theirs.length && (theirs[k] as Change).start <= m.end; k++) {
      const t = theirs[k] as Change;
      if (collide(m, t)) pairs.push([m, t]);
    }
  }
  const all = [...mine, ...theirs].sort(byPosition);
  if (pairs.length === 0) return { text: applyChanges(base, all), collisions: [], level: 'word' };
  const regions = collisionRegions(base, pairs, all);
  const collisions = regions.map((r) => ({
    start: r.start,
    end: r.end,
    base: base.slice(r.start, r.end),
    buffer: applyChanges(
      base,
      mine.filter((c) => inside(c, r)),
      r.start,
      r.end,
    ),
    disk: applyChanges(
      base,
      theirs.filter((c) => inside(c, r)),
      r.start,
      r.end,
    ),
  }));
  if (rule === 'ask') return { text: buffer, collisions, level: 'word' };
  const outside = all.filter((c) => !regions.some((r) => inside(c, r)));
  const settled = collisions.map((c) => ({ start: c.start, end: c.end, text: rule === 'disk' ? c.disk : c.buffer }));
  return { text: applyChanges(base, [...outside, ...settled].sort(byPosition)), collisions, level: 'word' };
}
