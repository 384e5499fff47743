/**
 * `getSymbol`: one definition by name — function, class, method, type, or a
 * Markdown section — with its doc comment, numbered. Unknown names fail with
 * the closest names as the hint.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import { findSymbol, otherDefinitionsNote, symbolTable } from '../symbols/outline.ts';
import {
  type Caller,
  callBudget,
  lineTokens,
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

/** Serves the definition named `name` in `path`. */
export async function getSymbol(ws: Workspace, caller: Caller, path: string, name: string, options: { maxTokens?: number } = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'getSymbol');
  const budget = callBudget(caller, options.maxTokens);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const table = await symbolTable(doc);
  const found = findSymbol(table, name);
  if (!found.symbol) {
    throw fsError('ENOENT', 'getSymbol', path, {
      reason: `no symbol named '${name}' in ${path}`,
      hint:
        found.suggestions.length > 0
          ? `did you mean ${found.suggestions.map((s) => `'${s}'`).join(', ')}? getOutline(${q(path)}) lists every symbol`
          : `getOutline(${q(path)}) lists every symbol; grep finds names across files`,
    });
  }
  const s = found.symbol;
  const { lines, findings } = redactedLines(ws, doc);
  const tokens = lineTokens(ws, doc);
  const from = s.docStartLine;
  const to = s.endLine;
  const also = otherDefinitionsNote(table, name, found.others, path);
  let last = from - 1;
  let used = 120 + (also ? ws.tokenizer.count(also) : 0);
  while (last < to && used + (tokens[last] as number) + 2 <= budget) used += (tokens[last++] as number) + 2;
  last = Math.max(last, from);
  for (;;) {
    const parts = [
      `${s.kind} ${s.qualifiedName} (lines ${s.startLine}-${s.endLine}${from < s.startLine ? `, doc comment from ${from}` : ''})`,
      numbered(lines.slice(from - 1, last), from),
    ];
    let next: string | undefined;
    if (last < to) {
      next = `readLines(${q(path)}, ${last + 1}, ${to})`;
      parts.push(`[… the definition continues to line ${to}; ${next} shows the rest …]`);
    }
    if (also) parts.push(also);
    const body = parts.join('\n');
    const label = `${from}-${last} of ${lines.length}`;
    const fits = wrappedTokens(ws, doc, body, label, 'symbol') <= budget;
    if (!fits && last <= from) return overBudget(ws, caller, doc, budget);
    if (fits) {
      let omittedTokens = 0;
      for (let i = last; i < to; i++) omittedTokens += tokens[i] as number;
      return serve(ws, caller, 'getSymbol', doc, body, {
        view: 'symbol',
        startLine: from,
        endLine: last,
        omitted: last < to ? [{ startLine: last + 1, endLine: to, tokens: omittedTokens }] : [],
        next,
        redactions: findings,
        label,
      });
    }
    last = Math.max(from, last - Math.max(1, Math.ceil((last - from) * 0.1)));
  }
}
