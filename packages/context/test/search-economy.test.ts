/**
 * The search economy goal on a pinned slice of the eval (`pnpm eval:search`
 * runs all 900 tasks): "show me X" through findSymbol + getSymbol costs at
 * least 15x fewer tokens than reading the files whole, over the three
 * languages together, and every call of every lookup fits the small
 * profile's per-call budget. Each language keeps a floor below its full-run
 * figure (JavaScript 12x, TypeScript 4.5x, Python 38x) so a regression in
 * one shows even while the total holds.
 */
import { describe, expect, test } from 'vitest';
import { ECONOMY_CORPORA, type EconomyReport, measureEconomy } from './support/search-economy.ts';

/** The first fifth of each corpus's tasks in the eval (same seed, so the same tasks), 180 in all. */
const SLICE = 5;
const FLOORS: Readonly<Record<string, number>> = { javascript: 8, typescript: 3, python: 25 };

describe('search economy on real code (pinned npm packages)', () => {
  test('findSymbol + getSymbol: 15x fewer tokens than whole files, every call within the small profile', { timeout: 300_000 }, async () => {
    const reports: EconomyReport[] = [];
    for (const corpus of ECONOMY_CORPORA) reports.push(await measureEconomy(corpus, corpus.tasks / SLICE));
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
    console.log(
      `search economy, a fifth of the eval's tasks: ${overall.toFixed(1)}x overall; ${reports.map((r) => `${r.corpus.name} ${r.ratio.toFixed(1)}x`).join(', ')}`,
    );
    expect(overall).toBeGreaterThanOrEqual(15);
  });
});
