/**
 * Search economy: "show me X" on real code in three languages. For 300
 * definitions a language, drawn (seeded) from the sources of pinned npm
 * packages, what a model in the small profile spends to see one —
 * `findSymbol(X)` (with the file named when X is not unique), then the
 * `getSymbol` call it offers, reading on when a long doc comment fills the
 * budget first — against reading the whole file that holds it (`readFile`
 * with a large profile, uncut). Goal: 15x fewer tokens, every call within
 * the small profile's per-call budget, and no lookup (nor `getOutline` then
 * `getSymbol` on a file the profile can read whole) dearer than the file.
 *
 * Packages are downloaded with `npm pack` on first use into
 * ~/.cache/ctxfs-bench/releases. Run: `pnpm eval:search` (writes
 * bench/results/latest-search-economy.json).
 *
 * @module
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ECONOMY_CORPORA, type EconomyReport, measureEconomy } from '../../../packages/context/test/support/search-economy.ts';

const GOAL = 15;

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

async function main(): Promise<void> {
  const reports: EconomyReport[] = [];
  for (const corpus of ECONOMY_CORPORA) {
    const started = performance.now();
    const r = await measureEconomy(corpus, corpus.tasks);
    reports.push(r);
    console.error(`${corpus.name}@${corpus.version}: ${r.tasks.length} tasks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const rows: string[][] = [
    ['corpus', 'files', 'definitions', 'tasks', 'named file', 'first hit', 'served', 'lookup tok/task', 'file tok/task', 'ratio', 'median', 'largest call'],
  ];
  for (const r of reports) {
    rows.push([
      `${r.corpus.name}@${r.corpus.version} (${r.corpus.language})`,
      String(r.files),
      String(r.definitions),
      String(r.tasks.length),
      pct(r.scoped),
      pct(r.firstHit),
      pct(r.served),
      (r.lookupTokens / r.tasks.length).toFixed(0),
      (r.fileTokens / r.tasks.length).toFixed(0),
      `${r.ratio.toFixed(1)}x`,
      `${r.medianRatio.toFixed(1)}x`,
      `${r.largestCall} / ${r.budget}`,
    ]);
  }
  const languages = [...new Set(reports.map((r) => r.corpus.language))];
  const summary = languages.map((language) => {
    const of = reports.filter((r) => r.corpus.language === language);
    const lookup = of.reduce((n, r) => n + r.lookupTokens, 0);
    const whole = of.reduce((n, r) => n + r.fileTokens, 0);
    const tasks = of.reduce((n, r) => n + r.tasks.length, 0);
    return { language, tasks, lookup, whole, ratio: whole / lookup, largestCall: Math.max(...of.map((r) => r.largestCall)) };
  });
  const lookup = reports.reduce((n, r) => n + r.lookupTokens, 0);
  const whole = reports.reduce((n, r) => n + r.fileTokens, 0);
  const overall = whole / lookup;
  const budget = reports[0]?.budget ?? 0;
  const largest = Math.max(...reports.map((r) => r.largestCall));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length))) ?? [];
  for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
  console.log('');
  for (const s of summary) {
    console.log(
      `${s.language.padEnd(11)} ${String(s.tasks).padStart(4)} tasks  ${s.ratio.toFixed(1)}x fewer tokens  ${s.ratio >= GOAL ? 'goal met' : `below the ${GOAL}x goal`}`,
    );
  }
  console.log(
    `all         ${String(reports.reduce((n, r) => n + r.tasks.length, 0)).padStart(4)} tasks  ${overall.toFixed(1)}x fewer tokens; largest call ${largest} of ${budget} (${largest <= budget ? 'within' : 'OVER'} the small profile)`,
  );
  // A lookup never costs more than the file: getSymbol against readFile, and (for a file the small profile can
  // read whole) getOutline + getSymbol against readFile.
  const dearer = reports.flatMap((r) => r.tasks.filter((t) => t.symbolTokens > t.fileTokens || (t.fileTokens <= r.budget && t.outlineTokens > t.fileTokens)));
  console.log(`lookups that cost more than their file: ${dearer.length} of ${reports.reduce((n, r) => n + r.tasks.length, 0)}`);
  const dir = join(import.meta.dirname, '..', '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'latest-search-economy.json'),
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        goal: GOAL,
        overall,
        largestCall: largest,
        budget,
        languages: summary,
        corpora: reports.map(({ tasks, corpus, ...r }) => ({ ...r, corpus: { ...corpus, sources: corpus.sources.source }, tasks: tasks.length })),
        tasks: reports.flatMap((r) => r.tasks.map((t) => ({ corpus: r.corpus.name, ...t }))),
      },
      null,
      1,
    )}\n`,
  );
}

await main();
