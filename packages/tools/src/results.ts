/**
 * The shapes tool results take: one schema per kind of result (something
 * served, a search, an edit, a history listing), and the conversion from the
 * context layer's result to the text a model reads and the data a program
 * reads. Data fields are snake_case like the arguments.
 *
 * @module
 */

import {
  type ContextSession,
  type EditResult,
  type GrepHit,
  type GrepResult,
  type ListedFile,
  type ListingResult,
  o200kTokenizer,
  relativeStart,
  type SearchResult,
  type Served,
  truncateTokens,
} from '@ctxfs/context';
import { z } from 'zod';
import { once, type ToolResult } from './definition.ts';

// Each shape is built when first asked for: by a tool's output schema (`output: servedDataSchema`), or when the
// package's index loads (`shapes.ts`: its exports `servedData`, `searchData`, `editData`). A process that runs one
// tool through `@ctxfs/tools/toolset` (the CLI) builds none of them.
const int = once(() => z.number().int());

/** Lines left out of a served view. */
const omission = once(() => z.object({ start_line: int(), end_line: int(), tokens: int() }));

/** Something served from a file: a whole file, lines, an outline, a symbol, a summary. */
export const servedDataSchema = once(() =>
  z.object({
    path: z.string(),
    version: z.string().describe('Content hash of the file as served; an edit based on this read names it as base_version.'),
    view: z.string().describe('full, truncated, lines, excerpt, symbol, outline, summary, related, narrow or over-budget'),
    tokens: int(),
    total_lines: int(),
    total_tokens: int(),
    start_line: int().optional(),
    end_line: int().optional(),
    omitted: z.array(omission()),
    next: z.string().optional().describe('A call that serves what is missing.'),
    redactions: int(),
  }),
);
export type ServedData = z.infer<ReturnType<typeof servedDataSchema>>;

/**
 * A result's text: what the model reads, with the way on when the text does
 * not already say it — unless that line would take the text (of `tokens`)
 * over the call's `budget`; `data.next` carries it either way.
 */
export function withNext(text: string, next: string | undefined, tokens?: number, budget = Number.POSITIVE_INFINITY): string {
  if (next === undefined || text.includes(next)) return text;
  const line = `\n[next: ${next}]`;
  if (budget !== Number.POSITIVE_INFINITY && (tokens ?? o200kTokenizer.count(text)) + o200kTokenizer.count(line) > budget) return text;
  return `${text}${line}`;
}

/**
 * An answer that could serve nothing for its budget is an error result, so it
 * starts with its code as every error result does (`ELIMIT`, a budget's code).
 */
function overBudgetText(view: string, text: string): string {
  return view === 'over-budget' ? `ELIMIT: ${text}` : text;
}

/** A context-layer read as a tool result; `budget` is the call's token budget (the profile's, or less). */
export function servedResult(r: Served, budget?: number): ToolResult<ServedData> {
  return {
    text: overBudgetText(r.view, withNext(r.text, r.next, r.tokens, budget)),
    // Nothing of the file could be served (the session's budget is spent, or the call's cannot hold a line).
    isError: r.view === 'over-budget',
    data: {
      path: r.path,
      version: r.version,
      view: r.view,
      tokens: r.tokens,
      total_lines: r.totalLines,
      total_tokens: r.totalTokens,
      start_line: r.startLine,
      end_line: r.endLine,
      omitted: r.omitted.map((o) => ({ start_line: o.startLine, end_line: o.endLine, tokens: o.tokens })),
      next: r.next,
      redactions: r.redactions,
    },
  };
}

/** A listing or a search: what was found, how much of it is shown, the way to the rest. */
export const searchDataSchema = once(() =>
  z.object({
    view: z.string().describe('files, matches, count, symbols or over-budget'),
    tokens: int(),
    shown: int(),
    total: int().describe('Entries found in all (a lower bound when exact is false).'),
    exact: z.boolean(),
    files: int(),
    skipped: int().describe('Files not searched (binary, over the size limit, unreadable).'),
    sensitive_left_out: int(),
    truncated: z.boolean(),
    next: z.string().optional(),
    redactions: int(),
    items: z.array(z.record(z.string(), z.unknown())).describe('The entries shown, as data.'),
  }),
);
export type SearchData = z.infer<ReturnType<typeof searchDataSchema>>;

