/**
 * Line diff that reproduces git's (xdiff, default Myers, no indent
 * heuristic) hunk for hunk: the same discarding of unmatched lines, the same
 * Myers search with its scan order, tie-breaks and cost cut-offs, and the same
 * change compaction (slide each changed group as far down as it can go, then
 * back up to line up with a change on the other side). A merely minimal diff
 * is not enough: where the hunks sit decides whether two edits touch in a
 * three-way merge.
 *
 * @module
 */

/** A changed region: `a[aStart, aStart+aLength)` became `b[bStart, bStart+bLength)`. */
export interface DiffHunk {
  readonly aStart: number;
  readonly aLength: number;
  readonly bStart: number;
  readonly bLength: number;
}

function intern(a: readonly string[], b: readonly string[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const map = (xs: readonly string[]) => {
    const out = new Int32Array(xs.length);
    for (let i = 0; i < xs.length; i++) {
      const s = xs[i] as string;
      let id = ids.get(s);
      if (id === undefined) {
        id = ids.size;
        ids.set(s, id);
      }
      out[i] = id;
    }
    return out;
  };
  return [map(a), map(b)];
}

// git's figures for its Myers search (xdiff, `xdiffi.c`); matching them is
// what makes big diffs give up on minimality where git's do.
/** Fewest edit steps a search may take before it settles for a good-enough split (more on big inputs). */
const COST_LIMIT_FLOOR = 256;
/** Edit steps after which a search may stop at the end of a long run of equal lines. */
const SHORTCUT_FROM_COST = 256;
/** Equal lines in a row that count as a long run. */
const LONG_RUN = 20;
/** How far ahead (per edit step) a long run must have got to be taken. */
const PROGRESS_FACTOR = 4;
/** A backward-search position past every line. */
const NOWHERE = 0x7fffffff;

/**
 * Marks changed lines of `a` and `b` (true = deleted from a / inserted in b)
 * with the divide-and-conquer Myers search exactly as xdiff runs it
 * (`xdl_recs_cmp` / `xdl_split`): the same scan order over diagonals, the
 * same tie-breaks, the same point where the two searches are taken to meet,
 * and the same cost cut-offs for big diffs. Among the many equally short
 * diffs of two texts, only this reproduces the one git picks — and which one
 * is picked decides whether two sides' edits touch in a three-way merge.
 */
function markChanges(a: Int32Array, b: Int32Array, ca: Uint8Array, cb: Uint8Array): void {
  const diagonals = a.length + b.length + 3;
  // Diagonal d = i - j lives at index d + diagonalBase; the extra slots hold sentinels.
  const diagonalBase = b.length + 1;
  const forwardReach = new Float64Array(diagonals);
  const backwardReach = new Float64Array(diagonals);
  const costLimit = Math.max(roughSqrt(diagonals), COST_LIMIT_FLOOR);
  const split = { x: 0, y: 0, exactBefore: true, exactAfter: true };

  // Finds where to cut the box [aLow, aHigh) x [bLow, bHigh) (both non-empty, ends differing) into two.
  const findSplit = (aLow: number, aHigh: number, bLow: number, bHigh: number, exact: boolean): void => {
    const lowestDiagonal = aLow - bHigh;
    const highestDiagonal = aHigh - bLow;
    const forwardMid = aLow - bLow;
    const backwardMid = aHigh - bHigh;
    const odd = ((forwardMid - backwardMid) & 1) !== 0;
    let forwardLow = forwardMid;
    let forwardHigh = forwardMid;
    let backwardLow = backwardMid;
    let backwardHigh = backwardMid;
    forwardReach[forwardMid + diagonalBase] = aLow;
    backwardReach[backwardMid + diagonalBase] = aHigh;
    for (let cost = 1; ; cost++) {
      let sawLongRun = false;
      // Widen the forward diagonal range by one each way, or narrow it where it hits the box.
      if (forwardLow > lowestDiagonal) forwardReach[--forwardLow - 1 + diagonalBase] = -1;
      else ++forwardLow;
      if (forwardHigh < highestDiagonal) forwardReach[++forwardHigh + 1 + diagonalBase] = -1;
      else --forwardHigh;
      for (let d = forwardHigh; d >= forwardLow; d -= 2) {
        const lo = forwardReach[d - 1 + diagonalBase] as number;
        const hi = forwardReach[d + 1 + diagonalBase] as number;
        let x = lo >= hi ? lo + 1 : hi;
        const runStart = x;
        let y = x - d;
        while (x < aHigh && y < bHigh && a[x] === b[y]) {
          x++;
          y++;
        }
        if (x - runStart > LONG_RUN) sawLongRun = true;
        forwardReach[d + diagonalBase] = x;
        if (odd && backwardLow <= d && d <= backwardHigh && (backwardReach[d + diagonalBase] as number) <= x) {
          split.x = x;
          split.y = y;
          split.exactBefore = split.exactAfter = true;
          return;
        }
      }
      if (backwardLow > lowestDiagonal) backwardReach[--backwardLow - 1 + diagonalBase] = NOWHERE;
      else ++backwardLow;
      if (backwardHigh < highestDiagonal) backwardReach[++backwardHigh + 1 + diagonalBase] = NOWHERE;
      else --backwardHigh;
      for (let d = backwardHigh; d >= backwardLow; d -= 2) {
        const lo = backwardReach[d - 1 + diagonalBase] as number;
        const hi = backwardReach[d + 1 + diagonalBase] as number;
        let x = lo < hi ? lo : hi - 1;
        const runStart = x;
        let y = x - d;
        while (x > aLow && y > bLow && a[x - 1] === b[y - 1]) {
          x--;
          y--;
        }
        if (runStart - x > LONG_RUN) sawLongRun = true;
        backwardReach[d + diagonalBase] = x;
        if (!odd && forwardLow <= d && d <= forwardHigh && x <= (forwardReach[d + diagonalBase] as number)) {
          split.x = x;
          split.y = y;
          split.exactBefore = split.exactAfter = true;
          return;
        }
      }
      if (exact) continue;
      // Expensive box: settle for a point that ends a long snake far along the search.
      if (sawLongRun && cost > SHORTCUT_FROM_COST) {
        let best = 0;
        for (let d = forwardHigh; d >= forwardLow; d -= 2) {
          const offCentre = d > forwardMid ? d - forwardMid : forwardMid - d;
          const x = forwardReach[d + diagonalBase] as number;
          const y = x - d;
          const v = x - aLow + (y - bLow) - offCentre;
          if (v > PROGRESS_FACTOR * cost && v > best && aLow + LONG_RUN <= x && x < aHigh && bLow + LONG_RUN <= y && y < bHigh) {
            for (let k = 1; a[x - k] === b[y - k]; k++) {
              if (k === LONG_RUN) {
                best = v;
                split.x = x;
                split.y = y;
                break;
              }
            }
          }
        }
        if (best > 0) {
          split.exactBefore = true;
          split.exactAfter = false;
          return;
        }
        for (let d = backwardHigh; d >= backwardLow; d -= 2) {
          const offCentre = d > backwardMid ? d - backwardMid : backwardMid - d;
          const x = backwardReach[d + diagonalBase] as number;
          const y = x - d;
          const v = aHigh - x + (bHigh - y) - offCentre;
          if (v > PROGRESS_FACTOR * cost && v > best && aLow < x && x <= aHigh - LONG_RUN && bLow < y && y <= bHigh - LONG_RUN) {
            for (let k = 0; a[x + k] === b[y + k]; k++) {
              if (k === LONG_RUN - 1) {
                best = v;
                split.x = x;
                split.y = y;
                break;
              }
            }
          }
        }
        if (best > 0) {
          split.exactBefore = false;
          split.exactAfter = true;
          return;
        }
      }
      // Too expensive: take whichever search got furthest.
      if (cost >= costLimit) {
        let forwardBest = -1;
        let forwardBestA = -1;
        for (let d = forwardHigh; d >= forwardLow; d -= 2) {
          let x = Math.min(forwardReach[d + diagonalBase] as number, aHigh);
          let y = x - d;
          if (bHigh < y) {
            x = bHigh + d;
            y = bHigh;
          }
          if (forwardBest < x + y) {
            forwardBest = x + y;
            forwardBestA = x;
          }
        }
        let backwardBest = NOWHERE;
        let backwardBestA = NOWHERE;
        for (let d = backwardHigh; d >= backwardLow; d -= 2) {
          let x = Math.max(aLow, backwardReach[d + diagonalBase] as number);
          let y = x - d;
          if (y < bLow) {
            x = bLow + d;
            y = bLow;
          }
          if (x + y < backwardBest) {
            backwardBest = x + y;
            backwardBestA = x;
          }
        }
        if (aHigh + bHigh - backwardBest < forwardBest - (aLow + bLow)) {
          split.x = forwardBestA;
          split.y = forwardBest - forwardBestA;
          split.exactBefore = true;
          split.exactAfter = false;
        } else {
          split.x = backwardBestA;
          split.y = backwardBest - backwardBestA;
          split.exactBefore = false;
          split.exactAfter = true;
        }
        return;
      }
    }
  };

  // Boxes still to compare; each box is independent, so the order does not matter.
  const stack: Array<[number, number, number, number, boolean]> = [[0, a.length, 0, b.length, false]];
  while (stack.length > 0) {
    let [aLow, aHigh, bLow, bHigh, exact] = stack.pop() as [number, number, number, number, boolean];
    while (aLow < aHigh && bLow < bHigh && a[aLow] === b[bLow]) {
      aLow++;
      bLow++;
    }
    while (aLow < aHigh && bLow < bHigh && a[aHigh - 1] === b[bHigh - 1]) {
      aHigh--;
      bHigh--;
    }
    if (aLow === aHigh) {
      for (let j = bLow; j < bHigh; j++) cb[j] = 1;
    } else if (bLow === bHigh) {
      for (let i = aLow; i < aHigh; i++) ca[i] = 1;
    } else {
      findSplit(aLow, aHigh, bLow, bHigh, exact);
      const { x, y, exactBefore, exactAfter } = split;
      stack.push([x, aHigh, y, bHigh, exactAfter]);
      stack.push([aLow, x, bLow, y, exactBefore]);
    }
  }
}

/** xdiff's rough square root: the smallest power of two whose square reaches `n`. */
function roughSqrt(n: number): number {
  let i = 1;
  for (let m = n; m > 0; m >>= 2) i <<= 1;
  return i;
}

const NEIGHBOURHOOD = 100;
const RUN_RATIO = 4;
const COMMON_LINE_CAP = 1024;

/**
 * Whether a line that has many matches in the other file sits inside a run
 * of lines with no match, where xdiff discards it too (`xdl_clean_mmatch`).
 */
function discardMultimatch(verdict: Uint8Array, i: number, start: number, end: number): boolean {
  const s = i - start > NEIGHBOURHOOD ? i - NEIGHBOURHOOD : start;
  const e = end - i > NEIGHBOURHOOD ? i + NEIGHBOURHOOD : end;
  let unmatchedBefore = 0;
  let commonBefore = 1;
  for (let r = 1; i - r >= s; r++) {
    const d = verdict[i - r];
    if (d === 0) unmatchedBefore++;
    else if (d === 2) commonBefore++;
    else break;
  }
  if (unmatchedBefore === 0) return false;
  let unmatchedAfter = 0;
  let commonAfter = 1;
  for (let r = 1; i + r <= e; r++) {
    const d = verdict[i + r];
    if (d === 0) unmatchedAfter++;
    else if (d === 2) commonAfter++;
    else break;
  }
  if (unmatchedAfter === 0) return false;
  const none = unmatchedBefore + unmatchedAfter;
  const multi = commonBefore + commonAfter;
  return multi * RUN_RATIO < multi + none;
}

/**
 * xdiff's `xdl_cleanup_records`: after trimming the common prefix and
 * suffix, lines with no match in the other file are changes before any
 * search (and lines with very many matches inside such runs too). Marks them
 * and returns the indices left for the Myers search. Doing this as git does
 * makes the search pick the same alignment among equally short diffs.
 */
function discardUnmatched(a: Int32Array, b: Int32Array, ca: Uint8Array, cb: Uint8Array): [number[], number[]] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const countIn = (xs: Int32Array) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const inA = countIn(a);
  const inB = countIn(b);
  const side = (xs: Int32Array, other: Map<number, number>, changed: Uint8Array): number[] => {
    const start = pre;
    const end = xs.length - suf - 1;
    const limit = Math.min(roughSqrt(xs.length), COMMON_LINE_CAP);
    const verdict = new Uint8Array(xs.length);
    for (let i = start; i <= end; i++) {
      const matches = other.get(xs[i] as number) ?? 0;
      verdict[i] = matches === 0 ? 0 : matches >= limit ? 2 : 1;
    }
    // The common prefix and suffix stay unchanged and out of the search, as in xdiff.
    const kept: number[] = [];
    for (let i = start; i <= end; i++) {
      if (verdict[i] === 1 || (verdict[i] === 2 && !discardMultimatch(verdict, i, start, end))) kept.push(i);
      else changed[i] = 1;
    }
    return kept;
  };
  return [side(a, inB, ca), side(b, inA, cb)];
}

