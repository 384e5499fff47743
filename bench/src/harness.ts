/**
 * The bench harness: a backend operation and its raw baseline timed side by
 * side in one process and one run, reported as a ratio. Built on tinybench;
 * adds batching for sub-microsecond-resolution operations, alternating rounds
 * so background noise hits both sides alike, retained-memory measurement, and
 * absolute budgets for operations that have no baseline.
 *
 * @example
 * ```ts
 * export default defineSuite({
 *   name: 'memory',
 *   setup: () => ({ fs: new MemoryFilesystem({ files: { 'a.txt': 'x' } }) }),
 *   cases: ({ fs }) => [
 *     { name: 'read', subject: () => fs.readBytes('a.txt'), baseline: () => raw(), baselineName: 'raw', target: { maxRatio: 1.2 } },
 *   ],
 * });
 * ```
 *
 * @module
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Bench } from 'tinybench';

// ------------------------------------------------------------------ public types

/** A promised ceiling on subject ÷ baseline, judged on median latency. */
export interface Target {
  readonly maxRatio: number;
}

/** One more baseline timed in the same run as the subject. */
export interface Baseline {
  readonly name: string;
  readonly fn: () => unknown;
  readonly target?: Target;
}

/** Fields every case accepts. */
interface CaseCommon {
  readonly name: string;
  /** Label of the subject side (default `ctxfs`). */
  readonly subjectName?: string;
  /** Calls per timed sample; default calibrated so a sample lasts ≥ ~0.2 ms. */
  readonly batch?: number;
  /** Untimed, before the case. */
  readonly setup?: () => unknown;
  /** Untimed, after the case (also after a failure). */
  readonly teardown?: () => unknown;
  /** Also measure retained memory per call (`heapUsed + external` after gc). */
  readonly memory?: boolean;
  /** One line printed under the row and stored in the JSON. */
  readonly note?: string;
  /**
   * Untimed, before timing and again after it: throw (or reject) when the
   * subject and the baseline do not compute the same thing, so a fast wrong
   * answer — from the start, or one the subject drifted into while timed —
   * is reported as an error instead of a win.
   */
  readonly verify?: () => unknown;
}

/** A backend operation and its raw baseline, compared as a ratio. */
export interface PairCase extends CaseCommon {
  readonly kind?: 'pair';
  readonly subject: () => unknown;
  readonly baseline: () => unknown;
  readonly baselineName: string;
  readonly target?: Target;
  readonly moreBaselines?: readonly Baseline[];
  /**
   * Untimed, after each call of every side (close the process a call
   * started); forces batch 1, as for single cases.
   */
  cleanup?(result: unknown): unknown;
  /** `maxMs` applies to the subject's median latency, beside the ratio targets. */
  readonly budget?: { readonly maxMs?: number };
}

/** An operation with no baseline, judged against absolute budgets. */
export interface SingleCase<R = unknown> extends CaseCommon {
  readonly kind: 'single';
  readonly run: () => R | Promise<R>;
  /** Untimed, after each call (drop a snapshot, delete a file); forces batch 1. */
  cleanup?(result: Awaited<R>): unknown;
  /**
   * `maxMs` applies to the median latency, `maxBytes` to retained memory per
   * call (implies `memory`), `maxPeakBytes` to the largest {@link peakBytes}
   * of any call.
   */
  readonly budget?: { readonly maxMs?: number; readonly maxBytes?: number; readonly maxPeakBytes?: number };
  /**
   * The peak memory one call reached, as the call itself measured it (a
   * child process's `ru_maxrss` growth, say): retained memory misses what a
   * call frees before it returns.
   */
  peakBytes?(result: Awaited<R>): number;
}

/** Any case. */
export type Case = PairCase | SingleCase<unknown>;

/**
 * Types a single case so `cleanup` receives what `run` returns.
 *
 * @example
 * ```ts
 * single({ kind: 'single', name: 'snapshot', run: () => fs.snapshot(), cleanup: (s) => fs.dropSnapshot(s) })
 * ```
 */
export function single<R>(c: SingleCase<R>): SingleCase<unknown> {
  return c as SingleCase<unknown>;
}