/** A context-layer search as a tool result, but for its items: what every search says of what it found. */
function searchEnvelope(r: SearchResult<unknown>, budget: number | undefined): ToolResult<Omit<SearchData, 'items'>> {
  return {
    text: overBudgetText(r.view, withNext(r.text, r.next, r.tokens, budget)),
    isError: r.view === 'over-budget',
    data: {
      view: r.view,
      tokens: r.tokens,
      shown: r.counts.shown,
      total: r.counts.total,
      exact: r.counts.exact,
      files: r.counts.files,
      skipped: r.counts.skipped,
      sensitive_left_out: r.counts.sensitiveLeftOut,
      truncated: r.truncated,
      next: r.next,
      redactions: r.redactions,
    },
  };
}

/** A context-layer search as a tool result; `item` turns each entry into plain data. */
export function searchResult<Item>(r: SearchResult<Item>, item: (i: Item) => Record<string, unknown>, budget?: number): ToolResult<SearchData> {
  const result = searchEnvelope(r, budget);
  return { ...result, data: { ...result.data, items: r.items.map(item) } };
}

/**
 * A row of `list_files`, as little as the text says: some MCP clients hand
 * the model this data instead of the text, so a field every row repeats is
 * paid for once per entry.
 */
const listedItem = once(() =>
  z.object({
    name: z.string().describe('Path relative to dir: dir joined with it is the path the next call takes.'),
    kind: z.literal('directory').optional().describe('Set on a directory, which stands for the files below depth; absent on a file.'),
    size: int().optional().describe('Bytes (files).'),
    files: int().optional().describe('Files below the directory that the listing counts (directories).'),
    lines: int().optional().describe('Lines, when known (files the symbol index has read).'),
    generated: z.literal(true).optional().describe('Generated (build output, a lock file, a generated marker): edit its source instead.'),
    sensitive: z.literal(true).optional().describe('Credentials by name or by the policy; listed only where the policy lets this caller see it.'),
  }),
);

/** A listing: the search shape, with its rows named relative to the directory listed. */
export const listingDataSchema = once(() =>
  searchDataSchema().extend({
    view: z.string().describe('files, or over-budget'),
    skipped: int().describe('Rows skipped by offset before the first one shown.'),
    dir: z.string().describe("The directory the items' names are relative to: the one listed, or '' (the root, or a listing of one file)."),
    items: z.array(listedItem()).describe('The entries shown, as data.'),
  }),
);
export type ListingData = z.infer<ReturnType<typeof listingDataSchema>>;

/** A glob's matches: a listing's shape, each match its name and, when true, sensitive. */
export const globDataSchema = once(() =>
  listingDataSchema().extend({
    dir: z.string().describe("The directory the items' names are relative to: the deepest one the matches shown share, or '' (none shared, or one match)."),
    items: z.array(listedItem().pick({ name: true, sensitive: true })).describe('The matches shown, as data.'),
  }),
);
export type GlobData = z.infer<ReturnType<typeof globDataSchema>>;

/** A listed entry as `list_files` data: named relative to `start` characters of its path, only what is set. */
function listedData(f: ListedFile, start: number): ListingData['items'][number] {
  const item: ListingData['items'][number] = { name: f.path.slice(start) };
  if (f.kind === 'directory') item.kind = 'directory';
  if (f.size !== undefined) item.size = f.size;
  if (f.files !== undefined && f.kind === 'directory') item.files = f.files;
  if (f.lines !== undefined) item.lines = f.lines;
  if (f.tags?.includes('generated') === true) item.generated = true;
  if (f.sensitive) item.sensitive = true;
  return item;
}

