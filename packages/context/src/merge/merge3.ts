/**
 * Three-way merge of line texts with git's rules (`git merge-file`, zealous
 * level): changes from each side against the base are combined; changes that
 * overlap or touch (no unchanged base line between them) conflict unless both
 * sides made exactly the same change; a conflict whose two sides turn out
 * identical is resolved; otherwise it is narrowed to the lines that really
 * differ, and conflicts only a few (or only letterless) lines apart are
 * joined. A clean merge is the text git would write, and so are the conflict
 * markers.
 *
 * @module
 */

import { toDocument } from '../patch/text-document.ts';
import { type DiffHunk, diffLines } from './line-diff.ts';

/** A region in each of the three versions (0-based line indices, end exclusive). */
export interface MergeConflict {
  readonly base: { readonly start: number; readonly end: number };
  readonly ours: { readonly start: number; readonly end: number };
  readonly theirs: { readonly start: number; readonly end: number };
  readonly baseLines: readonly string[];
  readonly oursLines: readonly string[];
  readonly theirsLines: readonly string[];
}

/** Options of {@link merge3}. */
export interface Merge3Options {
  /** Write conflict markers into `text` for conflicts (default false: `text` is undefined when conflicted). */
  markers?: boolean;
  /** Labels after the markers. */
  labels?: { ours?: string; base?: string; theirs?: string };
}

/** Result of {@link merge3}. */
export interface Merge3Result {
  readonly clean: boolean;
  /** The merged text when clean, or the text with markers when asked for. */
  readonly text: string | undefined;
  readonly conflicts: readonly MergeConflict[];
}

/** mode: 0 conflict, 1 ours only, 2 theirs only, 4 both sides identical. */
interface Region {
  mode: 0 | 1 | 2 | 4;
  i0: number;
  chg0: number;
  i1: number;
  chg1: number;
  i2: number;
  chg2: number;
}

function append(list: Region[], mode: 0 | 1 | 2, i0: number, chg0: number, i1: number, chg1: number, i2: number, chg2: number): void {
  const m = list[list.length - 1];
  if (m && (i1 <= m.i1 + m.chg1 || i2 <= m.i2 + m.chg2)) {
    if (mode !== m.mode) m.mode = 0;
    m.chg0 = i0 + chg0 - m.i0;
    m.chg1 = i1 + chg1 - m.i1;
    m.chg2 = i2 + chg2 - m.i2;
  } else list.push({ mode, i0, chg0, i1, chg1, i2, chg2 });
}

function sameLines(a: readonly string[], aStart: number, b: readonly string[], bStart: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (a[aStart + k] !== b[bStart + k]) return false;
  return true;
}

function splitLines(text: string): { lines: string[]; eols: string[] } {
  const doc = toDocument(text);
  return { lines: doc.lines.map((l, i) => l + (doc.eols[i] ?? '')), eols: doc.eols };
}

/**
 * Merges `ours` and `theirs`, both derived from `base`.
 *
 * @example
 * ```ts
 * merge3('a\nb\nc\n', 'A\nb\nc\n', 'a\nb\nC\n'); // { clean: true, text: 'A\nb\nC\n', conflicts: [] }
 * ```
 */
export function merge3(base: string, ours: string, theirs: string, options: Merge3Options = {}): Merge3Result {
  // Lines keep their terminators so a missing final newline is a difference, as in git.
  const b = splitLines(base).lines;
  const o = splitLines(ours).lines;
  const t = splitLines(theirs).lines;
  const x1 = diffLines(b, o);
  const x2 = diffLines(b, t);
  const regions: Region[] = [];
  let p = 0;
  let q = 0;
  while (p < x1.length && q < x2.length) {
    const c1 = x1[p] as DiffHunk;
    const c2 = x2[q] as DiffHunk;
    if (c1.aStart + c1.aLength < c2.aStart) {
      append(regions, 1, c1.aStart, c1.aLength, c1.bStart, c1.bLength, c2.bStart - c2.aStart + c1.aStart, c1.aLength);
      p++;
      continue;
    }
    if (c2.aStart + c2.aLength < c1.aStart) {
      append(regions, 2, c2.aStart, c2.aLength, c1.bStart - c1.aStart + c2.aStart, c2.aLength, c2.bStart, c2.bLength);
      q++;
      continue;
    }
    const identical = c1.aStart === c2.aStart && c1.aLength === c2.aLength && c1.bLength === c2.bLength && sameLines(o, c1.bStart, t, c2.bStart, c1.bLength);
    if (!identical) {
      const off = c1.aStart - c2.aStart;
      const ffo = off + c1.aLength - c2.aLength;
      let i0 = c1.aStart;
      let i1 = c1.bStart;
      let i2 = c2.bStart;
      if (off > 0) {
        i0 -= off;
        i1 -= off;
      } else i2 += off;
      let chg0 = c1.aStart + c1.aLength - i0;
      let chg1 = c1.bStart + c1.bLength - i1;
      let chg2 = c2.bStart + c2.bLength - i2;
      if (ffo < 0) {
        chg0 -= ffo;
        chg1 -= ffo;
      } else chg2 += ffo;
      append(regions, 0, i0, chg0, i1, chg1, i2, chg2);
    }
    const e1 = c1.aStart + c1.aLength;
    const e2 = c2.aStart + c2.aLength;
    if (e1 >= e2) q++;
    if (e2 >= e1) p++;
  }
  for (; p < x1.length; p++) {
    const c1 = x1[p] as DiffHunk;
    // Every change of theirs lies before: their lines are shifted by the length difference.
    append(regions, 1, c1.aStart, c1.aLength, c1.bStart, c1.bLength, c1.aStart + t.length - b.length, c1.aLength);
  }
  for (; q < x2.length; q++) {
    const c2 = x2[q] as DiffHunk;
    append(regions, 2, c2.aStart, c2.aLength, c2.aStart + o.length - b.length, c2.aLength, c2.bStart, c2.bLength);
  }
  const refined = simplify(refine(regions, o, t), o);

  const conflicts: MergeConflict[] = [];
  const out: string[] = [];
  let at = 0; // position in ours
  for (const r of refined) {
    for (; at < r.i1; at++) out.push(o[at] as string);
    if (r.mode === 2) out.push(...t.slice(r.i2, r.i2 + r.chg2));
    else if (r.mode === 1 || r.mode === 4) out.push(...o.slice(r.i1, r.i1 + r.chg1));
    else {
      const conflict: MergeConflict = {
        base: { start: r.i0, end: r.i0 + r.chg0 },
        ours: { start: r.i1, end: r.i1 + r.chg1 },
        theirs: { start: r.i2, end: r.i2 + r.chg2 },
        baseLines: b.slice(r.i0, r.i0 + r.chg0),
        oursLines: o.slice(r.i1, r.i1 + r.chg1),
        theirsLines: t.slice(r.i2, r.i2 + r.chg2),
      };
      conflicts.push(conflict);
      if (options.markers) {
        // Markers (and a newline added to a side's last line) follow the file's line endings, as git's do.
        const eol = crlfNeeded(b, o, t, r) ? '\r\n' : '\n';
        const ensureEol = (l: string) => (l.endsWith('\n') ? l : l + eol);
        const labels = options.labels ?? {};
        out.push(`<<<<<<< ${labels.ours ?? 'ours'}${eol}`);
        out.push(...conflict.oursLines.map((l, k, all) => (k === all.length - 1 ? ensureEol(l) : l)));
        out.push(`=======${eol}`);
        out.push(...conflict.theirsLines.map((l, k, all) => (k === all.length - 1 ? ensureEol(l) : l)));
        out.push(`>>>>>>> ${labels.theirs ?? 'theirs'}${eol}`);
      }
    }
    at = r.i1 + r.chg1;
  }
  for (; at < o.length; at++) out.push(o[at] as string);
  const clean = conflicts.length === 0;
  return { clean, text: clean || options.markers ? out.join('') : undefined, conflicts };
}

