/**
 * What the safety layer costs (issue 12): a 1 KB `readFile` through a
 * session whose policy has a dozen rules and whose every call is audited
 * (the store's table and the HMAC-chained trail),
 * beside the same read with no rules and the records dropped (the layer's
 * fixed cost: argument checks, the call context), in the same run. Goal:
 * under 5% (ratio ≤ 1.05). A third line times the bare backend read, for
 * scale.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { type Case, defineSuite } from '../harness.ts';
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
    const env: Env = { fs, guarded, bare: guarded, dir, records: 0 };
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
    ];
    return cases;
  },
});
