/**
 * `readFile`: the whole file when it fits the budget; otherwise either a cut
 * by the caller's strategy (`start`, `end`, `middle`) that says which lines
 * are missing and how to get them, or — when no strategy was asked for — the
 * outline and summary with an instruction to narrow the request (seed
 * workflow "local LLM with large file").
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { callShape, callText } from '../calls/call-text.ts';
import type { Document } from '../content/document.ts';
import { linesNamed, plural } from '../search/narrowing.ts';
import { type TruncationStrategy, truncateTokens } from '../tokens/tokenizer.ts';
import { lastLineFitting, openLines, openTail } from './line-source.ts';
import { outlineText } from './outline.ts';
import { renderRange } from './read-lines.ts';
import {
  type Caller,
  callBudget,
  documentTokens,
  lineTokens,
  loadDocument,
  MIN_USEFUL_TOKENS,
  type Omission,
  overBudget,
  redactedLines,
  type Served,
  serve,
  totalTokensOf,
  type Workspace,
  wrappedTokens,
  wrapperTokens,
} from './shared.ts';
import { summaryOf } from './summary.ts';

/** Options of `readFile`. */
export interface ReadFileOptions {
  /** Token budget of the result; capped by the profile and the session. */
  maxTokens?: number;
  /**
   * How to cut a file over budget. Without one, an over-budget read returns
   * the outline and summary instead of content.
   */
  strategy?: TruncationStrategy;
}

function sum(values: readonly number[], from: number, to: number): number {
  let s = 0;
  for (let i = from; i < to; i++) s += values[i] as number;
  return s;
}

/** Chooses the kept line spans (0-based, end exclusive) for a strategy. */
function keptSpans(tokens: readonly number[], room: number, strategy: TruncationStrategy): Array<[number, number]> {
  const n = tokens.length;
  if (strategy === 'start') {
    let used = 0;
    let i = 0;
    while (i < n && used + (tokens[i] as number) <= room) used += tokens[i++] as number;
    return [[0, i]];
  }
  if (strategy === 'end') {
    let used = 0;
    let i = n;
    while (i > 0 && used + (tokens[i - 1] as number) <= room) used += tokens[--i] as number;
    return [[i, n]];
  }
  let head = 0;
  let tail = n;
  let used = 0;
  // Alternate so both ends get a fair share; the head gets the first line.
  let turn = 0;
  let stuck = 0;
  while (head < tail && stuck < 2) {
    const i = turn % 2 === 0 ? head : tail - 1;
    const t = tokens[i] as number;
    if (used + t <= room) {
      used += t;
      if (turn % 2 === 0) head++;
      else tail--;
      stuck = 0;
    } else stuck++;
    turn++;
  }
  return [
    [0, head],
    [tail, n],
  ];
}

function cutMarker(path: string, start: number, end: number, tokens: number): string {
  return `[… ${linesNamed(start, end)} omitted (${plural(tokens, 'token')}); ${callText('readLines', [path, start, end])} shows ${start === end ? 'it' : 'them'} …]`;
}

async function narrow(ws: Workspace, caller: Caller, doc: Document, budget: number): Promise<Served> {
  const path = doc.path;
  const total = documentTokens(ws, doc);
  const intro = `${path} is ${doc.lines.length} lines / ${total} tokens, over this call's budget of ${budget} tokens (profile ${caller.profile.name}). Content not sent.`;
  // Every call offered here is concrete and fits this caller's budget.
  const counts = lineTokens(ws, doc);
  const firstRange = callText('readLines', [
    path,
    1,
    Math.max(
      1,
      lastLineFitting((n) => counts[n - 1] ?? 0, 1, counts.length, budget - 200),
    ),
  ]);
  const fixed = ws.tokenizer.count(`${intro}\n\n${firstRange}`) + wrapperTokens(ws, doc, undefined, 'narrow') + 80;
  const summaryBudget = Math.max(MIN_USEFUL_TOKENS, Math.min(caller.profile.summaryTokens, Math.floor((budget - fixed) / 3)));
  const summary = await summaryOf(ws, doc, summaryBudget);
  const outlineBudget = Math.max(0, budget - fixed - ws.tokenizer.count(summary) - 8);
  const outline = outlineBudget >= 24 ? await outlineText(ws, doc, outlineBudget, caller.profile.outlineSymbols) : undefined;
  const symbolCall = outline?.largest !== undefined ? callText('getSymbol', [path, outline.largest.qualifiedName]) : undefined;
  const cut = callText('readFile', [path], { strategy: 'start' });
  const instruction = `Narrow the request: ${symbolCall ? `${symbolCall} for one definition, ` : ''}${firstRange} for a range, or ${cut} for a cut (strategy "end" and "middle" too).`;
  const next = symbolCall ?? firstRange;
  let body = [intro, `Summary:\n${summary}`, outline ? `Outline:\n${outline.text}` : '', instruction].filter(Boolean).join('\n\n');
  if (wrappedTokens(ws, doc, body, undefined, 'narrow') > budget)
    body = [intro, outline ? `Outline:\n${outline.text}` : '', instruction].filter(Boolean).join('\n\n');
  if (wrappedTokens(ws, doc, body, undefined, 'narrow') > budget) body = `${intro}\n\n${instruction}`;
  if (wrappedTokens(ws, doc, body, undefined, 'narrow') > budget) return overBudget(ws, caller, doc, budget);
  return serve(ws, caller, 'readFile', doc, body, {
    view: 'narrow',
    omitted: [{ startLine: 1, endLine: doc.lines.length, tokens: total }],
    next,
    redactions: 0,
  });
}

