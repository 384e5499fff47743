/**
 * `@ctxfs/context` over a real tree through the host backend. Targets from
 * issue 5: registry first scan (hashing everything) at ≥ 50,000 files/s; an
 * unchanged rescan under 200 ms for a 30,000-file tree; overview generation
 * under 500 ms on the same tree; tokens counted per second. Peak RSS (goal
 * < 200 MB) is measured in fresh processes that do nothing but a first scan,
 * and reported in the notes.
 *
 * The corpus is `CTXFS_BENCH_CORPUS`, else the pinned 35,000-file
 * `node_modules` of corpus.ts (installed from the npm registry on first use).
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, FileRegistry, o200kTokenizer, SqliteStateStore } from '@ctxfs/context';
import { walkTree } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { nodeModulesCorpus } from '../corpus.ts';
import { type Case, defineSuite, single, skipSuite } from '../harness.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');

function countFiles(root: string, cap: number): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0 && n < cap) {
    const dir = stack.pop() as string;
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.isDirectory()) stack.push(join(dir, e.name));
      else if (e.isFile()) n++;
    }
  }
  return n;
}

function pickCorpus(): { root: string; files: number } {
  const root = process.env.CTXFS_BENCH_CORPUS ?? nodeModulesCorpus();
  return { root, files: countFiles(root, Number.POSITIVE_INFINITY) };
}

/**
 * What a caller would write by hand with node:fs: readdir with types, and
 * `onFile` for every regular file (stat it, or read and hash it), on one thread.
 */
function rawWalk(root: string, onFile: (abs: string) => void): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.git') stack.push(abs);
      } else if (e.isFile()) {
        onFile(abs);
        n++;
      }
    }
  }
  return n;
}

const statFile = (abs: string) => statSync(abs);
const hashFile = (abs: string) => hash('sha256', readFileSync(abs), 'hex');

/**
 * First scans of the tree, each in a new Node process (first-scan-process.mjs)
 * with its own new state store: their median duration, and the range of
 * their peak resident memory as the kernel counts it.
 */
function freshProcessScans(root: string, stateDir: string, runs: number): { runs: number; durationMs: number; peakRss: [number, number] } {
  const script = join(import.meta.dirname, '..', 'first-scan-process.mjs');
  const results: Array<{ durationMs: number; maxRssBytes: number }> = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(stateDir, 'fresh-'));
    try {
      results.push(JSON.parse(execFileSync(process.execPath, [script, root, dir], { encoding: 'utf8' })));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const durations = results.map((r) => r.durationMs).sort((a, b) => a - b);
  const peaks = results.map((r) => r.maxRssBytes).sort((a, b) => a - b);
  return { runs, durationMs: durations[Math.floor(runs / 2)] as number, peakRss: [peaks[0] as number, peaks[runs - 1] as number] };
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;

export default defineSuite({
  name: 'context',
  description: 'registry scans, overview and token counting of @ctxfs/context over a real tree on the host backend',
  options: { rounds: 1, minSamples: 3, timeMs: 100, warmupMs: 0 },
  async setup() {
    const corpus = pickCorpus();
    if (corpus.files === 0) throw skipSuite('no corpus tree found');
    const stateDir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-context-'));
    // Peak memory belongs to a process of its own: this one holds the
    // harness and whatever earlier suites left, and polling RSS misses peaks.
    const fresh = freshProcessScans(corpus.root, stateDir, 3);
    const fs = await HostFilesystem.open({ root: corpus.root, stateDir, readOnly: true });
    // The state store on disk, as it is by default.
    const ctx = await createContext({ fs, store: join(stateDir, 'state.db'), profile: 'large', registry: { ignore: ['.git'] } });
    const first = await ctx.scan();
    const text = readFileSync(join(REPO, 'packages', 'core', 'src', 'filesystem-base.ts'), 'utf8').repeat(8);
    return { corpus, stateDir, fs, ctx, first, fresh, text };
  },
  async teardown({ ctx, fs, stateDir }) {
    await ctx.close();
    await fs.close();
    rmSync(stateDir, { recursive: true, force: true });
  },
  cases({ corpus, fs, ctx, first, fresh, text, stateDir }): Case[] {
    let firstScans = 0;
    const files = first.files;
    const tokens = o200kTokenizer.count(text);
    return [
      {
        name: `registry first scan, hashing all (${files.toLocaleString('en')} files)`,
        subjectName: 'FileRegistry.scan (new store on disk)',
        subject: async () => {
          const path = join(stateDir, `first-scan-${++firstScans}.db`);
          const store = await SqliteStateStore.open({ path });
          try {
            return await new FileRegistry(fs, store, { ignore: ['.git'] }).scan();
          } finally {
            await store.close();
            rmSync(path, { force: true });
            rmSync(`${path}-wal`, { force: true });
            rmSync(`${path}-shm`, { force: true });
          }
        },
        baselineName: 'node:fs readdir + readFileSync + sha256, one thread',
        baseline: () => rawWalk(corpus.root, hashFile),
        note: `${corpus.root}: ${files} files, ${mb(first.bytesHashed)} hashed; goal 50,000 files/s = ${Math.round(files / 50)} ms; in a fresh process (${fresh.runs} runs): median ${Math.round(fresh.durationMs)} ms, peak RSS ${mb(fresh.peakRss[0])}–${mb(fresh.peakRss[1])} for the whole process (ru_maxrss; goal < 200 MiB)`,
      },
      {
        name: `registry rescan, nothing changed (${files.toLocaleString('en')} files)`,
        subjectName: 'ctx.scan (incremental)',
        subject: () => ctx.scan(),
        baselineName: 'node:fs readdir+statSync walk',
        baseline: () => rawWalk(corpus.root, statFile),
        moreBaselines: [
          {
            name: 'fs.list walk + fs.stat (protocol, no registry)',
            fn: async () => {
              for await (const { entry } of walkTree((p) => fs.list(p), '', { enter: (e) => e.name !== '.git' }))
                if (entry.kind === 'file') await fs.stat(entry.path);
            },
          },
        ],
        verify: async () => {
          const r = await ctx.scan();
          if (r.hashed !== 0) throw new Error(`an unchanged rescan hashed ${r.hashed} files`);
        },
        note: 'goal: under 200 ms for a 30,000-file tree; the protocol baseline is the floor any registry over this backend pays',
      },
      single({
        kind: 'single',
        name: 'overview generation (8,000-token budget)',
        subjectName: 'ctx.overview',
        run: () => ctx.overview({ budgetTokens: 8000 }),
        budget: { maxMs: 500 },
        note: `same tree, ${files} files; within budget by the o200k count`,
      }),
      {
        name: `count tokens (${(text.length / 1024).toFixed(0)} KiB of TypeScript, ${tokens} tokens)`,
        subjectName: 'o200k count',
        subject: () => o200kTokenizer.count(text),
        baselineName: 'length/4 estimate',
        baseline: () => Math.ceil(text.length / 4),
        note: `tokens/s = ${tokens} ÷ median latency; the baseline is the heuristic a real count replaces`,
      },
    ];
  },
});