/** How a suite is declared. `C` is what `setup` returns and `cases` receives. */
export interface SuiteDefinition<C> {
  readonly name: string;
  readonly description?: string;
  /** Once before the cases; throw {@link skipSuite} when the suite cannot run here. */
  readonly setup?: () => C | Promise<C>;
  /** Once after the cases, also after a failure. */
  readonly teardown?: (ctx: C) => unknown;
  readonly cases: readonly Case[] | ((ctx: C) => readonly Case[] | Promise<readonly Case[]>);
  /** Per-suite overrides of the run options. */
  readonly options?: Partial<RunOptions>;
}

/** Knobs of a run (CLI: `--time`, `--rounds`, `--quick`). */
export interface RunOptions {
  /** Time budget per task per round, ms. */
  readonly timeMs: number;
  /** Warm-up budget per task per round, ms. */
  readonly warmupMs: number;
  /** Rounds per case; the order of subject and baselines alternates between rounds. */
  readonly rounds: number;
  /** Minimum samples per task per round. */
  readonly minSamples: number;
  /** Where JSON results go; undefined writes none. */
  readonly resultsDir: string | undefined;
  /** Progress lines (stderr). */
  readonly log: (line: string) => void;
  /** A case (setup, timing, memory) still running after this long is abandoned as an error. */
  readonly caseTimeoutMs: number;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  timeMs: 300,
  warmupMs: 100,
  rounds: 3,
  minSamples: 10,
  resultsDir: undefined,
  log: (line) => process.stderr.write(`${line}\n`),
  caseTimeoutMs: 180_000,
};

/** A declared suite, ready to run. */
export interface Suite {
  readonly name: string;
  readonly description: string;
  run(options?: Partial<RunOptions>): Promise<SuiteResult>;
}

/** Latency statistics of one side, per call, in milliseconds. */
export interface SideStats {
  readonly name: string;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly minMs: number;
  readonly opsPerSec: number;
  readonly samples: number;
  readonly calls: number;
  readonly batch: number;
  /** Retained bytes per call, when measured. */
  readonly retainedBytes?: number;
}

/** Subject vs one baseline. */
export interface Comparison {
  readonly baseline: SideStats;
  readonly ratioP50: number;
  readonly ratioMean: number;
  readonly target?: Target;
  readonly status: 'pass' | 'miss' | 'info';
}

export interface PairResult {
  readonly kind: 'pair';
  readonly name: string;
  readonly status: 'pass' | 'miss' | 'info' | 'error';
  readonly subject?: SideStats;
  readonly comparisons: readonly Comparison[];
  readonly budget?: { readonly maxMs?: number };
  /** Missed budgets (ratio misses are in `comparisons`). */
  readonly misses?: readonly string[];
  readonly note?: string;
  readonly error?: string;
}

export interface SingleResult {
  readonly kind: 'single';
  readonly name: string;
  /** `not-run`: the case cannot run here (a suite that builds its own results says why in `note`); the suite's other cases still ran. */
  readonly status: 'pass' | 'miss' | 'info' | 'error' | 'not-run';
  readonly subject?: SideStats;
  readonly budget?: { readonly maxMs?: number; readonly maxBytes?: number; readonly maxPeakBytes?: number };
  /** The largest `peakBytes` of any call, when the case reports it. */
  readonly peakBytes?: number;
  readonly misses: readonly string[];
  readonly note?: string;
  readonly error?: string;
}

export type CaseResult = PairResult | SingleResult;

export interface SuiteResult {
  readonly suite: string;
  readonly description: string;
  readonly status: 'ran' | 'not-run' | 'error';
  readonly reason?: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly environment: { node: string; platform: string; arch: string; cpus: number; cpuModel: string; gc: boolean };
  readonly options: { timeMs: number; warmupMs: number; rounds: number; minSamples: number };
  readonly cases: readonly CaseResult[];
  /** One line per missed target or budget. */
  readonly misses: readonly string[];
  /** Paths of the JSON files written. */
  readonly files: readonly string[];
}

/** Thrown from a suite's setup when it cannot run here; the suite is reported as not-run. */
export class SuiteSkip extends Error {
  override readonly name = 'SuiteSkip';
}

/**
 * Returns an error to throw from `setup` when the suite cannot run here.
 *
 * @example
 * ```ts
 * setup() { if (!dockerUp()) throw skipSuite('Docker engine not reachable'); ... }
 * ```
 */
