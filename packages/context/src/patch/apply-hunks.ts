/**
 * Tolerant, never reckless hunk application.
 *
 * Each hunk is located by its content (context and removed lines), not by its
 * line numbers: exactly first, then ignoring trailing whitespace, then
 * ignoring whitespace runs. A hunk that matches in one place is applied there.
 * One that matches in several is applied where the header's line number —
 * corrected by the offset the unambiguous hunks revealed — points exactly;
 * else where a single place is left after keeping the places at the end of
 * the file (`*** End of File`), under the hunk's anchors (see `anchors.ts`)
 * and, for a patch whose hunks are in file order, between its neighbours;
 * otherwise it is refused as ambiguous, naming every place. A hunk that
 * matches nowhere is refused with the closest region of the file and what
 * differs. Either every hunk applies or none does.
 *
 * Line endings: a hunk line keeps the file's own ending unless the patch
 * states endings — its lines carry a `\r` (git's output for a CRLF file) and
 * every context and removed line carries exactly the file's — in which case
 * added lines get the endings they are written with (a CRLF→LF conversion
 * converts). Otherwise added lines get the file's most common ending, so an
 * LF patch keeps a CRLF file CRLF.
 *
 * The end of the file, as git apply has it: insertions at or past the last
 * line all go at the end, in the patch's order; a hunk that would put a line
 * after one without a newline, which git joins onto it, is refused with the
 * form that says the line gains one.
 *
 * @module
 */

import { plural } from '../search/narrowing.ts';
import { underAnchors } from './anchors.ts';
import type { Hunk } from './hunk-syntax.ts';
import { type CandidateLine, type ClosestRegion, describeClosest, describeNearestLine, listFirst } from './mismatch-report.ts';
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

