/**
 * `grep` for models: the backend's `grep` (ripgrep on the host) with the
 * registry's ignored names pushed down, so `node_modules` is never walked;
 * then every matching line is checked again on the file as a model is
 * served it — redacted — so a result is what a search of the redacted
 * workspace would find: secrets are never shown, and a pattern that only
 * matches inside one is not reported at all (no match-count oracle).
 * Sensitive files are left out unless asked for. Counting goes on past what
 * is shown, up to a cap, so every result says how much it left out. Files
 * are named relative to the directory the page's files share, which the
 * header names once.
 *
 * @module
 */

import { fsError, type GrepMatch, type GrepMatcher, isFsError } from '@ctxfs/core';
import { type CallValue, callText } from '../calls/call-text.ts';
import type { Document } from '../content/document.ts';
import { listFirst } from '../patch/mismatch-report.ts';
import { type Caller, callBudget, redactedLines, type Workspace } from '../retrieval/shared.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { narrowTo, plural, type Tally } from './narrowing.ts';
import { relativeNote, relativeStart, sharedDirectory } from './relative-names.ts';
import { count, fileFilter, grepMatcher, searchPath } from './search-input.ts';
import { lastPageOffset, overBudgetSearch, pastTheEnd, type Row, renderSearch, type SearchResult, shownRange, tooSmall } from './search-result.ts';
import { type SearchScope, searchScope, sensitiveIn } from './search-scope.ts';

/** Matching lines counted at most per call past the page's start (`offset`); past it, totals are lower bounds. */
export const GREP_TALLY_CAP = 10_000;
/** Characters of a line shown at most: a window around the first match of longer lines (minified code). */
export const MAX_LINE_CHARS = 240;
/** Most context lines on each side. */
export const MAX_CONTEXT_LINES = 20;
/** Files loaded for checking at once while the search goes on. */
const LOADS_IN_FLIGHT = 8;

/** What `grep` lists. */
export type GrepOutput = 'content' | 'files' | 'count';

/** Options of `grep`. */
export interface GrepCallOptions {
  /** The pattern is plain text, not a regular expression. */
  literal?: boolean;
  ignoreCase?: boolean;
  /** File or directory to search; default the root. */
  path?: string;
  /** Only files matching this glob (a name pattern such as `*.ts`, or a path pattern with `/`). */
  glob?: string;
  /** Lines shown around each match: a number for both sides, or `{ before, after }`. Default 0. */
  contextLines?: number | { before?: number; after?: number };
  /** `content` (default): matching lines; `files`: the files that match; `count`: matching lines per file. */
  output?: GrepOutput;
  /** Most matching lines (`content`) or files (`files`, `count`) listed; default 50, 200, 200. */
  limit?: number;
  /** Entries (matching lines, or files) to skip: paging. */
  offset?: number;
  /** Search what the registry ignores too (`node_modules`, `.git`, `.gitignore`d paths). */
  includeIgnored?: boolean;
  /** Search sensitive files too (`.env`, keys); what they show is redacted like everything else. */
  includeSensitive?: boolean;
  maxTokens?: number;
}

/** A line shown around a match. */
export interface GrepContextLine {
  readonly line: number;
  readonly text: string;
}

/** One entry of a grep result: a matching line with its context (`content`), or a file with its count (`files`, `count`). */
export interface GrepHit {
  readonly path: string;
  /** Content hash of the file as searched. */
  readonly version: string;
  /** Matching lines in the file. */
  readonly matches: number;
  /** The matching line (`content`); 0 otherwise. */
  readonly line: number;
  /** The line as shown (redacted, long lines cut around the match); `''` outside `content`. */
  readonly text: string;
  readonly before: readonly GrepContextLine[];
  readonly after: readonly GrepContextLine[];
}

/**
 * The result of `grep`: its text names each file relative to `dir` (the items
 * keep whole paths).
 */
export interface GrepResult extends SearchResult<GrepHit> {
  /** The deepest directory the page's files share, or `''` (none shared, or one file: named whole). */
  readonly dir: string;
}

