/**
 * `getExcerpt`: the head of a file, numbered, for a first look — with the
 * file's size and where to go next. Files of any size: one over the
 * document limit is streamed.
 *
 * @module
 */

import { callText } from '../calls/call-text.ts';
import { symbolTable } from '../symbols/outline.ts';
import { flattenSymbols } from '../symbols/types.ts';
import { openLines } from './line-source.ts';
import { renderRange } from './read-lines.ts';
import { type Caller, callBudget, MIN_USEFUL_TOKENS, overBudget, type Served, serve, totalTokensOf, type Workspace } from './shared.ts';

/** Serves the first `maxLines` lines (default: the profile's excerpt length) within budget. */
export async function getExcerpt(ws: Workspace, caller: Caller, path: string, maxLines?: number, options: { maxTokens?: number } = {}): Promise<Served> {
  const budget = callBudget(caller, options.maxTokens, 'getExcerpt', path);
  const wanted = Math.max(1, maxLines ?? caller.profile.excerptLines);
  const src = await openLines(ws, caller, path, 'getExcerpt', 1, wanted);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, src.source, budget);
  if (src.total === 0)
    return serve(ws, caller, 'getExcerpt', src.source, '(the file is empty)', { view: 'excerpt', omitted: [], redactions: 0, label: '0 of 0' });
  const count = Math.min(src.total, wanted);
  const symbols = 'derived' in src.source ? flattenSymbols((await symbolTable(src.source)).symbols).length : 0;
  const outline = symbols > 0 ? `; ${symbols} symbols: ${callText('getOutline', [path])}` : '';
  const about = `[… ${src.total} lines, ${totalTokensOf(ws, src.source)} tokens in all${outline} …]`;
  // The note about the whole file goes in when there is more than was asked for and room for it.
  const room = budget - (count < src.total ? ws.tokenizer.count(about) + 4 : 0);
  const r = renderRange(ws, src, 1, count, 1, room, 'excerpt');
  if (r === undefined) return overBudget(ws, caller, src.source, budget);
  const body = r.last < src.total && count < src.total ? `${r.body}\n${about}` : r.body;
  return serve(ws, caller, 'getExcerpt', src.source, body, {
    view: 'excerpt',
    startLine: 1,
    endLine: r.last,
    omitted: r.last < src.total ? [{ startLine: r.last + 1, endLine: src.total, tokens: Math.max(0, totalTokensOf(ws, src.source)) }] : [],
    next: r.next ?? (r.last < src.total ? callText('readLines', [path, r.last + 1, Math.min(src.total, r.last + count)]) : undefined),
    redactions: src.findings,
    label: r.label,
  });
}
