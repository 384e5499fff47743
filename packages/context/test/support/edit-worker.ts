/**
 * Child process of the multi-process test: increments its own counter line
 * in a shared file `rounds` times through its own context (own session,
 * shared state database), re-reading and retrying whenever an edit is
 * refused. argv: root, state database, host state dir, lock dir, worker id,
 * rounds, and the path it names the file by (default `shared.txt`).
 */
import { HostFilesystem } from '@ctxfs/host';
import { createContext } from '../../src/index.ts';

const [root, db, stateDir, lockDir, id, roundsArg, file = 'shared.txt'] = process.argv.slice(2) as [string, string, string, string, string, string, string?];
const fs = await HostFilesystem.open({ root, stateDir, durability: 'none', locks: { dir: lockDir } });
const ctx = await createContext({ fs, store: db, agent: `tool:w${id}` });
const rounds = Number(roundsArg);
let refused = 0;
let merged = 0;
for (let i = 0; i < rounds; i++) {
  for (;;) {
    const served = await ctx.readFile(file);
    const bytes = await ctx.versions.getBlob(served.version);
    if (!bytes) throw new Error('read not remembered');
    const text = new TextDecoder().decode(bytes);
    const m = new RegExp(`^w${id}=(\\d+)$`, 'm').exec(text);
    const n = Number(m?.[1] ?? -1);
    if (n !== i) throw new Error(`worker ${id}: counter is ${n}, expected ${i} — an edit was lost`);
    // Give the other workers a chance to write in between.
    await new Promise((r) => setTimeout(r, Math.random() * 3));
    const kind = i % 3;
    const r =
      kind === 0
        ? await ctx.replace(file, `w${id}=${i}\n`, `w${id}=${i + 1}\n`)
        : kind === 1
          ? await ctx.writeFile(file, text.replace(`w${id}=${i}\n`, `w${id}=${i + 1}\n`))
          : await ctx.applyPatch(`--- a/${file}\n+++ b/${file}\n@@ @@\n-w${id}=${i}\n+w${id}=${i + 1}\n`);
    if (r.success) {
      if (r.merged) merged++;
      break;
    }
    if (r.code !== 'ECONFLICT') throw new Error(r.message);
    refused++;
  }
}
process.stdout.write(`${JSON.stringify({ id, refused, merged })}\n`);
await ctx.close();
await fs.close();
