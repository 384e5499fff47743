/**
 * Outlines served to models: definitions with their line ranges and
 * signatures, bodies elided, chosen by importance to fill the budget.
 *
 * When not everything fits, every top-level definition is listed before any
 * member (a file's main class is never hidden behind its helpers' methods),
 * members go in by the size of what holds them and their own size, and the
 * rows are shown in file order with their nesting. What is left out is said
 * where it lies — "… 12 more members (lines 50-310)" under its class, "… 7
 * more definitions (lines 991-3400)" between top-level rows — each with the
 * `getOutline` call that lists exactly that part, so a model can page
 * through any outline in its own profile.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import type { Document } from '../content/document.ts';
import { findSymbol, symbolTable } from '../symbols/outline.ts';
import type { CodeSymbol } from '../symbols/types.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  overBudget,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
  wrapperTokens,
} from './shared.ts';
import { serveWhole, wholeBeatsOutline } from './symbol.ts';

/** Which part of a file an outline covers. */
export interface OutlineScope {
  /** Only this definition and what it holds (a qualified name, as `getSymbol` takes). */
  symbol?: string;
  /** Only definitions starting within these lines (1-based, inclusive). */
  startLine?: number;
  endLine?: number;
}

/** Options of `getOutline`. */
export interface OutlineCallOptions extends OutlineScope {
  maxTokens?: number;
}

/** An outline within a budget. */
export interface OutlineText {
  readonly text: string;
  /** Definitions listed. */
  readonly listed: number;
  /** Definitions in the scope. */
  readonly total: number;
  /** The call that lists the first part left out; `undefined` when nothing was. */
  readonly more: string | undefined;
  /** The largest definition listed, for a `getSymbol` suggestion. */
  readonly largest: CodeSymbol | undefined;
}

/** Longest signature shown in a row; a longer one is cut (its full text is one getSymbol away). */
const MAX_SIGNATURE_CHARS = 160;

interface Row {
  readonly symbol: CodeSymbol;
  readonly depth: number;
  readonly parent: Row | undefined;
  readonly children: Row[];
  /** Rank among rows to include: lower goes in first. */
  rank: number;
  tokens: number;
}

function rowText(s: CodeSymbol, depth: number): string {
  const range = `${s.startLine}-${s.endLine}`;
  let signature = s.signature.includes(s.name) ? s.signature : `${s.kind} ${s.name}: ${s.signature}`;
  if (signature.length > MAX_SIGNATURE_CHARS) signature = `${signature.slice(0, MAX_SIGNATURE_CHARS - 1)}…`;
  return `${'  '.repeat(depth)}${range.padEnd(9)} ${signature}`;
}

function lines(s: CodeSymbol): number {
  return s.endLine - s.startLine + 1;
}

function isExported(s: CodeSymbol): boolean {
  return /^(export|pub\b|public\b)/.test(s.signature);
}

/**
 * Orders rows for inclusion: depth first (every top-level row before any
 * member), then exported before private, then by the lines of what holds
 * the row and its own lines, then file order. Ties keep the file order so
 * equal outlines are deterministic.
 */
function rankRows(all: Row[]): void {
  const weight = (r: Row): number => (isExported(r.symbol) ? 1 : 0);
  const sorted = [...all].sort(
    (a, b) =>
      a.depth - b.depth ||
      weight(b) - weight(a) ||
      (b.parent ? lines(b.parent.symbol) : 0) - (a.parent ? lines(a.parent.symbol) : 0) ||
      lines(b.symbol) - lines(a.symbol) ||
      a.symbol.startLine - b.symbol.startLine,
  );
  sorted.forEach((r, i) => {
    r.rank = i;
  });
}