/** A file with matches, checked against its redacted text. */
interface CheckedFile {
  readonly path: string;
  readonly doc: Document | undefined;
  /** Matching lines of the redacted text (1-based). */
  readonly lines: readonly number[];
  readonly redacted: readonly string[];
  readonly findings: number;
}

function contextOf(value: GrepCallOptions['contextLines']): { before: number; after: number } {
  if (value === undefined) return { before: 0, after: 0 };
  if (typeof value === 'number') {
    const n = count(value, 'contextLines', 'grep', 0, 0, MAX_CONTEXT_LINES);
    return { before: n, after: n };
  }
  return {
    before: count(value.before, 'contextLines.before', 'grep', 0, 0, MAX_CONTEXT_LINES),
    after: count(value.after, 'contextLines.after', 'grep', 0, 0, MAX_CONTEXT_LINES),
  };
}

/** Code-point-safe cut of a long line: a window around `at` (a UTF-16 index), marked with `…`. */
function cutLine(text: string, at: number): string {
  if (text.length <= MAX_LINE_CHARS) return text;
  let start = Math.max(0, Math.min(at - Math.floor(MAX_LINE_CHARS / 3), text.length - MAX_LINE_CHARS));
  let end = start + MAX_LINE_CHARS;
  // Never split a surrogate pair.
  if (start > 0 && /[\udc00-\udfff]/.test(text[start] ?? '')) start--;
  if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1] ?? '')) end++;
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}

/** UTF-16 index of a code-point offset. */
function utf16Index(text: string, codePoints: number): number {
  let i = 0;
  for (let n = 0; n < codePoints && i < text.length; n++) i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  return i;
}

/**
 * Checks one file's raw matches on its redacted text. `undefined` when the
 * file is not to be reported (gone, binary, sensitive or ignored).
 */
async function checkFile(ws: Workspace, scope: SearchScope, matcher: GrepMatcher, path: string, raw: readonly number[]): Promise<CheckedFile | undefined> {
  let doc: Document;
  try {
    doc = await ws.loader.load(path, 'grep');
  } catch (err) {
    if (!isFsError(err)) throw err;
    // Too large to serve: counted, its lines withheld (they cannot be redacted as served).
    if (err.code === 'ETOOLARGE') return { path, doc: undefined, lines: raw, redacted: [], findings: 0 };
    return undefined;
  }
  if (!scope.ignored(path)) {
    const known = ws.registry.get(path);
    if (known !== undefined && known.sha256 !== doc.sha256) {
      await ws.registry.observe(path, { sha256: doc.sha256, size: doc.size, mtimeMs: doc.mtimeMs, head: doc.text.slice(0, 1024) });
    }
  }
  const { lines, findings } = redactedLines(ws, doc);
  // Raw lines are re-matched on what a model would be shown: the text may
  // also have changed since the backend searched it.
  const kept = raw.filter((n) => n <= lines.length && matcher.spans(lines[n - 1] as string).length > 0);
  return kept.length === 0 ? undefined : { path, doc, lines: kept, redacted: lines, findings };
}

/** Where the page a call shows starts: entries before it are skipped, the counting cap applies after it. */
interface PageStart {
  /** Files with matches before it (`files`, `count`). */
  readonly files: number;
  /** Matching lines before it (`content`). */
  readonly lines: number;
}

/**
 * The files with matches, in order, each checked as it completes while the
 * backend's search goes on (a few loads in flight). Counting stops
 * {@link GREP_TALLY_CAP} matching lines past the page's start (`capped`):
 * a call costs the same however deep it pages, and a page past the cap
 * still has its lines.
 */
