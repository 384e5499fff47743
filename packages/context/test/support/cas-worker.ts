/**
 * A process of the host compare-and-swap race: `rounds` rounds of one
 * writer, through its own context (`edit`) or with bare protocol writes
 * behind the contexts' backs (`bare`). argv: kind, root, state database,
 * host state dir, lock dir, counter name, rounds. Prints its tallies.
 */
import { HostFilesystem } from '@ctxfs/host';
import { createContext } from '../../src/index.ts';
import { bareRound, editRound, type RoundStats } from './cas-rounds.ts';

const [kind, root, db, stateDir, lockDir, name, roundsArg] = process.argv.slice(2) as [string, string, string, string, string, string, string];
const fs = await HostFilesystem.open({ root, stateDir, durability: 'none', locks: { dir: lockDir } });
const ctx = kind === 'edit' ? await createContext({ fs, store: db, agent: `tool:${name}` }) : undefined;
const stats: RoundStats = { refused: 0, merged: 0 };
// A short sleep between read and write gives the other processes a chance to write in between.
const pause = () => new Promise<void>((r) => setTimeout(r, Math.random() * 2));
for (let i = 0; i < Number(roundsArg); i++) {
  if (ctx) await editRound(ctx, name, i, pause, stats);
  else await bareRound(fs, name, i, pause, stats);
}
process.stdout.write(`${JSON.stringify(stats)}\n`);
ctx?.close();
await fs.close();
