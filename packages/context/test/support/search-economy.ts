/**
 * "Show me X" on real repositories: for definitions drawn from a package's
 * own sources, what a model spends to find and read one — `findSymbol`
 * then the `getSymbol` call it offers, in the small profile — against
 * reading the whole file that holds it. Shared by the eval
 * (`pnpm eval:search`) and the CI test that holds the goal on a slice.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import {
  type ContextLayer,
  createContext,
  flattenSymbols,
  MODEL_PROFILES,
  type Served,
  type SymbolHit,
  type SymbolKind,
  symbolTable,
} from '../../src/index.ts';
import { npmPackage } from './npm-package.ts';
import { testState } from './test-state.ts';

/** A pinned package, the part of it whose definitions are drawn, and how many tasks it gets. */
export interface EconomyCorpus {
  readonly language: string;
  readonly name: string;
  readonly version: string;
  /** Files whose definitions are drawn (paths inside the package). */
  readonly sources: RegExp;
  /** Tasks drawn from it in the full eval (300 a language). */
  readonly tasks: number;
}

/**
 * The corpora: JavaScript, TypeScript and Python sources as npm ships
 * them, two code bases for each of the first two — one of large modules
 * and one of small ones (rxjs keeps one operator a file), so neither
 * shape alone decides the figure.
 */
export const ECONOMY_CORPORA: readonly EconomyCorpus[] = [
  { language: 'javascript', name: 'webpack', version: '5.91.0', sources: /^lib\/.*\.js$/, tasks: 150 },
  { language: 'javascript', name: 'eslint', version: '8.57.0', sources: /^lib\/.*\.js$/, tasks: 150 },
  { language: 'typescript', name: 'mobx', version: '6.13.5', sources: /^src\/.*\.ts$/, tasks: 150 },
  { language: 'typescript', name: 'rxjs', version: '7.8.1', sources: /^src\/.*\.ts$/, tasks: 150 },
  // node-gyp ships gyp, its Python build-file generator.
  { language: 'python', name: 'node-gyp', version: '10.1.0', sources: /^gyp\/pylib\/gyp\/.*\.py$/, tasks: 300 },
];

/** Definition kinds a "show me X" asks for. */
const TASK_KINDS: ReadonlySet<SymbolKind> = new Set(['function', 'method', 'class', 'interface', 'type', 'enum', 'struct', 'trait']);

/** One task and what it cost. */
export interface EconomyTask {
  readonly path: string;
  readonly query: string;
  /** The file the task names, when the name alone is not unique. */
  readonly scope: string | undefined;
  readonly kind: SymbolKind;
  readonly startLine: number;
  /** Position of the wanted definition among findSymbol's hits (0 = first), -1 when it was not listed. */
  readonly rank: number;
  /** findSymbol calls made (the first, plus pages followed). */
  readonly findCalls: number;
  readonly findTokens: number;
  readonly symbolTokens: number;
  /** Largest single call of the lookup. */
  readonly largestCall: number;
  /** getSymbol served the wanted definition. */
  readonly served: boolean;
  /** Tokens of reading the whole file. */
  readonly fileTokens: number;
  /** Tokens of `getOutline` then `getSymbol` on the file (the outline alone when it served the whole file). */
  readonly outlineTokens: number;
}

/** A corpus's outcome. */
export interface EconomyReport {
  readonly corpus: EconomyCorpus;
  readonly files: number;
  readonly definitions: number;
  readonly tasks: readonly EconomyTask[];
  /** Whole-file tokens over lookup tokens, summed over the tasks. */
  readonly ratio: number;
  readonly medianRatio: number;
  readonly lookupTokens: number;
  readonly fileTokens: number;
  /** Share of tasks whose definition was the first hit, and was listed at all. */
  readonly firstHit: number;
  readonly listed: number;
  /** Share of tasks that name the file (the name alone was not unique). */
  readonly scoped: number;
  readonly served: number;
  /** Largest single call of any lookup, and the small profile's per-call budget. */
  readonly largestCall: number;
  readonly budget: number;
  /** Index build time on first use. */
  readonly indexMs: number;
}

/** A small deterministic generator (mulberry32), shared by the evals that draw samples. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Definition {
  readonly path: string;
  readonly name: string;
  readonly qualifiedName: string;
  readonly kind: SymbolKind;
  readonly startLine: number;
}

/** Definitions of the corpus's sources, in path and line order. */
async function definitions(ctx: ContextLayer, corpus: EconomyCorpus): Promise<Definition[]> {
  const out: Definition[] = [];
  for (const record of ctx.registry.list({ tag: 'code' })) {
    if (!corpus.sources.test(record.path) || record.generated) continue;
    const doc = await ctx.loader.load(record.path);
    for (const s of flattenSymbols((await symbolTable(doc)).symbols)) {
      // `module.exports = function (…)` and `export default` name nothing a person would ask for.
      if (!TASK_KINDS.has(s.kind) || s.name.length < 3 || s.name === 'exports' || s.name === 'default') continue;
      out.push({ path: record.path, name: s.name, qualifiedName: s.qualifiedName, kind: s.kind, startLine: s.startLine });
    }
  }
  return out;
}

/**
 * Runs `count` tasks drawn (seeded) from the corpus's definitions; all of
 * them when there are fewer.
 */
