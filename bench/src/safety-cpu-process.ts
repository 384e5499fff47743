/**
 * One measuring process of the safety suite's separate-process CPU case: one
 * side's session alone in a fresh Node process (no other session's code,
 * heap or threads beside it), reading the 1 KB file. After a warm-up it
 * counts the CPU time of `reads` reads — and of the work they leave behind:
 * the batch of records a timer writes, the append thread's lines — on the
 * calling thread and in the whole process.
 *
 * Usage: node bench/src/safety-cpu-process.ts <guarded|bare> <dir> <reads>
 * Prints one JSON line: { side, reads, threadUs, processUs, wallUs } (a read each).
 *
 * @module
 */

import { costOfReads, openSide, openWorkspace, type Side } from './safety-sessions.ts';

const [sideArg, dir, readsArg] = process.argv.slice(2);
if ((sideArg !== 'guarded' && sideArg !== 'bare') || dir === undefined || readsArg === undefined)
  throw new Error('usage: safety-cpu-process.ts <guarded|bare> <dir> <reads>');
const side: Side = sideArg;
const reads = Number(readsArg);

const fs = await openWorkspace(dir);
const ctx = await openSide(side, fs, dir);
// Warm-up: compiled code, the append thread started, the caches of the policy and the registry filled.
await costOfReads(ctx, Math.max(500, reads / 4));
const cost = await costOfReads(ctx, reads);
await ctx.close();
await fs.close();
const per = (us: number) => Number((us / reads).toFixed(2));
process.stdout.write(`${JSON.stringify({ side, reads, threadUs: per(cost.thread), processUs: per(cost.process), wallUs: per(cost.wall) })}\n`);