export function skipSuite(reason: string): SuiteSkip {
  return new SuiteSkip(reason);
}

/**
 * Declares a suite.
 *
 * @example
 * ```ts
 * export default defineSuite({ name: 'x', cases: [{ name: 'noop', subject: () => 1, baseline: () => 1, baselineName: 'noop' }] });
 * ```
 */
export function defineSuite<C = undefined>(def: SuiteDefinition<C>): Suite {
  return {
    name: def.name,
    description: def.description ?? '',
    run: (options) => runSuite(def, { ...DEFAULT_RUN_OPTIONS, ...def.options, ...options }),
  };
}

// ------------------------------------------------------------------ memory

let gcFn: (() => void) | undefined;

/** `global.gc`, enabled on the fly when node was started without `--expose-gc`. */
export function gc(): boolean {
  if (gcFn === undefined) {
    const g = (globalThis as { gc?: () => void }).gc;
    if (typeof g === 'function') gcFn = g;
    else {
      try {
        setFlagsFromString('--expose-gc');
        gcFn = runInNewContext('gc') as () => void;
      } catch {
        return false;
      }
    }
  }
  gcFn();
  return true;
}

/** Heap plus off-heap (ArrayBuffers, Buffers) bytes in use. */
export function memoryInUse(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * Bytes retained by `calls` results of `fn`, per call: gc, call `calls` times
 * keeping every result alive, gc, difference.
 */
export async function retainedPerCall(fn: () => unknown, calls: number): Promise<number | undefined> {
  if (!gc()) return undefined;
  gc();
  const before = memoryInUse();
  const keep: unknown[] = new Array(calls);
  for (let i = 0; i < calls; i++) keep[i] = await fn();
  gc();
  const after = memoryInUse();
  blackhole.value = keep;
  blackhole.value = undefined;
  return Math.max(0, (after - before) / calls);
}

// ------------------------------------------------------------------ timing

/** Keeps results observable so the optimizer cannot drop the calls. */
export const blackhole: { value: unknown } = { value: undefined };

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

interface Side {
  readonly name: string;
  readonly fn: () => unknown;
  readonly cleanup?: (r: unknown) => unknown;
  batch: number;
  isAsync: boolean;
  readonly samples: number[];
}

const SAMPLE_TARGET_MS = 0.2;
const MAX_BATCH = 20_000;

/** Decides sync/async and the batch size from a short probe. */
async function calibrate(side: Side, fixedBatch: number | undefined): Promise<void> {
  const first = side.fn();
  side.isAsync = isThenable(first);
  const r = side.isAsync ? await first : first;
  if (side.cleanup) await side.cleanup(r);
  if (side.cleanup) {
    side.batch = 1;
    return;
  }
  if (fixedBatch !== undefined) {
    side.batch = Math.max(1, Math.floor(fixedBatch));
    return;
  }
  let calls = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) blackhole.value = side.isAsync ? await side.fn() : side.fn();
    const elapsed = performance.now() - t0;
    if (elapsed >= 2 || calls >= MAX_BATCH) {
      const per = elapsed / calls;
      side.batch = Math.min(MAX_BATCH, Math.max(1, Math.ceil(SAMPLE_TARGET_MS / Math.max(per, 1e-6))));
      return;
    }
    calls *= 4;
  }
}

interface TaskOutcome {
  overriddenDuration: number;
  overriddenIterationCost: number;
}

function taskFn(side: Side): () => TaskOutcome | Promise<TaskOutcome> {
  const { fn, batch, cleanup } = side;
  if (cleanup) {
    return async () => {
      const t0 = performance.now();
      const r = await fn();
      const d = performance.now() - t0;
      await cleanup(r);
      return { overriddenDuration: d, overriddenIterationCost: performance.now() - t0 };
    };
  }
  if (side.isAsync) {
    return async () => {
      const t0 = performance.now();
      for (let i = 0; i < batch; i++) blackhole.value = await fn();
      const d = performance.now() - t0;
      return { overriddenDuration: d / batch, overriddenIterationCost: d };
    };
  }
  return () => {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) blackhole.value = fn();
    const d = performance.now() - t0;
    return { overriddenDuration: d / batch, overriddenIterationCost: d };
  };
}

