/**
 * Compare-and-swap race (issue #15): two writers edit one file through the
 * context layer while a third writes behind their backs with bare protocol
 * writes (compare-and-swap, no edit lock). Each writer only ever bumps its
 * own counter line and checks before each bump that the counter still holds
 * its own last value (support/cas-rounds.ts): any lost update shows as a
 * counter that went back, and the final file must hold every counter at the
 * number of runs.
 *
 * The third writer is what an edit's last check before writing cannot
 * exclude: on memory it can commit between that check and the write (the
 * window the backend's compare-and-swap closes; without the edit's `ifMatch`
 * this test loses an update within the first runs); on host it runs in
 * another process. CTXFS_CAS_RUNS sets the runs per writer (default 1,000).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';
import { createContext } from '../src/index.ts';
import { bareRound, editRound, type RoundStats } from './support/cas-rounds.ts';
import { runWorker } from './support/run-worker.ts';

const RUNS = Number(process.env.CTXFS_CAS_RUNS ?? 1000);
const INITIAL = 'w0=0\nfiller 0\nw1=0\nfiller 1\nx=0\n';
const FINAL = `w0=${RUNS}\nfiller 0\nw1=${RUNS}\nfiller 1\nx=${RUNS}\n`;

/**
 * Lets the other writers run here. Mostly microtask turns: Node drains
 * microtasks after each macrotask callback, so only writers that are all in
 * one microtask run interleave step by step — which is what lets the bare
 * writer land between an edit's last check and its write. Now and then a
 * macrotask turn, so the runs also shift against each other.
 */
async function yieldSome(): Promise<void> {
  if (Math.random() < 0.05) await new Promise((r) => setImmediate(r));
  const turns = Math.floor(Math.random() * 40);
  for (let t = 0; t < turns; t++) await Promise.resolve();
}

function report(where: string, ms: number, editors: RoundStats[], bare: RoundStats): void {
  const refused = editors.reduce((n, s) => n + s.refused, 0);
  const merged = editors.reduce((n, s) => n + s.merged, 0);
  console.log(
    `[cas-race ${where}] 3 writers × ${RUNS} runs in ${Math.round(ms)} ms: 0 lost; edits ${refused} refused, ${merged} merged; bare writer ${bare.refused} conflicts`,
  );
  // The race is real: edits were refused or merged over another's change, or the bare writer lost swaps.
  expect(refused + merged + bare.refused).toBeGreaterThan(0);
}

describe('compare-and-swap race: two context writers and one behind their backs', () => {
  it('memory (async interleavings): zero lost updates', async () => {
    const fs = new MemoryFilesystem({ files: { 'shared.txt': INITIAL } });
    const contexts = [await createContext({ fs, agent: 'tool:w0' }), await createContext({ fs, agent: 'tool:w1' })];
    const editors: RoundStats[] = [
      { refused: 0, merged: 0 },
      { refused: 0, merged: 0 },
    ];
    const bare: RoundStats = { refused: 0, merged: 0 };
    const started = performance.now();
    await Promise.all([
      ...contexts.map(async (ctx, w) => {
        for (let i = 0; i < RUNS; i++) await editRound(ctx, `w${w}`, i, yieldSome, editors[w] as RoundStats);
      }),
      (async () => {
        for (let i = 0; i < RUNS; i++) await bareRound(fs, 'x', i, yieldSome, bare);
      })(),
    ]);
    expect(new TextDecoder().decode(await fs.readBytes('shared.txt'))).toBe(FINAL);
    report('memory', performance.now() - started, editors, bare);
    for (const ctx of contexts) ctx.close();
    await fs.close();
  }, 120_000);

  it('host (three processes): zero lost updates', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-cas-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    writeFileSync(join(root, 'shared.txt'), INITIAL);
    const shared = [root, join(base, 'state.db'), join(base, 'host-state'), join(base, 'locks')];
    try {
      const started = performance.now();
      const [e0, e1, x] = await Promise.all([
        runWorker<RoundStats>('cas-worker.ts', ['edit', ...shared, 'w0', String(RUNS)]),
        runWorker<RoundStats>('cas-worker.ts', ['edit', ...shared, 'w1', String(RUNS)]),
        runWorker<RoundStats>('cas-worker.ts', ['bare', ...shared, 'x', String(RUNS)]),
      ]);
      expect(readFileSync(join(root, 'shared.txt'), 'utf8')).toBe(FINAL);
      report('host', performance.now() - started, [e0, e1], x);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 180_000);
});