/**
 * Slides groups of changed lines the way xdiff's `xdl_change_compact` does:
 * each group of `xs` is moved up as far as equal lines allow, then down as
 * far as possible, and finally back up to the lowest position where it lines
 * up with a (non-empty) group of changes in the other file, if there is one.
 * Groups of the two files are kept in step: the k-th group of each sits after
 * the k-th unchanged line.
 */
function compact(xs: Int32Array, ch: Uint8Array, och: Uint8Array): void {
  const n = xs.length;
  const on = och.length;
  const c = (i: number) => i >= 0 && i < n && ch[i] === 1;
  const oc = (i: number) => i >= 0 && i < on && och[i] === 1;
  let gs = 0;
  let ge = 0;
  while (c(ge)) ge++;
  let os = 0;
  let oe = 0;
  while (oc(oe)) oe++;
  const slideUp = (): boolean => {
    if (gs > 0 && xs[gs - 1] === xs[ge - 1]) {
      ch[--gs] = 1;
      ch[--ge] = 0;
      while (c(gs - 1)) gs--;
      return true;
    }
    return false;
  };
  const slideDown = (): boolean => {
    if (ge < n && xs[gs] === xs[ge]) {
      ch[gs++] = 0;
      ch[ge++] = 1;
      while (c(ge)) ge++;
      return true;
    }
    return false;
  };
  const otherPrevious = () => {
    oe = os - 1;
    os = oe;
    while (oc(os - 1)) os--;
  };
  const otherNext = () => {
    os = oe + 1;
    oe = os;
    while (oc(oe)) oe++;
  };
  for (;;) {
    if (ge !== gs) {
      let groupSize: number;
      let endMatchingOther: number;
      let earliestEnd: number;
      do {
        groupSize = ge - gs;
        endMatchingOther = -1;
        while (slideUp()) otherPrevious();
        earliestEnd = ge;
        if (oe > os) endMatchingOther = ge;
        while (slideDown()) {
          otherNext();
          if (oe > os) endMatchingOther = ge;
        }
      } while (groupSize !== ge - gs);
      if (ge !== earliestEnd && endMatchingOther !== -1) {
        while (oe === os) {
          if (!slideUp()) break;
          otherPrevious();
        }
      }
    }
    if (ge >= n) break;
    gs = ge + 1;
    ge = gs;
    while (c(ge)) ge++;
    otherNext();
  }
}

