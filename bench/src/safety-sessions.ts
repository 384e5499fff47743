/**
 * The two sessions the safety suite compares (issue 12), shared by the suite
 * and its separate-process CPU measurement (`safety-cpu-process.ts`): a 1 KB
 * file on the host, read through a session whose policy has a dozen rules
 * and whose every call is audited (the store's table and the HMAC-chained
 * trail), and through one with no rules whose records are dropped.
 *
 * @module
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { UNSPENT_PROFILE } from './tools/unspent-profile.ts';

/** The file both sessions read. */
export const FILE = 'src/service/handler.ts';

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

/** Which session: the policy and the audit, or no rules and no records. */
export type Side = 'guarded' | 'bare';

/** The host workspace under `dir` (made if missing), holding {@link FILE}. */
export async function openWorkspace(dir: string): Promise<HostFilesystem> {
  mkdirSync(join(dir, 'ws'), { recursive: true });
  const fs = await HostFilesystem.open({ root: join(dir, 'ws'), stateDir: join(dir, 'host-state') });
  await fs.write(FILE, SOURCE, { createParents: true });
  return fs;
}

/**
 * One side's session on `fs`, its state under `dir`. The bare side's records
 * go to `drop` (counted, never written). Both have a budget no run spends.
 */
export function openSide(side: Side, fs: HostFilesystem, dir: string, drop: () => void = () => undefined): Promise<ContextLayer> {
  const common = { fs, store: join(dir, `${side}.db`), agent: 'llm:bench', profile: UNSPENT_PROFILE } as const;
  if (side === 'guarded')
    return createContext({
      ...common,
      safety: { policyFiles: false, policy: POLICY, auditTrail: { dir: join(dir, 'audit'), key: { keyFile: join(dir, 'audit.key') } } },
    });
  return createContext({ ...common, safety: { policyFiles: false, audit: drop } });
}

/** Longer than the audit sink's 20 ms wait: the last batch's flush is counted with its reads. */
const SETTLE_MS = 30;

/** CPU (and wall) time of a run of reads, µs in all. */
export interface ReadsCost {
  readonly thread: number;
  readonly process: number;
  readonly wall: number;
}

/**
 * CPU time of `reads` reads of {@link FILE} through `ctx`, and of the work
 * they leave behind (the batch of records a timer writes, the append
 * thread's lines), on the calling thread and in the whole process. Under
 * load the wall-clock ratio is mostly other processes' noise; what the
 * calling thread spends on a read is not. `wall` leaves out the wait for
 * that work.
 */
export async function costOfReads(ctx: ContextLayer, reads: number): Promise<ReadsCost> {
  const thread0 = process.threadCpuUsage();
  const process0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let i = 0; i < reads; i++) await ctx.readFile(FILE);
  const wall = (performance.now() - wall0) * 1000;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const thread = process.threadCpuUsage(thread0);
  const all = process.cpuUsage(process0);
  return { thread: thread.user + thread.system, process: all.user + all.system, wall };
}
