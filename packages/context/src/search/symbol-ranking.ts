/**
 * How well a definition's name answers a query, in four tiers: exact (the
 * name, or the qualified name, as asked), prefix, word match (the query's
 * words — split at camelCase, snake_case, kebab-case and digits — each
 * starting a word of the name, in order: `user id` finds `getUserId`), and
 * fuzzy (a typo within a few edits, or the query's letters in order).
 *
 * @module
 */

import type { SymbolKind } from '../symbols/types.ts';
import type { IndexedSymbol } from './symbol-index.ts';

/** Match tiers, best first. */
export const MATCH_TIERS = ['exact', 'prefix', 'words', 'fuzzy'] as const;

/** How a name matched. */
export type MatchTier = (typeof MATCH_TIERS)[number];

/** A tier and a score within it (lower is better). */
export interface NameMatch {
  readonly tier: MatchTier;
  readonly score: number;
}

/** A query taken apart: the name asked for and what qualifies it (`AuthManager` in `AuthManager.login`). */
export interface SymbolQuery {
  /** The whole query, separators (`::`, `#`, `->`) written as `.`. */
  readonly full: string;
  readonly name: string;
  readonly qualifier: string | undefined;
  readonly words: readonly string[];
}

/**
 * Words of an identifier, lower case: `parseHTTPRequest2` → parse, http,
 * request, 2; `max_retry-count` → max, retry, count.
 */
export function identifierWords(name: string): string[] {
  return (name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\sA-Za-z0-9_\-.$]+/g) ?? []).map((w) => w.toLowerCase());
}

/** Parses a query (already checked to be a non-empty line). */
export function parseQuery(query: string): SymbolQuery {
  const full = query
    .trim()
    .replace(/::|->|#/g, '.')
    .replace(/\.{2,}/g, '.')
    .replace(/^\.|\.$/g, '');
  const dot = full.lastIndexOf('.');
  const name = dot < 0 ? full : full.slice(dot + 1);
  // Spaces separate words ("user id"); the name to compare is the query without them.
  return { full, name: name.replace(/\s+/g, ''), qualifier: dot < 0 ? undefined : full.slice(0, dot), words: identifierWords(name) };
}

/** Levenshtein distance of `a` and `b`, or `max + 1` as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] as number;
}

/** Letters of `query` skipped over in `name` when they appear in order; -1 when they do not. */
function subsequenceGaps(query: string, name: string): number {
  let at = 0;
  let gaps = 0;
  for (const c of query) {
    const found = name.indexOf(c, at);
    if (found < 0) return -1;
    gaps += found - at;
    at = found + 1;
  }
  return gaps;
}

/** Whether each query word starts a word of the name, in order. */
function wordsMatch(queryWords: readonly string[], nameWords: readonly string[]): number {
  let at = 0;
  for (const q of queryWords) {
    while (at < nameWords.length && !(nameWords[at] as string).startsWith(q)) at++;
    if (at >= nameWords.length) return -1;
    at++;
  }
  return nameWords.length - queryWords.length;
}

/**
 * The tier of `name` for the query, or `undefined` when it does not match.
 *
 * @example
 * ```ts
 * matchName(parseQuery('userId'), 'getUserIdFromToken'); // { tier: 'words', score: 3 }
 * ```
 */
export function matchName(query: SymbolQuery, name: string): NameMatch | undefined {
  const q = query.name;
  if (q.length === 0) return undefined;
  if (name === q) return { tier: 'exact', score: 0 };
  const lower = name.toLowerCase();
  const ql = q.toLowerCase();
  if (lower === ql) return { tier: 'exact', score: 1 };
  if (lower.startsWith(ql)) return { tier: 'prefix', score: name.length - q.length };
  if (query.words.length > 0) {
    const extra = wordsMatch(query.words, identifierWords(name));
    if (extra >= 0) return { tier: 'words', score: extra };
  }
  if (ql.length < 3) return undefined;
  const max = Math.max(1, Math.floor(ql.length / 4));
  const d = editDistance(ql, lower, max);
  if (d <= max) return { tier: 'fuzzy', score: d };
  // Letters in order, not too spread out: `cmpRes` finds `computeResult`.
  const gaps = subsequenceGaps(ql, lower);
  if (gaps >= 0 && lower[0] === ql[0] && gaps <= ql.length * 2) return { tier: 'fuzzy', score: max + 1 + gaps };
  return undefined;
}

/** A definition with how it matched. */
export interface RankedSymbol extends IndexedSymbol {
  readonly tier: MatchTier;
  readonly score: number;
}

/** Kinds in the order a model asking "where is X defined" most likely means. */
const KIND_RANK: Partial<Record<SymbolKind, number>> = {
  class: 0,
  interface: 0,
  struct: 0,
  trait: 0,
  enum: 0,
  type: 0,
  function: 0,
  method: 0,
  constructor: 1,
  namespace: 1,
  module: 1,
  impl: 1,
  variable: 2,
  property: 2,
  section: 3,
};

/**
 * The tier of one definition: its name's, with a qualified query judged on
 * the qualified name — exact only when it ends with the query; a prefix
 * match at best when the qualifier is only part of another name; one tier
 * lower than the name's when the qualifier is not there at all.
 */
export function rankSymbol(query: SymbolQuery, symbol: IndexedSymbol, byName: NameMatch): RankedSymbol {
  if (query.qualifier === undefined) return { ...symbol, ...byName };
  const qn = symbol.qualifiedName;
  if (qn === query.full || qn.endsWith(`.${query.full}`)) return { ...symbol, tier: 'exact', score: byName.score };
  const ql = query.full.toLowerCase();
  const lower = qn.toLowerCase();
  if (lower === ql || lower.endsWith(`.${ql}`)) return { ...symbol, tier: 'exact', score: byName.score + 1 };
  // The qualifier appears only within another name (`FlatRuleTester` for `RuleTester`): no longer exact.
  const at = MATCH_TIERS.indexOf(byName.tier);
  const tier = lower.includes(query.qualifier.toLowerCase()) ? Math.max(at, 1) : Math.min(MATCH_TIERS.length - 1, at + 1);
  return { ...symbol, tier: MATCH_TIERS[tier] as MatchTier, score: byName.score };
}

/** A TypeScript declaration file (`.d.ts`, `.d.mts`, `.d.cts`): signatures of code that lives elsewhere. */
const DECLARATION_FILE = /\.d\.[cm]?ts$/;

/**
 * The order of ranked definitions: tier, score, kind, code before tests
 * (`isTest`, the registry's tag), code before its declaration files (a
 * JavaScript package's `types.d.ts` declares every class its `lib/`
 * defines, and "show me X" means the code), shallower paths, then path and
 * line.
 */
export function rankOrder(isTest: (path: string) => boolean): (a: RankedSymbol, b: RankedSymbol) => number {
  return (a, b) =>
    MATCH_TIERS.indexOf(a.tier) - MATCH_TIERS.indexOf(b.tier) ||
    a.score - b.score ||
    (KIND_RANK[a.kind] ?? 2) - (KIND_RANK[b.kind] ?? 2) ||
    Number(isTest(a.path)) - Number(isTest(b.path)) ||
    Number(DECLARATION_FILE.test(a.path)) - Number(DECLARATION_FILE.test(b.path)) ||
    a.path.split('/').length - b.path.split('/').length ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
    a.startLine - b.startLine;
}
