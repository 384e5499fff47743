/**
 * The edit side of `@ctxfs/context` (issue 6): `applyPatch` of a 10-hunk
 * patch on a 5,000-line file — through the whole pipeline (stale check,
 * journal, atomic write, versions, registry) against the bare engine plus the
 * same write — then the history of a file with 1,000 versions and the diff
 * between its first and last version.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyHunks, type ContextLayer, createContext, parsePatch } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { type Case, defineSuite, single } from '../harness.ts';

const LINES = 5000;

function source(): string {
  const out: string[] = [];
  for (let i = 0; i < LINES; i++) out.push(i % 50 === 0 ? `export function f${i}(x: number): number {` : `  const v${i} = x * ${i}; // line ${i + 1}`);
  return `${out.join('\n')}\n`;
}

/** A 10-hunk patch changing one line every 500, and its reverse. */
function patches(text: string): { forward: string; reverse: string } {
  const lines = text.split('\n');
  const fwd: string[] = ['--- a/big.ts', '+++ b/big.ts'];
  const rev: string[] = ['--- a/big.ts', '+++ b/big.ts'];
  for (let h = 0; h < 10; h++) {
    const at = 250 + h * 500; // 0-based changed line
    const ctx = (i: number) => ` ${lines[i]}`;
    const header = `@@ -${at - 2},7 +${at - 2},7 @@`;
    const body = (from: string, to: string) => [ctx(at - 3), ctx(at - 2), ctx(at - 1), `-${from}`, `+${to}`, ctx(at + 1), ctx(at + 2), ctx(at + 3)];
    const old = lines[at] as string;
    const neu = `${old} // patched`;
    fwd.push(header, ...body(old, neu));
    rev.push(header, ...body(neu, old));
  }
  return { forward: `${fwd.join('\n')}\n`, reverse: `${rev.join('\n')}\n` };
}

interface Env {
  readonly mem: MemoryFilesystem;
  readonly memCtx: ContextLayer;
  readonly host: Filesystem;
  readonly hostCtx: ContextLayer;
  readonly dir: string;
  readonly hist: ContextLayer;
  readonly histFs: MemoryFilesystem;
  readonly forward: string;
  readonly reverse: string;
  readonly setupMs: number;
}

export default defineSuite<Env>({
  name: 'edits',
  description: 'applyPatch on a 5,000-line file, history of 1,000 versions, diff between distant versions',
  options: { rounds: 2, minSamples: 10, timeMs: 300 },
  async setup() {
    const text = source();
    const { forward, reverse } = patches(text);
    const mem = new MemoryFilesystem({ files: { 'big.ts': text } });
    const memCtx = await createContext({ fs: mem, store: ':memory:', agent: 'bench' });
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-edits-'));
    const host = await HostFilesystem.open({ root: dir, stateDir: join(dir, '..', `${dir.split('/').pop()}-state`) });
    await host.write('big.ts', text);
    const hostCtx = await createContext({ fs: host, store: join(dir, '..', `${dir.split('/').pop()}.db`), agent: 'bench' });

    // 1,000 versions of the 5,000-line file, each changing one line.
    const started = performance.now();
    const histFs = new MemoryFilesystem({ files: { 'big.ts': text } });
    const hist = await createContext({ fs: histFs, store: ':memory:', agent: 'bench' });
    const lines = text.split('\n');
    for (let v = 1; v < 1000; v++) {
      const at = (v * 37) % LINES;
      lines[at] = `  // version ${v}`;
      const r = await hist.writeFile('big.ts', lines.join('\n'));
      if (!r.success) throw new Error(r.message);
    }
    return { mem, memCtx, host, hostCtx, dir, hist, histFs, forward, reverse, setupMs: performance.now() - started };
  },
  async teardown(env) {
    await env.memCtx.close();
    await env.hostCtx.close();
    await env.hist.close();
    await env.mem.close();
    await env.host.close();
    await env.histFs.close();
    const name = env.dir.split('/').pop() as string;
    for (const p of [env.dir, join(env.dir, '..', `${name}-state`), join(env.dir, '..', `${name}.db`)]) rmSync(p, { recursive: true, force: true });
    for (const suffix of ['-wal', '-shm']) rmSync(join(env.dir, '..', `${name}.db${suffix}`), { force: true });
  },
  cases: async (env) => {
    const toggler = (ctx: ContextLayer) => {
      let forward = true;
      return async () => {
        const r = await ctx.applyPatch(forward ? env.forward : env.reverse);
        if (!r.success) throw new Error(r.message);
        forward = !forward;
        return r;
      };
    };
    const bare = (fs: Filesystem) => {
      let forward = true;
      const files = [parsePatch(env.forward), parsePatch(env.reverse)];
      return async () => {
        const [file] = files[forward ? 0 : 1] ?? [];
        const text = new TextDecoder().decode(await fs.readBytes('big.ts'));
        const r = applyHunks(text, file?.hunks ?? []);
        if (!r.ok) throw new Error('bare apply failed');
        await fs.writeBytes('big.ts', new TextEncoder().encode(r.text));
        forward = !forward;
      };
    };
    const memFs2 = new MemoryFilesystem({ files: { 'big.ts': source() } });
    const cases: Case[] = [
      {
        name: 'applyPatch 10 hunks, 5,000 lines (memory)',
        subjectName: 'ctx.applyPatch',
        subject: toggler(env.memCtx),
        baseline: bare(memFs2),
        baselineName: 'readBytes+applyHunks+writeBytes',
        batch: 1,
        note: 'ctx.applyPatch adds the stale check, journal, version record and registry refresh',
        teardown: () => memFs2.close(),
      },
      single({
        kind: 'single',
        name: 'applyPatch 10 hunks, 5,000 lines (host)',
        run: toggler(env.hostCtx),
        budget: { maxMs: 50 },
      }),
      single({
        kind: 'single',
        name: 'history of a file with 1,000 versions',
        run: async () => {
          const h = await env.hist.history('big.ts', 1000);
          if (h.length !== 1000) throw new Error(`expected 1000 versions, got ${h.length}`);
          return h;
        },
        budget: { maxMs: 20 },
        note: `building the 1,000 versions of a 5,000-line file took ${(env.setupMs / 1000).toFixed(1)} s (${(env.setupMs / 999).toFixed(1)} ms per writeFile); stored ${((await env.hist.versions.storedBytes()) / 1024 / 1024).toFixed(1)} MiB`,
      }),
      single({
        kind: 'single',
        name: 'getDiff version 1 → 1,000',
        run: async () => {
          const d = await env.hist.getDiff('big.ts', 1, 1000);
          if (d.linesAdded === 0) throw new Error('empty diff');
          return d;
        },
        budget: { maxMs: 50 },
      }),
    ];
    return cases;
  },
});