/** Why a hunk was refused, with what the caller needs to fix it in one step. */
export interface HunkFailure {
  readonly hunk: Hunk;
  /** `joins-lines`: git apply would glue lines together at a line without a newline (see {@link joinFailures}). */
  readonly reason: 'not-found' | 'ambiguous' | 'overlap' | 'no-anchor' | 'joins-lines';
  /** For `ambiguous`: every 1-based line where the hunk's old text matches. */
  readonly matches: readonly number[];
  /** The region of the file closest to the hunk's old text. */
  readonly closest: ClosestRegion | undefined;
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

export type { CandidateLine, ClosestRegion } from './mismatch-report.ts';

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

function hunkLabel(h: Hunk): string {
  return h.header.trim() === '' ? `hunk #${h.index}` : `hunk #${h.index} (${h.header.trim()})`;
}

/** Options of {@link applyHunks}. */
export interface ApplyHunksOptions {
  /**
   * The hunks are in file order (the `*** Begin Patch` format says so): a
   * hunk matching in several places may be placed between its neighbours.
   */
  readonly ordered?: boolean;
}

interface Pending {
  readonly hunk: Hunk;
  readonly candidates: number[];
  readonly level: MatchLevel;
}

/** Keeps the candidates `keep` accepts, unless it accepts none (then it says nothing). */
function narrow(candidates: number[], keep: (c: number) => boolean): number[] {
  const kept = candidates.filter(keep);
  return kept.length > 0 ? kept : candidates;
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
export function applyHunks(original: string, hunks: readonly Hunk[], options: ApplyHunksOptions = {}): ApplyResult {
  const doc = toDocument(original);
  const cache = new Map<(s: string) => string, string[]>();
  const located: LocatedHunk[] = [];
  const pending: Pending[] = [];
  const failures: HunkFailure[] = [];

  for (const hunk of hunks) {
    const block = oldBlock(hunk);
    const hint = hunk.oldStart === undefined ? undefined : Math.max(0, hunk.oldStart - 1);
    if (block.length === 0) {
      // Pure insertion: only a header number (or an empty file) can place it.
      if (doc.lines.length === 0) located.push({ hunk, start: 0, length: 0, level: 'exact', offset: 0 });
      else if (hunk.atEnd) located.push({ hunk, start: doc.lines.length, length: 0, level: 'exact', offset: undefined });
      else if (hunk.oldStart !== undefined) {
        // `@@ -5,0 +6,2 @@` inserts after line 5. A line past the end means the end: git apply
        // clamps the position to the file's length (apply.c, find_pos), and GNU patch agrees.
        const at = Math.min(hunk.oldStart, doc.lines.length);
        located.push({ hunk, start: at, length: 0, level: 'exact', offset: 0 });
      } else {
        failures.push({
          hunk,
          reason: 'no-anchor',
          matches: [],
          closest: undefined,
          message: `${hunkLabel(hunk)} only adds lines and has neither context nor a line number, so there is no way to know where it goes. Add a few unchanged lines around the insertion as context (or, to append, end the hunk with "*** End of File").`,
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
        message: `${hunkLabel(hunk)} does not match the file: its context and removed lines were not found.${pastEnd(doc, hunk, block)}\n${closest ? describeClosest(closest) : describeNearestLine(doc.lines, block)}\nRe-read that region and regenerate the hunk from the current text.`,
      });
    }
  }

  // Ambiguous hunks; each one placed can place others (offsets, order), so go round until none moves.
  let open = pending;
  for (let moved = true; moved && open.length > 0; ) {
    moved = false;
    const still: Pending[] = [];
    for (const p of open) {
      const start = choose(doc, p, located, options);
      if (start === undefined) still.push(p);
      else {
        const hint = p.hunk.oldStart === undefined ? undefined : p.hunk.oldStart - 1;
        located.push({ hunk: p.hunk, start, length: oldBlock(p.hunk).length, level: p.level, offset: hint === undefined ? undefined : start - hint });
        moved = true;
      }
    }
    open = still;
  }
  for (const p of open) {
    const where = narrowed(doc, p, located, options).map((c) => c + 1);
    const under = p.hunk.anchors.length > 0 ? ` under ${p.hunk.anchors.map((a) => JSON.stringify(a)).join(' > ')}` : '';
    failures.push({
      hunk: p.hunk,
      reason: 'ambiguous',
      matches: where,
      closest: undefined,
      message: `${hunkLabel(p.hunk)} matches the file in ${where.length} places${under} (lines ${listFirst(where)}) and nothing tells which one is meant. Add more unchanged context lines that make it unique, or give the correct line number in the @@ header.`,
    });
  }

  located.sort((a, b) => a.start - b.start || a.hunk.index - b.hunk.index);
  for (let k = 1; k < located.length; k++) {
    const prev = located[k - 1] as LocatedHunk;
    const cur = located[k] as LocatedHunk;
    // Insertions at the end go there in the patch's order, as git apply, which applies hunks one
    // after another and clamps each past-end line to the file as the ones before left it, puts them.
    const bothAppend = cur.start === doc.lines.length && cur.length === 0 && prev.length === 0;
    if (cur.start < prev.start + prev.length || (cur.start === prev.start && cur.length === 0 && prev.length === 0 && !bothAppend)) {
      failures.push({
        hunk: cur.hunk,
        reason: 'overlap',
        matches: [cur.start + 1],
        closest: undefined,
        message: `${hunkLabel(cur.hunk)} overlaps ${hunkLabel(prev.hunk)} (both change lines around ${cur.start + 1}). Merge them into one hunk.`,
      });
    }
  }

  if (failures.length === 0) failures.push(...joinFailures(doc, located));
  if (failures.length > 0) {
    failures.sort((a, b) => a.hunk.index - b.hunk.index);
    return { ok: false, failures, located };
  }
  return { ...splice(doc, located), ok: true, located };
}

/** For a hunk whose header points past the end: the file's real length, which a model counting lines got wrong. */
function pastEnd(doc: TextDocument, hunk: Hunk, block: readonly string[]): string {
  if (hunk.oldStart === undefined || hunk.oldStart <= doc.lines.length) return '';
  // The usual miscount: the newline ending the last line taken for an empty line after it.
  const blank = block[block.length - 1] === '' && hasFinalNewline(doc) ? ' (the newline ending the last line is not an empty line after it)' : '';
  return ` Its header puts it at line ${hunk.oldStart}, past the end of the file, which has ${plural(doc.lines.length, 'line')}${blank}.`;
}

const MARKER = '`\\ No newline at end of file`';

/**
 * The hunks that would put a line after one without a newline. git apply
 * works on bytes and joins the two (`b` + `X` → `bX`); no diff means that,
 * and giving the line a newline instead would be a result git never gives,
 * so such a hunk is refused with the form that says what is meant. It
 * happens after a file's last line without a newline (kept as it is or as
 * context), and after a line a marker says ends without one while more
 * follows it.
 */
function joinFailures(doc: TextDocument, located: readonly LocatedHunk[]): HunkFailure[] {
  const last = doc.lines.length - 1;
  const lastOpen = last >= 0 && doc.eols[last] === '';
  const out = new Map<Hunk, HunkFailure>();
  const refuse = (hunk: Hunk, message: string) => {
    if (!out.has(hunk)) out.set(hunk, { hunk, reason: 'joins-lines', matches: [], closest: undefined, message });
  };
  const afterLast = (hunk: Hunk, first: string) => {
    const line = doc.lines[last] as string;
    refuse(
      hunk,
      `${hunkLabel(hunk)} adds lines after line ${last + 1}, the file's last line, which has no newline at its end: git apply would join ${JSON.stringify(first)} onto it, so nothing was applied. To say the line gains a newline, remove it and add it back in the hunk, before the added lines:\n-${line}\n\\ No newline at end of file\n+${line}`,
    );
  };
  const markedThenMore = (hunk: Hunk, marked: string, what: string) =>
    refuse(
      hunk,
      `${hunkLabel(hunk)} marks ${JSON.stringify(marked)} with ${MARKER}, but ${what} follows it: git apply would join that onto it, so nothing was applied. The marker belongs only after the file's last line: remove it, or move it after the last line of the last hunk.`,
    );
  // What the last line written so far is when it has no newline: the file's last line, or a marked hunk's.
  let open: { hunk: Hunk; text: string } | 'file' | undefined;
  let at = 0;
  const follow = (hunk: Hunk | undefined, first: string) => {
    if (open === 'file' && hunk !== undefined) afterLast(hunk, first);
    else if (open !== undefined && open !== 'file')
      markedThenMore(open.hunk, open.text, hunk === undefined ? `line ${at + 1} of the file` : `${hunkLabel(hunk)}'s ${JSON.stringify(first)}`);
    open = undefined;
  };
  for (const l of located) {
    if (l.start > at) {
      follow(undefined, doc.lines[at] as string);
      open = l.start - 1 === last && lastOpen ? 'file' : undefined;
    }
    let cursor = l.start;
    let text: string | undefined;
    for (const pl of l.hunk.lines) {
      if (pl.op === '-') {
        cursor++;
        continue;
      }
      if (open !== undefined) follow(l.hunk, pl.text);
      text = pl.text;
      if (pl.op === ' ') {
        if (cursor === last && lastOpen) open = 'file';
        cursor++;
      }
    }
    if (l.hunk.newNoNewline && text !== undefined) open = { hunk: l.hunk, text };
    at = l.start + l.length;
  }
  if (at <= last) follow(undefined, doc.lines[at] as string);
  // After the walk: at the file's last line, its message says all there is to change.
  for (const l of located) if (l.hunk.markedInside !== undefined) markedThenMore(l.hunk, l.hunk.markedInside, 'another line of the hunk');
  return [...out.values()];
}

/**
 * The place the header's line number points at exactly, corrected by the
 * offset of the nearest placed hunk; else the one place left by
 * {@link narrowed}.
 */
function choose(doc: TextDocument, p: Pending, located: readonly LocatedHunk[], options: ApplyHunksOptions): number | undefined {
  const hint = p.hunk.oldStart === undefined ? undefined : p.hunk.oldStart - 1;
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
    if (p.candidates.includes(hint + offset)) return hint + offset;
  }
  const left = narrowed(doc, p, located, options);
  return left.length === 1 ? left[0] : undefined;
}

/** The places still possible after what the hunk says besides its text: end of file, anchors, order. */
function narrowed(doc: TextDocument, p: Pending, located: readonly LocatedHunk[], options: ApplyHunksOptions): number[] {
  const length = oldBlock(p.hunk).length;
  let left = p.candidates;
  if (p.hunk.atEnd) left = narrow(left, (c) => c + length === doc.lines.length);
  const under = new Set(underAnchors(doc.lines, left, p.hunk.anchors));
  left = narrow(left, (c) => under.has(c));
  if (options.ordered) {
    let lo = 0;
    let hi = doc.lines.length;
    for (const l of located) {
      if (l.hunk.index < p.hunk.index) lo = Math.max(lo, l.start + l.length);
      else if (l.hunk.index > p.hunk.index) hi = Math.min(hi, l.start);
    }
    left = narrow(left, (c) => c >= lo && c + length <= hi);
  }
  return left;
}

/**
 * True when the patch states line endings: some line carries a `\r`, and
 * every context and removed line carries exactly the ending of the file line
 * it matched.
 */
function statesEndings(doc: TextDocument, located: readonly LocatedHunk[]): boolean {
  if (!located.some((l) => l.hunk.lines.some((pl) => pl.cr === true))) return false;
  for (const l of located) {
    let cursor = l.start;
    for (const pl of l.hunk.lines) {
      if (pl.op === '+') continue;
      if ((pl.cr === true) !== (doc.eols[cursor] === '\r\n')) return false;
      cursor++;
    }
  }
  return true;
}

function splice(doc: TextDocument, located: readonly LocatedHunk[]): { text: string; linesAdded: number; linesRemoved: number } {
  const lines: string[] = [];
  const eols: string[] = [];
  const stated = statesEndings(doc, located);
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
        eols.push(stated ? (pl.cr ? '\r\n' : '\n') : doc.eol);
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
  // (joinFailures refuses what would follow a line without a newline; should one get through, it
  // gets the file's ending rather than being glued to the next line.)
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === '') eols[i] = doc.eol;
  if (eols.length > 0) {
    const lastIndex = eols.length - 1;
    eols[lastIndex] = finalNewline ? eols[lastIndex] || doc.eol : '';
  }
  return { text: fromDocument({ lines, eols, eol: doc.eol }), linesAdded: added, linesRemoved: removed };
}