/**
 * git's zealous refinement: a conflict whose sides are identical is resolved;
 * otherwise it is narrowed to (possibly several) regions where they differ.
 */
function refine(regions: readonly Region[], o: readonly string[], t: readonly string[]): Region[] {
  const out: Region[] = [];
  for (const r of regions) {
    if (r.mode !== 0 || r.chg1 === 0 || r.chg2 === 0) {
      out.push(r);
      continue;
    }
    const diff = diffLines(o.slice(r.i1, r.i1 + r.chg1), t.slice(r.i2, r.i2 + r.chg2));
    if (diff.length === 0) {
      out.push({ ...r, mode: 4 });
      continue;
    }
    for (const d of diff) {
      // Base lines of a narrowed conflict are not meaningful; keep the whole base range on the first piece.
      out.push({ mode: 0, i0: r.i0, chg0: d === diff[0] ? r.chg0 : 0, i1: r.i1 + d.aStart, chg1: d.aLength, i2: r.i2 + d.bStart, chg2: d.bLength });
    }
  }
  return out;
}

/**
 * git's last merge step (`XDL_MERGE_ZEALOUS_ALNUM`): two conflicts separated
 * by at most three lines of ours, or by lines with no letter or digit (braces,
 * blank lines), become one conflict, which reads more easily than a run of
 * small ones. It never changes whether the merge is clean.
 */
function simplify(regions: Region[], o: readonly string[]): Region[] {
  const out: Region[] = [];
  for (const r of regions) {
    const m = out[out.length - 1];
    if (m && m.mode === 0 && r.mode === 0) {
      const begin = m.i1 + m.chg1;
      const end = r.i1;
      if (end - begin <= 3 || !o.slice(begin, end).some((l) => /[A-Za-z0-9]/.test(l))) {
        out[out.length - 1] = {
          ...m,
          chg0: Math.max(m.i0 + m.chg0, r.i0 + r.chg0) - m.i0,
          chg1: r.i1 + r.chg1 - m.i1,
          chg2: r.i2 + r.chg2 - m.i2,
        };
        continue;
      }
    }
    out.push(r);
  }
  return out;
}

/**
 * How git tells a line's ending (`is_eol_crlf`): 1 for CRLF, 0 for LF, -1
 * when it cannot tell (empty file, or a single line without a newline). A
 * last line without a newline takes the ending of the line before it.
 */
function eolIsCrlf(lines: readonly string[], i: number): -1 | 0 | 1 {
  const crlf = (l: string) => (l.endsWith('\r\n') ? 1 : 0);
  if (i < lines.length - 1) return crlf(lines[i] as string);
  if (lines.length === 0) return -1;
  if ((lines[i] as string).endsWith('\n')) return crlf(lines[i] as string);
  if (i === 0) return -1;
  return crlf(lines[i - 1] as string);
}

/** git's `is_cr_needed`: CRLF markers only when ours, theirs and the base all say CRLF (or cannot tell). */
function crlfNeeded(b: readonly string[], o: readonly string[], t: readonly string[], r: Region): boolean {
  let needs = eolIsCrlf(o, r.i1 > 0 ? r.i1 - 1 : 0);
  if (needs !== 0) needs = eolIsCrlf(t, r.i2 > 0 ? r.i2 - 1 : 0);
  if (needs !== 0) needs = eolIsCrlf(b, 0);
  return needs === 1;
}
