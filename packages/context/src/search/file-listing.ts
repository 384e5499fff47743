/**
 * `listFiles` and `glob`: the files of the workspace as they are on disk
 * now (one glob walk of the backend, ignored names left out natively),
 * with what the registry knows of each (size, language, tags, and lines
 * once the symbol index has read the file). A listing deeper than `depth`
 * shows a directory as one row with its file count.
 *
 * A listing's text is what a model pays for, row by row: each row names its
 * entry relative to the directory listed (which the header names once) and
 * says only what the name does not (size, lines, generated, sensitive). A
 * glob's rows are named relative to the directory its page's matches share.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import { type CallValue, callText, operationName } from '../calls/call-text.ts';
import { type FileTag, languageOf, tagsOf } from '../registry/classify.ts';
import { type Caller, callBudget, type Workspace } from '../retrieval/shared.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { narrowTo, plural, type Tally } from './narrowing.ts';
import { relativeNote, relativeStart, sharedDirectory } from './relative-names.ts';
import { count, globPattern, searchPath } from './search-input.ts';
import {
  lastPageOffset,
  overBudgetSearch,
  pastTheEnd,
  type Row,
  renderSearch,
  type SearchOp,
  type SearchResult,
  shownRange,
  tooSmall,
} from './search-result.ts';
import { type SearchScope, searchScope } from './search-scope.ts';
import { symbolIndex } from './symbol-index.ts';

/** Files a listing counts at most; past it, totals are lower bounds. */
export const MAX_LISTED_FILES = 200_000;

/** Options of `listFiles`. */
export interface ListFilesOptions {
  /** Only files matching this glob (picomatch, relative to the path); default every file. */
  glob?: string;
  /** Deepest level shown below the path (1: its own files and directories); deeper files count in their directory's row. */
  depth?: number;
  /** Most rows; default 200. */
  limit?: number;
  /** Rows to skip (paging). */
  offset?: number;
  /** List what the registry ignores too (`node_modules`, `.git`, `.gitignore`d paths). */
  includeIgnored?: boolean;
  maxTokens?: number;
}

/** Options of `glob`. */
export interface GlobCallOptions {
  /** Directory the pattern is relative to; default the root. */
  cwd?: string;
  /** Most paths; default 200. */
  limit?: number;
  /** Paths to skip (paging). */
  offset?: number;
  includeIgnored?: boolean;
  maxTokens?: number;
}

/** One row of a listing: a file, or a directory standing for the files below `depth`. */
export interface ListedFile {
  readonly path: string;
  readonly kind: 'file' | 'directory';
  /** Bytes (files). */
  readonly size?: number | undefined;
  /** Files below it that the listing counts (directories). */
  readonly files?: number | undefined;
  readonly language?: string | undefined;
  readonly tags?: readonly FileTag[] | undefined;
  /** Line count, when known (files the symbol index has read at their current version). */
  readonly lines?: number | undefined;
  readonly sensitive: boolean;
}

/**
 * The result of `listFiles` and `glob`: its rows name their entries relative
 * to `dir` (the items keep whole paths).
 */
export interface ListingResult extends SearchResult<ListedFile> {
  /**
   * The directory the text's rows are named relative to: for a listing the one
   * listed, for a glob the deepest one its page's matches share; `''` for the
   * root, or rows named whole (a listing of one file, a glob of one match).
   */
  readonly dir: string;
}

