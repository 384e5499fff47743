/**
 * Line diff: Myers' O(ND) algorithm on interned lines, followed by the same
 * change compaction git's xdiff performs (slide each changed group as far
 * down as it can go, then back up to line up with a change on the other
 * side), so the hunks we report sit where git puts them — which decides
 * whether two edits touch in a three-way merge.
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

/**
 * Marks changed lines of `a` and `b` (true = deleted from a / inserted in b)
 * with a linear-space divide-and-conquer Myers diff.
 */
function markChanges(a: Int32Array, b: Int32Array, ca: Uint8Array, cb: Uint8Array): void {
  const max = a.length + b.length + 1;
  const vf = new Int32Array(2 * max + 2);
  const vb = new Int32Array(2 * max + 2);

  const middleSnake = (aLo: number, aHi: number, bLo: number, bHi: number): [number, number] => {
    const n = aHi - aLo;
    const m = bHi - bLo;
    const delta = n - m;
    const odd = (delta & 1) !== 0;
    const off = max;
    vf[off + 1] = 0;
    vb[off + 1] = 0;
    const dMax = Math.ceil((n + m) / 2);
    for (let d = 0; d <= dMax; d++) {
      for (let k = -d; k <= d; k += 2) {
        let x =
          k === -d || (k !== d && (vf[off + k - 1] as number) < (vf[off + k + 1] as number)) ? (vf[off + k + 1] as number) : (vf[off + k - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
          x++;
          y++;
        }
        vf[off + k] = x;
        const kb = delta - k;
        if (odd && kb >= -(d - 1) && kb <= d - 1 && x + (vb[off + kb] as number) >= n) return [aLo + x, bLo + y];
      }
      for (let k = -d; k <= d; k += 2) {
        let x =
          k === -d || (k !== d && (vb[off + k - 1] as number) < (vb[off + k + 1] as number)) ? (vb[off + k + 1] as number) : (vb[off + k - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[aHi - 1 - x] === b[bHi - 1 - y]) {
          x++;
          y++;
        }
        vb[off + k] = x;
        const kf = delta - k;
        if (!odd && kf >= -d && kf <= d && x + (vf[off + kf] as number) >= n) return [aHi - x, bHi - y];
      }
    }
    return [aLo, bLo];
  };

  const stack: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  while (stack.length > 0) {
    let [aLo, aHi, bLo, bHi] = stack.pop() as [number, number, number, number];
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
      aLo++;
      bLo++;
    }
    while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
      aHi--;
      bHi--;
    }
    if (aLo === aHi) {
      for (let j = bLo; j < bHi; j++) cb[j] = 1;
      continue;
    }
    if (bLo === bHi) {
      for (let i = aLo; i < aHi; i++) ca[i] = 1;
      continue;
    }
    const [x, y] = middleSnake(aLo, aHi, bLo, bHi);
    if ((x === aLo && y === bLo) || (x === aHi && y === bHi)) {
      // No progress possible through a snake: everything here differs.
      for (let i = aLo; i < aHi; i++) ca[i] = 1;
      for (let j = bLo; j < bHi; j++) cb[j] = 1;
      continue;
    }
    stack.push([x, aHi, y, bHi]);
    stack.push([aLo, x, bLo, y]);
  }
}

/** xdiff's rough square root: the smallest power of two whose square reaches `n`. */
function bogoSqrt(n: number): number {
  let i = 1;
  for (let m = n; m > 0; m >>= 2) i <<= 1;
  return i;
}

const SIMSCAN_WINDOW = 100;
const KEEP_DISCARDED_RUN = 4;
const MAX_EQ_LIMIT = 1024;

/**
 * Whether a line that has many matches in the other file sits inside a run
 * of lines with no match, where xdiff discards it too (`xdl_clean_mmatch`).
 */
function discardMultimatch(dis: Uint8Array, i: number, start: number, end: number): boolean {
  const s = i - start > SIMSCAN_WINDOW ? i - SIMSCAN_WINDOW : start;
  const e = end - i > SIMSCAN_WINDOW ? i + SIMSCAN_WINDOW : end;
  let none0 = 0;
  let multi0 = 1;
  for (let r = 1; i - r >= s; r++) {
    const d = dis[i - r];
    if (d === 0) none0++;
    else if (d === 2) multi0++;
    else break;
  }
  if (none0 === 0) return false;
  let none1 = 0;
  let multi1 = 1;
  for (let r = 1; i + r <= e; r++) {
    const d = dis[i + r];
    if (d === 0) none1++;
    else if (d === 2) multi1++;
    else break;
  }
  if (none1 === 0) return false;
  const none = none0 + none1;
  const multi = multi0 + multi1;
  return multi * KEEP_DISCARDED_RUN < multi + none;
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
    const limit = Math.min(bogoSqrt(xs.length), MAX_EQ_LIMIT);
    const dis = new Uint8Array(xs.length);
    for (let i = start; i <= end; i++) {
      const nm = other.get(xs[i] as number) ?? 0;
      dis[i] = nm === 0 ? 0 : nm >= limit ? 2 : 1;
    }
    const kept: number[] = [];
    for (let i = 0; i < start; i++) kept.push(i);
    for (let i = start; i <= end; i++) {
      if (dis[i] === 1 || (dis[i] === 2 && !discardMultimatch(dis, i, start, end))) kept.push(i);
      else changed[i] = 1;
    }
    for (let i = end + 1; i < xs.length; i++) kept.push(i);
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
