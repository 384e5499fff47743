/**
 * `readLines`: a numbered range (`N\tline`), with the total line count and
 * markers saying how much lies above and below and how to read it. A range
 * over budget is served up to the budget, with where to continue; a line
 * longer than the budget (minified code) is served in pieces by column. Files
 * of any size are served: one over the document limit is streamed, memory
 * bounded by the range.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import { lineRange, linesNamed, plural } from '../search/narrowing.ts';
import { type LineSource, lastLineFitting, openLines } from './line-source.ts';
import {
  type Caller,
  callBudget,
  MIN_USEFUL_TOKENS,
  type Omission,
  overBudget,
  type Served,
  serve,
  type ViewKind,
  type Workspace,
  wrappedTokens,
} from './shared.ts';

/** Options of `readLines`. */
export interface ReadLinesOptions {
  /** Extra lines shown before and after the range. Default 0. */
  context?: number;
  maxTokens?: number;
  /**
   * Column (1-based, in UTF-16 code units) the first line starts at: how a
   * line too long for one call is read in pieces. Default 1.
   */
  column?: number;
}

/** A range as served: its body, what it left out, and the call for the rest. */
interface Rendered {
  readonly body: string;
  readonly omitted: Omission[];
  readonly next: string | undefined;
  readonly label: string;
  readonly last: number;
}

/**
 * Renders lines `from`..`to` of `src` within `budget`: whole lines while they
 * fit, and when not even the first fits, as much of it as fits with the call
 * that reads on from the next column.
 */
export function renderRange(ws: Workspace, src: LineSource, from: number, to: number, column: number, budget: number, view: ViewKind): Rendered | undefined {
  const path = src.path;
  const total = src.total;
  const at = (n: number): string => `${n}\t${src.text(n)}`;
  const build = (last: number, firstChars?: number): Rendered => {
    const parts: string[] = [];
    const omitted: Omission[] = [];
    let next: string | undefined;
    if (from > 1) parts.push(`[… ${plural(from - 1, 'more line', 'more lines')} above (${lineRange(1, from - 1)}) …]`);
    if (firstChars !== undefined) {
      const text = src.text(from);
      const left = text.length - firstChars + src.rest(from);
      next = callText('readLines', [path, from, to], { column: column + firstChars });
      parts.push(`${from}\t${text.slice(0, firstChars)}`);
      parts.push(`[… line ${from} goes on for ${plural(left, 'more character', 'more characters')}; ${next} reads on …]`);
    } else {
      for (let n = from; n <= last; n++) {
        parts.push(at(n));
        if (src.rest(n) > 0) {
          const more = callText('readLines', [path, n, n], { column: (n === from ? column : 1) + src.text(n).length });
          parts.push(`[… line ${n} goes on for ${plural(src.rest(n), 'more character', 'more characters')}; ${more} reads on …]`);
          next ??= more;
        }
      }
    }
    const shownTo = firstChars !== undefined ? from : last;
    if (shownTo < to) {
      let t = 0;
      for (let n = shownTo + 1; n <= Math.min(to, src.last); n++) t += src.tokens(n);
      omitted.push({ startLine: shownTo + 1, endLine: to, tokens: t });
      const more = callText('readLines', [path, shownTo + 1, to]);
      if (firstChars === undefined) parts.push(`[… ${linesNamed(shownTo + 1, to)} of the requested range not shown (budget); continue with ${more} …]`);
      next ??= more;
    }
    if (to < total) parts.push(`[… ${plural(total - to, 'more line', 'more lines')} below (${lineRange(to + 1, total)}) …]`);
    const cols = column > 1 || firstChars !== undefined ? ` from column ${column}` : '';
    return { body: parts.join('\n'), omitted, next, label: `${from}-${shownTo} of ${total}${cols}`, last: shownTo };
  };
  const fits = (r: Rendered): boolean => wrappedTokens(ws, src.source, r.body, r.label, view) <= budget;

  // Estimate the lines that fit (160 tokens for the wrapper and markers), then verify exactly.
  for (let last = Math.max(from, lastLineFitting(src.tokens, from, Math.min(to, src.last), budget - 160)); ; ) {
    const r = build(last);
    if (fits(r)) return r;
    if (last <= from) break;
    last = Math.max(from, last - Math.max(1, Math.ceil((last - from) * 0.1)));
  }
  // Not even the first line fits: serve a piece of it, as long as fits.
  let lo = 0;
  let hi = src.text(from).length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(build(from, mid))) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? build(from, lo) : undefined;
}

/**
 * Serves lines `start`..`end` (1-based, inclusive; `end` past the file is
 * clamped; `end` omitted means to the end of the budget).
 */
export async function readLines(ws: Workspace, caller: Caller, path: string, start: number, end?: number, options: ReadLinesOptions = {}): Promise<Served> {
  const column = options.column ?? 1;
  if (!Number.isInteger(start) || start < 1 || (end !== undefined && (!Number.isInteger(end) || end < start))) {
    // The range asked for, mended: a start below 1 as 1, a missing or bad end 40 lines on, a reversed pair swapped.
    const a = Number.isInteger(start) && start >= 1 ? start : 1;
    const b = end !== undefined && Number.isInteger(end) && end >= 1 ? end : a + 39;
    throw fsError('EINVAL', 'readLines', path, {
      reason: `invalid line range ${start}-${end ?? ''}`,
      hint: `lines are 1-based and inclusive, start ≥ 1 and end ≥ start: ${callText('readLines', [path, Math.min(a, b), Math.max(a, b)])}`,
    });
  }
  if (!Number.isInteger(column) || column < 1) {
    throw fsError('EINVAL', 'readLines', path, {
      reason: `invalid column ${column}`,
      hint: 'columns are 1-based: {column: 1} starts at the beginning of the line',
    });
  }
  const context = Math.max(0, options.context ?? 0);
  const from = Math.max(1, start - (column > 1 ? 0 : context));
  const budget = callBudget(caller, options.maxTokens, 'readLines', path);
  const src = await openLines(ws, caller, path, 'readLines', from, (end ?? start + 2 * budget) + context, column);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, src.source, budget);
  const total = src.total;
  if (start > Math.max(total, 1)) {
    throw fsError('EINVAL', 'readLines', path, {
      reason: `line ${start} is past the end: the file has ${total} lines`,
      hint: total === 0 ? 'the file is empty' : `request lines within 1-${total}: ${callText('readLines', [path, Math.max(1, total - 20), total])}`,
    });
  }
  if (column > src.length(from) + 1) {
    throw fsError('EINVAL', 'readLines', path, {
      reason: `column ${column} is past the end of line ${from}`,
      hint: callText('readLines', [path, from, from]),
    });
  }
  if (total === 0) {
    return serve(ws, caller, 'readLines', src.source, '(the file is empty)', { view: 'lines', omitted: [], redactions: 0, label: '0 of 0' });
  }
  const to = Math.min(total, (end ?? total) + context);
  const r = renderRange(ws, src, from, Math.max(from, to), column, budget, 'lines');
  if (r === undefined) return overBudget(ws, caller, src.source, budget);
  return serve(ws, caller, 'readLines', src.source, r.body, {
    view: 'lines',
    startLine: from,
    endLine: r.last,
    omitted: r.omitted,
    next: r.next,
    redactions: src.findings,
    label: r.label,
  });
}