/** A context-layer listing or glob as a tool result (a glob's entries are files with a name and no size: its own shape). */
export function listingResult(r: ListingResult, budget?: number): ToolResult<ListingData> {
  const start = relativeStart(r.dir);
  const result = searchEnvelope(r, budget);
  return { ...result, data: { ...result.data, dir: r.dir, items: r.items.map((f) => listedData(f, start)) } };
}

/** A matching line of `grep` as data: its number, its text as shown, the lines shown around it when there are any. */
const grepLine = once(() =>
  z.object({
    line: int(),
    text: z.string().optional().describe('The line as shown (redacted, a long line cut around the match); absent when the file is over the document limit.'),
    before: z.array(z.string()).optional().describe('The lines shown just before it, in order (context_lines), when there are any.'),
    after: z.array(z.string()).optional().describe('The lines shown just after it, in order, when there are any.'),
  }),
);

/**
 * A file of `grep`, as the text groups it: its name and match count once, then
 * its lines shown (output content). Some MCP clients hand the model this
 * data instead of the text: what a file's every line would repeat is said once.
 */
const grepFile = once(() =>
  z.object({
    name: z.string().describe('Path relative to dir: dir joined with it is the path the next call takes.'),
    matches: int().describe('Matching lines in the file (at least, for the last file of a count that was not exact).'),
    version: z.string().optional().describe('Content hash of the file its lines were served from (output content).'),
    lines: z.array(grepLine()).optional().describe('The matching lines shown (output content).'),
  }),
);

/** A grep's result: the search shape, with its files named relative to the directory they share. */
export const grepDataSchema = once(() =>
  searchDataSchema().extend({
    view: z.string().describe('matches, files, count, or over-budget'),
    shown: int().describe('Entries shown: matching lines (matches), or files (files, count).'),
    dir: z.string().describe("The directory the items' names are relative to: the deepest one the files shown share, or '' (none shared, or one file)."),
    items: z.array(grepFile()).describe('The files shown, as data, in the order the text gives them.'),
  }),
);
export type GrepData = z.infer<ReturnType<typeof grepDataSchema>>;

/** `grep`'s hits as its data: consecutive hits of one file under one entry, named relative to `start` characters of its path. */
function grepFiles(hits: readonly GrepHit[], start: number): GrepData['items'] {
  const files: GrepData['items'] = [];
  let last: { path: string; file: GrepData['items'][number]; lines: NonNullable<GrepData['items'][number]['lines']> } | undefined;
  for (const h of hits) {
    if (last?.path !== h.path) {
      last = { path: h.path, file: { name: h.path.slice(start), matches: h.matches }, lines: [] };
      files.push(last.file);
    }
    // A list of files (line 0) has no lines; a file over the document limit has no version and no text.
    if (h.line === 0) continue;
    const line: (typeof last.lines)[number] = { line: h.line };
    if (h.version !== '') {
      last.file.version = h.version;
      line.text = h.text;
    }
    if (h.before.length > 0) line.before = h.before.map((c) => c.text);
    if (h.after.length > 0) line.after = h.after.map((c) => c.text);
    last.lines.push(line);
    last.file.lines = last.lines;
  }
  return files;
}

/** A context-layer grep as a tool result. */
export function grepResult(r: GrepResult, budget?: number): ToolResult<GrepData> {
  const result = searchEnvelope(r, budget);
  return { ...result, data: { ...result.data, dir: r.dir, items: grepFiles(r.items, relativeStart(r.dir)) } };
}

const lineRange = once(() => z.object({ start: int(), end: int() }));