/**
 * A file over the document limit: never whole, so its size and the calls
 * that serve it in ranges — or, with a strategy, its first or last lines
 * (`middle` is served as `start`: its end is one `strategy: "end"` away).
 */
async function readLarge(ws: Workspace, caller: Caller, path: string, options: ReadFileOptions): Promise<Served> {
  const budget = callBudget(caller, options.maxTokens, 'readFile', path);
  const room = budget - 120;
  if (options.strategy === 'end') {
    const src = await openTail(ws, path, 'readFile', room);
    // The last lines that fit, counted back from the end.
    let start = src.total + 1;
    let used = 0;
    while (start > src.first && used + src.tokens(start - 1) + 2 <= room - 100) used += src.tokens(--start) + 2;
    start = Math.min(start, src.total);
    let r = renderRange(ws, src, start, src.total, 1, room, 'truncated');
    // The count above is an estimate: move the start down until the last line shows.
    for (let i = 0; r !== undefined && r.last < src.total && start < src.total && i < 20; i++) {
      start = Math.min(src.total, start + Math.max(1, src.total - r.last));
      r = renderRange(ws, src, start, src.total, 1, room, 'truncated');
    }
    if (r === undefined) return overBudget(ws, caller, src.source, budget);
    const before = callText('readLines', [path, Math.max(1, start - (r.last - start + 1)), Math.max(1, start - 1)]);
    return serve(ws, caller, 'readFile', src.source, r.body, {
      view: 'truncated',
      startLine: start,
      endLine: r.last,
      omitted: start > 1 ? [{ startLine: 1, endLine: start - 1, tokens: Math.max(0, totalTokensOf(ws, src.source)) }] : [],
      next: start > 1 ? before : r.next,
      redactions: src.findings,
      label: `${r.label} (strategy end)`,
    });
  }
  const src = await openLines(ws, caller, path, 'readFile', 1, 1 + budget);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, src.source, budget);
  if (options.strategy !== undefined) {
    const r = renderRange(ws, src, 1, src.total, 1, room, 'truncated');
    if (r === undefined) return overBudget(ws, caller, src.source, budget);
    return serve(ws, caller, 'readFile', src.source, r.body, {
      view: 'truncated',
      startLine: 1,
      endLine: r.last,
      omitted: r.omitted,
      next: r.next,
      redactions: src.findings,
      label: `${r.label} (strategy start)`,
    });
  }
  const fit = lastLineFitting(src.tokens, 1, src.last, room - 80);
  const first = callText('readLines', [path, 1, Math.max(1, fit)]);
  const size = 'totalLines' in src.source ? src.source.size : 0;
  const body = [
    `${path} is ${size.toLocaleString('en-US')} bytes in ${src.total.toLocaleString('en-US')} lines (about ${totalTokensOf(ws, src.source).toLocaleString('en-US')} tokens): too large to load whole, so it is served in ranges.`,
    `Read it with ${first} and on from there, ${callText('readFile', [path], { strategy: 'end' })} for its last lines, or search it for a pattern with ${callShape('grep', { path })}.`,
  ].join('\n');
  return serve(ws, caller, 'readFile', src.source, body, {
    view: 'narrow',
    omitted: [{ startLine: 1, endLine: src.total, tokens: totalTokensOf(ws, src.source) }],
    next: first,
    redactions: 0,
  });
}