/**
 * Diffs two line arrays.
 *
 * @example
 * ```ts
 * diffLines(['a', 'b', 'c'], ['a', 'x', 'c']); // [{ aStart: 1, aLength: 1, bStart: 1, bLength: 1 }]
 * ```
 */
export function diffLines(a: readonly string[], b: readonly string[]): DiffHunk[] {
  const [ia, ib] = intern(a, b);
  const ca = new Uint8Array(a.length);
  const cb = new Uint8Array(b.length);
  const [keptA, keptB] = discardUnmatched(ia, ib, ca, cb);
  const subA = Int32Array.from(keptA, (i) => ia[i] as number);
  const subB = Int32Array.from(keptB, (j) => ib[j] as number);
  const subCa = new Uint8Array(subA.length);
  const subCb = new Uint8Array(subB.length);
  markChanges(subA, subB, subCa, subCb);
  for (let k = 0; k < keptA.length; k++) if (subCa[k]) ca[keptA[k] as number] = 1;
  for (let k = 0; k < keptB.length; k++) if (subCb[k]) cb[keptB[k] as number] = 1;
  compact(ia, ca, cb);
  compact(ib, cb, ca);
  const hunks: DiffHunk[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && !ca[i] && !cb[j]) {
      i++;
      j++;
      continue;
    }
    const aStart = i;
    const bStart = j;
    while (i < a.length && ca[i]) i++;
    while (j < b.length && cb[j]) j++;
    if (i === aStart && j === bStart) {
      // Unbalanced tails (cannot happen with consistent marks) — consume one side.
      if (i < a.length) i++;
      else j++;
      continue;
    }
    hunks.push({ aStart, aLength: i - aStart, bStart, bLength: j - bStart });
  }
  return hunks;
}
