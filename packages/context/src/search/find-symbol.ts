/**
 * `findSymbol`: where a function, class, method or type is defined across
 * the repository, ranked (exact > prefix > word match > fuzzy), each hit
 * with its path, qualified name, kind, line range and the `getSymbol` call
 * that shows it. Names only — no file content — so even the small profile
 * lists several dozen hits in one call.
 *
 * @module
 */

import { fsError } from '@ctxfs/core';
import { callShape, callText, operationName } from '../calls/call-text.ts';
import { type Caller, callBudget, documentTokens, type Workspace } from '../retrieval/shared.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { SYMBOL_KINDS, type SymbolKind } from '../symbols/types.ts';
import { narrowTo, plural, type Tally } from './narrowing.ts';
import { count, MAX_PATTERN_LENGTH, searchPath } from './search-input.ts';
import { lastPageOffset, overBudgetSearch, pastTheEnd, type Row, renderSearch, type SearchResult, shownRange, tooSmall } from './search-result.ts';
import { type IndexedSymbol, indexable, MAX_INDEXED_BYTES, symbolIndex } from './symbol-index.ts';
import { MATCH_TIERS, type MatchTier, matchName, parseQuery, type RankedSymbol, rankOrder, rankSymbol } from './symbol-ranking.ts';

/** Every kind a definition can have. */
const KINDS = SYMBOL_KINDS;

/** Names compared with a query are many; the definitions fetched for them are capped here. */
const MAX_CANDIDATE_NAMES = 2000;

/** Options of `findSymbol`. */
export interface FindSymbolOptions {
  /** Only definitions of this kind (or these kinds). */
  kind?: SymbolKind | readonly SymbolKind[];
  /** Only definitions in this file or below this directory. */
  path?: string;
  /** Most hits shown; default 10. */
  limit?: number;
  /** Hits to skip (paging); default 0. */
  offset?: number;
  /** `best` (default): only the best tier found (exact, else prefix, …); `all`: every tier, best first. */
  match?: 'best' | 'all';
  maxTokens?: number;
}

/** One definition found. */
export interface SymbolHit extends IndexedSymbol {
  readonly tier: MatchTier;
  /**
   * Further definitions of the same qualified name in the file (overloads,
   * a getter and its setter): `getSymbol` serves the first and lists them.
   */
  readonly sameName: number;
  /** The call that shows it: `getSymbol("src/auth.ts", "AuthManager.login")`. */
  readonly call: string;
  /** Tokens of the whole file (`undefined` when it could not be read just now). */
  readonly fileTokens: number | undefined;
}

function kindsOf(kind: FindSymbolOptions['kind']): ReadonlySet<SymbolKind> | undefined {
  if (kind === undefined) return undefined;
  const list = typeof kind === 'string' ? [kind] : [...kind];
  for (const k of list) {
    if (!KINDS.includes(k)) {
      throw fsError('EINVAL', 'findSymbol', undefined, { reason: `unknown kind '${String(k)}'`, hint: `use one of ${KINDS.join(', ')}` });
    }
  }
  return new Set(list);
}

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function checkQuery(query: unknown): string {
  if (typeof query !== 'string' || query.trim().length === 0 || query.length > MAX_PATTERN_LENGTH || hasControl(query)) {
    throw fsError('EINVAL', 'findSymbol', typeof query === 'string' ? query.slice(0, 80) : String(query), {
      reason: 'the query must be a name on one line, at most 1,000 characters',
      hint: 'pass a name such as "login", "AuthManager.login" or words such as "user id"',
    });
  }
  return query;
}

/**
 * The note of a search that found nothing: what was searched, and — when
 * nothing at all is indexed — why, from the registry (the index scanned it
 * first), so the advice is one that can help.
 */
async function nothingFound(ws: Workspace, names: number, grep: string): Promise<string> {
  if (names > 0) return `[searched ${plural(names, 'name')} of hand-written code files; ${grep} finds other uses of the text]`;
  // The index scans an empty registry itself; one that only knows the files read so far is not the workspace.
  if (!ws.registry.scanned) return `[no definitions are indexed: the workspace has not been scanned (${callShape('scan')} first); ${grep} searches the text]`;
  const code = ws.registry.list({ tag: 'code' });
  if (code.length === 0) return `[no definitions are indexed: the workspace holds no code files; ${grep} searches the text]`;
  const indexed = code.filter(indexable).length;
  if (indexed === 0) {
    return `[no definitions are indexed: the ${plural(code.length, 'code file')} here are generated or over ${MAX_INDEXED_BYTES / 1024 / 1024} MiB, which findSymbol leaves out; ${grep} searches them]`;
  }
  return `[no definitions are indexed: none of the ${plural(indexed, 'hand-written code file')} holds one that parses; ${grep} searches the text]`;
}

