/**
 * What every search call returns, and how it is made: rows added while they
 * fit the call's budget, the whole wrapped in delimiters, counted by the
 * tokenizer, charged to the session and written to the audit log. A search
 * result spans many files, so it is not a `Served` (one file, one version):
 * it says how much was found, how much is shown, and the call that shows
 * the rest.
 *
 * @module
 */

import { type Caller, MIN_USEFUL_TOKENS, raiseBudget, sessionSpentNotice, sessionTokensLeft, type Workspace } from '../retrieval/shared.ts';
import { wrapContent } from '../safety/delimiters.ts';
import { plural } from './narrowing.ts';

/** The search operations. */
export type SearchOp = 'listFiles' | 'glob' | 'grep' | 'findSymbol';

/** What `text` lists. */
export type SearchView = 'files' | 'matches' | 'count' | 'symbols' | 'over-budget';

/** How much was found and how much of it is shown. */
export interface SearchCounts {
  /** Entries in `text`: files (listFiles, glob, grep `files` and `count`), matching lines (grep `content`), definitions (findSymbol). */
  readonly shown: number;
  /** Entries found in all, of the same kind as `shown`; a lower bound when `exact` is false. */
  readonly total: number;
  /** Whether `total` is exact (false when counting stopped at a cap). */
  readonly exact: boolean;
  /** Files holding what was found. */
  readonly files: number;
  /** Entries skipped by `offset` before the first one shown. */
  readonly skipped: number;
  /** Sensitive files in scope that were left out (search them with `includeSensitive`). */
  readonly sensitiveLeftOut: number;
}

/**
 * The result of `listFiles`, `glob`, `grep` and `findSymbol`.
 *
 * @example
 * ```ts
 * const r = await ctx.grep('retries', { path: 'src' });
 * r.text;      // header, then <file path="src" view="grep" …> src/a.ts / 12:\tretries = 3 … </file …>
 * r.counts;    // { shown: 40, total: 57, exact: true, files: 12, skipped: 0, sensitiveLeftOut: 0 }
 * r.truncated; // true
 * r.next;      // 'grep("retries", {path: "src/net"})' — a call that fits this profile
 * ```
 */
export interface SearchResult<Item = unknown> {
  readonly op: SearchOp;
  readonly view: SearchView;
  /** What to hand to the model: a header line, then the listing (redacted) between delimiters, then what was left out and how to get it. */
  readonly text: string;
  /** o200k tokens of `text`; never above the call's budget. */
  readonly tokens: number;
  readonly counts: SearchCounts;
  /** Something found is not in `text` (a cap, the budget, or `offset`). */
  readonly truncated: boolean;
  /** A call that shows what is missing and fits the caller's profile, when something is. */
  readonly next?: string | undefined;
  /** Secrets masked in `text`. */
  readonly redactions: number;
  /** The entries shown, as data. */
  readonly items: readonly Item[];
}

/** One line of a listing, with the item it stands for. */
export interface Row<Item> {
  readonly text: string;
  readonly item: Item;
  /** Lines of file content this row serves (recorded as reads). */
  readonly read?: { readonly path: string; readonly sha256: string; readonly startLine: number; readonly endLine: number } | undefined;
  /** Lines of the row that carry a redaction mask. */
  readonly masks?: number | undefined;
}

/** Everything {@link renderSearch} needs. */
export interface SearchDraft<Item> {
  readonly op: SearchOp;
  readonly view: Exclude<SearchView, 'over-budget'>;
  /** The line before the listing: what was searched and how much was found. */
  readonly header: (shown: number) => string;
  /** Rows in order; taken while they fit. */
  readonly rows: readonly Row<Item>[];
  /** What the listing's delimiters name (the scope searched). */
  readonly scope: string;
  /** Entries found in all (rows hold the ones after `offset`, up to the limit or a little past). */
  readonly total: number;
  readonly exact: boolean;
  readonly files: number;
  readonly skipped: number;
  readonly sensitiveLeftOut: number;
  /** Rows a row stands for in `counts.shown` (grep content: matching lines, not context lines). */
  readonly weight?: (item: Item) => number;
  /** Lines after the listing when everything found is shown (notes). */
  readonly notes?: readonly string[];
  /**
   * The note and call for what is left out, given how many rows were shown
   * and the tokens an entry took on average; `undefined` when nothing is.
   */
  readonly rest: (shown: number, tokensPerEntry: () => number) => { note: string; next: string | undefined } | undefined;
  readonly budget: number;
  /** The same call with the profile's largest budget, offered when even one row does not fit. */
  readonly retry: string;
}