/** Serves a file within budget. */
export async function readFile(ws: Workspace, caller: Caller, path: string, options: ReadFileOptions = {}): Promise<Served> {
  let doc: Document;
  try {
    doc = await loadDocument(ws, path, 'readFile');
  } catch (err) {
    if (isFsError(err, 'ETOOLARGE')) return await readLarge(ws, caller, path, options);
    throw err;
  }
  const budget = callBudget(caller, options.maxTokens, 'readFile', path);
  if (budget < MIN_USEFUL_TOKENS) return overBudget(ws, caller, doc, budget);
  const { lines, findings } = redactedLines(ws, doc);
  const tokens = lineTokens(ws, doc);
  const total = documentTokens(ws, doc);
  const fullLabel = `1-${doc.lines.length} of ${doc.lines.length}`;
  const overhead = wrapperTokens(ws, doc, fullLabel, 'full');
  if (total + overhead <= budget && wrappedTokens(ws, doc, lines.join('\n'), fullLabel, 'full') <= budget) {
    return serve(ws, caller, 'readFile', doc, lines.join('\n'), {
      view: 'full',
      startLine: 1,
      endLine: doc.lines.length,
      omitted: [],
      redactions: findings,
      label: fullLabel,
    });
  }
  if (!options.strategy) return narrow(ws, caller, doc, budget);

  const strategy = options.strategy;
  let room = budget - wrapperTokens(ws, doc, `cut of ${doc.lines.length}`, 'truncated') - 40;
  for (let attempt = 0; attempt < 6; attempt++) {
    const spans = keptSpans(tokens, Math.max(0, room), strategy).filter(([a, b]) => b > a);
    const parts: string[] = [];
    const omitted: Omission[] = [];
    let cursor = 0;
    for (const [a, b] of spans) {
      if (a > cursor) {
        const t = sum(tokens, cursor, a);
        omitted.push({ startLine: cursor + 1, endLine: a, tokens: t });
        parts.push(cutMarker(path, cursor + 1, a, t));
      }
      parts.push(lines.slice(a, b).join('\n'));
      cursor = b;
    }
    if (cursor < lines.length) {
      const t = sum(tokens, cursor, lines.length);
      omitted.push({ startLine: cursor + 1, endLine: lines.length, tokens: t });
      parts.push(cutMarker(path, cursor + 1, lines.length, t));
    }
    let body = parts.join('\n');
    const keptLines = spans.reduce((a, [x, y]) => a + (y - x), 0);
    let next = omitted[0] === undefined ? undefined : callText('readLines', [path, omitted[0].startLine, omitted[0].endLine]);
    if (keptLines === 0) {
      // One huge line (minified code): cut inside it by tokens instead.
      const cut = truncateTokens(ws.tokenizer, lines.join('\n'), Math.max(0, room), strategy, '\n[… cut …]\n');
      // A cut from the start ends inside a line: the next call reads on from the column where it stopped, not the line again.
      const lineEnd = cut.text.lastIndexOf('\n');
      const line = strategy === 'start' ? cut.text.split('\n').length : 1;
      next = strategy === 'start' ? callText('readLines', [path, line, line], { column: cut.text.length - lineEnd }) : callText('readLines', [path, 1, 1]);
      body = `${cut.text}\n[… ${cut.totalTokens - cut.tokens} of ${cut.totalTokens} tokens cut (strategy ${strategy}); the file has ${plural(lines.length, 'line')}; ${next} reads ${strategy === 'start' ? 'on from where this stops' : 'it in pieces'} …]`;
      omitted.length = 0;
      omitted.push({ startLine: 1, endLine: lines.length, tokens: cut.totalTokens - cut.tokens });
    }
    const served = await serveIfFits(ws, caller, doc, body, budget, {
      view: 'truncated',
      omitted,
      redactions: findings,
      next,
      label: `${keptLines} of ${lines.length} lines (strategy ${strategy})`,
      ...(spans.length === 1 && spans[0] ? { startLine: spans[0][0] + 1, endLine: spans[0][1] } : {}),
    });
    if (served) return served;
    room -= Math.max(16, Math.ceil(room * 0.1));
  }
  return narrow(ws, caller, doc, budget);
}

async function serveIfFits(
  ws: Workspace,
  caller: Caller,
  doc: Document,
  body: string,
  budget: number,
  fields: Parameters<typeof serve>[5],
): Promise<Served | undefined> {
  if (wrappedTokens(ws, doc, body, fields.label, fields.view) > budget) return undefined;
  return serve(ws, caller, 'readFile', doc, body, fields);
}