async function* checkedFiles(
  ws: Workspace,
  scope: SearchScope,
  matcher: GrepMatcher,
  raw: AsyncIterable<GrepMatch>,
  includeSensitive: boolean,
  page: PageStart,
  state: { capped: boolean },
): AsyncGenerator<CheckedFile> {
  const pending: Array<Promise<CheckedFile | undefined>> = [];
  let current: { path: string; lines: number[]; kept: boolean } | undefined;
  let files = 0;
  let lines = 0;
  // Matching lines before the page's start, once it is reached.
  let before: number | undefined;
  const finish = () => {
    if (current === undefined) return;
    const { path, lines, kept } = current;
    current = undefined;
    if (!kept) return;
    const check = checkFile(ws, scope, matcher, path, lines);
    // Awaited in order below; a failure must not go unobserved meanwhile.
    check.catch(() => {});
    pending.push(check);
  };
  for await (const m of raw) {
    if (current?.path !== m.path) {
      finish();
      const kept = !scope.ignored(m.path) && (includeSensitive || !scope.sensitive(m.path));
      current = { path: m.path, lines: [], kept };
      if (kept) files++;
      while (pending.length > LOADS_IN_FLIGHT) {
        const done = await pending.shift();
        if (done) yield done;
      }
    }
    if (!current.kept) continue;
    current.lines.push(m.line);
    lines++;
    if (before === undefined && files > page.files && lines > page.lines) before = lines - 1;
    if (before !== undefined && lines - before > GREP_TALLY_CAP) {
      state.capped = true;
      break;
    }
  }
  finish();
  for (const p of pending) {
    const done = await p;
    if (done) yield done;
  }
}

/**
 * Entries {@link excludedWithin} reads at most, and the depth below the scope
 * it reads to: the note costs a bounded lookup however large the tree, never
 * a second walk of all the search just walked.
 */
const EXCLUDED_LOOKUP_ENTRIES = 2_000;
const EXCLUDED_LOOKUP_DEPTH = 4;

/**
 * The names in `scope.exclude` that some entry within the directory `scope`
 * has, in the list's order: what the search left out there. Two globs, each
 * one backend call (one `find` in a container): the scope's own entries, then
 * every entry down to {@link EXCLUDED_LOOKUP_DEPTH} levels (never below an
 * ignored directory: whatever is there is ignored with it), until every name
 * is found or {@link EXCLUDED_LOOKUP_ENTRIES} entries were read. Ignored
 * directories live near a project's top or a package's (`node_modules`,
 * `.venv`), so the bound loses little; and what it misses is only left
 * unnamed, never named where it is not. Globs, not listings: they leave out
 * what the backend's own searches never enter (the host's `.git`), which
 * includeIgnored would not search either.
 */
async function excludedWithin(ws: Workspace, scope: SearchScope): Promise<string[]> {
  const names = new Set(scope.exclude);
  if (names.size === 0) return [];
  const found = new Set<string>();
  const withheld = currentCall()?.withheld;
  const below = scope.exclude.map((name) => `**/${name}/*`);
  let read = 0;
  try {
    for (const [pattern, maxDepth] of [['*', 1] as const, ['**', EXCLUDED_LOOKUP_DEPTH] as const]) {
      for await (const m of ws.fs.glob(pattern, { cwd: scope.path, dot: true, maxDepth, ignore: below })) {
        if (++read > EXCLUDED_LOOKUP_ENTRIES || found.size === names.size) break;
        const name = m.path.slice(m.path.lastIndexOf('/') + 1);
        // What the policy withholds is never mentioned, for the same reason.
        if (names.has(name) && withheld?.(m.path) !== true) found.add(name);
      }
    }
  } catch (err) {
    // The search itself is done and answered; a note it cannot make is left out.
    if (!isFsError(err)) throw err;
  }
  return scope.exclude.filter((name) => found.has(name));
}