/**
 * Renders a draft within its budget: rows are taken while the wrapped text
 * fits (counted row by row, then checked exactly, dropping rows until it
 * does), and the result is charged and recorded.
 */
export async function renderSearch<Item>(ws: Workspace, caller: Caller, input: SearchDraft<Item>): Promise<SearchResult<Item>> {
  // Names and paths are repository content too: every row passes the redactor (grep's lines already did, on their whole file).
  const draft: SearchDraft<Item> = {
    ...input,
    rows: input.rows.map((r) => {
      const red = ws.redactor.redact(r.text);
      return red.findings.length === 0 ? r : { ...r, text: red.text, masks: (r.masks ?? 0) + red.findings.length };
    }),
  };
  const masked = (text: string) => ws.redactor.redact(text).text;
  const weight = draft.weight ?? (() => 1);
  const rowTokens: number[] = [];
  const costOf = (i: number) => {
    rowTokens[i] ??= ws.tokenizer.count(`${(draft.rows[i] as Row<Item>).text}\n`);
    return rowTokens[i] as number;
  };
  const compose = (taken: number) => {
    const rows = draft.rows.slice(0, taken);
    let shown = 0;
    for (let i = 0; i < taken; i++) shown += weight((draft.rows[i] as Row<Item>).item);
    // Rows are counted one by one only when something is left to advise on.
    const perEntry = (): number => {
      let rowCost = 0;
      for (let i = 0; i < taken; i++) rowCost += costOf(i);
      return shown === 0 ? 0 : rowCost / shown;
    };
    const rest = draft.rest(shown, perEntry);
    const body = rows.map((r) => r.text).join('\n');
    const listing = rows.length === 0 ? '' : wrapContent(body, { path: draft.scope === '' ? '.' : draft.scope, view: draft.view });
    const tail = [...(rest ? [rest.note] : []), ...(draft.notes ?? [])];
    // The header and notes echo the caller's pattern: a secret typed there is masked too.
    const text = [masked(draft.header(shown)), listing, ...tail.map(masked)].filter((part) => part !== '').join('\n');
    return { text, rows, shown, rest };
  };
  // Most listings fit whole: when the characters say they likely do, count the
  // whole once and be done, instead of every row and then the whole.
  const chars = draft.rows.reduce((n, r) => n + r.text.length + 1, 0);
  let out = compose(draft.rows.length);
  let taken = draft.rows.length;
  let tokens = chars <= draft.budget * 2 ? ws.tokenizer.count(out.text) : Number.POSITIVE_INFINITY;
  if (tokens > draft.budget) {
    // Rows a first pass can afford, from per-row counts (BPE may merge across a
    // newline, so the whole is counted exactly afterwards).
    let used = ws.tokenizer.count(compose(0).text) + 40;
    taken = 0;
    while (taken < draft.rows.length && used + costOf(taken) <= draft.budget) used += costOf(taken++);
    out = compose(taken);
    tokens = ws.tokenizer.count(out.text);
  }
  while (tokens > draft.budget && taken > 0) {
    taken = Math.max(0, taken - Math.max(1, Math.ceil(taken * 0.1)));
    out = compose(taken);
    tokens = ws.tokenizer.count(out.text);
  }
  if (tokens > draft.budget) return overBudgetSearch(ws, caller, draft.op, draft.budget, draft.retry);
  const result: SearchResult<Item> = {
    op: draft.op,
    view: draft.view,
    text: out.text,
    tokens,
    counts: {
      shown: out.shown,
      total: draft.total,
      exact: draft.exact,
      files: draft.files,
      skipped: draft.skipped,
      sensitiveLeftOut: draft.sensitiveLeftOut,
    },
    truncated: out.rest !== undefined,
    next: out.rest?.next === undefined ? undefined : masked(out.rest.next),
    redactions: out.rows.reduce((n, r) => n + (r.masks ?? 0), 0),
    items: out.rows.map((r) => r.item),
  };
  await record(ws, caller, draft.op, out.rows, (i) => costOf(i), tokens);
  return result;
}