/** A change, applied or refused. */
export const editDataSchema = once(() =>
  z.object({
    success: z.boolean(),
    message: z.string(),
    code: z.string().optional().describe('Stable code of a refusal: ECONFLICT, ENOENT, EEXIST, EINVAL, EBINARY, EDENIED, ...'),
    op: z.string(),
    path: z.string(),
    version: z.string().optional().describe('Content hash of the file now: the base_version of the next edit.'),
    previous_version: z.string().optional(),
    seq: int().optional().describe('History position of the new version.'),
    diff: z.string(),
    lines_added: int(),
    lines_removed: int(),
    merged: z.boolean().describe('Applied by merging with changes made since your read.'),
    unchanged: z.boolean(),
    next: z.string().optional(),
    files: z.array(
      z.object({
        path: z.string(),
        op: z.string(),
        version: z.string().optional(),
        previous_version: z.string().optional(),
        seq: int().optional(),
        lines_added: int(),
        lines_removed: int(),
        merged: z.boolean(),
      }),
    ),
    conflict: z
      .object({
        type: z.string(),
        base_version: z.string().optional(),
        current_version: z.string().optional(),
        changed_by: z.array(z.string()),
        lines: z.array(lineRange()),
        their_diff: z.string().optional(),
        marked_text: z.string().optional(),
      })
      .optional(),
    stale_readers: z.array(z.object({ agent: z.string(), version: z.string() })),
    dry_run: z.boolean().optional().describe('A dry run: diff is what the change would be; nothing was written.'),
  }),
);
export type EditData = z.infer<ReturnType<typeof editDataSchema>>;

/** A context-layer change as a tool result; a refusal is an error result whose text says what to do. */
export function editResult(r: EditResult, maxTokens?: number): ToolResult<EditData> {
  // A refusal leads with its code, as every other tool error does.
  const parts = [r.success || r.code === undefined ? r.message : `${r.code}: ${r.message}`];
  // The diff is cut to what the call may serve (a one-line minified file's diff is the whole file), in the text and in
  // the data alike: structured content is served too, and a whole-file diff can be larger than a client takes at once.
  const room = maxTokens === undefined ? undefined : maxTokens - o200kTokenizer.count(r.message) - 40;
  const cut =
    room === undefined || r.diff === '' ? undefined : withinBudget(r.diff.trimEnd(), room, 'the diff is cut here; read the changed lines to see them');
  const diff = cut?.truncated === true ? cut.text : r.diff;
  if (diff !== '') parts.push(diff.trimEnd());
  return {
    text: withNext(parts.join('\n'), r.next),
    isError: !r.success,
    data: {
      success: r.success,
      message: r.message,
      code: r.code,
      op: r.op,
      path: r.path,
      version: r.version,
      previous_version: r.previousVersion,
      seq: r.seq,
      diff,
      lines_added: r.linesAdded,
      lines_removed: r.linesRemoved,
      merged: r.merged,
      unchanged: r.unchanged,
      next: r.next,
      files: r.files.map((f) => ({
        path: f.path,
        op: f.op,
        version: f.version,
        previous_version: f.previousVersion,
        seq: f.seq,
        lines_added: f.linesAdded,
        lines_removed: f.linesRemoved,
        merged: f.merged,
      })),
      conflict:
        r.conflict === undefined
          ? undefined
          : {
              type: r.conflict.type,
              base_version: r.conflict.baseVersion,
              current_version: r.conflict.currentVersion,
              changed_by: [...r.conflict.changedBy],
              lines: r.conflict.lines.map((l) => ({ start: l.start, end: l.end })),
              their_diff: r.conflict.theirsDiff,
              marked_text: r.conflict.markedText,
            },
      stale_readers: r.staleReaders.map((s) => ({ agent: s.agent, version: s.version })),
      ...(r.dryRun ? { dry_run: true } : {}),
    },
  };
}

/**
 * Text that is not budgeted by the layer (a diff between two versions) cut
 * to the caller's per-call budget, saying so.
 */
export function withinBudget(text: string, maxTokens: number, how: string): { text: string; tokens: number; truncated: boolean } {
  const cut = truncateTokens(o200kTokenizer, text, Math.max(64, maxTokens - 60));
  if (!cut.truncated) return { text, tokens: cut.tokens, truncated: false };
  return { text: `${cut.text}\n[… cut at ${cut.tokens} of ${cut.totalTokens} tokens; ${how} …]`, tokens: cut.tokens, truncated: true };
}

/** The token budget of a call: the profile's per call, or less when the call asks. */
export function callBudget(session: ContextSession, maxTokens?: number | undefined): number {
  return Math.min(session.profile.perCallTokens, maxTokens ?? Number.POSITIVE_INFINITY);
}
