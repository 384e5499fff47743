/**
 * Where a capped search's left-out entries are: the directory or file
 * holding most of them whose listing fits the caller's budget, so the call
 * a result offers for the rest is aimed there and fits.
 *
 * @module
 */

/** Entries found under one path (a file, for grep; a file or a directory, for listings). */
export interface Tally {
  readonly path: string;
  /** Entries there in all. */
  readonly total: number;
  /** Of them, entries not shown. */
  readonly left: number;
}

/** A path to narrow a search to, with what a call on it would list. */
export interface Narrowing {
  readonly path: string;
  readonly total: number;
  readonly left: number;
}

/**
 * The path below `scope` a narrower call should name: of the directories
 * and files holding left-out entries, the one holding the most of them
 * whose whole listing `fits`; on a tie the one listing less again. `undefined`
 * when none fits (one file holds more than a call can show: page instead).
 *
 * @example
 * ```ts
 * narrowTo('', [{ path: 'src/a.ts', total: 3, left: 0 }, { path: 'lib/x/b.ts', total: 9, left: 9 }], (n) => n <= 20);
 * // { path: 'lib', total: 9, left: 9 }
 * ```
 */
export function narrowTo(scope: string, tallies: readonly Tally[], fits: (total: number) => boolean): Narrowing | undefined {
  const below = new Map<string, { total: number; left: number }>();
  const prefix = scope === '' ? 0 : scope.length + 1;
  for (const t of tallies) {
    // Every directory between the scope and the path, and the path itself.
    for (let slash = t.path.indexOf('/', prefix); ; slash = t.path.indexOf('/', slash + 1)) {
      const at = slash < 0 ? t.path : t.path.slice(0, slash);
      const sum = below.get(at) ?? { total: 0, left: 0 };
      sum.total += t.total;
      sum.left += t.left;
      below.set(at, sum);
      if (slash < 0) break;
    }
  }
  let best: Narrowing | undefined;
  for (const [path, sum] of below) {
    if (sum.left === 0 || path === scope || !fits(sum.total)) continue;
    if (
      best === undefined ||
      sum.left > best.left ||
      (sum.left === best.left && (sum.total < best.total || (sum.total === best.total && path.length > best.path.length)))
    ) {
      best = { path, ...sum };
    }
  }
  return best;
}

/** A range of line numbers as a model reads it: `7`, or `3-7` (never `7-7`). */
export function lineRange(start: number, end: number): string {
  return start === end ? `${start}` : `${start}-${end}`;
}

/** A range of lines, named: `line 7`, or `lines 3-7`. */
export function linesNamed(start: number, end: number): string {
  return `${start === end ? 'line' : 'lines'} ${lineRange(start, end)}`;
}

/** `n word` with the plural when `n` is not 1 (`1 file`, `3 files`; `matching line` → `matching lines`). */
export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : words}`;
}