export async function measureEconomy(corpus: EconomyCorpus, count: number, seed = 11): Promise<EconomyReport> {
  const root = npmPackage(corpus.name, corpus.version);
  const state = mkdtempSync(join(tmpdir(), 'ctxfs-economy-'));
  const fs = await HostFilesystem.open({ root, stateDir: join(state, 'host'), readOnly: true });
  const ctx = await createContext({ fs, store: testState(), profile: 'small', agent: 'eval' });
  try {
    const scan = await ctx.scan();
    const all = await definitions(ctx, corpus);
    const next = random(seed);
    const pool = [...all];
    const drawn: Definition[] = [];
    while (drawn.length < count && pool.length > 0) drawn.push(pool.splice(Math.floor(next() * pool.length), 1)[0] as Definition);

    const started = performance.now();
    await ctx.findSymbol(drawn[0]?.name ?? 'x');
    const indexMs = performance.now() - started;

    // Whole files read the way a large model reads them, without the per-call cap cutting them.
    const reader = ctx.session({ agent: 'eval:whole', profile: { base: 'large', perCallTokens: 10_000_000, sessionTokens: 1e12 } });
    const fileTokens = new Map<string, number>();
    const tasks: EconomyTask[] = [];
    // How many definitions answer to each name a task would use: a name that is
    // not unique is asked for with its file ("show me create in no-alert.js").
    const queryOf = (d: Definition) => (d.kind === 'method' ? d.qualifiedName : d.name);
    const carriers = new Map<string, Set<string>>();
    for (const d of all) {
      const set = carriers.get(queryOf(d)) ?? new Set<string>();
      set.add(d.path);
      carriers.set(queryOf(d), set);
    }
    for (const d of drawn) {
      const query = queryOf(d);
      const path = (carriers.get(query)?.size ?? 0) > 1 ? d.path : undefined;
      const session = ctx.session({ agent: 'eval:lookup', profile: 'small' });
      let find = await session.findSymbol(query, { path });
      let findTokens = find.tokens;
      let largest = find.tokens;
      let findCalls = 1;
      const seen: SymbolHit[] = [...find.items];
      // One hit stands for every definition of a qualified name in a file (overloads).
      const wanted = (h: SymbolHit) => h.path === d.path && h.qualifiedName === d.qualifiedName;
      // A model pages on when the definition it wants is not listed yet.
      while (!seen.some(wanted) && find.next !== undefined && findCalls < 4) {
        find = await new Function('s', `return s.${find.next};`)(session);
        findTokens += find.tokens;
        largest = Math.max(largest, find.tokens);
        findCalls++;
        seen.push(...find.items);
      }
      const rank = seen.findIndex(wanted);
      const hit = seen[rank];
      let symbolTokens = 0;
      let served = false;
      if (hit !== undefined) {
        let symbol = await session.getSymbol(hit.path, hit.qualifiedName);
        symbolTokens = symbol.tokens;
        largest = Math.max(largest, symbol.tokens);
        // Served: the definition's first line shown, or (an overload) listed with its range beside the first.
        const reached = (s: Served) =>
          ((s.startLine ?? 0) <= d.startLine && (s.endLine ?? 0) >= d.startLine) ||
          (s.view === 'symbol' && s.text.split('\n').some((l) => l.startsWith('[also named ') && l.includes(` ${d.startLine}-`)));
        // A small file comes back whole (view `full`) when that costs no more than the definition.
        served = (symbol.view === 'symbol' || symbol.view === 'full') && reached(symbol);
        // A long doc comment can fill the budget before the definition starts: the model reads on as told.
        for (let more = 0; !served && symbol.next?.startsWith('readLines(') && more < 3; more++) {
          symbol = await new Function('s', `return s.${symbol.next};`)(session);
          symbolTokens += symbol.tokens;
          largest = Math.max(largest, symbol.tokens);
          served = reached(symbol);
        }
      }
      let whole = fileTokens.get(d.path);
      if (whole === undefined) {
        whole = (await reader.readFile(d.path)).tokens;
        fileTokens.set(d.path, whole);
      }
      // The other way from a known file to a definition: its outline, then the definition (unless the outline was the whole file).
      const outlineSession = ctx.session({ agent: 'eval:outline', profile: 'small' });
      const outline = await outlineSession.getOutline(d.path);
      const outlineTokens = outline.tokens + (outline.view === 'full' ? 0 : (await outlineSession.getSymbol(d.path, d.qualifiedName)).tokens);
      tasks.push({
        path: d.path,
        query,
        scope: path,
        kind: d.kind,
        startLine: d.startLine,
        rank,
        findCalls,
        findTokens,
        symbolTokens,
        largestCall: largest,
        served,
        fileTokens: whole,
        outlineTokens,
      });
    }
    const lookupTokens = tasks.reduce((n, t) => n + t.findTokens + t.symbolTokens, 0);
    const wholeTokens = tasks.reduce((n, t) => n + t.fileTokens, 0);
    const ratios = tasks.map((t) => t.fileTokens / Math.max(1, t.findTokens + t.symbolTokens)).sort((a, b) => a - b);
    return {
      corpus,
      files: scan.files,
      definitions: all.length,
      tasks,
      ratio: wholeTokens / Math.max(1, lookupTokens),
      medianRatio: ratios[Math.floor(ratios.length / 2)] ?? 0,
      lookupTokens,
      fileTokens: wholeTokens,
      firstHit: tasks.filter((t) => t.rank === 0).length / Math.max(1, tasks.length),
      listed: tasks.filter((t) => t.rank >= 0).length / Math.max(1, tasks.length),
      scoped: tasks.filter((t) => t.scope !== undefined).length / Math.max(1, tasks.length),
      served: tasks.filter((t) => t.served).length / Math.max(1, tasks.length),
      largestCall: Math.max(0, ...tasks.map((t) => t.largestCall)),
      budget: MODEL_PROFILES.small.perCallTokens,
      indexMs,
    };
  } finally {
    await ctx.close();
    await fs.close();
    rmSync(state, { recursive: true, force: true });
  }
}
