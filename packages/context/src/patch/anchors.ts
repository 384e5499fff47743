/**
 * Which of the places a hunk's text matches lie under the hunk's anchors —
 * the function name git writes after `@@ … @@`, or the `@@ def parse(` lines
 * a model writes. The three readings of an anchor in use disagree, so a
 * place is kept when any of them puts it under the anchor:
 *
 * - `apply_patch`'s: the first match at or after a line the anchor starts;
 * - the block's: a match inside the indented block the anchor line opens;
 * - git's: the nearest line before the match that starts with a letter, `_`
 *   or `$` (git's default function-name rule) starts with the anchor.
 *
 * The caller applies a hunk only when exactly one place is kept, so a reading
 * that is not the one the patch was written with can add places (and turn
 * the hunk into a refusal) but never choose a wrong one.
 *
 * @module
 */

const fold = (s: string) => s.replace(/\s+/g, ' ').trim();

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Lines the innermost anchor starts, each after a line of the anchor before it. */
function anchorLines(lines: readonly string[], anchors: readonly string[]): number[] {
  let positions: number[] | undefined;
  for (const anchor of anchors) {
    const after = positions === undefined ? -1 : (positions[0] ?? lines.length);
    const next: number[] = [];
    for (let k = after + 1; k < lines.length; k++) if (fold(lines[k] as string).startsWith(anchor)) next.push(k);
    positions = next;
  }
  return positions ?? [];
}

/**
 * The `candidates` (0-based first lines of matches, ascending) that lie under
 * `anchors` (outermost first). When the anchors name no line of the file,
 * they say nothing, and every candidate is returned.
 *
 * @example
 * ```ts
 * const lines = ['def a():', '    x = 1', 'def b():', '    x = 1'];
 * underAnchors(lines, [1, 3], ['def b(']); // [3]
 * ```
 */
export function underAnchors(lines: readonly string[], candidates: readonly number[], anchors: readonly string[]): number[] {
  // git cuts the function name at 80 bytes, which can split a character.
  const wanted = anchors.map((a) => fold(a.replace(/\uFFFD+$/, ''))).filter((a) => a !== '');
  if (wanted.length === 0) return [...candidates];
  const positions = anchorLines(lines, wanted);
  if (positions.length === 0) return [...candidates];
  const innermost = wanted[wanted.length - 1] as string;
  const kept = new Set<number>();
  for (const p of positions) {
    const first = candidates.find((c) => c >= p);
    if (first !== undefined) kept.add(first);
    const indent = indentOf(lines[p] as string);
    let end = p + 1;
    while (end < lines.length && ((lines[end] as string).trim() === '' || indentOf(lines[end] as string) > indent)) end++;
    for (const c of candidates) if (c >= p && c <= end) kept.add(c);
  }
  for (const c of candidates) {
    let k = c - 1;
    while (k >= 0 && !/^[A-Za-z_$]/.test(lines[k] as string)) k--;
    if (k >= 0 && fold(lines[k] as string).startsWith(innermost)) kept.add(c);
  }
  return candidates.filter((c) => kept.has(c));
}
