// One watcher measured alone in a fresh process, so its RSS is its own:
// `node watch-probe.mjs <impl> <tree> <phase>`, impl one of ctxfs, parcel,
// chokidar, fs.watch; phase one of setup, latency, buffer (ctxfs only), burst, checkout. Prints
// one JSON line. Plain JavaScript, like first-scan-process.mjs, so the
// measured process pays no type stripping. Spawned by suites/watch.ts.

import { execFileSync } from 'node:child_process';
import nodeFs from 'node:fs';
import { join, relative } from 'node:path';

const [impl, tree, phase, extra] = process.argv.slice(2);

// Loaded before the RSS baseline, so the figure is what watching adds, not the code.
const modules = {
  ctxfs: () => import('@ctxfs/host'),
  parcel: () => import('@parcel/watcher'),
  chokidar: () => import('chokidar'),
  'fs.watch': async () => ({}),
};
if (!(impl in modules)) throw new Error(`unknown watcher ${impl}`);
const loaded = await modules[impl]();
// Opening the workspace (which sweeps orphaned temp files) is not watching: done before the clock starts.
const hostFs = impl === 'ctxfs' ? await loaded.HostFilesystem.open({ root: tree }) : undefined;

/** Starts `impl` on `root`; `onPath` gets each changed root-relative path. Resolves once its API says it is ready. */
async function startWatcher(root, onPath) {
  switch (impl) {
    case 'ctxfs': {
      const fs = hostFs;
      const watcher = fs.watch('', { recursive: true });
      await watcher.ready;
      (async () => {
        for await (const event of watcher) onPath(event.path);
      })();
      return async () => {
        await watcher.close();
        await fs.close();
      };
    }
    case 'parcel': {
      const parcel = loaded;
      const real = nodeFs.realpathSync(root);
      const sub = await parcel.subscribe(real, (err, events) => {
        if (err) throw err;
        for (const e of events) onPath(relative(real, e.path));
      });
      return () => sub.unsubscribe();
    }
    case 'chokidar': {
      const { watch } = loaded;
      const real = nodeFs.realpathSync(root);
      const w = watch(real, { ignoreInitial: true });
      w.on('all', (_event, path) => onPath(relative(real, path)));
      await new Promise((resolve, reject) => {
        w.once('ready', resolve);
        w.once('error', reject);
      });
      return () => w.close();
    }
    case 'fs.watch': {
      const real = nodeFs.realpathSync(root);
      const w = nodeFs.watch(real, { recursive: true }, (_type, name) => {
        if (name) onPath(String(name));
      });
      return () => w.close();
    }
    default:
      throw new Error(`unknown watcher ${impl}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` or `ms` pass. */
async function until(done, ms) {
  const deadline = performance.now() + ms;
  while (!done() && performance.now() < deadline) await sleep(2);
}

/** The deepest, last directory of the tree: a watcher that has not reached it yet is not ready. */
function lastDir(root) {
  const dirs = nodeFs.readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.'));
  dirs.sort((a, b) => a.name.localeCompare(b.name));
  return dirs.length === 0 ? '' : dirs[dirs.length - 1].name;
}

async function main() {
  const seen = new Map();
  const waiting = new Map();
  const onPath = (path) => {
    if (!seen.has(path)) seen.set(path, performance.now());
    const w = waiting.get(path);
    if (w) {
      waiting.delete(path);
      w(performance.now());
    }
  };
  const expectPath = (path) => new Promise((resolve) => waiting.set(path, resolve));
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const stop = await startWatcher(tree, onPath);
  const apiReadyMs = performance.now() - t0;
  // Set-up ends when a change in the last directory is seen (fs.watch has no ready event).
  const canaryDir = lastDir(tree);
  let seenCanary = false;
  for (let i = 0; !seenCanary && performance.now() - t0 < 60_000; i++) {
    const rel = join(canaryDir, `.canary-${i}`);
    const got = expectPath(rel).then(() => {
      seenCanary = true;
    });
    nodeFs.writeFileSync(join(tree, rel), 'x');
    await Promise.race([got, sleep(20)]);
    nodeFs.rmSync(join(tree, rel), { force: true });
  }
  const setupMs = performance.now() - t0;
  await sleep(300);
  global.gc?.();
  const rssAddedBytes = process.memoryUsage().rss - rssBefore;
  const out = { impl, phase, apiReadyMs, setupMs, rssAddedBytes, ready: seenCanary };

  if (phase === 'latency') {
    const samples = [];
    const dir = join(tree, canaryDir);
    for (let i = 0; i < Number(extra ?? 200); i++) {
      const rel = join(canaryDir, `lat-${i % 20}.txt`);
      seen.delete(rel);
      const got = expectPath(rel);
      const start = performance.now();
      nodeFs.writeFileSync(join(dir, `lat-${i % 20}.txt`), String(i));
      const at = await Promise.race([got, sleep(2_000).then(() => Number.NaN)]);
      samples.push(at - start);
      await sleep(5 + (i % 7) * 3);
    }
    out.latencyMs = samples;
  } else if (phase === 'buffer') {
    // A person writes a file an agent holds in a buffer (ctxfs only): the
    // time until the watch's event arrives and the buffer's status, asked
    // then, says `disk_changed`. The buffer is reloaded between samples.
    const { createContext } = await import('@ctxfs/context');
    const ctx = await createContext({ fs: hostFs, store: ':memory:', agent: 'bench' });
    const rel = join(canaryDir, 'buffer.txt');
    nodeFs.writeFileSync(join(tree, rel), 'v0\n');
    await ctx.buffers.open(rel);
    const samples = [];
    for (let i = 1; i <= Number(extra ?? 200); i++) {
      seen.delete(rel);
      const got = expectPath(rel);
      const start = performance.now();
      nodeFs.writeFileSync(join(tree, rel), `v${i}\n`);
      const at = await Promise.race([got, sleep(2_000).then(() => Number.NaN)]);
      const [status] = await ctx.buffers.status(rel);
      samples.push(Number.isFinite(at) && status?.status === 'disk_changed' ? performance.now() - start : Number.NaN);
      await ctx.buffers.reload(rel);
      await sleep(5 + (i % 7) * 3);
    }
    out.latencyMs = samples;
    await ctx.close();
  } else if (phase === 'burst') {
    const n = Number(extra ?? 1000);
    nodeFs.mkdirSync(join(tree, 'burst'), { recursive: true });
    await sleep(200);
    const names = [];
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const rel = join('burst', `f${i}.txt`);
      names.push(rel);
      nodeFs.writeFileSync(join(tree, rel), String(i));
    }
    const writtenMs = performance.now() - start;
    await until(() => names.every((p) => seen.has(p)), 5_000);
    out.burst = { writes: n, writtenMs, missed: names.filter((p) => !seen.has(p)).length, lastSeenMs: Math.max(...names.map((p) => seen.get(p) ?? 0)) - start };
  } else if (phase === 'checkout') {
    // The tree is a git work tree whose branch `other` differs in `extra` files.
    const changed = execFileSync('git', ['diff', '--name-only', 'HEAD', 'other'], { cwd: tree, encoding: 'utf8' }).trim().split('\n');
    const start = performance.now();
    execFileSync('git', ['checkout', '-q', 'other'], { cwd: tree });
    const checkoutMs = performance.now() - start;
    await until(() => changed.every((p) => seen.has(p)), 5_000);
    out.checkout = { files: changed.length, checkoutMs, missed: changed.filter((p) => !seen.has(p)).length };
    execFileSync('git', ['checkout', '-q', '-'], { cwd: tree });
  }
  await stop();
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

await main();
