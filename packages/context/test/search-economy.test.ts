/**
 * The search economy goal on a pinned slice of the eval (`pnpm eval:search`
 * runs all 900 tasks): "show me X" through findSymbol + getSymbol costs at
 * least 15x fewer tokens than reading the files whole, over the three
 * languages together, and every call of every lookup fits the small
 * profile's per-call budget. Each language keeps a floor below its full-run
 * figure so a regression in one shows even while the total holds. And a
 * lookup never costs more than the file it looks into.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { beforeAll, describe, expect, test } from 'vitest';
import { createContext } from '../src/index.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';
import { ECONOMY_CORPORA, type EconomyReport, measureEconomy } from './support/search-economy.ts';
import { testState } from './support/test-state.ts';

/** The first fifth of each corpus's tasks in the eval (same seed, so the same tasks), 180 in all. */
const SLICE = 5;
/**
 * A little below the slice's own figures (JavaScript 12.3x, TypeScript 6.5x,
 * Python 38.2x; the full run: 13.4x, 6.6x, 42.7x).
 */
const FLOORS: Readonly<Record<string, number>> = { javascript: 11, typescript: 6, python: 34 };

describe('search economy on real code (pinned npm packages)', () => {
  const reports: EconomyReport[] = [];
  beforeAll(async () => {
    for (const corpus of ECONOMY_CORPORA) reports.push(await measureEconomy(corpus, corpus.tasks / SLICE));
  }, 300_000);

  test('findSymbol + getSymbol: 15x fewer tokens than whole files, every call within the small profile', () => {
    for (const r of reports) {
      expect(r.tasks.length, r.corpus.name).toBe(r.corpus.tasks / SLICE);
      expect(r.largestCall, r.corpus.name).toBeLessThanOrEqual(r.budget);
      expect(r.listed, r.corpus.name).toBe(1);
      expect(r.served, r.corpus.name).toBe(1);
    }
    const ratio = (of: readonly EconomyReport[]) => of.reduce((n, r) => n + r.fileTokens, 0) / of.reduce((n, r) => n + r.lookupTokens, 0);
    for (const [language, floor] of Object.entries(FLOORS)) {
      const of = reports.filter((r) => r.corpus.language === language);
      expect(of.length, language).toBeGreaterThan(0);
      expect(ratio(of), language).toBeGreaterThanOrEqual(floor);
    }
    const overall = ratio(reports);
    const byLanguage = Object.keys(FLOORS).map((language) => `${language} ${ratio(reports.filter((r) => r.corpus.language === language)).toFixed(1)}x`);
    console.log(
      `search economy, a fifth of the eval's tasks: ${overall.toFixed(1)}x overall; ${byLanguage.join(', ')}; ${reports.map((r) => `${r.corpus.name} ${r.ratio.toFixed(1)}x`).join(', ')}`,
    );
    expect(overall).toBeGreaterThanOrEqual(15);
  });

  test('a lookup never costs more than the file: getSymbol ≤ readFile, and getOutline + getSymbol ≤ readFile for a file the profile can read', () => {
    // Reading a file whole from a name needs the same findSymbol first, so that path is findSymbol + readFile:
    // the definition must cost no more than the file. From a file already known, the outline path competes
    // with readFile alone; a file over the small profile's per-call budget cannot be read whole there.
    const over: string[] = [];
    let small = 0;
    for (const r of reports) {
      for (const t of r.tasks) {
        if (t.symbolTokens > t.fileTokens) over.push(`${r.corpus.name} ${t.path} ${t.query}: getSymbol ${t.symbolTokens} > file ${t.fileTokens}`);
        if (t.fileTokens <= r.budget) {
          small++;
          if (t.outlineTokens > t.fileTokens) over.push(`${r.corpus.name} ${t.path} ${t.query}: outline path ${t.outlineTokens} > file ${t.fileTokens}`);
        }
      }
    }
    // The slice holds files small enough for the question to arise (rxjs keeps an operator a file).
    expect(small).toBeGreaterThan(40);
    expect(over).toEqual([]);
  });
});

