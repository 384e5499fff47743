/**
 * Symbol tables for documents (tree-sitter first, regex otherwise), symbol
 * lookup by name, and the outline: every definition with its line range and
 * signature, bodies elided.
 *
 * @module
 */

import { callText } from '../calls/call-text.ts';
import { type Document, derive } from '../content/document.ts';
import { markdownSymbols } from './markdown-sections.ts';
import { regexSymbols } from './regex-fallback.ts';
import { hasGrammar, treeSitterSymbols } from './tree-sitter.ts';
import { type CodeSymbol, flattenSymbols, SYMBOL_KINDS, type SymbolKind, type SymbolTable } from './types.ts';

const REGEX_LANGUAGES = new Set([
  'kotlin',
  'swift',
  'scala',
  'lua',
  'perl',
  'elixir',
  'dart',
  'julia',
  'groovy',
  'r',
  'powershell',
  'haskell',
  'ocaml',
  'clojure',
]);

/**
 * Over this many characters a document is outlined by the regex fallback:
 * tree-sitter's walk runs on the main thread at about 20 µs a definition,
 * so every other caller of the process (an MCP server's other clients)
 * waits while it runs — 2.8 s for TypeScript's 9 MB compiler, where the
 * regex outline takes 0.1 s.
 */
const TREE_SITTER_MAX_CHARS = 4 * 1024 * 1024;

/**
 * Minified code: over 64 KiB, with lines of more than 1,000 characters on
 * average. Its names are mangled, so an outline tells a model little, and
 * a bundle that declares hundreds of thousands of names on one line (3 MB)
 * kept tree-sitter's walk busy for 8–20 s.
 */
function minified(doc: Document): boolean {
  return doc.text.length > 64 * 1024 && doc.text.length / doc.lines.length > 1000;
}

/** The symbols of a document, computed once per content hash. */
export function symbolTable(doc: Document): Promise<SymbolTable> {
  return derive(doc, 'symbols', async (): Promise<SymbolTable> => {
    const language = doc.language;
    if (language === 'markdown') return { source: 'markdown', symbols: markdownSymbols(doc.lines) };
    if (minified(doc)) return { source: 'none', symbols: [], skipped: 'minified code, not outlined (its names are mangled)' };
    if (hasGrammar(language)) {
      if (doc.text.length > TREE_SITTER_MAX_CHARS) return { source: 'regex', symbols: regexSymbols(doc.lines) };
      try {
        return { source: 'tree-sitter', symbols: await treeSitterSymbols(language as string, doc.text) };
      } catch {
        // A grammar that fails to load or parse must not make the file unreadable.
        return { source: 'regex', symbols: regexSymbols(doc.lines) };
      }
    }
    if (language === undefined || REGEX_LANGUAGES.has(language)) return { source: 'regex', symbols: regexSymbols(doc.lines) };
    return { source: 'none', symbols: [] };
  });
}

/** Result of {@link findSymbol}. */
export interface SymbolLookup {
  /** The definition to serve (an adjacent getter and setter come as one `property`). */
  readonly symbol: CodeSymbol | undefined;
  /** Other definitions the name matches (overloads, the same name in other scopes), each reachable by {@link symbolSelector}. */
  readonly others: readonly CodeSymbol[];
  /** Closest names when nothing matched. */
  readonly suggestions: readonly string[];
}

function distance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[n] as number;
}

const KIND_NAMES: ReadonlySet<string> = new Set(SYMBOL_KINDS);

/** A name as asked: the name itself, and the selectors after it (`:kind`, `@line`). */
interface SymbolQuery {
  readonly base: string;
  readonly kind: SymbolKind | undefined;
  readonly line: number | undefined;
}

/**
 * Splits `Options.retry:set` or `parse@120` into the name and its
 * selectors — unless the whole text is a name in the table (C++ and Ruby
 * write `A::b`, and a definition may be named `set`).
 */
function parseQuery(all: readonly CodeSymbol[], wanted: string): SymbolQuery {
  if (all.some((s) => s.qualifiedName === wanted || s.name === wanted)) return { base: wanted, kind: undefined, line: undefined };
  let base = wanted;
  let line: number | undefined;
  let kind: SymbolKind | undefined;
  const at = /^(.+)@(\d+)$/.exec(base);
  if (at) {
    base = at[1] as string;
    line = Number(at[2]);
  }
  const colon = /^(.+?):([a-z]+)$/.exec(base);
  if (colon && KIND_NAMES.has(colon[2] as string)) {
    base = colon[1] as string;
    kind = colon[2] as SymbolKind;
  }
  return { base, kind, line };
}

