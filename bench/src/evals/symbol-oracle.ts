/**
 * Symbols against the languages' own parsers. For Python (`ast`),
 * TypeScript (the compiler API), Go (`go/parser`) and Java (javac's
 * `com.sun.source` trees), every file of real projects nobody here wrote
 * goes through the language's parser and through ctxfs: the symbol table
 * and the large profile's outline are compared with every definition at
 * any depth (recall, precision), and 300 definitions a language, drawn
 * with a fixed seed, are asked for with `getSymbol(path, qualifiedName)`
 * (`:get` / `:set` for an accessor): served with their exact range, listed
 * with the selector that serves them, served inexactly, missing, or — the
 * failure that must not happen — another definition served without a word.
 * The exact range is defined in `symbol-oracle/measure.ts`.
 *
 * Run: `pnpm eval:symbols` (writes bench/results/latest-symbol-oracle.json);
 * `pnpm eval:symbols python go` runs some languages. A language whose
 * toolchain is missing (python3, go, java) is skipped with a note.
 *
 * @module
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ORACLE_CORPORA } from './symbol-oracle/corpora.ts';
import { type LanguageReport, measureLanguage, oracleAvailable } from './symbol-oracle/measure.ts';

const DRAWN = 300;

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const languages = [...new Set(ORACLE_CORPORA.map((c) => c.language))].filter((l) => wanted.length === 0 || wanted.includes(l));
  const reports: LanguageReport[] = [];
  for (const language of languages) {
    if (!oracleAvailable(language)) {
      console.error(`${language}: its toolchain is not installed; skipped`);
      continue;
    }
    const started = performance.now();
    const r = await measureLanguage(
      language,
      ORACLE_CORPORA.filter((c) => c.language === language),
      DRAWN,
    );
    reports.push(r);
    console.error(
      `${language}: ${r.definitions} definitions in ${r.corpora.reduce((n, c) => n + c.files, 0)} files, ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  const rows: string[][] = [
    [
      'language',
      'files',
      'definitions',
      'drawn',
      'exact',
      'by selector',
      'listed',
      'inexact',
      'missing',
      'silent wrong',
      'exact rate',
      'by plain name: exact, silent wrong',
      'table recall',
      'table precision',
      'outline recall',
      'outline precision',
    ],
  ];
  for (const r of reports) {
    rows.push([
      r.language,
      String(r.corpora.reduce((n, c) => n + c.files, 0)),
      String(r.definitions),
      String(r.drawn.length),
      String(r.counts.exact),
      String(r.counts['exact-by-selector']),
      String(r.counts.listed),
      String(r.counts.inexact),
      String(r.counts.missing),
      String(r.counts['silent-wrong']),
      pct(r.exactRate),
      `${pct((r.plainCounts.exact + r.plainCounts['exact-by-selector']) / Math.max(1, r.drawn.length))}, ${r.plainCounts['silent-wrong']}`,
      pct(r.tableRecall),
      pct(r.tablePrecision),
      pct(r.outlineRecall),
      pct(r.outlinePrecision),
    ]);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length))) ?? [];
  for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
  for (const r of reports) {
    const wrong = r.drawn.filter((d) => d.outcome !== 'exact' && d.outcome !== 'exact-by-selector');
    if (wrong.length > 0)
      console.log(
        `\n${r.language}, not exact:\n${wrong.map((d) => `  ${d.outcome} ${d.path} ${d.query} want ${d.expected.join('-')} got ${d.served?.join('-') ?? '-'}`).join('\n')}`,
      );
  }
  const dir = join(import.meta.dirname, '..', '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest-symbol-oracle.json'), `${JSON.stringify({ at: new Date().toISOString(), drawn: DRAWN, languages: reports }, null, 1)}\n`);
}

await main();