describe('getSymbol and getOutline views on real files (small profile)', () => {
  const session = async (name: string, version: string, under: string) => {
    const fs = new MemoryFilesystem({ files: packageFiles(npmPackage(name, version), (p) => p.startsWith(under)) });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    await ctx.scan();
    return ctx;
  };
  /** A context over the package's files below the path's directory, and getSymbol's symbol view of `name` there. */
  const symbolView = async (pkg: string, path: string, name: string) => {
    const [pkgName, version] = pkg.split('@') as [string, string];
    const ctx = await session(pkgName, version, path.slice(0, path.lastIndexOf('/') + 1));
    const r = await ctx.getSymbol(path, name);
    expect(r.view).toBe('symbol');
    expect(r.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
    return { ctx, r };
  };

  test('a definition that is most of a small file: the whole file, as readFile serves it, from getSymbol and getOutline', async () => {
    const ctx = await session('mobx', '6.13.5', 'src/types/');
    const path = 'src/types/generic-abort-signal.ts';
    const whole = await ctx.readFile(path);
    const symbol = await ctx.getSymbol(path, 'GenericAbortSignal');
    expect(symbol.view).toBe('full');
    expect(symbol.text).toBe(whole.text);
    // Nothing is missing: no `next` (it only ever names a call).
    expect(symbol.next).toBeUndefined();
    expect((await ctx.getOutline(path)).text).toBe(whole.text);
    // findSymbol says what the file costs, so readFile can be weighed against getSymbol.
    expect((await ctx.findSymbol('GenericAbortSignal')).text).toContain(`interface 2-7, file ${whole.totalTokens} tokens`);
    await ctx.close();
  });

  test('a class over the budget is its head and its members, each reachable by getSymbol', async () => {
    const path = 'src/types/observablemap.ts';
    const { ctx, r } = await symbolView('mobx@6.13.5', path, 'ObservableMap');
    expect(r.text).toContain('93\texport class ObservableMap<K = any, V = any>');
    expect(r.text).toMatch(
      /Members \(class ObservableMap is lines 93-486, \d+ tokens, over this call's budget; getSymbol\("src\/types\/observablemap.ts", "ObservableMap.constructor"\) shows the first, each member likewise\):/,
    );
    // The call the list names is concrete: it serves the first member listed.
    const first = await ctx.getSymbol(path, 'ObservableMap.constructor');
    expect(r.text).toContain(`${first.startLine}-${first.endLine}`.padEnd(9));
    expect(r.text).toContain('376-452   replace(values: IObservableMapInitialValues<K, V>): ObservableMap<K, V>');
    expect(r.omitted).toEqual([expect.objectContaining({ startLine: (r.endLine ?? 0) + 1, endLine: 486 })]);
    const member = await ctx.getSymbol(path, 'ObservableMap.replace');
    expect([member.startLine, member.endLine]).toEqual([376, 452]);
    await ctx.close();
  });

  test('a long doc comment stops after its first paragraph, with the call that shows the rest', async () => {
    const path = 'src/internal/operators/debounceTime.ts';
    const { ctx, r } = await symbolView('rxjs@7.8.1', path, 'debounceTime');
    expect(r.text).toContain('8\t * Emits a notification from the source Observable only after a particular time span');
    expect(r.text).not.toContain('@param {number} dueTime');
    const gap = r.omitted[0];
    expect(gap).toMatchObject({ endLine: 63 });
    expect(r.text).toContain(`[… doc comment, lines ${gap?.startLine}-63 (${gap?.tokens} tokens): readLines("${path}", ${gap?.startLine}, 63) …]`);
    expect(r.text).toContain('64\texport function debounceTime<T>(dueTime: number, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<T> {');
    expect(r.text).toContain('124\t}');
    expect(r.tokens).toBeLessThan((await ctx.readFile(path)).tokens * 0.6);
    await ctx.close();
  });
});