function buildRows(symbols: readonly CodeSymbol[], scope: { startLine: number; endLine: number }): Row[] {
  const all: Row[] = [];
  const visit = (list: readonly CodeSymbol[], depth: number, parent: Row | undefined, into: Row[]): void => {
    for (const s of list) {
      // A definition outside the scope can still hold ones inside it (a range cutting a class).
      const inside = s.startLine >= scope.startLine && s.startLine <= scope.endLine;
      if (!inside) {
        visit(s.children, depth, parent, into);
        continue;
      }
      const row: Row = { symbol: s, depth, parent, children: [], rank: 0, tokens: 0 };
      all.push(row);
      into.push(row);
      visit(s.children, depth + 1, row, row.children);
    }
  };
  const top: Row[] = [];
  visit(symbols, 0, undefined, top);
  return all;
}

function plural(n: number, word: string): string {
  return `${n} ${n === 1 ? word : `${word}s`}`;
}

/**
 * Renders the chosen rows in file order, with a note wherever rows were left
 * out: under a listed definition for its members, between top-level rows for
 * definitions. Each note carries the call that lists what it counts.
 */
function render(path: string, top: readonly Row[], chosen: ReadonlySet<Row>, scoped: boolean): { rows: string[]; more: string[] } {
  const rows: string[] = [];
  const more: string[] = [];
  const countAll = (list: readonly Row[]): number => list.reduce((n, r) => n + 1 + countAll(r.children), 0);
  const walk = (list: readonly Row[], depth: number, holder: Row | undefined): void => {
    let gap: Row[] = [];
    const flush = (): void => {
      if (gap.length === 0) return;
      const from = (gap[0] as Row).symbol.startLine;
      const to = gap.reduce((end, r) => Math.max(end, r.symbol.endLine), 0);
      const n = countAll(gap);
      let call: string;
      let what: string;
      if (holder !== undefined && gap.length === list.length) {
        call = callText('getOutline', [path], { symbol: holder.symbol.qualifiedName });
        what = plural(n, holder.depth === 0 && !scoped ? 'more member' : 'more nested definition');
      } else {
        call = callText('getOutline', [path], { startLine: from, endLine: to });
        what = plural(n, depth === 0 ? 'more definition' : 'more member');
      }
      rows.push(`${'  '.repeat(depth)}… ${what} (lines ${from}-${to}) not listed: ${call}`);
      more.push(call);
      gap = [];
    };
    for (const r of list) {
      if (!chosen.has(r)) {
        gap.push(r);
        continue;
      }
      flush();
      rows.push(rowText(r.symbol, depth));
      walk(r.children, depth + 1, r);
    }
    flush();
  };
  walk(top, 0, undefined);
  return { rows, more };
}

/**
 * An outline of `doc` of at most `maxTokens` tokens: as many definitions as
 * fit (at most `maxSymbols`), chosen by importance, shown in file order.
 */
export async function outlineText(ws: Workspace, doc: Document, maxTokens: number, maxSymbols: number, scope: OutlineScope = {}): Promise<OutlineText> {
  const table = await symbolTable(doc);
  const range = resolveScope(doc, table.symbols, scope);
  const where = range.label === '' ? '' : ` (${range.label})`;
  const header = `${doc.path}${where}: ${doc.lines.length} lines, ${documentTokens(ws, doc)} tokens${doc.language ? `, ${doc.language}` : ''}; ${table.skipped ?? `symbols by ${table.source}`}`;
  const all = buildRows(range.symbols, range);
  if (all.length === 0)
    return { text: `${header}\n(no symbols found${where === '' ? '' : ' there'})`, listed: 0, total: 0, more: undefined, largest: undefined };
  const top = all.filter((r) => r.parent === undefined);
  rankRows(all);
  for (const r of all) r.tokens = ws.tokenizer.count(`${rowText(r.symbol, r.depth)}\n`);
  const byRank = [...all].sort((a, b) => a.rank - b.rank);
  const scoped = range.label !== '';

  const attempt = (k: number): { text: string; more: string[]; chosen: Set<Row> } => {
    const chosen = new Set(byRank.slice(0, k));
    const r = render(doc.path, top, chosen, scoped);
    return { text: [header, ...r.rows].join('\n'), more: r.more, chosen };
  };
  const fits = (k: number): boolean => ws.tokenizer.count(attempt(k).text) <= maxTokens;
  // The summed row costs give a first guess; the exact rendering decides.
  let k = 0;
  let used = ws.tokenizer.count(header) + 24;
  while (k < byRank.length && k < maxSymbols && used + (byRank[k] as Row).tokens <= maxTokens) used += (byRank[k++] as Row).tokens;
  while (k > 0 && !fits(k)) k = k > 8 ? Math.floor(k * 0.9) : k - 1;
  while (k < Math.min(byRank.length, maxSymbols) && fits(k + 1)) k++;
  const out = attempt(k);
  const largest = [...out.chosen].sort((a, b) => lines(b.symbol) - lines(a.symbol))[0]?.symbol;
  return { text: out.text, listed: k, total: all.length, more: out.more[0], largest };
}