/** Times all sides in alternating rounds; samples land in `side.samples`. */
async function timeSides(sides: Side[], opts: RunOptions): Promise<void> {
  for (let round = 0; round < opts.rounds; round++) {
    const bench = new Bench({
      time: opts.timeMs,
      warmupTime: opts.warmupMs,
      warmup: true,
      iterations: opts.minSamples,
      warmupIterations: 3,
      retainSamples: true,
      throws: true,
      setup: () => {
        gc();
      },
    });
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) bench.add(side.name, taskFn(side), { async: side.isAsync || side.cleanup !== undefined });
    const tasks = await bench.run();
    for (const task of tasks) {
      const side = sides.find((s) => s.name === task.name);
      const result = task.result;
      if (result.state === 'errored') throw result.error;
      if (side && 'latency' in result && result.latency.samples) side.samples.push(...result.latency.samples);
    }
  }
}

/** The `q` quantile of sorted samples, linearly interpolated between ranks. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (at - lo);
}

function statsOf(side: Side, retainedBytes: number | undefined): SideStats {
  const sorted = [...side.samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return {
    name: side.name,
    meanMs: mean,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    minMs: sorted[0] ?? Number.NaN,
    opsPerSec: mean > 0 ? 1000 / mean : Number.POSITIVE_INFINITY,
    samples: sorted.length,
    calls: sorted.length * side.batch,
    batch: side.batch,
    ...(retainedBytes === undefined ? {} : { retainedBytes }),
  };
}

// ------------------------------------------------------------------ cases

async function runPair(c: PairCase, opts: RunOptions): Promise<PairResult> {
  const cleanup = c.cleanup ? { cleanup: (r: unknown) => c.cleanup?.(r) } : {};
  const makeSide = (name: string, fn: () => unknown): Side => ({ name, fn, ...cleanup, batch: 1, isAsync: false, samples: [] });
  const subject = makeSide(c.subjectName ?? 'ctxfs', c.subject);
  const baselines: Array<{ side: Side; target?: Target }> = [
    { side: makeSide(c.baselineName, c.baseline), target: c.target },
    ...(c.moreBaselines ?? []).map((b) => ({ side: makeSide(b.name, b.fn), target: b.target })),
  ];
  const all = [subject, ...baselines.map((b) => b.side)];
  const names = new Set(all.map((s) => s.name));
  if (names.size !== all.length) throw new Error(`case '${c.name}': subject and baseline names must differ`);
  for (const side of all) await calibrate(side, c.batch);
  await timeSides(all, opts);
  const retained = async (side: Side) => (c.memory ? retainedPerCall(side.fn, Math.min(100, Math.max(10, side.batch))) : undefined);
  const subjectStats = statsOf(subject, await retained(subject));
  const comparisons: Comparison[] = [];
  for (const { side, target } of baselines) {
    const base = statsOf(side, await retained(side));
    const ratioP50 = subjectStats.p50Ms / base.p50Ms;
    const ratioMean = subjectStats.meanMs / base.meanMs;
    const status = target === undefined ? 'info' : ratioP50 <= target.maxRatio ? 'pass' : 'miss';
    comparisons.push({ baseline: base, ratioP50, ratioMean, ...(target ? { target } : {}), status });
  }
  const misses: string[] = [];
  const maxMs = c.budget?.maxMs;
  if (maxMs !== undefined && !(subjectStats.p50Ms <= maxMs)) misses.push(`${subject.name} p50 ${fmtMs(subjectStats.p50Ms)} > ${fmtMs(maxMs)}`);
  const status =
    misses.length > 0 || comparisons.some((x) => x.status === 'miss')
      ? 'miss'
      : maxMs !== undefined || comparisons.some((x) => x.status === 'pass')
        ? 'pass'
        : 'info';
  return {
    kind: 'pair',
    name: c.name,
    status,
    subject: subjectStats,
    comparisons,
    ...(c.budget ? { budget: c.budget, misses } : {}),
    ...(c.note ? { note: c.note } : {}),
  };
}

async function runSingle(c: SingleCase<unknown>, opts: RunOptions): Promise<SingleResult> {
  const cleanup = c.cleanup ? (r: unknown) => c.cleanup?.(r as never) : undefined;
  let peak: number | undefined;
  const peakOf = c.peakBytes;
  const run =
    peakOf === undefined
      ? c.run
      : async () => {
          const r = await c.run();
          peak = Math.max(peak ?? 0, peakOf(r as never));
          return r;
        };
  const side: Side = { name: c.subjectName ?? 'ctxfs', fn: run, ...(cleanup ? { cleanup } : {}), batch: 1, isAsync: false, samples: [] };
  await calibrate(side, c.batch);
  await timeSides([side], opts);
  let retained: number | undefined;
  if (c.memory || c.budget?.maxBytes !== undefined) {
    // Median of a few single calls: one call is what a budget promises.
    const figures: number[] = [];
    for (let i = 0; i < 5; i++) {
      if (!gc()) break;
      gc();
      const before = memoryInUse();
      const r = await c.run();
      gc();
      figures.push(Math.max(0, memoryInUse() - before));
      blackhole.value = r;
      if (cleanup) await cleanup(r);
      blackhole.value = undefined;
    }
    if (figures.length > 0)
      retained = quantile(
        [...figures].sort((a, b) => a - b),
        0.5,
      );
  }
  const stats = statsOf(side, retained);
  const misses: string[] = [];
  if (c.budget?.maxMs !== undefined && !(stats.p50Ms <= c.budget.maxMs)) misses.push(`p50 ${fmtMs(stats.p50Ms)} > ${fmtMs(c.budget.maxMs)}`);
  if (c.budget?.maxBytes !== undefined) {
    if (retained === undefined) misses.push('retained memory not measurable (no gc)');
    else if (retained > c.budget.maxBytes) misses.push(`retained ${fmtBytes(retained)} > ${fmtBytes(c.budget.maxBytes)}`);
  }
  if (c.budget?.maxPeakBytes !== undefined) {
    if (peak === undefined) misses.push('peak memory not reported');
    else if (peak > c.budget.maxPeakBytes) misses.push(`peak ${fmtBytes(peak)} > ${fmtBytes(c.budget.maxPeakBytes)}`);
  }
  const budgeted = c.budget?.maxMs !== undefined || c.budget?.maxBytes !== undefined || c.budget?.maxPeakBytes !== undefined;
  return {
    kind: 'single',
    name: c.name,
    status: misses.length > 0 ? 'miss' : budgeted ? 'pass' : 'info',
    subject: stats,
    ...(c.budget ? { budget: c.budget } : {}),
    ...(peak !== undefined ? { peakBytes: peak } : {}),
    misses,
    ...(c.note ? { note: c.note } : {}),
  };
}

/**
 * Rejects after `ms`. A hung backend call (a wedged container, say) cannot be
 * cancelled, but the run moves on and reports it instead of hanging.
 */
