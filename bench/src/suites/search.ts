/**
 * Search in `@ctxfs/context` beside what a tool does without it, on the
 * host backend (ripgrep): a real project (webpack's package) with a real
 * `node_modules` of about 35,000 files beside its sources (corpus.ts,
 * hard-linked into the workspace). Goal: the session's `grep` — ignored
 * names pushed down, every line checked on the redacted file, counted,
 * budgeted, recorded — as fast as or faster than calling `fs.grep` and
 * redacting afterwards.
 *
 * Two baselines: `fs.grep` as a tool calls it today (whole tree, its
 * default 1,000-match cap) with each matching line redacted; and `fs.grep`
 * told to leave the same names out, with each matching file read and
 * redacted whole — the same work the session does by hand, for the ratio
 * of the layer's own overhead.
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createContext, DEFAULT_IGNORE, Redactor } from '@ctxfs/context';
import type { GrepOptions } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { npmPackage } from '../../../packages/context/test/support/npm-package.ts';
import { nodeModulesCorpus } from '../corpus.ts';
import { type Case, defineSuite, single, skipSuite } from '../harness.ts';

export default defineSuite({
  name: 'search',
  description: 'context-layer grep (host, ripgrep) vs fs.grep with redaction afterwards, on a project with a node_modules',
  options: { rounds: 2, minSamples: 5, timeMs: 300, warmupMs: 50 },
  async setup() {
    let modules: string;
    let project: string;
    try {
      modules = nodeModulesCorpus();
      project = npmPackage('webpack', '5.91.0');
    } catch (err) {
      throw skipSuite(`cannot fetch the corpus from the npm registry: ${(err as Error).message}`);
    }
    // Hard links: the workspace costs no copy, and lives where the cache does.
    const base = mkdtempSync(join(homedir(), '.cache', 'ctxfs-bench', 'search-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    execFileSync('cp', ['-al', `${project}/.`, root]);
    execFileSync('cp', ['-al', modules, join(root, 'node_modules')]);
    const fs = await HostFilesystem.open({ root, stateDir: join(base, 'host'), readOnly: true });
    const ctx = await createContext({
      fs,
      store: join(base, 'state.db'),
      profile: { base: 'large', sessionTokens: Number.MAX_SAFE_INTEGER },
      agent: 'bench',
    });
    await ctx.scan();
    await ctx.findSymbol('Compilation');
    return { base, fs, ctx };
  },
  async teardown({ base, fs, ctx }) {
    await ctx.close();
    await fs.close();
    rmSync(base, { recursive: true, force: true });
  },
  cases({ fs, ctx }): Case[] {
    const redactor = new Redactor();
    const exclude = DEFAULT_IGNORE;
    /** A tool today: fs.grep over everything, each matching line redacted. */
    const rawGrep = async (pattern: string, options: GrepOptions) => {
      let n = 0;
      for await (const m of fs.grep(pattern, options)) n += redactor.redact(m.text).text.length;
      return n;
    };
    /** The session's work by hand: the same names left out, each matching file redacted whole. */
    const handGrep = async (pattern: string, options: GrepOptions) => {
      const files = new Set<string>();
      for await (const m of fs.grep(pattern, { ...options, dot: true, exclude, maxMatches: 10_001 })) files.add(m.path);
      let n = 0;
      for (const path of files) n += redactor.redact(new TextDecoder().decode(await fs.readBytes(path))).findings.length;
      return files.size + n;
    };
    const cases: Array<[string, string, GrepOptions, 'content' | 'count']> = [
      ['literal, matching lines', 'compilation.hooks', { literal: true }, 'content'],
      ['regex, counts per file', 'new \\w+Plugin\\(', {}, 'count'],
    ];
    return [
      ...cases.map(
        ([label, pattern, options, output]): Case => ({
          name: `grep ${label}: ${JSON.stringify(pattern)}`,
          subjectName: `ctx.grep (${output})`,
          subject: () => ctx.grep(pattern, { ...options, output }),
          baselineName: 'fs.grep over the tree + redact lines',
          baseline: () => rawGrep(pattern, options),
          target: { maxRatio: 1 },
          moreBaselines: [{ name: 'fs.grep, ignored names excluded + redact files whole', fn: () => handGrep(pattern, options) }],
          verify: async () => {
            const r = await ctx.grep(pattern, { ...options, output: 'count', limit: 10_000 });
            const files = new Set<string>();
            for await (const m of fs.grep(pattern, { ...options, dot: true, exclude, maxMatches: 10_001 })) files.add(m.path);
            if (r.counts.files !== files.size) throw new Error(`session grep found ${r.counts.files} files, fs.grep ${files.size}`);
          },
          note: 'goal: ≤ 1.00x the first baseline (faster or equal)',
        }),
      ),
      single({
        kind: 'single',
        name: 'findSymbol, index up to date',
        subjectName: 'ctx.findSymbol("Compilation.addModule")',
        run: () => ctx.findSymbol('Compilation.addModule'),
        note: 'a refresh that finds nothing to parse, then the ranked lookup',
      }),
      single({
        kind: 'single',
        name: 'listFiles of the root to depth 2',
        subjectName: 'ctx.listFiles("", {depth: 2})',
        run: () => ctx.listFiles('', { depth: 2 }),
      }),
    ];
  },
});
