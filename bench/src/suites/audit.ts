/**
 * The audit trail of `@ctxfs/context` (issue 12): `verify()` of a log of
 * 1,000,000 records (goal ≥ 500,000 records/s), a query by file over
 * 1,000,000 indexed records (goal < 20 ms), and the cost of one append —
 * elision, HMAC, chained line, write, index row — beside a raw
 * `appendFileSync` of the same JSON line.
 *
 * @module
 */

import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEntry, AuditTrail, SqliteStateStore } from '@ctxfs/context';
import { type Case, defineSuite, single } from '../harness.ts';

const RECORDS = 1_000_000;
const FILES = 1000;

function entry(i: number): AuditEntry {
  const write = i % 5 === 0;
  const path = `src/module-${i % FILES}/file.ts`;
  return {
    op: write ? 'replace' : 'readFile',
    opClass: write ? 'write' : 'read',
    paths: [path],
    sessionId: `session-${i % 13}`,
    agent: i % 3 === 0 ? 'llm:ollama' : 'llm:claude',
    backend: 'host',
    user: 'dev',
    params: write ? { old: 'retries = 3', new: 'retries = 5' } : { maxTokens: 800, strategy: 'middle' },
    result: 'ok',
    tokens: 300 + (i % 500),
    ...(write ? { before: { [path]: 'a'.repeat(64) }, after: { [path]: 'b'.repeat(64) }, diff: { files: 1, added: 1, removed: 1 } } : {}),
    durationMs: i % 7,
  };
}

interface Env {
  readonly base: string;
  readonly store: SqliteStateStore;
  readonly trail: AuditTrail;
  readonly lines: number;
  readonly buildMs: number;
  readonly bytes: number;
  readonly appendStore: SqliteStateStore;
  readonly appendTrail: AuditTrail;
  readonly plainTrail: AuditTrail;
  readonly rawFile: string;
  readonly rawLine: string;
  /** Records verified per second of CPU time, on one thread and on the default threads (load on a shared machine stretches wall time, not CPU time). */
  readonly perCpuSecond: { readonly one: number; readonly many: number; readonly threads: number };
}

/** Records a verify checks per second of this process's CPU time (all its threads). */
function cpuRate(run: () => { records: number; threads: number }): { rate: number; threads: number } {
  const c0 = process.cpuUsage();
  const r = run();
  const c = process.cpuUsage(c0);
  return { rate: r.records / ((c.user + c.system) / 1e6), threads: r.threads };
}

export default defineSuite<Env>({
  name: 'audit',
  description: 'audit trail: verify 1,000,000 records, query by file over 1,000,000 indexed records, append beside appendFileSync',
  options: { rounds: 2, minSamples: 3, timeMs: 200, warmupMs: 20 },
  async setup() {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-bench-audit-'));
    const key = new Uint8Array(32).fill(7);
    const store = await SqliteStateStore.open({ path: join(base, 'state.db') });
    const started = performance.now();
    const trail = AuditTrail.open({ dir: join(base, 'log'), key, index: store });
    for (let i = 0; i < RECORDS; i++) trail.append(entry(i));
    trail.query({ limit: 1 }); // writes the last index rows
    const buildMs = performance.now() - started;
    const lines = trail.tip.seq;
    let bytes = 0;
    for (const f of readdirSync(join(base, 'log'))) if (f.endsWith('.jsonl')) bytes += readFileSync(join(base, 'log', f)).length;

    const appendStore = await SqliteStateStore.open({ path: join(base, 'append.db') });
    const appendTrail = AuditTrail.open({ dir: join(base, 'append-log'), key, index: appendStore });
    const plainTrail = AuditTrail.open({ dir: join(base, 'plain-log'), key });
    const sample = appendTrail.append(entry(5));
    const { location: _l, verified: _v, ...written } = sample;
    const rawLine = `${JSON.stringify(written)}\n`;
    const one = cpuRate(() => trail.verify({ workers: 1 }));
    const many = cpuRate(() => trail.verify());
    const perCpuSecond = { one: one.rate, many: many.rate, threads: many.threads };
    return { base, store, trail, lines, buildMs, bytes, appendStore, appendTrail, plainTrail, rawFile: join(base, 'raw.jsonl'), rawLine, perCpuSecond };
  },
  async teardown(env) {
    env.trail.close();
    await env.appendTrail.close();
    await env.plainTrail.close();
    await env.store.close();
    await env.appendStore.close();
    rmSync(env.base, { recursive: true, force: true });
  },
  cases: (env) => {
    let i = 0;
    const budgetMs = (env.lines / 500_000) * 1000;
    const cases: Case[] = [
      single({
        kind: 'single',
        name: `verify() of ${env.lines.toLocaleString('en-US')} records (${env.perCpuSecond.threads} threads)`,
        run: () => {
          const r = env.trail.verify();
          if (!r.ok || r.records !== env.lines) throw new Error(`verify: ${JSON.stringify(r.firstBad ?? r.records)}`);
          return r;
        },
        budget: { maxMs: budgetMs },
        note: `goal ≥ 500,000 records/s = ≤ ${budgetMs.toFixed(0)} ms; ${(env.bytes / 1024 / 1024).toFixed(0)} MiB in ${readdirSync(join(env.base, 'log')).length - 1} files (16 MiB each); per second of CPU time: ${Math.round(env.perCpuSecond.one).toLocaleString('en-US')} records on one thread, ${Math.round(env.perCpuSecond.many).toLocaleString('en-US')} over ${env.perCpuSecond.threads} threads; building the log with its index took ${(env.buildMs / 1000).toFixed(1)} s (${((env.buildMs * 1000) / env.lines).toFixed(1)} µs a record)`,
      }),
      single({
        kind: 'single',
        name: `verify({ workers: 1 }) of ${env.lines.toLocaleString('en-US')} records`,
        run: () => env.trail.verify({ workers: 1 }),
        budget: { maxMs: budgetMs },
      }),
      single({
        kind: 'single',
        name: 'query({ path }) over 1,000,000 indexed records (newest 100)',
        run: () => {
          const r = env.trail.query({ path: `src/module-${i++ % FILES}/file.ts` });
          if (r.length !== 100) throw new Error(`query returned ${r.length}`);
          return r;
        },
        budget: { maxMs: 20 },
        note: `${FILES} files, ~${RECORDS / FILES} records each; the records are read back from the log and their MACs checked`,
      }),
      single({
        kind: 'single',
        name: 'query({ path, limit: 1000 }): every record of one file',
        run: () => env.trail.query({ path: `src/module-${i++ % FILES}/file.ts`, limit: 1000 }),
      }),
      single({
        kind: 'single',
        name: "query({ agent, sessionId, op: 'replace' }) (newest 100)",
        run: () => env.trail.query({ agent: 'llm:ollama', sessionId: `session-${i++ % 13}`, op: 'replace' }),
      }),
      {
        name: 'append one record',
        subjectName: 'trail.append (indexed)',
        subject: () => env.appendTrail.append(entry(i++)),
        baseline: () => appendFileSync(env.rawFile, env.rawLine),
        baselineName: 'appendFileSync(same line)',
        moreBaselines: [{ name: 'trail.append (no index)', fn: () => env.plainTrail.append(entry(i++)) }],
        note: 'the trail elides params, serializes, MACs, writes on a held descriptor and queues an index row (written a batch a tick); appendFileSync opens, writes and closes',
      },
    ];
    return cases;
  },
});
