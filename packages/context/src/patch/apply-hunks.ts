/**
 * Tolerant, never reckless hunk application.
 *
 * Each hunk is located by its content (context and removed lines), not by its
 * line numbers: exactly first, then ignoring trailing whitespace, then
 * ignoring whitespace runs. A hunk that matches in one place is applied there;
 * one that matches in several is applied only where the header's line number
 * — corrected by the offset the unambiguous hunks revealed — points exactly;
 * otherwise it is refused as ambiguous. A hunk that matches nowhere is refused
 * with the closest region of the file and what differs. Either every hunk
 * applies or none does.
 *
 * @module
 */

import type { Hunk } from './parse-patch.ts';
import { fromDocument, hasFinalNewline, type TextDocument, toDocument } from './text-document.ts';

/** How strictly a hunk's lines were matched. */
export type MatchLevel = 'exact' | 'trailing-whitespace' | 'whitespace';

/** A hunk placed in the file. */
export interface LocatedHunk {
  readonly hunk: Hunk;
  /** 0-based first line of the old block in the original file. */
  readonly start: number;
  /** Number of original lines the hunk replaces. */
  readonly length: number;
  readonly level: MatchLevel;
  /** Lines between the header's position and where the hunk was found. */
  readonly offset: number | undefined;
}

/** One line of a closest-candidate comparison. */
export interface CandidateLine {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly expected: string;
  readonly actual: string | undefined;
  readonly same: boolean;
}

/** Why a hunk was refused, with what the caller needs to fix it in one step. */
export interface HunkFailure {
  readonly hunk: Hunk;
  readonly reason: 'not-found' | 'ambiguous' | 'overlap' | 'no-anchor';
  /** For `ambiguous`: every 1-based line where the hunk's old text matches. */
  readonly matches: readonly number[];
  /** The region of the file closest to the hunk's old text. */
  readonly closest: { readonly startLine: number; readonly matched: number; readonly total: number; readonly lines: readonly CandidateLine[] } | undefined;
  /** Human- and model-readable explanation with the next step. */
  readonly message: string;
}

/** Result of {@link applyHunks}. */
export type ApplyResult =
  | { readonly ok: true; readonly text: string; readonly located: readonly LocatedHunk[]; readonly linesAdded: number; readonly linesRemoved: number }
  | { readonly ok: false; readonly failures: readonly HunkFailure[]; readonly located: readonly LocatedHunk[] };

const LEVELS: ReadonlyArray<[MatchLevel, (s: string) => string]> = [
  ['exact', (s) => s],
  ['trailing-whitespace', (s) => s.trimEnd()],
  ['whitespace', (s) => s.replace(/\s+/g, ' ').trim()],
];

function oldBlock(hunk: Hunk): string[] {
  return hunk.lines.filter((l) => l.op !== '+').map((l) => l.text);
}

function findAll(doc: TextDocument, block: readonly string[], norm: (s: string) => string, cache: Map<(s: string) => string, string[]>): number[] {
  let file = cache.get(norm);
  if (file === undefined) {
    file = doc.lines.map(norm);
    cache.set(norm, file);
  }
  const want = block.map(norm);
  const out: number[] = [];
  const last = file.length - want.length;
  const first = want[0] as string;
  for (let s = 0; s <= last; s++) {
    if (file[s] !== first) continue;
    let ok = true;
    for (let i = 1; i < want.length; i++) {
      if (file[s + i] !== want[i]) {
        ok = false;
        break;
      }
    }
    if (ok) out.push(s);
  }
  return out;
}