/** Definitions named `wanted`, best tier first: qualified name, plain name, either without case, a qualified tail. */
function matchName(all: readonly CodeSymbol[], wanted: string): CodeSymbol[] {
  let matches = all.filter((s) => s.qualifiedName === wanted);
  if (matches.length === 0) matches = all.filter((s) => s.name === wanted);
  if (matches.length === 0) {
    const lower = wanted.toLowerCase();
    matches = all.filter((s) => s.qualifiedName.toLowerCase() === lower || s.name.toLowerCase() === lower);
  }
  if (matches.length === 0 && wanted.includes('.')) {
    const tail = wanted.slice(wanted.lastIndexOf('.') + 1);
    matches = all.filter((s) => s.name === tail && s.qualifiedName.endsWith(wanted));
  }
  return matches;
}

/**
 * A getter and its setter declared one after the other (nothing between
 * them but what is nested in the first) are one property to a reader: one
 * symbol spanning both.
 */
function accessorPair(all: readonly CodeSymbol[], matches: readonly CodeSymbol[]): CodeSymbol | undefined {
  if (matches.length !== 2) return undefined;
  const [a, b] = matches as [CodeSymbol, CodeSymbol];
  const kinds = new Set([a.kind, b.kind]);
  if (!kinds.has('get') || !kinds.has('set') || a.qualifiedName !== b.qualifiedName) return undefined;
  const i = all.indexOf(a);
  const j = all.indexOf(b);
  if (all.slice(i + 1, j).some((s) => s.startLine < a.startLine || s.endLine > a.endLine)) return undefined;
  return {
    ...a,
    kind: 'property',
    endLine: b.endLine,
    signature: `${a.signature}; ${b.signature}`,
    children: [...a.children, ...b.children],
  };
}

/**
 * Finds a definition by name: the qualified name (`Class.method`,
 * `outer.inner`, or `Heading > Sub` in Markdown) wins, then the plain name,
 * then a case-insensitive match, then a qualified tail. Selectors narrow
 * a name that several definitions share: `:kind` (`Options.retry:set`,
 * `Foo:interface`) and `@line` (`parse@120`: the one starting on, or
 * holding, that line). An adjacent getter and setter are served together;
 * every other definition the name matches (a plain name matches nested
 * definitions too) is in `others`, never dropped.
 */
