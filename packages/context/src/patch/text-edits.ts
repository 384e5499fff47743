/**
 * Exact text edits: replace by occurrence, and line-range edits. Pure
 * functions over strings; positions are lines (1-based) and Unicode code
 * points, never UTF-16 units or bytes, so an edit next to emoji or CJK text
 * lands where the caller meant.
 *
 * @module
 */

import { compileLinearRegex, isFsError, type LinearMatch, type LinearRegex } from '@ctxfs/core';
import { type CallOptions, callShape, callText, optionName } from '../calls/call-text.ts';
import { maskInOldText } from '../safety/redaction.ts';
import { plural } from '../search/narrowing.ts';
import { listFirst } from './mismatch-report.ts';
import { fromDocument, type TextDocument, toDocument } from './text-document.ts';

/** Which matches a replace touches. */
export type Occurrence = 'unique' | 'first' | 'all' | number;

/** Options of {@link replaceText}. */
export interface ReplaceOptions {
  /** Default `unique`: exactly one match or a refusal that says how many there are. A number is 1-based. */
  occurrence?: Occurrence;
  /**
   * Treat `search` as a regular expression in ripgrep's syntax, run in
   * linear time (core's `compileLinearRegex`: no backreferences or
   * look-around); `replacement` may use `$1`, `$<name>`.
   */
  regex?: boolean;
  /** Regex flags besides `g`: `i`, `m` (`^` and `$` at each `\n`; not before a CRLF's `\r`), `s`. */
  flags?: string;
  /**
   * The file the text is in, for a refusal's advice: with it the advice is
   * the whole call to make, in the caller's style (`ctxfs call replace
   * '{…,"occurrence":"all"}'`); without it, the call's shape.
   */
  path?: string;
}

/** Search and replacement texts longer than this are not repeated in advice: the call's shape is named instead. */
const ADVICE_CHARS = 200;

/**
 * The replace call that takes `options` besides the caller's own, as the
 * caller's surface writes it: the whole call when the path is known and the
 * texts are short, else its shape.
 */
function replaceCall(search: string, replacement: string, given: ReplaceOptions, options: CallOptions): string {
  const regex = given.regex === true ? true : undefined;
  const all: CallOptions = { regex, flags: given.flags === '' ? undefined : given.flags, ...options };
  if (given.path !== undefined && search.length + replacement.length <= ADVICE_CHARS) return callText('replace', [given.path, search, replacement], all);
  return callShape('replace', { path: given.path, ...all });
}

/** A match location in lines and code points. */
export interface TextLocation {
  /** 1-based line. */
  readonly line: number;
  /** 0-based code-point column within the line. */
  readonly column: number;
}

/** Result of {@link replaceText}. */
export type ReplaceResult =
  | { readonly ok: true; readonly text: string; readonly replaced: number; readonly locations: readonly TextLocation[] }
  | {
      readonly ok: false;
      readonly reason: 'not-found' | 'not-unique' | 'bad-occurrence' | 'bad-regex';
      readonly matches: number;
      readonly locations: readonly TextLocation[];
      readonly message: string;
    };

function locate(text: string, utf16Index: number): TextLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < utf16Index; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  let column = 0;
  for (let i = lineStart; i < utf16Index; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < utf16Index) i++;
    column++;
  }
  return { line, column };
}

/**
 * The locations of `indices` (ascending), in one pass over the text: found
 * one by one from the start, 150,000 matches of a replace-all took minutes
 * and held the event loop.
 */
function locateAll(text: string, indices: readonly number[]): TextLocation[] {
  const out: TextLocation[] = [];
  let line = 1;
  let nextBreak = text.indexOf('\n');
  let counted = 0; // the index up to which `column` counts
  let column = 0;
  for (const index of indices) {
    if (index < counted) {
      out.push(locate(text, index));
      continue;
    }
    while (nextBreak >= 0 && nextBreak < index) {
      line++;
      counted = nextBreak + 1;
      column = 0;
      nextBreak = text.indexOf('\n', counted);
    }
    for (let i = counted; i < index; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < index) i++;
      column++;
    }
    counted = index;
    out.push({ line, column });
  }
  return out;
}