/** `paths` in the order a walk lists them: segment by segment, a directory's files right after it. */
function inPathOrder(paths: string[]): string[] {
  // Each path's key is made once, not at every comparison.
  const keyed = paths.map((path) => ({ path, key: path.replaceAll('/', '\0') }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.path);
}

/** Every file under the scope matching `pattern`, sorted; `capped` when there were more than {@link MAX_LISTED_FILES}. */
async function filesUnder(ws: Workspace, scope: SearchScope, pattern: string): Promise<{ paths: string[]; capped: boolean }> {
  if (scope.kind === 'file') return { paths: [scope.path], capped: false };
  const paths: string[] = [];
  const ignore = scope.exclude.map((name) => `**/${name}`);
  for await (const m of ws.fs.glob(pattern, { cwd: scope.path, dot: true, kind: 'file', ignore })) {
    if (scope.ignored(m.path)) continue;
    if (paths.length >= MAX_LISTED_FILES) return { paths: inPathOrder(paths), capped: true };
    paths.push(m.path);
  }
  return { paths: inPathOrder(paths), capped: false };
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A file's row: registry metadata when registered (`lines` from the symbol index), a stat otherwise. */
async function fileRow(ws: Workspace, path: string, lines: ReadonlyMap<string, number>): Promise<ListedFile> {
  const record = ws.registry.get(path);
  if (record !== undefined) {
    return {
      path,
      kind: 'file',
      size: record.size,
      language: record.language,
      tags: record.tags,
      lines: lines.get(path),
      sensitive: record.sensitive,
    };
  }
  const language = languageOf(path);
  let size: number | undefined;
  try {
    size = (await ws.fs.stat(path)).size;
  } catch {
    // Gone since the walk: listed without a size.
  }
  return { path, kind: 'file', size, language, tags: tagsOf(path, language), sensitive: ws.registry.isSensitive(path) };
}

/**
 * A listing's row: the entry's path after `start` characters (the listed
 * directory and its slash), a directory's with a slash and its file count,
 * a file's with what its name does not tell (the language and the code,
 * config, doc and test tags follow from it; a generated marker does not).
 */
function rowText(f: ListedFile, start: number): string {
  const name = f.path.slice(start);
  if (f.kind === 'directory') return `${name}/  (${plural(f.files ?? 0, 'file')})`;
  const parts = [name];
  if (f.size !== undefined) parts.push(sizeText(f.size));
  if (f.lines !== undefined) parts.push(plural(f.lines, 'line'));
  if (f.tags?.includes('generated') === true) parts.push('generated');
  if (f.sensitive) parts.push('[sensitive]');
  return parts.join('  ');
}

/** Tokens a listing spends besides its rows (header, delimiters, notes). */
const LISTING_OVERHEAD = 160;

interface ListingCall {
  readonly op: SearchOp;
  readonly scope: SearchScope;
  readonly budget: number;
  /** Rows after the offset (up to the limit). */
  readonly rows: readonly Row<ListedFile>[];
  /** Rows in all, and the files they stand for. */
  readonly totalRows: number;
  readonly files: readonly string[];
  readonly capped: boolean;
  readonly offset: number;
  /** Entries a page lists, and the `limit` the caller gave for it (repeated in the calls offered). */
  readonly limit: number;
  readonly limitOption: number | undefined;
  /** The same call with other options, as text. */
  readonly same: (extra: Record<string, CallValue>) => string;
  /** A call listing `dir` whole, when narrowing there is possible. */
  readonly narrowed: ((dir: string) => string) | undefined;
  readonly header: (shown: number) => string;
  readonly notes?: readonly string[];
}

/** Renders a listing, with the narrower call and the next page for what did not fit. */
function renderListing(ws: Workspace, caller: Caller, call: ListingCall): Promise<SearchResult<ListedFile>> {
  return renderSearch(ws, caller, {
    op: call.op,
    view: 'files',
    header: call.header,
    rows: call.rows,
    scope: call.scope.path,
    total: call.totalRows,
    exact: !call.capped,
    files: call.files.length,
    skipped: Math.min(call.offset, call.totalRows),
    sensitiveLeftOut: 0,
    budget: call.budget,
    retry: call.same({ maxTokens: caller.profile.perCallTokens }),
    notes: call.notes,
    rest: (shown, perEntry) => {
      const noun = call.totalRows === call.files.length ? 'file' : 'row';
      const past = pastTheEnd(
        call.offset,
        shown,
        call.totalRows,
        noun,
        call.same({ offset: lastPageOffset(call.totalRows, call.limit), limit: call.limitOption }),
      );
      if (past !== undefined) return past;
      const left = call.totalRows - call.offset - shown;
      if (left <= 0) return undefined;
      const room = Math.max(1, Math.floor((call.budget - LISTING_OVERHEAD) / Math.max(1, perEntry())));
      const shownFiles = new Set(
        call.rows
          .slice(0, shown)
          .filter((r) => r.item.kind === 'file')
          .map((r) => r.item.path),
      );
      const calls: string[] = [];
      if (call.narrowed !== undefined) {
        const tallies: Tally[] = call.files.map((path) => ({ path, total: 1, left: shownFiles.has(path) ? 0 : 1 }));
        const dir = narrowTo(call.scope.path, tallies, (n) => n <= room);
        if (dir !== undefined) calls.push(`${call.narrowed(dir.path)} (${plural(dir.total, 'file')})`);
      }
      const next = call.same({ offset: call.offset + shown, limit: room });
      calls.push(next);
      const more = call.capped ? `more than ${left.toLocaleString('en-US')}` : left.toLocaleString('en-US');
      return { note: `[… ${more} more; narrow with ${calls.join(', or page on with ')} …]`, next };
    },
  });
}

/** Lists files below `path` with their metadata. */
export async function listFiles(ws: Workspace, caller: Caller, path: string | undefined, options: ListFilesOptions = {}): Promise<ListingResult> {
  const scopePath = searchPath(path, 'listFiles');
  const pattern = globPattern(options.glob ?? '**', 'listFiles');
  const depth = options.depth === undefined ? undefined : count(options.depth, 'depth', 'listFiles', 1, 1, 256);
  const limit = count(options.limit, 'limit', 'listFiles', 200, 1, 10_000);
  const offset = count(options.offset, 'offset', 'listFiles', 0);
  const budget = callBudget(caller, options.maxTokens, 'listFiles');
  const includeIgnored = options.includeIgnored === true;
  const same = (extra: Record<string, CallValue>) =>
    callText('listFiles', [scopePath], { glob: options.glob, depth, includeIgnored: includeIgnored || undefined, ...extra });
  if (tooSmall(budget)) return { ...overBudgetSearch(ws, caller, 'listFiles', budget, same({ maxTokens: caller.profile.perCallTokens })), dir: '' };
  const scope = await searchScope(ws, 'listFiles', scopePath, includeIgnored);
  const { paths, capped } = await filesUnder(ws, scope, pattern);

  // Rows: files down to `depth`, and one row per directory at `depth` for the files below it.
  const dir = scope.kind === 'directory' ? scope.path : '';
  const start = relativeStart(dir);
  const entries: Array<{ path: string; kind: 'file' | 'directory'; files: number }> = [];
  for (const p of paths) {
    const segments = p.slice(start).split('/');
    if (depth === undefined || segments.length <= depth) {
      entries.push({ path: p, kind: 'file', files: 1 });
      continue;
    }
    const below = p.slice(0, start) + segments.slice(0, depth).join('/');
    const last = entries[entries.length - 1];
    // Sorted paths keep a directory's files together: one row each.
    if (last?.kind === 'directory' && last.path === below) last.files++;
    else entries.push({ path: below, kind: 'directory', files: 1 });
  }
  const page = entries.slice(offset, offset + limit);
  const registered = page.flatMap((e) => {
    const sha256 = e.kind === 'file' ? ws.registry.get(e.path)?.sha256 : undefined;
    return sha256 === undefined ? [] : [{ path: e.path, sha256 }];
  });
  const lines = await symbolIndex(ws).lines(registered);
  const rows: Row<ListedFile>[] = [];
  for (const e of page) {
    const item: ListedFile = e.kind === 'file' ? await fileRow(ws, e.path, lines) : { path: e.path, kind: 'directory', files: e.files, sensitive: false };
    rows.push({ text: rowText(item, start), item });
  }
  const where = scope.path === '' ? 'the workspace' : scope.path;
  const header = (shown: number) =>
    paths.length === 0
      ? `${operationName('listFiles')} ${where}${options.glob ? ` (glob ${options.glob})` : ''}: no files${includeIgnored ? '' : ` (ignored paths left out: ${same({ includeIgnored: true })} lists them)`}.`
      : `${operationName('listFiles')} ${where}${options.glob ? ` (glob ${options.glob})` : ''}${depth ? ` to depth ${depth}` : ''}: ${capped ? 'more than ' : ''}${plural(paths.length, 'file')}${
          entries.length !== paths.length ? ` in ${plural(entries.length, 'row')}` : ''
        }${shownRange(offset, shown, entries.length)}${relativeNote(dir)}.`;
  const listing = await renderListing(ws, caller, {
    op: 'listFiles',
    scope,
    budget,
    rows,
    totalRows: entries.length,
    files: paths,
    capped,
    offset,
    limit,
    limitOption: options.limit,
    same,
    narrowed: scope.kind === 'directory' ? (to) => callText('listFiles', [to], { glob: options.glob, includeIgnored: includeIgnored || undefined }) : undefined,
    header,
  });
  return { ...listing, dir };
}

/** The directory a glob pattern names literally (`src`, `src/`, `./src`) under `cwd`, as the pattern wrote it; `undefined` otherwise. */
async function directoryNamed(ws: Workspace, cwd: string, pattern: string): Promise<string | undefined> {
  const name = pattern.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (name === '' || /[*?[\]{}!]/.test(name)) return undefined;
  const path = cwd === '' ? name : `${cwd}/${name}`;
  // What the policy keeps out of this caller's listings is not confirmed to exist.
  if (currentCall()?.withheld(path) === true) return undefined;
  const st = await ws.fs.stat(path).catch(() => undefined);
  return st?.kind === 'directory' ? name : undefined;
}

/** Lists files matching a glob, named relative to the directory the page's matches share. */
export async function glob(ws: Workspace, caller: Caller, pattern: string, options: GlobCallOptions = {}): Promise<ListingResult> {
  const checked = globPattern(pattern, 'glob');
  const cwd = searchPath(options.cwd, 'glob');
  const limit = count(options.limit, 'limit', 'glob', 200, 1, 10_000);
  const offset = count(options.offset, 'offset', 'glob', 0);
  const budget = callBudget(caller, options.maxTokens, 'glob');
  const includeIgnored = options.includeIgnored === true;
  const same = (extra: Record<string, CallValue>) =>
    callText('glob', [pattern], { cwd: cwd === '' ? undefined : cwd, includeIgnored: includeIgnored || undefined, ...extra });
  if (tooSmall(budget)) return { ...overBudgetSearch(ws, caller, 'glob', budget, same({ maxTokens: caller.profile.perCallTokens })), dir: '' };
  const scope = await searchScope(ws, 'glob', cwd, includeIgnored);
  if (scope.kind !== 'directory') {
    throw fsError('ENOTDIR', 'glob', cwd, {
      reason: `cwd '${cwd}' is a file`,
      hint: `pass a directory as cwd, or ${callText('listFiles', [cwd])} for this one file`,
    });
  }
  const { paths, capped } = await filesUnder(ws, scope, checked);
  const page = paths.slice(offset, offset + limit);
  // A budget that cuts the page keeps its first rows: they lie below the same directory.
  const dir = sharedDirectory(page);
  const start = relativeStart(dir);
  const rows: Row<ListedFile>[] = page.map((path) => {
    const item: ListedFile = { path, kind: 'file', sensitive: ws.registry.get(path)?.sensitive ?? ws.registry.isSensitive(path) };
    return { text: rowText(item, start), item };
  });
  const where = cwd === '' ? '' : ` in ${cwd}`;
  // A directory's name as the pattern (`src`, `src/`) matches no file: the files below it are what was meant.
  const below = paths.length === 0 ? await directoryNamed(ws, cwd, checked) : undefined;
  const header = (shown: number) =>
    below !== undefined
      ? `glob ${JSON.stringify(pattern)}${where}: no files match; ${below} is a directory, and a glob matches files: ${callText('glob', [`${below}/**`], { cwd: cwd === '' ? undefined : cwd, includeIgnored: includeIgnored || undefined })} lists the files below it.`
      : paths.length === 0
        ? `glob ${JSON.stringify(pattern)}${where}: no files match${includeIgnored ? '' : ` (ignored paths left out: ${same({ includeIgnored: true })} lists them)`}.`
        : `glob ${JSON.stringify(pattern)}${where}: ${capped ? 'more than ' : ''}${plural(paths.length, 'file')}${shownRange(offset, shown, paths.length)}${relativeNote(dir)}.`;
  // Narrowing keeps the pattern's meaning only when it matches at any depth (`**/…`).
  const rebased = checked.startsWith('**/');
  const listing = await renderListing(ws, caller, {
    op: 'glob',
    scope,
    budget,
    rows,
    totalRows: paths.length,
    files: paths,
    capped,
    offset,
    limit,
    limitOption: options.limit,
    same,
    narrowed: rebased ? (to) => callText('glob', [pattern], { cwd: to, includeIgnored: includeIgnored || undefined }) : undefined,
    header,
  });
  return { ...listing, dir };
}