function closestRegion(doc: TextDocument, block: readonly string[], hint: number | undefined): HunkFailure['closest'] {
  if (block.length === 0 || doc.lines.length === 0) return undefined;
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  const file = doc.lines.map(norm);
  const want = block.map(norm);
  let best = -1;
  let bestScore = -1;
  const lastStart = Math.max(0, file.length - want.length);
  for (let s = 0; s <= lastStart; s++) {
    let score = 0;
    for (let i = 0; i < want.length && s + i < file.length; i++) if (file[s + i] === want[i]) score++;
    const closer = hint !== undefined && Math.abs(s - hint) < Math.abs(best - hint);
    if (score > bestScore || (score === bestScore && closer)) {
      best = s;
      bestScore = score;
    }
  }
  if (bestScore <= 0) return undefined;
  const lines: CandidateLine[] = block.map((expected, i) => {
    const actual = doc.lines[best + i];
    return { line: best + i + 1, expected, actual, same: actual !== undefined && norm(actual) === norm(expected) };
  });
  return { startLine: best + 1, matched: bestScore, total: block.length, lines };
}

function describeClosest(closest: HunkFailure['closest']): string {
  if (closest === undefined) return 'No region of the file resembles it.';
  const out = [`Closest region: lines ${closest.startLine}-${closest.startLine + closest.total - 1} (${closest.matched} of ${closest.total} lines match):`];
  for (const l of closest.lines) {
    if (l.same) out.push(`  ${l.line}\t  ${l.actual}`);
    else {
      out.push(`  ${l.line}\t! expected: ${JSON.stringify(l.expected)}`);
      out.push(`  \t  actual:   ${l.actual === undefined ? '(end of file)' : JSON.stringify(l.actual)}`);
    }
  }
  return out.join('\n');
}

function hunkLabel(h: Hunk): string {
  return `hunk #${h.index} (${h.header.trim()})`;
}

/**
 * Locates and applies `hunks` to `original`, all or nothing.
 *
 * @example
 * ```ts
 * const [file] = parsePatch('@@ @@\n a\n-b\n+B\n');
 * const result = applyHunks('a\nb\nc\n', file.hunks);
 * if (result.ok) result.text; // 'a\nB\nc\n'
 * ```
 */
