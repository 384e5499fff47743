/**
 * One round of each writer in the compare-and-swap race, shared by the
 * in-process (memory) race and the host race's processes. Every writer owns
 * one counter line `name=N` and checks, before it bumps it, that it still
 * holds its own last value: a lost update shows as a counter that went back.
 */
import { type Filesystem, isFsError, sha256Hex } from '@ctxfs/core';
import type { ContextLayer } from '../../src/index.ts';

/** `text` with `name`'s counter bumped from `expected`; throws when the counter is not `expected`. */
export function bumpCounter(text: string, name: string, expected: number): string {
  const line = new RegExp(`^${name}=(\\d+)$`, 'm').exec(text);
  const n = Number(line?.[1] ?? -1);
  if (n !== expected) throw new Error(`${name}: counter is ${n}, expected ${expected} — an update was lost`);
  return text.replace(`${name}=${n}\n`, `${name}=${n + 1}\n`);
}

/** Tallies of one writer. */
export interface RoundStats {
  /** Edits refused as stale (context writers) or swaps lost (bare writer). */
  refused: number;
  /** Edits applied by merging over another writer's change. */
  merged: number;
}

/** Round `i` of a context writer: bump `name` through the context, retrying when refused. */
export async function editRound(ctx: ContextLayer, name: string, i: number, pause: () => Promise<void>, stats: RoundStats): Promise<void> {
  for (;;) {
    const served = await ctx.readFile('shared.txt');
    const bytes = await ctx.versions.getBlob(served.version);
    // A version read mid-race can be recorded without its bytes (seen, not kept): read again.
    if (!bytes) continue;
    const next = bumpCounter(new TextDecoder().decode(bytes), name, i);
    await pause();
    const r = i % 2 === 0 ? await ctx.replace('shared.txt', `${name}=${i}\n`, `${name}=${i + 1}\n`) : await ctx.writeFile('shared.txt', next);
    if (r.success) {
      if (r.merged) stats.merged++;
      return;
    }
    if (r.code !== 'ECONFLICT') throw new Error(r.message);
    stats.refused++;
  }
}

/** Round `i` of the writer behind the context's back: a bare compare-and-swap write, retried on ECONFLICT. */
export async function bareRound(fs: Filesystem, name: string, i: number, pause: () => Promise<void>, stats: RoundStats): Promise<void> {
  for (;;) {
    const bytes = await fs.readBytes('shared.txt');
    const next = bumpCounter(new TextDecoder().decode(bytes), name, i);
    await pause();
    try {
      await fs.writeBytes('shared.txt', new TextEncoder().encode(next), { ifMatch: sha256Hex(bytes) });
      return;
    } catch (err) {
      if (!isFsError(err, 'ECONFLICT')) throw err;
      stats.refused++;
    }
  }
}