export function findSymbol(table: SymbolTable, name: string): SymbolLookup {
  const all = flattenSymbols(table.symbols);
  const wanted = name.trim();
  const query = parseQuery(all, wanted);
  let matches = matchName(all, query.base);
  if (query.kind !== undefined) matches = matches.filter((s) => s.kind === query.kind);
  if (query.line !== undefined) {
    const line = query.line;
    const starting = matches.filter((s) => s.startLine === line || s.docStartLine === line);
    // Else the innermost one holding the line.
    matches =
      starting.length > 0
        ? starting
        : matches
            .filter((s) => s.docStartLine <= line && s.endLine >= line)
            .sort((a, b) => b.docStartLine - a.docStartLine)
            .slice(0, 1);
  }
  // A plain name also matches definitions nested under other names (`helper` finds `test_x.helper`): list them, never hide them.
  if (matches.length > 0 && query.kind === undefined && query.line === undefined && !/[.:>]/.test(query.base)) {
    for (const s of all) if (s.name === query.base && !matches.includes(s)) matches.push(s);
  }
  if (matches.length > 0) {
    const pair = accessorPair(all, matches);
    if (pair) return { symbol: pair, others: [], suggestions: [] };
    return { symbol: matches[0], others: matches.slice(1), suggestions: [] };
  }
  const lower = query.base.toLowerCase();
  const scored = all
    .map((s) => ({ s, d: s.name.toLowerCase().includes(lower) || lower.includes(s.name.toLowerCase()) ? 0 : distance(s.name.toLowerCase(), lower) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(query.base.length / 3)))
    .sort((a, b) => a.d - b.d || (a.s.qualifiedName < b.s.qualifiedName ? -1 : 1));
  return { symbol: undefined, others: [], suggestions: [...new Set(scored.map((x) => symbolSelector(table, x.s)))].slice(0, 8) };
}

/**
 * The shortest name that makes {@link findSymbol} serve `symbol` itself:
 * its qualified name when no other definition has it, else with its kind
 * (`Options.retry:set`), else with its first line (`parse@120`).
 */
export function symbolSelector(table: SymbolTable, symbol: CodeSymbol): string {
  const all = flattenSymbols(table.symbols);
  const same = all.filter((s) => s.qualifiedName === symbol.qualifiedName);
  if (same.length <= 1) return symbol.qualifiedName;
  if (same.filter((s) => s.kind === symbol.kind).length === 1) return `${symbol.qualifiedName}:${symbol.kind}`;
  return `${symbol.qualifiedName}@${symbol.startLine}`;
}

/** Other definitions of a name listed in one answer; the rest are counted. */
const MAX_OTHERS_LISTED = 40;

/**
 * The note getSymbol adds when a name matches several definitions: each
 * other one with its lines and the selector that serves it alone. Overloads
 * (selected by `@line`) share one entry listing their ranges, so a name with
 * many overloads costs a few tokens each and a small budget still holds the
 * definition.
 *
 * @example
 * ```text
 * [also named 'sort': "Arrays.sort@<first line>" for lines 120-140, 142-160; "Sorter.sort" (300-320); getSymbol("Arrays.java", "Arrays.sort@120") serves the first, each name likewise]
 * ```
 */
export function otherDefinitionsNote(table: SymbolTable, name: string, others: readonly CodeSymbol[], path: string): string {
  if (others.length === 0) return '';
  const shown = others.slice(0, MAX_OTHERS_LISTED);
  // Entries in the order of their first member; overloads of one qualified name share one.
  const entries: Array<{ key: string; members: CodeSymbol[]; overloads: boolean }> = [];
  const overloads = new Map<string, CodeSymbol[]>();
  for (const o of shown) {
    const selector = symbolSelector(table, o);
    if (selector !== `${o.qualifiedName}@${o.startLine}`) {
      entries.push({ key: selector, members: [o], overloads: false });
      continue;
    }
    let group = overloads.get(o.qualifiedName);
    if (group === undefined) {
      group = [];
      overloads.set(o.qualifiedName, group);
      entries.push({ key: o.qualifiedName, members: group, overloads: true });
    }
    group.push(o);
  }
  const text = entries.map((e) =>
    e.overloads
      ? `${JSON.stringify(`${e.key}@<first line>`)} for lines ${e.members.map((o) => `${o.startLine}-${o.endLine}`).join(', ')}`
      : `${JSON.stringify(e.key)} (${e.members[0]?.startLine}-${e.members[0]?.endLine})`,
  );
  const unlisted = others.length - shown.length;
  const more = unlisted > 0 ? `; ${unlisted} more, ${callText('getOutline', [path])} lists them` : '';
  // A concrete call for the first, so the note names a call that works as written.
  const first = entries[0] as (typeof entries)[number];
  const firstSelector = first.overloads ? `${first.key}@${first.members[0]?.startLine}` : first.key;
  return `[also named '${name}': ${text.join('; ')}${more}; ${callText('getSymbol', [path, firstSelector])} serves the first, each name likewise]`;
}

/** Options of {@link renderOutline}. */
export interface OutlineOptions {
  /** Deepest nesting shown; default 3. */
  maxDepth?: number;
  /** Most symbols listed; the rest are counted. Default 400. */
  maxSymbols?: number;
}

/**
 * Renders symbols as an indented list: `start-end  kind signature`.
 *
 * @example
 * ```text
 * 12-40    function login(username: string, password: string): Promise<Session>
 * 42-310   class AuthManager
 *   50-80    method verify(token: string): boolean
 * ```
 */
export function renderOutline(symbols: readonly CodeSymbol[], options: OutlineOptions = {}): { text: string; listed: number; total: number } {
  const maxDepth = options.maxDepth ?? 3;
  const maxSymbols = options.maxSymbols ?? 400;
  const rows: string[] = [];
  let listed = 0;
  const total = flattenSymbols(symbols).length;
  const visit = (list: readonly CodeSymbol[], depth: number) => {
    for (const s of list) {
      if (listed >= maxSymbols) return;
      const range = `${s.startLine}-${s.endLine}`;
      const signature = s.signature.includes(s.name) ? s.signature : `${s.kind} ${s.name}: ${s.signature}`;
      rows.push(`${'  '.repeat(depth)}${range.padEnd(9)} ${signature}`);
      listed++;
      if (depth + 1 < maxDepth) visit(s.children, depth + 1);
    }
  };
  visit(symbols, 0);
  if (listed < total) rows.push(`… ${total - listed} more symbols not listed (nested deeper or past the limit)`);
  return { text: rows.join('\n'), listed, total };
}
