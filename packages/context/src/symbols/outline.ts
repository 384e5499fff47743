/**
 * Symbol tables for documents (tree-sitter first, regex otherwise), symbol
 * lookup by name, and the outline: every definition with its line range and
 * signature, bodies elided.
 *
 * @module
 */

import { type Document, derive } from '../content/document.ts';
import { markdownSymbols, regexSymbols } from './regex-fallback.ts';
import { hasGrammar, treeSitterSymbols } from './tree-sitter.ts';
import { type CodeSymbol, flattenSymbols, type SymbolTable } from './types.ts';

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

/** The symbols of a document, computed once per content hash. */
export function symbolTable(doc: Document): Promise<SymbolTable> {
  return derive(doc, 'symbols', async (): Promise<SymbolTable> => {
    const language = doc.language;
    if (language === 'markdown') return { source: 'markdown', symbols: markdownSymbols(doc.lines) };
    if (hasGrammar(language)) {
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
  readonly symbol: CodeSymbol | undefined;
  /** Other definitions with the same name (overloads, same method in several classes). */
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

/**
 * Finds a definition by name: the qualified name (`Class.method`, or
 * `Heading > Sub` in Markdown) wins, then the plain name, then a
 * case-insensitive match.
 */
export function findSymbol(table: SymbolTable, name: string): SymbolLookup {
  const all = flattenSymbols(table.symbols);
  const wanted = name.trim();
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
  if (matches.length > 0) return { symbol: matches[0], others: matches.slice(1), suggestions: [] };
  const lower = wanted.toLowerCase();
  const scored = all
    .map((s) => ({ s, d: s.name.toLowerCase().includes(lower) || lower.includes(s.name.toLowerCase()) ? 0 : distance(s.name.toLowerCase(), lower) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.d - b.d || (a.s.qualifiedName < b.s.qualifiedName ? -1 : 1));
  return { symbol: undefined, others: [], suggestions: [...new Set(scored.map((x) => x.s.qualifiedName))].slice(0, 8) };
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