function resolveScope(
  doc: Document,
  symbols: readonly CodeSymbol[],
  scope: OutlineScope,
): { symbols: readonly CodeSymbol[]; startLine: number; endLine: number; label: string } {
  const total = Math.max(1, doc.lines.length);
  if (scope.symbol !== undefined) {
    const found = findSymbol({ source: 'none', symbols }, scope.symbol);
    if (found.symbol === undefined) {
      const near =
        found.suggestions.length > 0
          ? `did you mean ${found.suggestions
              .slice(0, 5)
              .map((s) => JSON.stringify(s))
              .join(', ')}? `
          : '';
      throw fsError('ENOENT', 'getOutline', doc.path, {
        reason: `no definition named ${JSON.stringify(scope.symbol)} in ${doc.path}`,
        hint: `${near}${callText('getOutline', [doc.path])} lists the file's definitions`,
      });
    }
    const s = found.symbol;
    return { symbols: [s], startLine: s.startLine, endLine: s.endLine, label: `${s.qualifiedName}, lines ${s.startLine}-${s.endLine}` };
  }
  if (scope.startLine === undefined && scope.endLine === undefined) return { symbols, startLine: 1, endLine: total, label: '' };
  const startLine = scope.startLine ?? 1;
  const endLine = scope.endLine ?? total;
  if (!Number.isInteger(startLine) || !Number.isInteger(endLine) || startLine < 1 || endLine < startLine) {
    throw fsError('EINVAL', 'getOutline', doc.path, {
      reason: `invalid line range ${startLine}-${endLine}`,
      hint: `lines are 1-based and inclusive: ${callText('getOutline', [doc.path], { startLine: 1, endLine: total })}`,
    });
  }
  return { symbols, startLine, endLine: Math.min(endLine, total), label: `lines ${startLine}-${Math.min(endLine, total)}` };
}

/**
 * Serves the outline of a file, or of one definition or line range of it.
 *
 * @example
 * ```ts
 * (await ctx.getOutline('src/client.ts')).next; // 'getOutline("src/client.ts", {symbol: "Client"})' when Client's members did not fit
 * ```
 */
export async function getOutline(ws: Workspace, caller: Caller, path: string, options: OutlineCallOptions = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'getOutline');
  const budget = callBudget(caller, options.maxTokens, 'getOutline', path);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const o = await outlineText(ws, doc, budget - wrapperTokens(ws, doc, undefined, 'outline'), caller.profile.outlineSymbols, options);
  const next = o.more ?? (o.largest !== undefined ? callText('getSymbol', [path, o.largest.qualifiedName]) : callText('getExcerpt', [path]));
  const tokens = wrappedTokens(ws, doc, o.text, undefined, 'outline');
  // A small file: when the outline and then a definition would cost more than the file, the file is the answer.
  const scoped = options.symbol !== undefined || options.startLine !== undefined || options.endLine !== undefined;
  if (!scoped && o.total > 0 && (await wholeBeatsOutline(ws, doc, budget, tokens))) return serveWhole(ws, caller, 'getOutline', doc);
  if (tokens > budget) return overBudget(ws, caller, doc, budget);
  return serve(ws, caller, 'getOutline', doc, o.text, { view: 'outline', omitted: [], next, redactions: 0 });
}
