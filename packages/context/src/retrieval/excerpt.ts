/**
 * `getExcerpt`: the head of a file, numbered, for a first look — with the
 * file's size and where to go next.
 *
 * @module
 */

import { symbolTable } from '../symbols/outline.ts';
import { flattenSymbols } from '../symbols/types.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  numbered,
  overBudget,
  q,
  redactedLines,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
} from './shared.ts';

/** Serves the first `maxLines` lines (default: the profile's excerpt length) within budget. */
export async function getExcerpt(ws: Workspace, caller: Caller, path: string, maxLines?: number, options: { maxTokens?: number } = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'getExcerpt');
  const budget = callBudget(caller, options.maxTokens);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const { lines, findings } = redactedLines(ws, doc);
  const total = lines.length;
  let count = Math.min(total, Math.max(1, maxLines ?? caller.profile.excerptLines));
  const symbols = flattenSymbols((await symbolTable(doc)).symbols);
  for (;;) {
    const parts = [numbered(lines.slice(0, count), 1)];
    if (count < total) {
      parts.push(
        `[… ${total - count} more lines below (${count + 1}-${total}), ${documentTokens(ws, doc)} tokens in all${symbols.length > 0 ? `; ${symbols.length} symbols — getOutline(${q(path)})` : ''}; readLines(${q(path)}, ${count + 1}, ${Math.min(total, count * 2)}) continues …]`,
      );
    }
    const body = parts.join('\n');
    const label = `1-${count} of ${total}`;
    const fits = wrappedTokens(ws, doc, body, label, 'excerpt') <= budget;
    if (!fits && count <= 1) return overBudget(ws, caller, doc, budget);
    if (fits) {
      return serve(ws, caller, 'getExcerpt', doc, body, {
        view: 'excerpt',
        startLine: 1,
        endLine: count,
        omitted: count < total ? [{ startLine: count + 1, endLine: total, tokens: documentTokens(ws, doc) }] : [],
        next: count < total ? `readLines(${q(path)}, ${count + 1}, ${total})` : undefined,
        redactions: findings,
        label,
      });
    }
    count = Math.max(1, Math.floor(count * 0.8));
  }
}
