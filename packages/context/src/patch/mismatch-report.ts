/**
 * What a refused hunk is told, kept small whatever the hunk's size: the lines
 * that differ from the closest region of the file with one line of context
 * each and a count of the rest, every shown line cut around where it
 * differs. A hunk of 2,500 lines refused gets a few hundred tokens, not the
 * whole region, so the refusal fits the smallest profile.
 *
 * When no region shares a line with the hunk — typically a file that is one
 * long line (minified or generated) and a hunk whose one line differs
 * somewhere inside it — the report names the line and column where the
 * closest line first differs, with the words on either side.
 *
 * @module
 */

/** One line of a closest-candidate comparison. */
export interface CandidateLine {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly expected: string;
  readonly actual: string | undefined;
  readonly same: boolean;
}

/** The region of the file closest to a hunk's old text. */
export interface ClosestRegion {
  readonly startLine: number;
  readonly matched: number;
  readonly total: number;
  readonly lines: readonly CandidateLine[];
}

/** Differing lines shown at most; the rest are counted. */
export const MAX_SHOWN_DIFFERENCES = 6;
/** Characters of one shown line at most, cut around the first difference. */
export const MAX_SHOWN_CHARS = 160;

/** Index of the first UTF-16 unit where `a` and `b` differ (their common prefix). */
function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** `text` cut to at most `MAX_SHOWN_CHARS` around `at`, with `…` where cut. */
export function around(text: string, at: number): string {
  if (text.length <= MAX_SHOWN_CHARS) return text;
  const from = Math.max(0, Math.min(at - Math.floor(MAX_SHOWN_CHARS / 3), text.length - MAX_SHOWN_CHARS));
  const to = from + MAX_SHOWN_CHARS;
  return `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
}

/**
 * The closest region, described within a fixed size.
 *
 * @example
 * ```text
 * Closest region: lines 40-2551 (2,509 of 2,512 lines match); 3 lines differ:
 *   812   const retries = 3;
 *   813 ! expected: "  const timeout = 30;"
 *       actual:   "  const timeout = 60;"
 * ```
 */
export function describeClosest(closest: ClosestRegion): string {
  const differing = closest.lines.filter((l) => !l.same);
  const end = closest.startLine + closest.total - 1;
  const out = [
    `Closest region: lines ${closest.startLine}-${end} (${closest.matched.toLocaleString('en-US')} of ${closest.total.toLocaleString('en-US')} lines match); ${differing.length.toLocaleString('en-US')} ${differing.length === 1 ? 'line differs' : 'lines differ'}:`,
  ];
  const shown = new Set<number>();
  let lastShown = -1;
  for (const [k, l] of differing.slice(0, MAX_SHOWN_DIFFERENCES).entries()) {
    const i = closest.lines.indexOf(l);
    // One line of context before a difference, unless it was just shown.
    const before = closest.lines[i - 1];
    if (before?.same && !shown.has(i - 1)) {
      if (lastShown >= 0 && i - 1 > lastShown + 1) out.push('  …');
      out.push(`  ${before.line}\t  ${around(before.actual ?? '', 0)}`);
      shown.add(i - 1);
    } else if (k > 0 && i > lastShown + 1) out.push('  …');
    const at = l.actual === undefined ? 0 : firstDifference(l.expected, l.actual);
    const column = l.actual !== undefined && (l.expected.length > MAX_SHOWN_CHARS || l.actual.length > MAX_SHOWN_CHARS) ? ` (column ${at + 1})` : '';
    out.push(`  ${l.line}\t! expected${column}: ${JSON.stringify(around(l.expected, at))}`);
    out.push(`  \t  actual:   ${l.actual === undefined ? '(end of file)' : JSON.stringify(around(l.actual, at))}`);
    shown.add(i);
    lastShown = i;
  }
  if (differing.length > MAX_SHOWN_DIFFERENCES) {
    const rest = differing.slice(MAX_SHOWN_DIFFERENCES);
    out.push(
      `  … ${rest.length.toLocaleString('en-US')} more differing lines (${(rest[0] as CandidateLine).line}-${(rest[rest.length - 1] as CandidateLine).line}) not shown`,
    );
  }
  return out.join('\n');
}

/**
 * For a hunk no region resembles: the file line sharing the longest start
 * with one of the hunk's lines, and where they part — so a one-line file
 * is told the column of the difference, not "nothing resembles it".
 */
export function describeNearestLine(fileLines: readonly string[], block: readonly string[]): string {
  let best: { line: number; expected: string; actual: string; at: number } | undefined;
  // A few of the hunk's lines are enough to find where it was meant, and keep this linear in the file.
  for (const expected of block.filter((l) => l.trim().length >= 8).slice(0, 20)) {
    for (let i = 0; i < fileLines.length; i++) {
      const actual = fileLines[i] as string;
      const at = firstDifference(expected, actual);
      if (at > (best?.at ?? 7)) best = { line: i + 1, expected, actual, at };
    }
  }
  if (best === undefined) return 'No region of the file resembles it.';
  return [
    `No region matches line for line; closest: line ${best.line}, which agrees with the hunk's line for ${best.at.toLocaleString('en-US')} characters, then differs at column ${best.at + 1}:`,
    `  expected: ${JSON.stringify(around(best.expected, best.at))}`,
    `  actual:   ${JSON.stringify(around(best.actual, best.at))}`,
  ].join('\n');
}

/**
 * A list for a message: the first `most` items and a count of the rest, so
 * that a refusal naming line numbers, positions or files stays short
 * whatever their number.
 *
 * @example
 * ```ts
 * listFirst([3, 9, 20]);         // '3, 9, 20'
 * listFirst(['a', 'b', 'c'], 2); // 'a, b and 1 more'
 * ```
 */
export function listFirst(items: readonly (number | string)[], most = 10): string {
  if (items.length <= most) return items.join(', ');
  return `${items.slice(0, most).join(', ')} and ${(items.length - most).toLocaleString('en-US')} more`;
}
