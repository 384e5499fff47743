/**
 * `getSymbol`: one definition by name — function, class, method, type, or a
 * Markdown section — with its doc comment, numbered. Unknown names fail with
 * the closest names as the hint. A lookup never costs more than the file:
 * when the whole file costs no more than the definition's view (a small
 * file, or one definition that is most of it — numbering costs about a token
 * a line), the whole file is served instead, exactly as `readFile` serves it.
 *
 * @module
 */

import { type FsError, fsError, isFsError, resolvePath } from '@ctxfs/core';
import { callShape, callText } from '../calls/call-text.ts';
import type { Document } from '../content/document.ts';
import { linesNamed, plural } from '../search/narrowing.ts';
import { findSymbol, otherDefinitionsNote, renderOutline, type SymbolLookup, symbolSelector, symbolTable } from '../symbols/outline.ts';
import { type CodeSymbol, flattenSymbols, type SymbolTable } from '../symbols/types.ts';
import { openLines } from './line-source.ts';
import { renderRange } from './read-lines.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  lineTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  numbered,
  type Omission,
  overBudget,
  redactedLines,
  type Served,
  serve,
  type Workspace,
  wrappedTokens,
} from './shared.ts';

/**
 * A doc comment costing more than this is cut after its first paragraph
 * (the summary), with the call that shows the rest: long comments are
 * mostly examples and cross-references (rxjs's run to 400 tokens over a
 * definition of 100), and a model asking for a definition needs its code
 * and what it is for first.
 */
const DOC_COMMENT_TOKENS = 80;

