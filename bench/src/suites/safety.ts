/**
 * What the safety layer costs (issue 12): a 1 KB `readFile` through a
 * session whose policy has a dozen rules and whose every call is audited
 * (the store's table and the HMAC-chained trail),
 * beside the same read with no rules and the records dropped (the layer's
 * fixed cost: argument checks, the call context), in the same run. Goal:
 * under 5% (ratio ≤ 1.05). A third line times the bare backend read, for
 * scale. A second case counts the CPU time the reads cost the calling
 * thread and the whole process, which a loaded machine does not blur as it
 * does wall time.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { type Case, defineSuite, single } from '../harness.ts';
import { UNSPENT_PROFILE } from '../tools/unspent-profile.ts';

const FILE = 'src/service/handler.ts';

/** About 1 KB of code, as a small module is. */
const SOURCE = `${Array.from({ length: 28 }, (_, i) => `export const handler${i} = (x: number): number => x * ${i} + 1;`).join('\n')}\n`.slice(0, 1024);

/** A policy a team might write: credentials, vendored code, generated output, per-agent limits. */
const POLICY: PolicyConfig = {
  readOnly: ['vendor/', 'dist/', 'LICENSE'],
  sensitive: ['*.tfvars', 'terraform.tfstate'],
  alwaysAsk: ['delete'],
  rules: [
    { effect: 'deny', paths: ['secrets/', '**/*.pem', '**/id_rsa*'], reason: 'credentials' },
    { effect: 'deny', paths: ['infra/prod/**'], agents: ['llm:*'] },
    { effect: 'ask', paths: ['migrations/**'], ops: ['write'] },
    { effect: 'ask', paths: ['.github/'], ops: ['write', 'delete', 'rename'] },
    { effect: 'allow', paths: ['src/**', 'test/**'], ops: ['read', 'search', 'write'] },
    { effect: 'allow', paths: ['docs/'], ops: ['read', 'search'] },
    { effect: 'deny', paths: ['**/*.key'], ops: ['read', 'search'] },
    { effect: 'allow', paths: ['.env.example'], ops: ['read'] },
    { effect: 'deny', paths: ['build/', 'coverage/'], ops: ['write'] },
    { effect: 'ask', paths: ['package.json', 'pnpm-lock.yaml'], ops: ['write'] },
    { effect: 'deny', paths: ['/tmp', '*.log'], ops: ['search'], agents: ['llm:local'] },
    { effect: 'allow', paths: ['README.md', 'ARCHITECTURE.md'] },
  ],
};

interface Env {
  readonly fs: HostFilesystem;
  readonly guarded: ContextLayer;
  readonly bare: ContextLayer;
  readonly dir: string;
  records: number;
  /** CPU time the reads cost, by side: the calling thread's and the whole process's (µs), and the reads. */
  readonly cpu: Record<'guarded' | 'bare', { thread: number; process: number; reads: number }>;
}

/** Reads a side makes in one sample of the CPU case. */
const CPU_READS = 100;
/** Longer than the audit sink's 20 ms wait: the last batch's flush is counted with its reads. */
const SETTLE_MS = 30;

/**
 * CPU time of {@link CPU_READS} reads of `side`, and of the work they leave
 * behind (the batch of records a timer writes), on the calling thread and
 * in the whole process. Under load the wall-clock ratio is mostly other
 * processes' noise; what the calling thread spends on a read is not.
 */
async function cpuOfReads(env: Env, side: 'guarded' | 'bare'): Promise<void> {
  const ctx = env[side];
  const thread0 = process.threadCpuUsage();
  const process0 = process.cpuUsage();
  for (let i = 0; i < CPU_READS; i++) await ctx.readFile(FILE);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const thread = process.threadCpuUsage(thread0);
  const all = process.cpuUsage(process0);
  const into = env.cpu[side];
  into.thread += thread.user + thread.system;
  into.process += all.user + all.system;
  into.reads += CPU_READS;
}

function cpuNote(env: Env): string {
  const per = (side: 'guarded' | 'bare', what: 'thread' | 'process') => env.cpu[side][what] / Math.max(1, env.cpu[side].reads);
  const line = (what: 'thread' | 'process') =>
    `${per('guarded', what).toFixed(1)} µs against ${per('bare', what).toFixed(1)} µs (${(per('guarded', what) / per('bare', what)).toFixed(2)}x)`;
  return `CPU a read, ${env.cpu.guarded.reads} reads a side: calling thread ${line('thread')}; whole process, the audit's threads included, ${line('process')}`;
}

export default defineSuite<Env>({
  name: 'safety',
  description: 'policy and audit overhead on a 1 KB read through the context layer (goal under 5%)',
  options: { rounds: 3, minSamples: 20, timeMs: 400 },
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-safety-'));
    mkdirSync(join(dir, 'ws'));
    const fs = await HostFilesystem.open({ root: join(dir, 'ws'), stateDir: join(dir, 'host-state') });
    await fs.write(FILE, SOURCE, { createParents: true });
    const guarded = await createContext({
      fs,
      store: join(dir, 'guarded.db'),
      agent: 'llm:bench',
      profile: UNSPENT_PROFILE,
      safety: { policyFiles: false, policy: POLICY, auditTrail: { dir: join(dir, 'audit'), key: { keyFile: join(dir, 'audit.key') } } },
    });
    const cpu = { guarded: { thread: 0, process: 0, reads: 0 }, bare: { thread: 0, process: 0, reads: 0 } };
    const env: Env = { fs, guarded, bare: guarded, dir, records: 0, cpu };
    const bare = await createContext({
      fs,
      store: join(dir, 'bare.db'),
      agent: 'llm:bench',
      profile: UNSPENT_PROFILE,
      safety: {
        policyFiles: false,
        audit: () => {
          env.records++;
        },
      },
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
    ];
    return cases;
  },
});
