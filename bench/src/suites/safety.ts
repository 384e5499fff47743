/**
 * What the safety layer costs (issue 12): a 1 KB `readFile` through a
 * session whose policy has a dozen rules and whose every call is audited
 * (the store's table and the HMAC-chained trail),
 * beside the same read with no rules and the records dropped (the layer's
 * fixed cost: argument checks, the call context), in the same run. Goal:
 * under 5% (ratio ≤ 1.05). A third line times the bare backend read, for
 * scale. A second case counts the CPU time the reads cost the calling
 * thread and the whole process, which a loaded machine does not blur as it
 * does wall time. A third runs each side alone in a fresh process
 * (`safety-cpu-process.ts`), one after the other, so neither side's heap,
 * compiled code or threads sit beside the other's.
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextLayer } from '@ctxfs/context';
import type { HostFilesystem } from '@ctxfs/host';
import { type Case, defineSuite, quantile, single } from '../harness.ts';
import { costOfReads, FILE, openSide, openWorkspace, type Side } from '../safety-sessions.ts';

interface Env {
  readonly fs: HostFilesystem;
  readonly guarded: ContextLayer;
  readonly bare: ContextLayer;
  readonly dir: string;
  records: number;
  /** CPU time the reads cost, by side: the calling thread's and the whole process's (µs), and the reads. */
  readonly cpu: Record<Side, { thread: number; process: number; reads: number }>;
  /** Per read, a fresh process each (µs): the calling thread's CPU and the whole process's. */
  readonly procs: Record<Side, Array<{ threadUs: number; processUs: number }>>;
  /** Processes started so far: they alternate sides. */
  spawned: number;
}

/** Reads a side makes in one sample of the CPU case. */
const CPU_READS = 100;
/** CPU time of {@link CPU_READS} reads of `side` (see {@link costOfReads}). */
async function cpuOfReads(env: Env, side: Side): Promise<void> {
  const cost = await costOfReads(env[side], CPU_READS);
  const into = env.cpu[side];
  into.thread += cost.thread;
  into.process += cost.process;
  into.reads += CPU_READS;
}

function cpuNote(env: Env): string {
  const per = (side: Side, what: 'thread' | 'process') => env.cpu[side][what] / Math.max(1, env.cpu[side].reads);
  const line = (what: 'thread' | 'process') =>
    `${per('guarded', what).toFixed(1)} µs against ${per('bare', what).toFixed(1)} µs (${(per('guarded', what) / per('bare', what)).toFixed(2)}x)`;
  return `CPU a read, ${env.cpu.guarded.reads} reads a side: calling thread ${line('thread')}; whole process, the audit's threads included, ${line('process')}`;
}

/** Reads one measuring process makes (after its warm-up of 500). */
const PROCESS_READS = 1500;
const CPU_PROCESS = join(import.meta.dirname, '..', 'safety-cpu-process.ts');

/** One side alone in a fresh process, its state in a directory of its own: its CPU time a read. */
function cpuInProcess(env: Env): void {
  const side: Side = env.spawned++ % 2 === 0 ? 'bare' : 'guarded';
  const dir = mkdtempSync(join(env.dir, `process-${side}-`));
  try {
    const out = execFileSync(process.execPath, [CPU_PROCESS, side, dir, String(PROCESS_READS)], { encoding: 'utf8' });
    env.procs[side].push(JSON.parse(out) as { threadUs: number; processUs: number });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function processNote(env: Env): string {
  const median = (side: Side, what: 'threadUs' | 'processUs') =>
    quantile(
      env.procs[side].map((r) => r[what]).sort((a, b) => a - b),
      0.5,
    );
  const line = (what: 'threadUs' | 'processUs') =>
    `${median('guarded', what).toFixed(1)} µs against ${median('bare', what).toFixed(1)} µs (${(median('guarded', what) / median('bare', what)).toFixed(2)}x)`;
  return `CPU a read, median of ${env.procs.guarded.length} and ${env.procs.bare.length} fresh processes of ${PROCESS_READS} reads: calling thread ${line('threadUs')}; whole process ${line('processUs')}`;
}

export default defineSuite<Env>({
  name: 'safety',
  description: 'policy and audit overhead on a 1 KB read through the context layer (goal under 5%)',
  options: { rounds: 3, minSamples: 20, timeMs: 400 },
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-safety-'));
    const fs = await openWorkspace(dir);
    const guarded = await openSide('guarded', fs, dir);
    const cpu = { guarded: { thread: 0, process: 0, reads: 0 }, bare: { thread: 0, process: 0, reads: 0 } };
    const env: Env = { fs, guarded, bare: guarded, dir, records: 0, cpu, procs: { guarded: [], bare: [] }, spawned: 0 };
    const bare = await openSide('bare', fs, dir, () => {
      env.records++;
    });
    return { ...env, bare };
  },
  async teardown(env) {
    await env.guarded.close();
    await env.bare.close();
    await env.fs.close();
    rmSync(env.dir, { recursive: true, force: true });
  },
  cases: (env) => {
    const cases: Case[] = [
      {
        name: 'readFile 1 KB: policy (12 rules) + audit (table + trail) vs no rules, records dropped (host)',
        subjectName: 'policy + audit',
        subject: () => env.guarded.readFile(FILE),
        baseline: () => env.bare.readFile(FILE),
        baselineName: 'no rules, no records',
        target: { maxRatio: 1.05 },
        moreBaselines: [{ name: 'fs.readBytes (no context layer)', fn: () => env.fs.readBytes(FILE) }],
        verify: async () => {
          const a = await env.guarded.readFile(FILE);
          const b = await env.bare.readFile(FILE);
          if (a.view !== 'full' || b.view !== 'full') throw new Error(`a read was not served whole: ${a.view} and ${b.view}`);
          if (a.text !== b.text) throw new Error('the two sessions served different content');
        },
      },
      single({
        kind: 'single',
        name: `CPU time of ${CPU_READS} reads a side, policy + audit and no rules, one after the other (see the note)`,
        run: async () => {
          await cpuOfReads(env, 'guarded');
          await cpuOfReads(env, 'bare');
        },
        // Read when the results are written, after every sample.
        get note() {
          return cpuNote(env);
        },
      }),
      single({
        kind: 'single',
        name: `CPU time of ${PROCESS_READS} reads in a fresh process, policy + audit and no rules alternately (see the note)`,
        run: () => cpuInProcess(env),
        get note() {
          return processNote(env);
        },
      }),
    ];
    return cases;
  },
});