/** Lines of a comment that hold no text: a blank line, or only the comment's markers. */
const EMPTY_COMMENT_LINE = /^\s*(?:\/\*\*?|\*\/?|\/\/\/?|#|--|;+)?\s*$/;

/** The definition's view within a budget: what to wrap, and what it leaves out. */
interface SymbolView {
  readonly body: string;
  readonly label: string;
  readonly from: number;
  readonly last: number;
  readonly omitted: readonly Omission[];
  readonly next: string | undefined;
  /** Tokens of the wrapped view. */
  readonly tokens: number;
}

/** Tokens of lines `from`..`to` (1-based, inclusive) with their newlines. */
function rangeTokens(tokens: readonly number[], from: number, to: number): number {
  let n = 0;
  for (let i = from; i <= to; i++) n += tokens[i - 1] as number;
  return n;
}

/**
 * The doc comment lines to keep: all of them when short; else up to the end
 * of its first paragraph (at least one line of text), the rest left out.
 */
function docKept(lines: readonly string[], tokens: readonly number[], s: CodeSymbol): number {
  const end = s.startLine - 1;
  if (s.docStartLine > end || rangeTokens(tokens, s.docStartLine, end) <= DOC_COMMENT_TOKENS) return end;
  let i = s.docStartLine;
  while (i < end && EMPTY_COMMENT_LINE.test(lines[i - 1] as string)) i++;
  while (i < end && !EMPTY_COMMENT_LINE.test(lines[i] as string) && rangeTokens(tokens, s.docStartLine, i + 1) <= DOC_COMMENT_TOKENS) i++;
  // The note that says what was cut costs about 30 tokens: cutting less than twice that saves nothing worth the loss.
  return rangeTokens(tokens, i + 1, end) < 60 ? end : i;
}

/** Lines of a definition to number, and what follows them. */
interface Span {
  /** Last line of the definition to show (it may be cut shorter to fit). */
  readonly until: number;
  /** Lines after the numbered ones (a member list), given how many fit; `undefined` when none. */
  readonly tail?: ((room: number) => string | undefined) | undefined;
  /** The note when the lines stop before the definition ends. */
  readonly cut: (last: number) => string;
}

/**
 * The numbered view of `found.symbol` that fits `budget`, or `undefined`
 * when not even its first line does. A definition with members (a class)
 * that does not fit whole is shown as its head — doc comment, signature,
 * what precedes the first member — and its members' outline, rather than
 * as its first lines cut off in the middle of a method.
 */
function symbolView(ws: Workspace, doc: Document, table: SymbolTable, found: SymbolLookup, name: string, budget: number): SymbolView | undefined {
  const s = found.symbol as CodeSymbol;
  const path = doc.path;
  const whole = spanView(ws, doc, table, found, name, budget, {
    until: s.endLine,
    cut: (last) => `[… the definition continues to line ${s.endLine}; ${callText('readLines', [path, last + 1, s.endLine])} shows the rest …]`,
  });
  if ((whole !== undefined && whole.last >= s.endLine) || s.children.length === 0) return whole;
  const firstMember = s.children.reduce((first, c) => Math.min(first, c.docStartLine), Number.POSITIVE_INFINITY);
  const size = rangeTokens(lineTokens(ws, doc), s.docStartLine, s.endLine);
  // The list starts with the first member: a concrete call for it, the others likewise.
  const firstCall = callText('getSymbol', [path, symbolSelector(table, s.children[0] as CodeSymbol)]);
  // A member on the definition's own line (minified code) leaves the head that line.
  const headEnd = Math.max(s.startLine, firstMember - 1);
  const members = spanView(ws, doc, table, found, name, budget, {
    until: headEnd,
    tail: (room) => {
      const list = renderOutline(s.children, { maxDepth: 1, maxSymbols: room });
      return `Members (${s.kind} ${s.qualifiedName} is lines ${s.startLine}-${s.endLine}, ${size} tokens, over this call's budget; ${firstCall} shows the first, each member likewise):\n${list.text}`;
    },
    cut: (last) => `[… ${linesNamed(last + 1, headEnd)} before the first member: ${callText('readLines', [path, last + 1, headEnd])} …]`,
  });
  return members ?? whole;
}

/** {@link symbolView} for one span: the lines, cut until the view fits, then the tail shrunk until it does. */
function spanView(ws: Workspace, doc: Document, table: SymbolTable, found: SymbolLookup, name: string, budget: number, span: Span): SymbolView | undefined {
  const s = found.symbol as CodeSymbol;
  const path = doc.path;
  const { lines } = redactedLines(ws, doc);
  const tokens = lineTokens(ws, doc);
  const from = s.docStartLine;
  const to = span.until;
  const docEnd = docKept(lines, tokens, s);
  const gap: Omission | undefined =
    docEnd < s.startLine - 1 ? { startLine: docEnd + 1, endLine: s.startLine - 1, tokens: rangeTokens(tokens, docEnd + 1, s.startLine - 1) } : undefined;
  const gapNote =
    gap &&
    `[… doc comment, ${linesNamed(gap.startLine, gap.endLine)} (${plural(gap.tokens, 'token')}): ${callText('readLines', [path, gap.startLine, gap.endLine])} …]`;
  const also = otherDefinitionsNote(table, name, found.others, path);
  // The definition's own first line, so a cut comment still leaves room for the code.
  const head = gap ? s.startLine : from;
  let last = head - 1;
  let used = 100 + (also ? ws.tokenizer.count(also) : 0) + (gapNote ? ws.tokenizer.count(gapNote) + rangeTokens(tokens, from, docEnd) * 1.3 : 0);
  while (last < to && used + (tokens[last] as number) + 2 <= budget) used += (tokens[last++] as number) + 2;
  last = Math.max(last, head);
  // Members listed in the tail; fewer on each retry once the lines are down to the head.
  let room = s.children.length;
  for (;;) {
    const shown = gap
      ? [numbered(lines.slice(from - 1, docEnd), from), gapNote as string, numbered(lines.slice(s.startLine - 1, last), s.startLine)]
      : [numbered(lines.slice(from - 1, last), from)];
    // No header line: the label gives the range, the code names what it is, and the caller knows what it asked for.
    const parts = [...shown];
    let next: string | undefined;
    if (last < to) {
      next = callText('readLines', [path, last + 1, to]);
      parts.push(span.cut(last));
    }
    const tail = span.tail?.(room);
    if (tail !== undefined) {
      next ??= callText('readLines', [path, to + 1, s.endLine]);
      parts.push(tail);
    }
    if (also) parts.push(also);
    const body = parts.join('\n');
    const label = `${from}-${last} of ${lines.length}`;
    const cost = wrappedTokens(ws, doc, body, label, 'symbol');
    if (cost <= budget) {
      const omitted = [
        ...(gap ? [gap] : []),
        ...(last < s.endLine ? [{ startLine: last + 1, endLine: s.endLine, tokens: rangeTokens(tokens, last + 1, s.endLine) }] : []),
      ];
      return { body, label, from, last, omitted, next: next ?? (gap && callText('readLines', [path, gap.startLine, gap.endLine])), tokens: cost };
    }
    if (last > head) last = Math.max(head, last - Math.max(1, Math.ceil((last - head) * 0.1)));
    else if (tail !== undefined && room > 1) room = Math.max(1, Math.floor(room * 0.7));
    else return undefined;
  }
}

/**
 * The whole file as `readFile` serves it (unnumbered), and its cost once
 * wrapped; `undefined` when it cannot fit `budget` (known before wrapping,
 * so a large file is not counted again on every lookup).
 */
function wholeView(ws: Workspace, doc: Document, budget: number): { body: string; label: string; tokens: number } | undefined {
  if (documentTokens(ws, doc) > budget) return undefined;
  const { lines } = redactedLines(ws, doc);
  const body = lines.join('\n');
  const label = `1-${lines.length} of ${lines.length}`;
  return { body, label, tokens: wrappedTokens(ws, doc, body, label, 'full') };
}

/**
 * What `getSymbol(path, s.qualifiedName)` costs in tokens with this budget:
 * the definition's view, or the whole file when that is no dearer (what an
 * outline weighs to decide whether to serve the file instead).
 */
export async function symbolCost(ws: Workspace, doc: Document, s: CodeSymbol, budget: number): Promise<number> {
  const table = await symbolTable(doc);
  const found = findSymbol(table, s.qualifiedName);
  const view = found.symbol === undefined ? undefined : symbolView(ws, doc, table, found, s.qualifiedName, budget);
  const whole = wholeView(ws, doc, budget)?.tokens ?? Number.POSITIVE_INFINITY;
  return Math.min(view?.tokens ?? Number.POSITIVE_INFINITY, whole <= budget ? whole : Number.POSITIVE_INFINITY);
}

/**
 * Whether a file is better served whole than outlined: it fits `budget`,
 * and the outline (`outlineTokens`) followed by `getSymbol` of some
 * definition in it would cost more than the file. The widest definitions
 * are weighed first; their views are the dearest.
 */
export async function wholeBeatsOutline(ws: Workspace, doc: Document, budget: number, outlineTokens: number): Promise<boolean> {
  const whole = wholeView(ws, doc, budget);
  if (whole === undefined || whole.tokens > budget) return false;
  if (outlineTokens >= whole.tokens) return true;
  const widest = flattenSymbols((await symbolTable(doc)).symbols)
    .sort((a, b) => b.endLine - b.docStartLine - (a.endLine - a.docStartLine))
    .slice(0, 16);
  for (const s of widest) if (outlineTokens + (await symbolCost(ws, doc, s, budget)) > whole.tokens) return true;
  return false;
}

/** Serves the whole file in place of a narrower view that would cost as much or more. */
export function serveWhole(ws: Workspace, caller: Caller, op: string, doc: Document): Promise<Served> {
  const whole = wholeView(ws, doc, Number.POSITIVE_INFINITY) as NonNullable<ReturnType<typeof wholeView>>;
  return serve(ws, caller, op, doc, whole.body, {
    view: 'full',
    startLine: 1,
    endLine: doc.lines.length,
    omitted: [],
    // Nothing is missing, so there is no `next` (it only ever names a call); view="full" and the range say what came back.
    next: undefined,
    redactions: redactedLines(ws, doc).findings,
    label: whole.label,
  });
}

/**
 * A missing file whose call named a known file as the symbol: the path and
 * the name given the other way round (`ctxfs symbol src/a.ts login` for
 * `ctxfs symbol login src/a.ts`), told as such with the call that works
 * instead of a search for a file named like a symbol. Only a file the
 * registry holds and does not count sensitive is named.
 */
function swappedArguments(ws: Workspace, path: string, name: string, err: unknown): FsError | undefined {
  if (!isFsError(err, 'ENOENT')) return undefined;
  let named: string;
  try {
    // Spelled as any path may be (`./a.ts`, `src/../a.ts`, `src\\a.ts`): core's normalization, as every path gets.
    named = resolvePath(name, 'getSymbol').path;
  } catch {
    return undefined;
  }
  const file = ws.registry.get(named);
  if (file === undefined || file.sensitive) return undefined;
  return fsError('ENOENT', 'getSymbol', path, {
    reason: `no file at ${path}; the name given, ${file.path}, is a file: the path and the symbol's name are the other way round`,
    hint: callText('getSymbol', [file.path, path]),
    cause: err,
  });
}

/** Serves the definition named `name` in `path`. */
export async function getSymbol(ws: Workspace, caller: Caller, path: string, name: string, options: { maxTokens?: number } = {}): Promise<Served> {
  const doc = await loadDocument(ws, path, 'getSymbol').catch((err: unknown) => {
    throw swappedArguments(ws, path, name, err) ?? err;
  });
  const budget = callBudget(caller, options.maxTokens, 'getSymbol', path);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const table = await symbolTable(doc);
  const found = findSymbol(table, name);
  if (!found.symbol) {
    throw fsError('ENOENT', 'getSymbol', path, {
      reason: `no symbol named '${name}' in ${path}`,
      hint:
        found.suggestions.length > 0
          ? `did you mean ${found.suggestions.map((s) => `'${s}'`).join(', ')}? ${callText('getOutline', [path])} lists every symbol`
          : `${callText('getOutline', [path])} lists every symbol; ${callShape('grep')} finds names across files`,
    });
  }
  const s = found.symbol;
  const view = symbolView(ws, doc, table, found, name, budget);
  const whole = wholeView(ws, doc, budget);
  if (whole !== undefined && whole.tokens <= budget && whole.tokens <= (view?.tokens ?? Number.POSITIVE_INFINITY)) {
    return serveWhole(ws, caller, 'getSymbol', doc);
  }
  if (view === undefined) {
    // Not even one line of it fits (minified code): its lines in pieces, each naming the call for the next.
    const src = await openLines(ws, caller, path, 'getSymbol', s.startLine, s.endLine);
    const r = renderRange(ws, src, s.startLine, s.endLine, 1, budget, 'symbol');
    if (r === undefined) return overBudget(ws, caller, doc, budget);
    return serve(ws, caller, 'getSymbol', doc, r.body, {
      view: 'symbol',
      startLine: s.startLine,
      endLine: r.last,
      omitted: r.omitted,
      next: r.next,
      redactions: src.findings,
      label: r.label,
    });
  }
  return serve(ws, caller, 'getSymbol', doc, view.body, {
    view: 'symbol',
    startLine: view.from,
    endLine: view.last,
    omitted: view.omitted,
    next: view.next,
    redactions: redactedLines(ws, doc).findings,
    label: view.label,
  });
}