/** Charges the result to the session: reads of the files whose lines it shows, the rest as a charge (the safety layer audits the call). */
async function record<Item>(
  ws: Workspace,
  caller: Caller,
  op: SearchOp,
  rows: readonly Row<Item>[],
  costOf: (row: number) => number,
  tokens: number,
): Promise<void> {
  const reads = new Map<string, { path: string; sha256: string; startLine: number; endLine: number; tokens: number }>();
  for (const [i, r] of rows.entries()) {
    if (r.read === undefined) continue;
    const at = reads.get(r.read.path);
    const cost = costOf(i);
    if (at === undefined) reads.set(r.read.path, { ...r.read, tokens: cost });
    else {
      at.startLine = Math.min(at.startLine, r.read.startLine);
      at.endLine = Math.max(at.endLine, r.read.endLine);
      at.tokens += cost;
    }
  }
  let charged = 0;
  const shares = [...reads.values()].map((read) => {
    // Per-row counts may sum past the whole (BPE merges); the session is charged exactly `tokens`.
    const share = Math.min(read.tokens, tokens - charged);
    charged += share;
    return { agent: caller.agent, ...read, op, tokens: share };
  });
  await ws.store.transaction(async () => {
    await caller.session.recordReads(shares);
    await ws.registry.recordAccesses(shares.map((r) => r.path));
    if (tokens > charged) await caller.session.charge(tokens - charged);
  });
}

/** The answer when the call's budget cannot hold a useful listing, or the session is spent. */
export function overBudgetSearch<Item>(ws: Workspace, caller: Caller, op: SearchOp, budget: number, retry: string): SearchResult<Item> {
  const perCall = sessionTokensLeft(caller) > budget;
  const text = perCall
    ? `The budget of this call (${budget} tokens) cannot hold even one entry of ${op}. Narrow the search${raiseBudget(caller)}.`
    : sessionSpentNotice(caller);
  return {
    op,
    view: 'over-budget',
    text,
    tokens: ws.tokenizer.count(text),
    counts: { shown: 0, total: 0, exact: false, files: 0, skipped: 0, sensitiveLeftOut: 0 },
    truncated: true,
    next: perCall ? retry : undefined,
    redactions: 0,
    items: [],
  };
}

/** The header's range of the entries shown (`, showing lines 41-90`): nothing when all or none of them are. */
export function shownRange(offset: number, shown: number, total: number, what = ''): string {
  return shown > 0 && shown < total ? `, showing ${what}${offset + 1}-${offset + shown}` : '';
}

/**
 * The note and call of a page asked for at or past the end of what was
 * found, or `undefined` when the page is not past it: the offset would
 * otherwise show nothing, and nothing would say why or where the last
 * entries are.
 */
export function pastTheEnd(offset: number, shown: number, total: number, noun: string, lastPage: string): { note: string; next: string } | undefined {
  if (shown > 0 || total === 0 || offset < total) return undefined;
  return { note: `[offset ${offset} is past the ${plural(total, noun)} found; ${lastPage} shows the last of them]`, next: lastPage };
}

/** The offset of the last page of `limit` entries out of `total`; `undefined` for the first. */
export function lastPageOffset(total: number, limit: number): number | undefined {
  const offset = Math.max(0, total - limit);
  return offset === 0 ? undefined : offset;
}

/** Whether a call's budget can hold any listing at all. */
export function tooSmall(budget: number): boolean {
  return budget < MIN_USEFUL_TOKENS;
}
