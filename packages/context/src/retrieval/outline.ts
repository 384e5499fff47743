/**
 * Outlines served to models: every definition with its line range and
 * signature, bodies elided, shrunk (depth, then count) until it fits.
 *
 * @module
 */

import type { Document } from '../content/document.ts';
import { renderOutline, symbolTable } from '../symbols/outline.ts';
import { nestingDepth } from '../symbols/types.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  overBudget,
  q,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
} from './shared.ts';

/** An outline text of at most `maxTokens` tokens, with its header. */
export async function outlineText(
  ws: Workspace,
  doc: Document,
  maxTokens: number,
  maxSymbols: number,
): Promise<{ text: string; listed: number; total: number }> {
  const table = await symbolTable(doc);
  const header = `${doc.path}: ${doc.lines.length} lines, ${documentTokens(ws, doc)} tokens${doc.language ? `, ${doc.language}` : ''}; symbols by ${table.source}`;
  if (table.symbols.length === 0) {
    return { text: `${header}\n(no symbols found)`, listed: 0, total: 0 };
  }
  // Every level first (definitions nested in functions included); the depth shrinks only when over budget.
  let depth = Math.max(3, nestingDepth(table.symbols));
  let limit = maxSymbols;
  for (;;) {
    const r = renderOutline(table.symbols, { maxDepth: depth, maxSymbols: limit });
    const text = `${header}\n${r.text}`;
    if (ws.tokenizer.count(text) <= maxTokens || limit <= 1) return { text, listed: r.listed, total: r.total };
    if (depth > 1 && r.listed >= r.total * 0.8) depth--;
    else limit = Math.max(1, Math.floor(limit * 0.7));
  }
}

/**
 * Serves the outline of a file.
 */
export async function getOutline(ws: Workspace, caller: Caller, path: string, options: { maxTokens?: number } = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'getOutline');
  const budget = callBudget(caller, options.maxTokens);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const o = await outlineText(ws, doc, budget - 60, caller.profile.outlineSymbols);
  const next =
    o.total === 0
      ? `no symbols: use getExcerpt(${q(path)}) or readLines(${q(path)}, start, end)`
      : `getSymbol(${q(path)}, name) shows one definition; readLines(${q(path)}, start, end) shows a range${o.listed < o.total ? `; ${o.total - o.listed} nested symbols are not listed` : ''}`;
  if (wrappedTokens(ws, doc, o.text, undefined, 'outline') > budget) return overBudget(ws, caller, doc, budget);
  return serve(ws, caller, 'getOutline', doc, o.text, { view: 'outline', omitted: [], next, redactions: 0 });
}
