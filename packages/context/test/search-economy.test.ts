/**
 * The search economy goal on a pinned slice of the eval (`pnpm eval:search`
 * runs all 900 tasks): "show me X" through findSymbol + getSymbol costs at
 * least 15x fewer tokens than reading the files whole, over the three
 * languages together, and every call of every lookup fits the small
 * profile's per-call budget. Each language keeps a floor below its full-run
 * figure so a regression in one shows even while the total holds. And a
 * lookup never costs more than the file it looks into.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { ECONOMY_CORPORA, type EconomyReport, measureEconomy } from './support/search-economy.ts';

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