function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

async function runSuite<C>(def: SuiteDefinition<C>, opts: RunOptions): Promise<SuiteResult> {
  const started = new Date();
  const t0 = performance.now();
  const hasGc = gc();
  const base = {
    suite: def.name,
    description: def.description ?? '',
    startedAt: started.toISOString(),
    environment: environment(hasGc),
    options: { timeMs: opts.timeMs, warmupMs: opts.warmupMs, rounds: opts.rounds, minSamples: opts.minSamples },
  };
  const finish = (rest: { status: SuiteResult['status']; reason?: string; cases: CaseResult[] }): SuiteResult => {
    const misses = collectMisses(rest.cases);
    const result: SuiteResult = {
      ...base,
      ...rest,
      finishedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - t0),
      misses,
      files: [],
    };
    return { ...result, files: writeResults(result, opts.resultsDir) };
  };

  let ctx: C;
  try {
    ctx = (
      def.setup ? await withTimeout(Promise.resolve(def.setup()), opts.caseTimeoutMs, `setup did not finish within ${opts.caseTimeoutMs / 1000} s`) : undefined
    ) as C;
  } catch (err) {
    const skipped = err instanceof SuiteSkip;
    return finish({ status: skipped ? 'not-run' : 'error', reason: skipped ? err.message : `setup failed: ${errorText(err)}`, cases: [] });
  }
  const results: CaseResult[] = [];
  let status: SuiteResult['status'] = 'ran';
  let reason: string | undefined;
  try {
    const cases = typeof def.cases === 'function' ? await def.cases(ctx) : def.cases;
    for (const c of cases) {
      const ct = performance.now();
      opts.log(`  ${def.name} · ${c.name} …`);
      let caseSetUp = false;
      try {
        await c.setup?.();
        caseSetUp = true;
        const run = async (): Promise<CaseResult> => {
          await c.verify?.();
          const result = c.kind === 'single' ? await runSingle(c, opts) : await runPair(c, opts);
          // Again after timing: a subject that drifts into a cheaper answer while timed
          // (a budget spent, a cache gone stale) would otherwise be reported as a win.
          try {
            await c.verify?.();
          } catch (err) {
            throw new Error(`after the timed runs: ${errorText(err)}`);
          }
          return result;
        };
        results.push(await withTimeout(run(), opts.caseTimeoutMs, `case did not finish within ${opts.caseTimeoutMs / 1000} s`));
      } catch (err) {
        results.push(
          c.kind === 'single'
            ? { kind: 'single', name: c.name, status: 'error', misses: [], error: errorText(err) }
            : { kind: 'pair', name: c.name, status: 'error', comparisons: [], error: errorText(err) },
        );
      } finally {
        if (caseSetUp || c.setup === undefined) {
          try {
            await c.teardown?.();
          } catch (err) {
            opts.log(`  ${def.name} · ${c.name}: teardown failed: ${errorText(err)}`);
          }
        }
      }
      opts.log(`  ${def.name} · ${c.name} done in ${((performance.now() - ct) / 1000).toFixed(1)} s`);
    }
  } catch (err) {
    status = 'error';
    reason = `cases failed: ${errorText(err)}`;
  } finally {
    try {
      await def.teardown?.(ctx);
    } catch (err) {
      opts.log(`  ${def.name}: teardown failed: ${errorText(err)}`);
    }
  }
  return finish({ status, ...(reason ? { reason } : {}), cases: results });
}

