/**
 * `pnpm bench [suite...] [--quick] [--time=ms] [--rounds=n] [--list]`: runs the
 * suites in `src/suites/*.ts` one after another and prints their tables. A
 * suite that cannot run is reported as not-run; missed targets are listed at
 * the end. The exit code stays 0 unless the runner itself breaks: the bench
 * reports, it does not gate.
 *
 * @module
 */

import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_RUN_OPTIONS, formatSuite, type RunOptions, type Suite, type SuiteResult } from './harness.ts';

const here = dirname(fileURLToPath(import.meta.url));
const suitesDir = join(here, 'suites');
const resultsDir = join(here, '..', 'results');

interface Cli {
  names: string[];
  list: boolean;
  options: Partial<RunOptions>;
}

function parseArgs(argv: readonly string[]): Cli {
  const cli: Cli = { names: [], list: false, options: {} };
  const opts: { -readonly [K in keyof RunOptions]?: RunOptions[K] } = {};
  for (const arg of argv) {
    if (arg === '--') continue;
    if (arg === '--list') cli.list = true;
    else if (arg === '--quick') Object.assign(opts, { timeMs: 80, warmupMs: 30, rounds: 2 });
    else if (arg.startsWith('--time=')) opts.timeMs = positive(arg);
    else if (arg.startsWith('--rounds=')) opts.rounds = positive(arg);
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg} (known: --quick, --time=<ms>, --rounds=<n>, --list)`);
    else cli.names.push(arg);
  }
  cli.options = opts;
  return cli;
}

function positive(arg: string): number {
  const n = Number(arg.slice(arg.indexOf('=') + 1));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${arg}: expected a positive number`);
  return n;
}

function isSuite(v: unknown): v is Suite {
  return typeof (v as Suite | null)?.run === 'function' && typeof (v as Suite).name === 'string';
}

function notRun(name: string, status: 'not-run' | 'error', reason: string): SuiteResult {
  const now = new Date().toISOString();
  return {
    suite: name,
    description: '',
    status,
    reason,
    startedAt: now,
    finishedAt: now,
    durationMs: 0,
    environment: { node: process.version, platform: process.platform, arch: process.arch, cpus: 0, cpuModel: '', gc: false },
    options: { timeMs: 0, warmupMs: 0, rounds: 0, minSamples: 0 },
    cases: [],
    misses: [],
    files: [],
  };
}

async function main(): Promise<void> {
  const cli = parseArgs(process.argv.slice(2));
  const files = readdirSync(suitesDir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .sort();
  const available = files.map((f) => basename(f, '.ts'));
  if (cli.list) {
    process.stdout.write(`${available.join('\n')}\n`);
    return;
  }
  const unknown = cli.names.filter((n) => !available.includes(n));
  if (unknown.length > 0) throw new Error(`unknown suite(s) ${unknown.join(', ')}; available: ${available.join(', ')}`);
  const selected = cli.names.length > 0 ? available.filter((n) => cli.names.includes(n)) : available;

  // A stray rejection in one suite must not take the others down with it.
  process.on('unhandledRejection', (err) => process.stderr.write(`bench: unhandled rejection: ${String(err)}\n`));

  const results: SuiteResult[] = [];
  for (const name of selected) {
    process.stderr.write(`bench: ${name}\n`);
    let result: SuiteResult;
    try {
      const mod = (await import(pathToFileURL(join(suitesDir, `${name}.ts`)).href)) as { default?: unknown; suite?: unknown };
      const suite = mod.default ?? mod.suite;
      if (!isSuite(suite)) result = notRun(name, 'error', 'the file has no default export from defineSuite()');
      else result = await suite.run({ ...DEFAULT_RUN_OPTIONS, ...cli.options, resultsDir });
    } catch (err) {
      // Typically an import failing because the backend package is not built yet.
      result = notRun(name, 'error', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    }
    results.push(result);
    process.stdout.write(`${formatSuite(result)}\n`);
    if (result.files.length > 0) process.stdout.write(`   json: ${result.files.map((f) => f.slice(f.indexOf('bench/'))).join(', ')}\n`);
  }

  process.stdout.write('\n== summary\n');
  for (const r of results) {
    const cases = r.cases.length;
    const passed = r.cases.filter((c) => c.status === 'pass').length;
    const head =
      r.status === 'ran'
        ? `${cases} cases: ${passed} pass, ${r.misses.length} missed target(s), ${(r.durationMs / 1000).toFixed(1)} s`
        : `${r.status}: ${r.reason}`;
    process.stdout.write(`   ${r.suite}: ${head}\n`);
    for (const m of r.misses) process.stdout.write(`     MISS ${m}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
});
