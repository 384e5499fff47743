/**
 * The lines a range read serves from, whatever the file's size: a loaded
 * document's lines, or — for a file over the document limit — a window of
 * them read by streaming, so `readLines` and `getExcerpt` work on files of
 * any size with memory bounded by what one call can show.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { type LineWindow, readLineWindow, type WindowRequest } from '../content/line-window.ts';
import { type Caller, lineTokens, loadDocument, missingFile, noteRead, redactedLines, type Source, type Workspace } from './shared.ts';

/** Lines of one file at one version, redacted, numbered from 1. */
export interface LineSource {
  readonly source: Source;
  readonly path: string;
  readonly total: number;
  /** First and last line whose text is at hand. */
  readonly first: number;
  readonly last: number;
  /** The redacted text of line `n`; line `from` starts at the requested column. */
  text(n: number): string;
  /** Tokens of `text(n)` with its newline. */
  tokens(n: number): number;
  /** Characters of line `n` after `text(n)` that were not read (a line longer than a call can show). */
  rest(n: number): number;
  /** Characters of the whole of line `n`, whatever column it was opened at and however much of it was read. */
  length(n: number): number;
  /** Secrets masked in what is at hand. */
  readonly findings: number;
}

/**
 * The last line from `from` on, up to `last`, such that lines `from`..it,
 * numbered (about two tokens a line), fit `room` tokens; `from - 1` when
 * not even line `from` does. `tokens(n)` is line `n`'s cost.
 */
export function lastLineFitting(tokens: (line: number) => number, from: number, last: number, room: number): number {
  let used = 0;
  let n = from - 1;
  while (n < last && used + tokens(n + 1) + 2 <= room) used += tokens(++n) + 2;
  return n;
}

/** Lines kept above a streamed window so a secret that starts above it is still recognised. */
const REDACTION_CONTEXT_LINES = 64;

/**
 * Opens lines `from`..`to` of `path` (and, for a loaded document, all the
 * others), with line `from` starting at `column` (1-based).
 */
export async function openLines(ws: Workspace, caller: Caller, path: string, op: string, from: number, to: number, column = 1): Promise<LineSource> {
  try {
    const doc = await loadDocument(ws, path, op);
    const { lines, findings } = redactedLines(ws, doc);
    const counts = lineTokens(ws, doc);
    const shifted = column > 1 ? (lines[from - 1] ?? '').slice(column - 1) : undefined;
    const shiftedTokens = shifted === undefined ? 0 : ws.tokenizer.count(`${shifted}\n`);
    return {
      source: doc,
      path,
      total: doc.lines.length,
      first: 1,
      last: doc.lines.length,
      text: (n) => (n === from && shifted !== undefined ? shifted : (lines[n - 1] ?? '')),
      tokens: (n) => (n === from && shifted !== undefined ? shiftedTokens : (counts[n - 1] ?? 0)),
      rest: () => 0,
      length: (n) => (lines[n - 1] ?? '').length,
      findings,
    };
  } catch (err) {
    if (!isFsError(err, 'ETOOLARGE')) throw err;
  }
  return await streamedLines(ws, caller, path, op, from, to, column);
}

/**
 * The last lines of a file over the document limit, as many as `tokens`
 * could show (a file under the limit: `openLines` serves every line).
 */
export async function openTail(ws: Workspace, path: string, op: string, tokens: number): Promise<LineSource> {
  const window = await streamWindow(ws, path, op, { tailChars: tokens * 8 }, tokens * 8);
  return fromWindow(ws, window, window.firstLine, window.firstLine + window.lines.length - 1, 1);
}

async function streamWindow(ws: Workspace, path: string, op: string, request: WindowRequest, maxLineChars: number): Promise<LineWindow> {
  let window: LineWindow;
  try {
    window = await readLineWindow(ws.fs, path, request, maxLineChars, op);
  } catch (err) {
    if (isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR')) throw missingFile(ws, path, op, err);
    throw err;
  }
  await noteRead(ws, path, { sha256: window.sha256, size: window.size, mtimeMs: window.mtimeMs, head: window.head });
  return window;
}

async function streamedLines(ws: Workspace, caller: Caller, path: string, op: string, from: number, to: number, column: number): Promise<LineSource> {
  const budget = caller.profile.perCallTokens;
  // A numbered line costs at least two tokens, and a token at least one character.
  const last = Math.min(to, from + Math.ceil(budget / 2));
  const window = await streamWindow(ws, path, op, { from, to: last, before: REDACTION_CONTEXT_LINES }, budget * 8 + column);
  return fromWindow(ws, window, from, last, column);
}

function fromWindow(ws: Workspace, window: LineWindow, from: number, last: number, column: number): LineSource {
  const redaction = ws.redactor.redact(window.lines.join('\n'));
  const redacted = redaction.findings.length === 0 ? window.lines : redaction.text.split('\n');
  const at = (n: number): string => redacted[n - window.firstLine] ?? '';
  const memo = new Map<number, number>();
  const text = (n: number): string => (n === from && column > 1 ? at(n).slice(column - 1) : at(n));
  return {
    source: window,
    path: window.path,
    total: window.totalLines,
    first: Math.min(from, window.totalLines),
    last: Math.min(last, window.totalLines),
    text,
    tokens(n) {
      let t = memo.get(n);
      if (t === undefined) {
        t = ws.tokenizer.count(`${text(n)}\n`);
        memo.set(n, t);
      }
      return t;
    },
    rest: (n) => window.cut.get(n) ?? 0,
    length: (n) => at(n).length + (window.cut.get(n) ?? 0),
    findings: redaction.findings.filter((f) => f.line > from - window.firstLine).length,
  };
}
