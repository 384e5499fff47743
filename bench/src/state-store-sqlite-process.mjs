/**
 * One measuring process of the state-store suite's "SQLite no slower than
 * before the async port" cases: the context layer of the checkout at `<repo>`
 * (its built `packages/context/dist` and `packages/host/dist`, so today's
 * build and an older one run the same script) on a SQLite file in `<dir>`.
 * Plain JavaScript so the measured process loads nothing but Node and the
 * built packages.
 *
 * Usage: node state-store-sqlite-process.mjs <repo> <dir> <ms per op> [corpus root]
 * Prints one JSON line: readMs and replaceMs (every call's latency, a 1 KB
 * readFile and a one-line replace in a 1 KB file, each called for `ms per
 * op` after a warm-up) and scanMs (one registry first scan of the corpus
 * into a new SQLite file, when a corpus is given).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [repo, dir, msArg, corpus] = process.argv.slice(2);
if (repo === undefined || dir === undefined || msArg === undefined)
  throw new Error('usage: state-store-sqlite-process.mjs <repo> <dir> <ms per op> [corpus root]');
const { createContext } = await import(pathToFileURL(join(repo, 'packages', 'context', 'dist', 'index.js')).href);
const { HostFilesystem } = await import(pathToFileURL(join(repo, 'packages', 'host', 'dist', 'index.js')).href);

const root = join(dir, 'ws');
mkdirSync(root, { recursive: true });
const kilobyte = (name) => `${Array.from({ length: 16 }, (_, i) => `${name} line ${String(i).padStart(2, '0')} `.padEnd(63, 'x')).join('\n')}\n`;
writeFileSync(join(root, 'read.txt'), kilobyte('read'));
writeFileSync(join(root, 'replace.txt'), kilobyte('replace'));

const fs = await HostFilesystem.open({ root, stateDir: join(dir, 'host-state') });
const ctx = await createContext({ fs, store: join(dir, 'state.db'), agent: 'llm:bench' });

let forward = true;
const ops = {
  read: () => ctx.readFile('read.txt'),
  replace: async () => {
    const [from, to] = forward ? ['replace line 07 x', 'replace line 07 y'] : ['replace line 07 y', 'replace line 07 x'];
    const r = await ctx.replace('replace.txt', from, to);
    if (!r.success) throw new Error(`replace: ${r.code}: ${r.message}`);
    forward = !forward;
  },
};

/** Every call's latency for `ms`, after 20 untimed calls. */
async function timed(fn, ms) {
  for (let i = 0; i < 20; i++) await fn();
  const out = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

const readMs = await timed(ops.read, Number(msArg));
const replaceMs = await timed(ops.replace, Number(msArg));
await ctx.close();
await fs.close();

let scanMs = Number.NaN;
if (corpus !== undefined && corpus !== '') {
  const scanFs = await HostFilesystem.open({ root: corpus, stateDir: join(dir, 'scan-state'), readOnly: true });
  const scanCtx = await createContext({ fs: scanFs, store: join(dir, 'scan.db'), registry: { ignore: ['.git'] } });
  const t0 = performance.now();
  await scanCtx.scan();
  scanMs = performance.now() - t0;
  await scanCtx.close();
  await scanFs.close();
}
process.stdout.write(`${JSON.stringify({ readMs, replaceMs, scanMs })}\n`);