function escapeRegExp(s: string): string {
  // Only syntax characters: with the `u` flag, escaping anything else (`-`, `/`) is a syntax error.
  return s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * Replaces `search` with `replacement` in `text`.
 *
 * @example
 * ```ts
 * replaceText('a a a', 'a', 'b', { occurrence: 2 });   // { ok: true, text: 'a b a', ... }
 * replaceText('a a a', 'a', 'b');                     // { ok: false, reason: 'not-unique', matches: 3, ... }
 * ```
 */
export function replaceText(text: string, search: string, replacement: string, options: ReplaceOptions = {}): ReplaceResult {
  const occurrence = options.occurrence ?? 'unique';
  if (search.length === 0 && !options.regex) {
    return { ok: false, reason: 'not-found', matches: 0, locations: [], message: 'The text to replace is empty; give the exact text to change.' };
  }
  let found = options.regex
    ? regexMatches(text, search, options.flags, () => literalAdvice(search, replacement, options))
    : textMatches(text, search, options.flags);
  if (!Array.isArray(found)) return found;
  // Lines are served without their endings, so a model joins them with "\n": in a file whose lines end in
  // CRLF that text is found with CRLF, and the replacement's line breaks written as the file's.
  if (found.length === 0 && !options.regex && text.includes('\r\n') && /(^|[^\r])\n/.test(search)) {
    const crlf = textMatches(text, withCrlf(search), options.flags);
    if (Array.isArray(crlf) && crlf.length > 0) {
      found = crlf;
      replacement = withCrlf(replacement);
    }
  }
  const matches = found;
  const locations = locateAll(
    text,
    matches.map((m) => m.index),
  );
  if (matches.length === 0) {
    return {
      ok: false,
      reason: 'not-found',
      matches: 0,
      locations: [],
      message: `The text to replace was not found. ${(options.regex ? undefined : maskInOldText(search)) ?? 'Re-read the file: it may have changed, or whitespace and indentation may differ.'}`,
    };
  }
  let chosen: typeof matches;
  if (occurrence === 'unique') {
    if (matches.length > 1) {
      // A short text can occur thousands of times: the first few positions say where, the count says how many more.
      const where = listFirst(locations.map((l) => `${l.line}:${l.column + 1}`));
      return {
        ok: false,
        reason: 'not-unique',
        matches: matches.length,
        locations,
        message: `The text occurs ${matches.length} times (at ${where}). Include more surrounding text to make it unique, or choose: ${replaceCall(search, replacement, options, { occurrence: 'all' })} for all, ${optionName('replace', 'occurrence') ?? 'occurrence'} "first" or 1 to ${matches.length} for one.`,
      };
    }
    chosen = matches;
  } else if (occurrence === 'first') chosen = matches.slice(0, 1);
  else if (occurrence === 'all') chosen = matches;
  else if (Number.isSafeInteger(occurrence) && occurrence >= 1 && occurrence <= matches.length) chosen = [matches[occurrence - 1] as (typeof matches)[number]];
  else {
    return {
      ok: false,
      reason: 'bad-occurrence',
      matches: matches.length,
      locations,
      message: `Occurrence ${String(occurrence)} does not exist: the text occurs ${plural(matches.length, 'time')}.`,
    };
  }
  let out = '';
  let at = 0;
  for (const m of chosen) {
    out += text.slice(at, m.index);
    out += options.regex ? expandReplacement(replacement, m) : replacement;
    at = m.end;
  }
  out += text.slice(at);
  return {
    ok: true,
    text: out,
    replaced: chosen.length,
    locations: locateAll(
      text,
      chosen.map((m) => m.index),
    ),
  };
}

/** Every bare LF made CRLF; a CRLF already there stays one. */
function withCrlf(s: string): string {
  return s.replace(/\r?\n/g, '\r\n');
}

function refused(message: string): ReplaceResult {
  return { ok: false, reason: 'bad-regex', matches: 0, locations: [], message };
}

/** The plain-text search: an escaped pattern, linear in any engine. */
function textMatches(text: string, search: string, flags: string | undefined): LinearMatch[] | ReplaceResult {
  let re: RegExp;
  try {
    const extra = (flags ?? '').replace(/[gy]/g, '');
    re = new RegExp(escapeRegExp(search), `g${extra}${extra.includes('u') || extra.includes('v') ? '' : 'u'}`);
  } catch (err) {
    return refused(`${(err as Error).message}; use the flags i, m and s.`);
  }
  const matches: LinearMatch[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) matches.push({ index: m.index, end: m.index + m[0].length, groups: [], named: {} });
  return matches;
}

/**
 * How long a regex replace may search before it is refused: one search is
 * linear, but finding every match can be quadratic (`a(.*z)?` looks to the
 * end of the file after each `a`). Ordinary patterns take milliseconds.
 */
const REGEX_SEARCH_MS = 2000;

/** The regex search: core's linear-time engine, so no pattern can stall the process. */
function regexMatches(text: string, search: string, flags: string | undefined, advice: () => string): LinearMatch[] | ReplaceResult {
  let re: LinearRegex;
  try {
    re = compileLinearRegex(search, { flags, op: 'replace', literalAdvice: advice() });
  } catch (err) {
    if (!isFsError(err, 'EBADPATTERN')) throw err;
    return refused(`${sentence(err.reason)}. ${sentence(err.hint)}.`);
  }
  const deadline = performance.now() + REGEX_SEARCH_MS;
  const matches: LinearMatch[] = [];
  const all = re.matchAll(text, { captures: true, keepGoing: () => performance.now() < deadline });
  for (let step = all.next(); ; step = all.next()) {
    if (step.done) {
      if (step.value) return matches;
      return refused(
        `The regular expression takes too long on this file (stopped after ${matches.length} match(es) in ${REGEX_SEARCH_MS / 1000} s). Make it more specific: anchor it, or avoid a tail like \`(.*x)?\` that can run to the end of the file.`,
      );
    }
    matches.push(step.value);
  }
}

/** How to match a pattern's text as written, in the caller's words: the call without the regex option. */
function literalAdvice(search: string, replacement: string, options: ReplaceOptions): string {
  const regex = optionName('replace', 'regex') ?? 'regex';
  if (options.path !== undefined && search.length + replacement.length <= ADVICE_CHARS)
    return `match the text as written with ${callText('replace', [options.path, search, replacement], {
      occurrence: options.occurrence === 'unique' ? undefined : options.occurrence,
      flags: options.flags === '' ? undefined : options.flags,
    })}`;
  return `leave out ${regex} to match the text as written`;
}

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Expands `$$`, `$&`, `$1`..`$99` and `$<name>` in a regex replacement. */
function expandReplacement(template: string, m: LinearMatch): string {
  return template.replace(/\$(\$|&|\d{1,2}|<([^>]+)>)/g, (all, tok: string, name?: string) => {
    if (tok === '$') return '$';
    if (tok === '&') return m.groups[0] ?? '';
    if (name !== undefined) return m.named[name] ?? '';
    const n = Number(tok);
    return n < m.groups.length ? (m.groups[n] ?? '') : all;
  });
}

/** A line-range edit. Lines are 1-based and inclusive. */
export type LineEdit =
  | { readonly kind: 'replace'; readonly start: number; readonly end: number; readonly text: string }
  | { readonly kind: 'insert-before'; readonly line: number; readonly text: string }
  | { readonly kind: 'insert-after'; readonly line: number; readonly text: string }
  | { readonly kind: 'delete'; readonly start: number; readonly end: number };

/** Result of {@link applyLineEdit}. */
export type LineEditResult =
  | { readonly ok: true; readonly text: string; readonly linesAdded: number; readonly linesRemoved: number }
  | { readonly ok: false; readonly message: string };

function newLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Applies one line-range edit, keeping the file's line endings and final
 * newline. Inserted text may or may not end with a newline; it is inserted
 * as whole lines either way.
 *
 * @example
 * ```ts
 * applyLineEdit('a\nb\nc\n', { kind: 'replace', start: 2, end: 2, text: 'B' }); // { ok: true, text: 'a\nB\nc\n', ... }
 * ```
 */
export function applyLineEdit(text: string, edit: LineEdit): LineEditResult {
  const doc = toDocument(text);
  const count = doc.lines.length;
  const bad = (message: string): LineEditResult => ({ ok: false, message: `${message} The file has ${plural(count, 'line')}.` });
  let start: number;
  let removeCount: number;
  let insert: string[];
  switch (edit.kind) {
    case 'replace':
    case 'delete': {
      if (!Number.isSafeInteger(edit.start) || !Number.isSafeInteger(edit.end) || edit.start < 1 || edit.end < edit.start) {
        return bad(`Invalid range ${edit.start}-${edit.end}: lines are 1-based and start must not exceed end.`);
      }
      if (edit.end > count) return bad(`Range ${edit.start}-${edit.end} runs past the end of the file.`);
      start = edit.start - 1;
      removeCount = edit.end - edit.start + 1;
      insert = edit.kind === 'replace' ? newLines(edit.text) : [];
      break;
    }
    case 'insert-before':
    case 'insert-after': {
      const max = edit.kind === 'insert-before' ? count + 1 : count;
      const min = edit.kind === 'insert-before' ? 1 : 0;
      if (!Number.isSafeInteger(edit.line) || edit.line < min || edit.line > max) {
        return bad(`Line ${edit.line} is out of range for ${edit.kind} (allowed ${min}-${max}).`);
      }
      start = edit.kind === 'insert-before' ? edit.line - 1 : edit.line;
      removeCount = 0;
      insert = newLines(edit.text);
      break;
    }
  }
  const finalNewline = count === 0 ? true : doc.eols[count - 1] !== '';
  const lines = [...doc.lines];
  const eols = [...doc.eols];
  lines.splice(start, removeCount, ...insert);
  eols.splice(start, removeCount, ...insert.map(() => doc.eol));
  for (let i = 0; i < eols.length - 1; i++) if (eols[i] === '') eols[i] = doc.eol;
  if (eols.length > 0) eols[eols.length - 1] = finalNewline ? eols[eols.length - 1] || doc.eol : '';
  const out: TextDocument = { lines, eols, eol: doc.eol };
  return { ok: true, text: fromDocument(out), linesAdded: insert.length, linesRemoved: removeCount };
}
