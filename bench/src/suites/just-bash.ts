/**
 * just-bash over ctxfs's memory backend (through the context layer: policy,
 * audit, one command per exec) against just-bash over its own `InMemoryFs`,
 * on the same 5,000 real source files (about 20 MB of `.js` and `.ts` from
 * this repository's installed packages, which nobody here wrote). Issue 20:
 * `grep -rl WORD .` and `find . -name '*.d.ts'` at most 1.0x.
 *
 * @module
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createContext } from '@ctxfs/context';
import { CtxfsBash } from '@ctxfs/just-bash';
import { MemoryFilesystem } from '@ctxfs/memory';
import { Bash, InMemoryFs } from 'just-bash';
import { defineSuite } from '../harness.ts';

const FILES = 5000;
const MAX_FILE_BYTES = 64 * 1024;
const STORE = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.pnpm');

/** The first 5,000 `.js`/`.ts` files under 64 KiB of the installed packages, in sorted order (the same tree every run). */
function realSources(): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  let count = 0;
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (count >= FILES) return;
      const abs = join(dir, name);
      const st = statSync(abs, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) visit(abs);
      else if (st.isFile() && /\.(js|ts|mjs|cjs)$/.test(name) && st.size > 0 && st.size <= MAX_FILE_BYTES) {
        out[relative(STORE, abs)] = readFileSync(abs);
        count++;
      }
    }
  };
  visit(STORE);
  return out;
}

function sortedLines(s: string): string[] {
  return s.split('\n').filter(Boolean).sort();
}

export default defineSuite({
  name: 'just-bash',
  description: 'just-bash over ctxfs memory (context layer on) vs just-bash over its own InMemoryFs, 5,000 real source files',
  options: { timeMs: 2000, warmupMs: 500, rounds: 2, minSamples: 3 },
  async setup() {
    const files = realSources();
    const bytes = Object.values(files).reduce((n, b) => n + b.byteLength, 0);
    const ctx = await createContext({ fs: new MemoryFilesystem({ files }), safety: { policyFiles: false } });
    const ours = new CtxfsBash(ctx);
    const theirs = new Bash({ fs: new InMemoryFs(Object.fromEntries(Object.entries(files).map(([p, b]) => [`/${p}`, b]))), cwd: '/' });
    return { ctx, ours, theirs, note: `${Object.keys(files).length.toLocaleString('en-US')} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB` };
  },
  teardown: ({ ctx }) => ctx.close(),
  cases: ({ ours, theirs, note }) =>
    (
      [
        ['grep -rl WORD .', 'grep -rl deprecated .'],
        ["find . -name '*.d.ts'", "find . -name '*.d.ts'"],
      ] as const
    ).map(([name, command]) => ({
      name,
      subject: () => ours.exec(command),
      baseline: () => theirs.exec(command),
      baselineName: 'just-bash InMemoryFs',
      target: { maxRatio: 1.0 },
      note,
      async verify() {
        const [a, b] = await Promise.all([ours.exec(command), theirs.exec(command)]);
        if (a.exitCode !== b.exitCode || a.stderr !== b.stderr) throw new Error(`${command}: exit ${a.exitCode} vs ${b.exitCode}: ${a.stderr.slice(0, 200)}`);
        if (JSON.stringify(sortedLines(a.stdout)) !== JSON.stringify(sortedLines(b.stdout))) throw new Error(`${command}: the two list different files`);
        if (sortedLines(a.stdout).length === 0) throw new Error(`${command}: nothing found, the case measures nothing`);
      },
    })),
});
