/**
 * Unified diffs of two texts, as `diff -u` / `git diff` print them, on top
 * of the Myers line diff. Lines are compared with their terminators, so a
 * CRLF→LF change or a dropped final newline shows up (the latter with git's
 * `\ No newline at end of file`).
 *
 * @module
 */

import { diffLines } from '../merge/line-diff.ts';
import { toDocument } from '../patch/text-document.ts';

/** Options of {@link formatUnifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Label of the old side (`--- a/path`); default `a`. */
  oldLabel?: string;
  /** Label of the new side (`+++ b/path`); default `b`. */
  newLabel?: string;
  /** Unchanged lines around each change; default 3. */
  context?: number;
}

/** A diff with its line counts. */
export interface UnifiedDiff {
  /** The diff text; `''` when the texts are equal. */
  readonly text: string;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** Changed regions as 1-based inclusive line ranges of the new text (`end < start` for a pure deletion at `start`). */
  readonly ranges: ReadonlyArray<{ readonly oldStart: number; readonly oldEnd: number; readonly newStart: number; readonly newEnd: number }>;
}

const NO_NEWLINE = '\\ No newline at end of file';

function range(start: number, count: number): string {
  // diff -u: an empty side is reported at the line before it.
  const s = count === 0 ? start : start + 1;
  return count === 1 ? `${s}` : `${s},${count}`;
}

/**
 * Diffs `oldText` → `newText`.
 *
 * @example
 * ```ts
 * formatUnifiedDiff('a\nb\n', 'a\nB\n', { oldLabel: 'a/x.txt', newLabel: 'b/x.txt' }).text;
 * // --- a/x.txt
 * // +++ b/x.txt
 * // @@ -1,2 +1,2 @@
 * //  a
 * // -b
 * // +B
 * ```
 */
export function formatUnifiedDiff(oldText: string, newText: string, options: UnifiedDiffOptions = {}): UnifiedDiff {
  const context = Math.max(0, options.context ?? 3);
  const a = toDocument(oldText);
  const b = toDocument(newText);
  // Only the middle between the common prefix and suffix needs the Myers diff, and only its lines need their
  // terminators joined on (an edit of one line in a long file compares the rest without building strings).
  const same = (i: number, j: number): boolean => a.lines[i] === b.lines[j] && a.eols[i] === b.eols[j];
  const aCount = a.lines.length;
  const bCount = b.lines.length;
  let pre = 0;
  const max = Math.min(aCount, bCount);
  while (pre < max && same(pre, pre)) pre++;
  let suf = 0;
  while (suf < max - pre && same(aCount - 1 - suf, bCount - 1 - suf)) suf++;
  const full = (doc: typeof a, from: number, to: number): string[] => doc.lines.slice(from, to).map((l, i) => l + doc.eols[from + i]);
  const hunks = diffLines(full(a, pre, aCount - suf), full(b, pre, bCount - suf)).map((h) => ({
    aStart: h.aStart + pre,
    aLength: h.aLength,
    bStart: h.bStart + pre,
    bLength: h.bLength,
  }));
  if (hunks.length === 0) return { text: '', linesAdded: 0, linesRemoved: 0, ranges: [] };
  // Lines keep their own terminators (a CRLF file's diff carries its CRs, as git's does).
  const out: string[] = [`--- ${options.oldLabel ?? 'a'}\n`, `+++ ${options.newLabel ?? 'b'}\n`];
  let added = 0;
  let removed = 0;
  const emit = (prefix: string, doc: typeof a, i: number) => {
    const eol = doc.eols[i] as string;
    out.push(prefix + (doc.lines[i] as string) + (eol === '' ? `\n${NO_NEWLINE}\n` : eol));
  };
  let k = 0;
  while (k < hunks.length) {
    // Group changes whose context would touch or overlap.
    let end = k;
    while (end + 1 < hunks.length) {
      const cur = hunks[end] as (typeof hunks)[number];
      const next = hunks[end + 1] as (typeof hunks)[number];
      if (next.aStart - (cur.aStart + cur.aLength) > 2 * context) break;
      end++;
    }
    const first = hunks[k] as (typeof hunks)[number];
    const last = hunks[end] as (typeof hunks)[number];
    const aFrom = Math.max(0, first.aStart - context);
    const aTo = Math.min(a.lines.length, last.aStart + last.aLength + context);
    const bFrom = first.bStart - (first.aStart - aFrom);
    const bTo = last.bStart + last.bLength + (aTo - (last.aStart + last.aLength));
    out.push(`@@ -${range(aFrom, aTo - aFrom)} +${range(bFrom, bTo - bFrom)} @@\n`);
    let ai = aFrom;
    let bi = bFrom;
    for (let h = k; h <= end; h++) {
      const hunk = hunks[h] as (typeof hunks)[number];
      for (; ai < hunk.aStart; ai++, bi++) emit(' ', a, ai);
      for (let i = 0; i < hunk.aLength; i++, ai++) {
        emit('-', a, ai);
        removed++;
      }
      for (let i = 0; i < hunk.bLength; i++, bi++) {
        emit('+', b, bi);
        added++;
      }
    }
    for (; ai < aTo; ai++, bi++) emit(' ', a, ai);
    k = end + 1;
  }
  const ranges = hunks.map((h) => ({ oldStart: h.aStart + 1, oldEnd: h.aStart + h.aLength, newStart: h.bStart + 1, newEnd: h.bStart + h.bLength }));
  return { text: out.join(''), linesAdded: added, linesRemoved: removed, ranges };
}