function collectMisses(cases: readonly CaseResult[]): string[] {
  const out: string[] = [];
  for (const c of cases) {
    if (c.status === 'error') out.push(`${c.name}: error: ${c.error}`);
    else if (c.kind === 'pair') {
      for (const x of c.comparisons) {
        if (x.status === 'miss')
          out.push(`${c.name}: ${c.subject?.name} vs ${x.baseline.name} ${fmtRatio(x.ratioP50)} > ${fmtRatio(x.target?.maxRatio ?? Number.NaN)}`);
      }
      for (const m of c.misses ?? []) out.push(`${c.name}: ${m}`);
    } else for (const m of c.misses) out.push(`${c.name}: ${m}`);
  }
  return out;
}

/** The machine a suite ran on, as its result records it. */
export function environment(gcExposed: boolean): SuiteResult['environment'] {
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    gc: gcExposed,
  };
}

/** Writes a suite's JSON (`<suite>-<time>.json` and `latest-<suite>.json`) to `dir`; returns the paths. */
export function writeResults(result: SuiteResult, dir: string | undefined): string[] {
  if (dir === undefined) return [];
  mkdirSync(dir, { recursive: true });
  const stamp = result.startedAt.replace(/[:.]/g, '-');
  const files = [`${dir}/${result.suite}-${stamp}.json`, `${dir}/latest-${result.suite}.json`];
  const text = `${JSON.stringify({ ...result, files }, null, 2)}\n`;
  for (const f of files) writeFileSync(f, text);
  return files;
}

// ------------------------------------------------------------------ report