export function applyHunks(original: string, hunks: readonly Hunk[]): ApplyResult {
  const doc = toDocument(original);
  const cache = new Map<(s: string) => string, string[]>();
  const located: LocatedHunk[] = [];
  const pending: Array<{ hunk: Hunk; candidates: number[]; level: MatchLevel }> = [];
  const failures: HunkFailure[] = [];

  for (const hunk of hunks) {
    const block = oldBlock(hunk);
    const hint = hunk.oldStart === undefined ? undefined : Math.max(0, hunk.oldStart - 1);
    if (block.length === 0) {
      // Pure insertion: only a header number (or an empty file) can place it.
      if (doc.lines.length === 0) located.push({ hunk, start: 0, length: 0, level: 'exact', offset: 0 });
      else if (hunk.oldStart !== undefined) {
        // `@@ -5,0 +6,2 @@` inserts after line 5.
        const at = Math.min(hunk.oldStart, doc.lines.length);
        located.push({ hunk, start: at, length: 0, level: 'exact', offset: 0 });
      } else {
        failures.push({
          hunk,
          reason: 'no-anchor',
          matches: [],
          closest: undefined,
          message: `${hunkLabel(hunk)} only adds lines and has neither context nor a line number, so there is no way to know where it goes. Add a few unchanged lines around the insertion as context.`,
        });
      }
      continue;
    }
    let found = false;
    for (const [level, norm] of LEVELS) {
      const candidates = findAll(doc, block, norm, cache);
      if (candidates.length === 0) continue;
      found = true;
      if (candidates.length === 1) {
        const start = candidates[0] as number;
        located.push({ hunk, start, length: block.length, level, offset: hint === undefined ? undefined : start - hint });
      } else pending.push({ hunk, candidates, level });
      break;
    }
    if (!found) {
      const closest = closestRegion(doc, block, hint);
      failures.push({
        hunk,
        reason: 'not-found',
        matches: [],
        closest,
        message: `${hunkLabel(hunk)} does not match the file: its context and removed lines were not found.\n${describeClosest(closest)}\nRe-read that region and regenerate the hunk from the current text.`,
      });
    }
  }

  // Ambiguous hunks: accept only the candidate the header points at exactly,
  // after correcting the header by the offset of the nearest placed hunk.
  for (const { hunk, candidates, level } of pending) {
    const hint = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1;
    let choice: number | undefined;
    if (hint !== undefined) {
      let offset = 0;
      let distance = Number.POSITIVE_INFINITY;
      for (const l of located) {
        if (l.offset === undefined || l.hunk.oldStart === undefined) continue;
        const d = Math.abs(l.hunk.oldStart - 1 - hint);
        if (d < distance) {
          distance = d;
          offset = l.offset;
        }
      }
      const expected = hint + offset;
      if (candidates.includes(expected)) choice = expected;
    }
    if (choice !== undefined) {
      located.push({ hunk, start: choice, length: oldBlock(hunk).length, level, offset: hint === undefined ? undefined : choice - hint });
      continue;
    }
    const where = candidates.map((c) => c + 1);
    failures.push({
      hunk,
      reason: 'ambiguous',
      matches: where,
      closest: undefined,
      message: `${hunkLabel(hunk)} matches the file in ${where.length} places (lines ${where.join(', ')}) and nothing tells which one is meant. Add more unchanged context lines that make it unique, or give the correct line number in the @@ header.`,
    });
  }

  located.sort((a, b) => a.start - b.start || a.hunk.index - b.hunk.index);
  for (let k = 1; k < located.length; k++) {
    const prev = located[k - 1] as LocatedHunk;
    const cur = located[k] as LocatedHunk;
    if (cur.start < prev.start + prev.length || (cur.start === prev.start && cur.length === 0 && prev.length === 0)) {
      failures.push({
        hunk: cur.hunk,
        reason: 'overlap',
        matches: [cur.start + 1],
        closest: undefined,
        message: `${hunkLabel(cur.hunk)} overlaps ${hunkLabel(prev.hunk)} (both change lines around ${cur.start + 1}). Merge them into one hunk.`,
      });
    }
  }

  if (failures.length > 0) {
    failures.sort((a, b) => a.hunk.index - b.hunk.index);
    return { ok: false, failures, located };
  }
  return { ...splice(doc, located), ok: true, located };
}

function splice(doc: TextDocument, located: readonly LocatedHunk[]): { text: string; linesAdded: number; linesRemoved: number } {
  const lines: string[] = [];
  const eols: string[] = [];
  let at = 0;
  let added = 0;
  let removed = 0;
  let finalNewline = hasFinalNewline(doc);
  for (const l of located) {
    for (; at < l.start; at++) {
      lines.push(doc.lines[at] as string);
      eols.push(doc.eols[at] as string);
    }
    let cursor = l.start;
    for (const pl of l.hunk.lines) {
      if (pl.op === '+') {
        lines.push(pl.text);
        eols.push(doc.eol);
        added++;
      } else {
        if (pl.op === ' ') {
          // Context keeps the file's own text and ending, even when matched loosely.
          lines.push(doc.lines[cursor] as string);
          eols.push(doc.eols[cursor] as string);
        } else removed++;
        cursor++;
      }
    }
    at = l.start + l.length;
    if (at >= doc.lines.length) {
      if (l.hunk.newNoNewline) finalNewline = false;
      else if (l.hunk.oldNoNewline) finalNewline = true;
    }
  }
  for (; at < doc.lines.length; at++) {
    lines.push(doc.lines[at] as string);
    eols.push(doc.eols[at] as string);
  }
  // Every line but the last ends with a terminator; the last one as decided.
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === '') eols[i] = doc.eol;
  if (eols.length > 0) {
    const lastIndex = eols.length - 1;
    eols[lastIndex] = finalNewline ? eols[lastIndex] || doc.eol : '';
  }
  return { text: fromDocument({ lines, eols, eol: doc.eol }), linesAdded: added, linesRemoved: removed };
}
