/**
 * `readLines`: a numbered range (`N\tline`), with the total line count and
 * markers saying how much lies above and below and how to read it. A range
 * over budget is served up to the budget, with where to continue.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import {
  type Caller,
  callBudget,
  lineTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  numbered,
  type Omission,
  overBudget,
  q,
  redactedLines,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
} from './shared.ts';

/** Options of `readLines`. */
export interface ReadLinesOptions {
  /** Extra lines shown before and after the range. Default 0. */
  context?: number;
  maxTokens?: number;
}

/**
 * Serves lines `start`..`end` (1-based, inclusive; `end` past the file is
 * clamped; `end` omitted means to the end of the budget).
 */
export async function readLines(ws: Workspace, caller: Caller, path: string, start: number, end?: number, options: ReadLinesOptions = {}): Promise<Served> {
  if (!Number.isInteger(start) || start < 1 || (end !== undefined && (!Number.isInteger(end) || end < start))) {
    throw fsError('EINVAL', 'readLines', path, {
      reason: `invalid line range ${start}-${end ?? ''}`,
      hint: 'lines are 1-based and inclusive: readLines(path, 10, 40); start must be ≥ 1 and end ≥ start',
    });
  }
  const doc = await loadDocument(ws, path, 'readLines');
  const total = doc.lines.length;
  const budget = callBudget(caller, options.maxTokens);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  if (start > Math.max(total, 1)) {
    throw fsError('EINVAL', 'readLines', path, { reason: `line ${start} is past the end: the file has ${total} lines`, hint: `request lines 1-${total}` });
  }
  const context = Math.max(0, options.context ?? 0);
  const from = Math.max(1, start - context);
  const to = Math.min(total, (end ?? total) + context);
  const { lines, findings } = redactedLines(ws, doc);
  const tokens = lineTokens(ws, doc);

  const render = (last: number): { body: string; omitted: Omission[]; next: string | undefined; label: string } => {
    const parts: string[] = [];
    const omitted: Omission[] = [];
    const next: string[] = [];
    if (from > 1) parts.push(`[… ${from - 1} more lines above (1-${from - 1}) …]`);
    parts.push(numbered(lines.slice(from - 1, last), from));
    if (last < to) {
      let t = 0;
      for (let i = last; i < to; i++) t += tokens[i] as number;
      omitted.push({ startLine: last + 1, endLine: to, tokens: t });
      parts.push(`[… lines ${last + 1}-${to} of the requested range not shown (budget); continue with readLines(${q(path)}, ${last + 1}, ${to}) …]`);
      next.push(`readLines(${q(path)}, ${last + 1}, ${to})`);
    }
    if (to < total) parts.push(`[… ${total - to} more lines below (${to + 1}-${total}) …]`);
    return { body: parts.join('\n'), omitted, next: next[0], label: `${from}-${last} of ${total}` };
  };

  // Grow the shown range line by line within budget, then verify exactly.
  let last = from - 1;
  let used = 160;
  while (last < to && used + (tokens[last] as number) + 2 <= budget) used += (tokens[last++] as number) + 2;
  last = Math.max(last, Math.min(from, to));
  for (;;) {
    const r = render(last);
    const fits = wrappedTokens(ws, doc, r.body, r.label, 'lines') <= budget;
    if (!fits && last <= from) return overBudget(ws, caller, doc, budget);
    if (fits) {
      return serve(ws, caller, 'readLines', doc, r.body, {
        view: 'lines',
        startLine: from,
        endLine: last,
        omitted: r.omitted,
        next: r.next,
        redactions: findings,
        label: r.label,
      });
    }
    last = Math.max(from, last - Math.max(1, Math.ceil((last - from) * 0.1)));
  }
}