/** Formats a duration given in ms with a fitting unit. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0.001) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** Formats a byte count in binary units. */
export function fmtBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}x` : String(r);
}

function fmtOps(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(1);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const MARK = { pass: 'pass', miss: 'MISS', info: '-', error: 'ERROR', 'not-run': 'not-run' } as const;

/** The human-readable report of one suite. */
export function formatSuite(r: SuiteResult): string {
  const out: string[] = [];
  const env = r.environment;
  out.push(`\n== ${r.suite}${r.description ? ` — ${r.description}` : ''}`);
  if (r.options.rounds > 0) {
    out.push(`   node ${env.node}, ${env.cpus} cpu (${env.cpuModel}), ${r.options.rounds} rounds × ${r.options.timeMs} ms per task${env.gc ? '' : ', no gc'}`);
  }
  if (r.status !== 'ran') {
    out.push(`   ${r.status.toUpperCase()}: ${r.reason ?? ''}`);
    return out.join('\n');
  }
  const pairs = r.cases.filter((c): c is PairResult => c.kind === 'pair');
  const singles = r.cases.filter((c): c is SingleResult => c.kind === 'single');
  const notes: string[] = [];
  if (pairs.length > 0) {
    const rows: string[][] = [];
    for (const c of pairs) {
      if (c.status === 'error' || !c.subject) {
        rows.push([c.name, '', '', '', '', '', '', '', '', '', MARK.error]);
        notes.push(`${c.name}: ${c.error}`);
        continue;
      }
      c.comparisons.forEach((x, i) => {
        const s = c.subject as SideStats;
        const mem = s.retainedBytes !== undefined ? ` [${fmtBytes(s.retainedBytes)} vs ${fmtBytes(x.baseline.retainedBytes ?? Number.NaN)}/call]` : '';
        rows.push([
          i === 0 ? c.name : '',
          i === 0 ? s.name : '',
          x.baseline.name,
          i === 0 ? fmtMs(s.p50Ms) : '',
          fmtMs(x.baseline.p50Ms),
          i === 0 ? fmtMs(s.meanMs) : '',
          fmtMs(x.baseline.meanMs),
          `${fmtOps(s.opsPerSec)} / ${fmtOps(x.baseline.opsPerSec)}`,
          fmtRatio(x.ratioP50),
          fmtRatio(x.ratioMean),
          `${x.target ? `≤${x.target.maxRatio.toFixed(2)}x` : '-'}  ${MARK[x.status]}${mem}`,
        ]);
      });
      if (c.budget?.maxMs !== undefined) {
        const verdict = (c.misses ?? []).length > 0 ? MARK.miss : MARK.pass;
        notes.push(`${c.name}: budget ${c.subject.name} p50 ≤${fmtMs(c.budget.maxMs)}: ${fmtMs(c.subject.p50Ms)} ${verdict}`);
      }
      if (c.note) notes.push(`${c.name}: ${c.note}`);
    }
    out.push(
      table(['case', 'subject', 'baseline', 'subj p50', 'base p50', 'subj mean', 'base mean', 'ops/s subj / base', 'ratio p50', 'ratio mean', 'target'], rows),
    );
  }
  if (singles.length > 0) {
    const rows: string[][] = [];
    for (const c of singles) {
      if (c.status === 'not-run') {
        rows.push([c.name, '', '', '', '', '', MARK['not-run']]);
        notes.push(`${c.name}: not run: ${c.note ?? ''}`);
        continue;
      }
      if (c.status === 'error' || !c.subject) {
        rows.push([c.name, '', '', '', '', '', MARK.error]);
        notes.push(`${c.name}: ${c.error}`);
        continue;
      }
      const s = c.subject;
      const budget = [
        c.budget?.maxMs !== undefined ? `≤${fmtMs(c.budget.maxMs)}` : '',
        c.budget?.maxBytes !== undefined ? `≤${fmtBytes(c.budget.maxBytes)}` : '',
        c.budget?.maxPeakBytes !== undefined ? `peak ≤${fmtBytes(c.budget.maxPeakBytes)}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      rows.push([
        c.name,
        s.name,
        fmtMs(s.p50Ms),
        fmtMs(s.meanMs),
        s.retainedBytes === undefined ? '-' : fmtBytes(s.retainedBytes),
        budget || '-',
        MARK[c.status],
      ]);
      if (c.note) notes.push(`${c.name}: ${c.note}`);
      if (c.peakBytes !== undefined) notes.push(`${c.name}: peak memory ${fmtBytes(c.peakBytes)}`);
      for (const m of c.misses) notes.push(`${c.name}: ${m}`);
    }
    out.push('');
    out.push(table(['single case', 'subject', 'p50', 'mean', 'retained/call', 'budget', 'result'], rows));
  }
  if (notes.length > 0) out.push(`\n${notes.map((n) => `   note: ${n}`).join('\n')}`);
  return out.join('\n');
}
