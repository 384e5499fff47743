/**
 * One process of the state-store suite's many-processes case: its own
 * context (its own state store connection pool, or SQLite handle) on the
 * shared workspace, editing the shared files in a loop until told to stop.
 * Plain JavaScript so the measured process loads nothing but Node and the
 * built packages (no type stripper).
 *
 * Usage (forked with an IPC channel): node state-store-edit-process.mjs <store> <root> <host state dir> <index> <files>
 *
 * Every file holds one counter line per process (`p<index>=<n>`), apart from
 * the others' lines; this process replaces its own line in a file picked at
 * random, so edits of one file by many processes overlap in time but never
 * in text. Protocol: sends `{ ready: true }` once open and warmed up; on
 * `{ go: true, ms }` edits for `ms` milliseconds; then sends
 * `{ result: { edits, merged, conflicts, latencyMs } }` (each edit's latency,
 * as the caller of `replace` waits for it) and exits.
 */

import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';

const [store, root, stateDir, indexArg, filesArg] = process.argv.slice(2);
if (store === undefined || root === undefined || stateDir === undefined || indexArg === undefined || filesArg === undefined || process.send === undefined) {
  throw new Error('usage (forked): state-store-edit-process.mjs <store> <root> <host state dir> <index> <files>');
}
const me = `p${indexArg}`;
const files = Array.from({ length: Number(filesArg) }, (_, i) => `f${i}.txt`);
const counts = new Map(files.map((f) => [f, 0]));

const fs = await HostFilesystem.open({ root, stateDir });
const ctx = await createContext({ fs, store, agent: `llm:${me}` });

/** One edit of this process's line in `path`: its latency, and how it ended. */
async function edit(path) {
  const n = counts.get(path);
  const t0 = performance.now();
  const r = await ctx.replace(path, `\n${me}=${n}\n`, `\n${me}=${n + 1}\n`);
  const ms = performance.now() - t0;
  if (r.success) counts.set(path, n + 1);
  else if (r.code !== 'ECONFLICT') throw new Error(`${me}: replace in ${path}: ${r.code}: ${r.message}`);
  return { ms, ok: r.success, merged: r.success && r.merged };
}

// Warm-up, untimed: the pool's connections, prepared statements, each file's first version.
for (const f of files) await edit(f);

process.on('message', async (msg) => {
  if (msg?.go !== true) return;
  const deadline = performance.now() + Number(msg.ms);
  const latencyMs = [];
  let edits = 0;
  let merged = 0;
  let conflicts = 0;
  while (performance.now() < deadline) {
    const r = await edit(files[Math.floor(Math.random() * files.length)]);
    latencyMs.push(r.ms);
    if (r.ok) edits++;
    else conflicts++;
    if (r.merged) merged++;
  }
  await ctx.close();
  await fs.close();
  process.send({ result: { edits, merged, conflicts, latencyMs } }, () => process.exit(0));
});
process.send({ ready: true });