/** Finds definitions matching `query` across the repository. */
export async function findSymbol(ws: Workspace, caller: Caller, query: string, options: FindSymbolOptions = {}): Promise<SearchResult<SymbolHit>> {
  const q = parseQuery(checkQuery(query));
  const kinds = kindsOf(options.kind);
  const limit = count(options.limit, 'limit', 'findSymbol', 10, 1, 1000);
  const offset = count(options.offset, 'offset', 'findSymbol', 0);
  const matchAll = options.match === 'all';
  if (options.match !== undefined && options.match !== 'best' && options.match !== 'all') {
    throw fsError('EINVAL', 'findSymbol', undefined, { reason: `unknown match '${String(options.match)}'`, hint: 'use "best" or "all"' });
  }
  const scope = searchPath(options.path, 'findSymbol');
  const inScope = (path: string) => scope === '' || path === scope || path.startsWith(`${scope}/`);
  const budget = callBudget(caller, options.maxTokens, 'findSymbol');
  const sameCall = (extra: Record<string, string | number | undefined>) =>
    callText('findSymbol', [query], {
      kind: typeof options.kind === 'string' ? options.kind : undefined,
      path: scope === '' ? undefined : scope,
      match: matchAll ? 'all' : undefined,
      limit: options.limit,
      ...extra,
    });
  if (tooSmall(budget)) return overBudgetSearch(ws, caller, 'findSymbol', budget, sameCall({ maxTokens: caller.profile.perCallTokens }));

  if (scope !== '' && !(await ws.fs.exists(scope))) {
    throw fsError('ENOENT', 'findSymbol', scope, { reason: `no file or directory '${scope}'`, hint: 'leave path out to search the whole repository' });
  }
  const index = symbolIndex(ws);
  await index.refresh();
  const byName = new Map<string, ReturnType<typeof matchName>>();
  for (const name of (await index.names()).keys()) {
    const m = matchName(q, name);
    if (m !== undefined) byName.set(name, m);
  }
  const names = [...byName.entries()]
    .sort((a, b) => MATCH_TIERS.indexOf(a[1]?.tier ?? 'fuzzy') - MATCH_TIERS.indexOf(b[1]?.tier ?? 'fuzzy') || (a[1]?.score ?? 0) - (b[1]?.score ?? 0))
    .slice(0, MAX_CANDIDATE_NAMES)
    .map(([name]) => name);
  const isTest = (path: string) => ws.registry.get(path)?.tags.includes('test') ?? false;
  // Definitions in files the policy keeps from this caller are not shown, like their text.
  const withheld = currentCall()?.withheld ?? (() => false);
  const sorted = (await index.named(names))
    .filter((s) => (kinds === undefined || kinds.has(s.kind)) && inScope(s.path) && !withheld(s.path))
    .map((s) => rankSymbol(q, s, byName.get(s.name) as NonNullable<ReturnType<typeof matchName>>))
    .sort(rankOrder(isTest));
  // getSymbol(path, name) serves the first definition of a name in a file
  // and lists the others: one hit stands for them all.
  const groups = new Map<string, { first: RankedSymbol; best: RankedSymbol; count: number }>();
  for (const s of sorted) {
    const key = `${s.path}\0${s.qualifiedName}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { first: s, best: s, count: 1 });
    else {
      g.count++;
      if (s.startLine < g.first.startLine) g.first = s;
    }
  }
  let ranked = [...groups.values()].map((g) => ({ ...g.first, tier: g.best.tier, score: g.best.score, sameName: g.count - 1 })).sort(rankOrder(isTest));
  const tiers = new Map<MatchTier, number>();
  for (const r of ranked) tiers.set(r.tier, (tiers.get(r.tier) ?? 0) + 1);
  const best = ranked[0]?.tier;
  if (!matchAll && best !== undefined) ranked = ranked.filter((r) => r.tier === best);
  const weaker = matchAll ? [] : MATCH_TIERS.filter((t) => t !== best && (tiers.get(t) ?? 0) > 0);

  const page = ranked.slice(offset, offset + limit);
  // Each hit says what its whole file costs, so a model can weigh getSymbol against readFile (a small file is served whole either way).
  const fileTokens = new Map<string, number | undefined>();
  for (const path of new Set(page.map((s) => s.path))) {
    fileTokens.set(
      path,
      await ws.loader.load(path, 'findSymbol').then(
        (doc) => documentTokens(ws, doc),
        () => undefined,
      ),
    );
  }
  const rows: Row<SymbolHit>[] = page.map((s) => {
    const call = callText('getSymbol', [s.path, s.qualifiedName]);
    const size = fileTokens.get(s.path);
    const hit: SymbolHit = {
      path: s.path,
      name: s.name,
      qualifiedName: s.qualifiedName,
      kind: s.kind,
      startLine: s.startLine,
      endLine: s.endLine,
      tier: s.tier,
      sameName: s.sameName,
      call,
      fileTokens: size,
    };
    const also = s.sameName > 0 ? ` (+${s.sameName} same-named, listed by getSymbol)` : '';
    return {
      text: `${matchAll ? `[${s.tier}] ` : ''}${call}  ${s.kind} ${s.startLine}-${s.endLine}${size === undefined ? '' : `, file ${size} tokens`}${also}`,
      item: hit,
    };
  });
  const total = ranked.length;
  const [one, many] = matchAll || best === undefined ? ['definition', 'definitions'] : [`${best} match`, `${best} matches`];
  const header = (shown: number) =>
    total === 0
      ? `${operationName('findSymbol')} ${JSON.stringify(query)}: no definition matches${kinds ? ` (kind ${[...kinds].join(', ')})` : ''}.`
      : // The query is the call's own argument, just above in the model's transcript; the hits name what matched.
        `${plural(total, one, many)}${shownRange(offset, shown, total)}.`;
  const notes: string[] = [];
  // After an exact match the weaker ones are other names (getTextOf for getText): about 20 tokens in every such lookup for
  // what match 'all' (in the tool's description) lists anyway. Below exact, they may hold the one meant, so they are counted.
  if (weaker.length > 0 && best !== 'exact') {
    const n = weaker.reduce((a, t) => a + (tiers.get(t) ?? 0), 0);
    // The whole call, query and scope included: a shape with "your query" read as two queries in the tools' style, and a query is short.
    notes.push(`[+${plural(n, 'weaker match', 'weaker matches')}; ${sameCall({ match: 'all' })} lists them]`);
  }
  if (total === 0) {
    // A name with regex syntax in it (`listen(`, `(a+)+$`) is searched as the text it is, so the grep offered works.
    const literal = /[\\^$.*+?()[\]{}|]/.test(q.name) ? true : undefined;
    notes.push(await nothingFound(ws, (await index.names()).size, callText('grep', [q.name], { literal })));
  }
  return renderSearch(ws, caller, {
    op: 'findSymbol',
    view: 'symbols',
    header,
    rows,
    scope,
    total,
    exact: true,
    files: new Set(ranked.map((r) => r.path)).size,
    skipped: Math.min(offset, total),
    sensitiveLeftOut: 0,
    notes,
    budget,
    retry: sameCall({ maxTokens: caller.profile.perCallTokens }),
    rest: (shown, perEntry) => {
      const past = pastTheEnd(offset, shown, total, 'definition', sameCall({ offset: lastPageOffset(total, limit) }));
      if (past !== undefined) return past;
      const left = total - offset - shown;
      if (left <= 0) return undefined;
      const room = Math.max(1, Math.floor((budget * 0.8) / Math.max(1, perEntry())));
      const calls: string[] = [];
      // Where the definitions are: the directory or file holding most of the rest that one call can list.
      const tallies: Tally[] = [];
      ranked.forEach((r, i) => {
        tallies.push({ path: r.path, total: 1, left: i >= offset && i < offset + shown ? 0 : 1 });
      });
      const dir = narrowTo(scope, tallies, (n) => n <= room);
      if (dir !== undefined) calls.push(`${sameCall({ path: dir.path })} (${dir.total})`);
      const next = sameCall({ offset: offset + shown, limit: Math.min(room, Math.max(limit, 1)) });
      calls.push(next);
      return { note: `[… ${plural(left, 'more definition')}; narrow with ${calls.join(', or page on with ')} …]`, next };
    },
  });
}