/** Searches file contents. */
export async function grep(ws: Workspace, caller: Caller, pattern: string, options: GrepCallOptions = {}): Promise<GrepResult> {
  const literal = options.literal === true;
  const ignoreCase = options.ignoreCase === true;
  const scopePath = searchPath(options.path, 'grep');
  const glob = fileFilter(options.glob, 'grep');
  const output = options.output ?? 'content';
  if (output !== 'content' && output !== 'files' && output !== 'count') {
    throw fsError('EINVAL', 'grep', undefined, { reason: `unknown output '${String(output)}'`, hint: 'use "content", "files" or "count"' });
  }
  const context = contextOf(options.contextLines);
  const limit = count(options.limit, 'limit', 'grep', output === 'content' ? 50 : 200, 1, 10_000);
  const offset = count(options.offset, 'offset', 'grep', 0);
  const includeIgnored = options.includeIgnored === true;
  const includeSensitive = options.includeSensitive === true;
  const budget = callBudget(caller, options.maxTokens, 'grep');
  const contextOption: CallValue =
    context.before === 0 && context.after === 0
      ? undefined
      : context.before === context.after
        ? context.before
        : { before: context.before, after: context.after };
  const same = (extra: Record<string, CallValue>, searched = pattern) =>
    callText('grep', [searched], {
      literal: literal || undefined,
      ignoreCase: ignoreCase || undefined,
      path: scopePath === '' ? undefined : scopePath,
      glob,
      contextLines: contextOption,
      output: output === 'content' ? undefined : output,
      includeIgnored: includeIgnored || undefined,
      includeSensitive: includeSensitive || undefined,
      ...extra,
    });
  // Its refusal's hint is this call with `literal`: the scope and options as asked, so it searches where this one would.
  const matcher = grepMatcher(pattern, { literal, ignoreCase, asLiteral: () => same({ literal: true }) });
  if (tooSmall(budget)) return { ...overBudgetSearch(ws, caller, 'grep', budget, same({ maxTokens: caller.profile.perCallTokens })), dir: '' };
  const scope = await searchScope(ws, 'grep', scopePath, includeIgnored);

  const state = { capped: false };
  const raw = ws.fs.grep(pattern, {
    path: scope.path,
    glob,
    literal,
    ignoreCase,
    dot: true,
    exclude: scope.exclude,
    // The cap is applied past the page's start, as the lines are checked (checkedFiles).
    maxMatches: Number.MAX_SAFE_INTEGER,
  });
  const files: CheckedFile[] = [];
  let total = 0;
  const page = output === 'content' ? { files: 0, lines: offset } : { files: offset, lines: 0 };
  for await (const f of checkedFiles(ws, scope, matcher, raw, includeSensitive, page, state)) {
    files.push(f);
    total += f.lines.length;
  }
  const exact = !state.capped;

  // One row per entry: a matching line with the context that belongs to it, or a file. A row that starts with its
  // file's path (a file's first line; every row of a list of files) is named relative to `dir` once the page is known.
  const rows: Row<GrepHit>[] = [];
  const named = new Set<Row<GrepHit>>();
  if (output === 'content') {
    let skip = offset;
    for (const f of files) {
      if (rows.length >= limit) break;
      if (skip >= f.lines.length) {
        skip -= f.lines.length;
        continue;
      }
      const version = f.doc?.sha256 ?? '';
      let shownUpTo = 0;
      for (let k = skip; k < f.lines.length && rows.length < limit; k++) {
        const line = f.lines[k] as number;
        const next = f.lines[k + 1] ?? Number.POSITIVE_INFINITY;
        const text = (n: number) => {
          const t = f.redacted[n - 1] as string;
          if (n !== line) return cutLine(t, 0);
          const first = matcher.spans(t)[0];
          return cutLine(t, first === undefined ? 0 : utf16Index(t, first.start));
        };
        const from = Math.max(shownUpTo + 1, line - context.before);
        const to = Math.min(line + context.after, next - 1, f.redacted.length);
        const before: GrepContextLine[] = [];
        const after: GrepContextLine[] = [];
        for (let n = from; n < line; n++) before.push({ line: n, text: text(n) });
        for (let n = line + 1; n <= to; n++) after.push({ line: n, text: text(n) });
        const parts: string[] = [];
        if (shownUpTo === 0) parts.push(f.path);
        else if (from > shownUpTo + 1) parts.push('--');
        if (f.doc === undefined)
          parts.push(`${line}:\t[line not shown here (the file is over the document size limit); ${callText('readLines', [f.path, line, line])} serves it]`);
        else {
          for (const c of before) parts.push(`${c.line}-\t${c.text}`);
          parts.push(`${line}:\t${text(line)}`);
          for (const c of after) parts.push(`${c.line}-\t${c.text}`);
        }
        let masks = 0;
        if (f.findings > 0 && f.doc !== undefined) {
          for (let n = from; n <= Math.max(line, to); n++) if (f.redacted[n - 1] !== f.doc.lines[n - 1]) masks++;
        }
        const hit: GrepHit = { path: f.path, version, matches: f.lines.length, line, text: f.doc ? text(line) : '', before, after };
        const row: Row<GrepHit> = {
          text: parts.join('\n'),
          item: hit,
          read: f.doc ? { path: f.path, sha256: version, startLine: from, endLine: Math.max(line, to) } : undefined,
          masks,
        };
        rows.push(row);
        if (shownUpTo === 0) named.add(row);
        shownUpTo = Math.max(line, to);
      }
      skip = 0;
    }
  } else {
    // Counting stopped inside the last file: its count is a lower bound.
    const partial = exact ? undefined : files.at(-1);
    for (const f of files.slice(offset, offset + limit)) {
      const hit: GrepHit = { path: f.path, version: f.doc?.sha256 ?? '', matches: f.lines.length, line: 0, text: '', before: [], after: [] };
      const row: Row<GrepHit> = { text: output === 'files' ? f.path : `${f.path}: ${f === partial ? 'at least ' : ''}${f.lines.length}`, item: hit };
      rows.push(row);
      named.add(row);
    }
  }
  // A budget that cuts the page keeps its first rows: their files lie below the same directory.
  const dir = sharedDirectory([...new Set(rows.map((r) => r.item.path))]);
  const start = relativeStart(dir);
  const shownRows = start === 0 ? rows : rows.map((r) => (named.has(r) ? { ...r, text: r.text.slice(start) } : r));

  const entries = output === 'content' ? total : files.length;
  const lower = exact ? '' : 'at least ';
  const flags = [literal ? 'literal' : '', ignoreCase ? 'ignoring case' : '', glob ? `glob ${glob}` : ''].filter(Boolean).join(', ');
  const where = `${scope.path === '' ? '' : ` in ${scope.path}`}${flags ? ` (${flags})` : ''}`;
  const found = `${lower}${plural(total, 'matching line')} in ${lower}${plural(files.length, 'file')}`;
  const header = (shown: number) => {
    if (total === 0) return `grep ${JSON.stringify(pattern)}${where}: no matches.`;
    const showing = shownRange(offset, shown, entries, output === 'content' ? 'lines ' : 'files ');
    return `grep ${JSON.stringify(pattern)}${where}: ${found}${showing}${output === 'content' && shown > 0 && contextOption !== undefined ? ' (N: match, N- context)' : ''}${relativeNote(dir)}.`;
  };
  const notes: string[] = [];
  if (!includeSensitive) {
    const sensitive = sensitiveIn(ws, scope);
    if (sensitive.length > 0) {
      const names = listFirst(sensitive, 3);
      notes.push(`[sensitive files not searched: ${names}; ${same({ includeSensitive: true })} searches them, redacted]`);
    }
  }
  const extended = total === 0 && !literal ? fromBasicSyntax(pattern) : undefined;
  if (extended !== undefined) {
    notes.push(
      `[patterns are RE2 syntax (as grep -E), where \\| \\+ \\? match the characters | + ? themselves; meant as grep's basic syntax means them (a|b, x+, x?): ${same({}, extended)}]`,
    );
  }
  // A search of one file left nothing out, nor one of a directory where no ignored name is: the note would send a
  // model looking where nothing is. It names what is there.
  const leftOut = total === 0 && !includeIgnored && scope.kind === 'directory' ? await excludedWithin(ws, scope) : [];
  if (leftOut.length > 0) {
    notes.push(`[not searched: ignored ${leftOut.slice(0, 6).join(', ')}${leftOut.length > 6 ? ', …' : ''}; ${same({ includeIgnored: true })} searches them]`);
  }
  const result = await renderSearch<GrepHit>(ws, caller, {
    op: 'grep',
    view: output === 'content' ? 'matches' : output === 'files' ? 'files' : 'count',
    header,
    rows: shownRows,
    scope: scope.path,
    total: entries,
    exact,
    files: files.length,
    skipped: Math.min(offset, entries),
    sensitiveLeftOut: includeSensitive ? 0 : sensitiveIn(ws, scope).length,
    budget,
    retry: same({ maxTokens: caller.profile.perCallTokens }),
    notes,
    rest: (shown, perEntry) => {
      const past = pastTheEnd(
        offset,
        shown,
        entries,
        output === 'content' ? 'matching line' : 'file',
        same({ offset: lastPageOffset(entries, limit), limit: options.limit }),
      );
      if (past !== undefined) return past;
      // Past the cap there is more than was counted: a page that showed something always has a next one
      // (of lines; of files only in a directory: a search of one file has no other to page on to).
      const left = entries - offset - shown;
      const uncounted = !exact && (output === 'content' || scope.kind === 'directory');
      if (left <= 0 && (!uncounted || shown === 0)) return undefined;
      const room = Math.max(1, Math.floor((budget - 200) / Math.max(1, perEntry())));
      const shownFrom = offset;
      const shownTo = offset + shown;
      // Where the left-out entries are, file by file.
      let at = 0;
      const tallies: Tally[] = files.map((f) => {
        const n = output === 'content' ? f.lines.length : 1;
        const visible = Math.max(0, Math.min(at + n, shownTo) - Math.max(at, shownFrom));
        at += n;
        return { path: f.path, total: n, left: n - visible };
      });
      const calls: string[] = [];
      const dir = scope.kind === 'directory' ? narrowTo(scope.path, tallies, (n) => n <= room) : undefined;
      if (dir !== undefined) calls.push(`${same({ path: dir.path })} (${plural(dir.total, output === 'content' ? 'line' : 'file')})`);
      const next = same({ offset: offset + shown, limit: Math.min(room, 10_000) });
      calls.push(next);
      const more = Math.max(1, left);
      const what = output === 'content' ? plural(more, 'more matching line') : plural(more, 'more file');
      return { note: `[… ${exact ? '' : 'at least '}${what}; narrow with ${calls.join(', or page on with ')} …]`, next };
    },
  });
  return { ...result, dir };
}

/**
 * `pattern` read as grep's basic syntax (BRE) and written in RE2's, when it
 * uses one of the operators only BRE spells with a backslash (`\|`, `\+`,
 * `\?`): `\(`, `\)`, `\{`, `\}` become groups and counts, and the bare
 * characters those stand for become literals. `undefined` when nothing in it
 * says BRE was meant (a pattern with `\(` alone is as likely a literal
 * parenthesis). A bracket expression is copied as it is: both read it alike.
 */
export function fromBasicSyntax(pattern: string): string | undefined {
  let out = '';
  let basic = false;
  // Where the open bracket expression's members start, or -1 outside one.
  let members = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (members >= 0) {
      // A ] first among the members (after a ^) is one of them, not the end.
      const first = out.length === members || (out.length === members + 1 && out[members] === '^');
      if (c === ']' && !first) members = -1;
      out += c;
    } else if (c === '[') {
      out += c;
      members = out.length;
    } else if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[++i] as string;
      if ('|+?'.includes(next)) basic = true;
      out += '|+?(){}'.includes(next) ? next : `\\${next}`;
    } else out += '|+?(){}'.includes(c) ? `\\${c}` : c;
  }
  return basic ? out : undefined;
}
