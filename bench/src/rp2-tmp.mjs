import { mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createContext, SqliteStateStore } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
const dir = mkdtempSync('/tmp/rp-'); const root = join(dir, 'ws'); mkdirSync(root);
writeFileSync(join(root, 'read.txt'), ('line '.repeat(12) + '\n').repeat(16));
const fs = await HostFilesystem.open({ root, stateDir: join(dir, 'hs') });
const ctx = await createContext({ fs, store: join(dir, 'state.db'), agent: 'llm:bench' });
const stats = new Map();
const P = SqliteStateStore.prototype;
for (const name of ['query', 'begin', 'end']) {
  const orig = P[name];
  P[name] = async function (...args) {
    const t = performance.now();
    try { return await orig.apply(this, args); } finally {
      const k = name === 'query' ? args[1].replace(/\s+/g, ' ').slice(0, 90) : name;
      const s = stats.get(k) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t; stats.set(k, s);
    }
  };
}
for (let i = 0; i < 500; i++) await ctx.readFile('read.txt');
stats.clear();
const t = performance.now(); const N = 5000;
for (let i = 0; i < N; i++) await ctx.readFile('read.txt');
console.log('read µs', ((performance.now() - t) / N * 1000).toFixed(1));
for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms)) console.log((s.ms / N * 1000).toFixed(1).padStart(7), 'µs/read', String(s.n).padStart(6), k);
await ctx.close(); await fs.close();
