/**
 * `@ctxfs/host` against what a caller would do by hand with node:fs, the
 * find/rg/git command-line tools and the libraries the issue names, same
 * process, same run. Targets from issue 3:
 *
 * - 1 KB read within 2x of `readFileSync`, 1 MB within 1.5x;
 * - durable atomic 1 KB write no slower than temp+fsync+rename by hand, and
 *   at most 0.6x of write-file-atomic's default;
 * - enumerating a ≥ 30,000-file node_modules tree within 1.2x of `find -type f`;
 * - grep within 1.2x of `rg -j1` (ripgrep present), 2x with the JS scanner;
 * - snapshot of 10 changed files of 1,000 no slower than the git CLI with an
 *   external git dir; first snapshot and restore within 1.5x of it;
 * - seed 004's absolute budgets: 1 KB read < 5 ms, 1 MB < 50 ms, 1,000 files
 *   enumerated < 50 ms, write < 20 ms per MB.
 *
 * The enumeration/grep corpus is `CTXFS_BENCH_CORPUS` when set, else a
 * hard-linked copy of the context bench's pinned `node_modules` (files up
 * to 1 MiB, about 34,700): a real tree nobody here wrote, the same on every
 * run. It was four copies of this repository's own `node_modules/.pnpm`,
 * which grew with every dependency added (33,000 files at first, 264,000 by
 * session 14, when the enumeration case no longer finished in its 180 s).
 *
 * @module
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import nodeFs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GlobMatch, GrepMatch } from '@ctxfs/core';
import { findRipgrep, HostFilesystem } from '@ctxfs/host';
import fastGlob from 'fast-glob';
import writeFileAtomic from 'write-file-atomic';
import { nodeModulesCorpus } from '../corpus.ts';
import { type Case, defineSuite, single } from '../harness.ts';

const KB = 1024;
const MB = 1024 * 1024;
const SNAP_FILES = 1000;
const GREP_LITERAL = 'Licensed under the';
/** A regex an agent would send: a function declaration; no literal longer than `function` to prefilter on. */
const GREP_REGEX = 'function\\s+[A-Za-z_$][A-Za-z0-9_$]*\\s*\\(';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
};

function git(gitdir: string, worktree: string, ...args: string[]): string {
  return execFileSync('git', [`--git-dir=${gitdir}`, `--work-tree=${worktree}`, ...args], { env: GIT_ENV, maxBuffer: 64 * MB }).toString();
}

function countFiles(root: string): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const e of nodeFs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) stack.push(join(dir, e.name));
      else if (e.isFile()) n++;
    }
  }
  return n;
}

/** The readdirSync walk a caller would write by hand. */
function readdirWalk(root: string): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const e of nodeFs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) stack.push(`${dir}/${e.name}`);
      else if (e.isFile()) n++;
    }
  }
  return n;
}

function buildCorpus(base: string): { root: string; files: number; note: string } {
  const env = process.env.CTXFS_BENCH_CORPUS;
  if (env) return { root: env, files: countFiles(env), note: `corpus ${env}` };
  const root = join(base, 'corpus');
  nodeFs.mkdirSync(root);
  execFileSync('cp', ['-al', nodeModulesCorpus(), join(root, 'copy0')]);
  // Big files (bundles, type databases) are not what an agent greps; a node_modules of sources is.
  execFileSync('find', [root, '-type', 'f', '-size', '+1024k', '-delete']);
  const files = countFiles(root);
  const bytes = Number(execFileSync('du', ['-sb', '--apparent-size', root]).toString().split('\t')[0]);
  return {
    root,
    files,
    note: `corpus: the pinned node_modules of src/corpus.ts, hard-linked, ${files.toLocaleString('en')} files, ${(bytes / MB).toFixed(0)} MiB`,
  };
}

function handAtomicWrite(dir: string, name: string, data: Uint8Array): void {
  const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
  const fd = nodeFs.openSync(tmp, 'wx');
  try {
    nodeFs.writeSync(fd, data);
    nodeFs.fsyncSync(fd);
  } finally {
    nodeFs.closeSync(fd);
  }
  nodeFs.renameSync(tmp, join(dir, name));
}

async function drain<T>(it: AsyncIterable<T>): Promise<number> {
  let n = 0;
  for await (const _ of it) n++;
  return n;
}

/** `rg -j1` over `dir`, as a caller would run it by hand. */
function rgRaw(dir: string, pattern: string, literal: boolean) {
  return spawnSync('rg', ['-j1', '--no-ignore', '--hidden', '--no-messages', ...(literal ? ['-F'] : []), '--regexp', pattern, dir], { maxBuffer: 256 * MB });
}

function rgCount(dir: string, pattern: string, literal = true): number {
  return rgRaw(dir, pattern, literal).stdout.toString().split('\n').filter(Boolean).length;
}

function makeSnapTree(root: string): string[] {
  const paths: string[] = [];
  for (let i = 0; i < SNAP_FILES; i++) {
    const rel = `d${i % 50}/sub${i % 5}/f${i}.txt`;
    nodeFs.mkdirSync(join(root, rel, '..'), { recursive: true });
    nodeFs.writeFileSync(join(root, rel), `file ${i}\n${'x'.repeat(900)}\n`);
    paths.push(rel);
  }
  const past = new Date(Date.now() - 60_000);
  for (const p of paths) nodeFs.utimesSync(join(root, p), past, past);
  return paths;
}

let touchCounter = 0;
/** Changes 10 files (a rotating set) the way an agent step would. */
function touch10(root: string, paths: readonly string[]): void {
  const k = touchCounter++;
  for (let j = 0; j < 10; j++) nodeFs.writeFileSync(join(root, paths[(k * 10 + j) % paths.length] as string), `changed ${k} ${j}\n`);
}

/** 10 modified, 10 deleted, 10 created: what restore has to undo. */
function mutate30(root: string, paths: readonly string[], k: number): void {
  for (let j = 0; j < 10; j++) nodeFs.writeFileSync(join(root, paths[j] as string), `mutated ${k}\n`);
  for (let j = 10; j < 20; j++) nodeFs.rmSync(join(root, paths[j] as string), { force: true });
  for (let j = 0; j < 10; j++) nodeFs.writeFileSync(join(root, `d${j}`, `new-${k}-${j}.txt`), 'new\n');
}

export default defineSuite({
  name: 'host',
  description: '@ctxfs/host vs node:fs, find, rg, git CLI, write-file-atomic, fast-glob',
  options: { minSamples: 5 },
  async setup() {
    const base = nodeFs.mkdtempSync(join(tmpdir(), 'ctxfs-bench-host-'));
    const root = join(base, 'ws');
    nodeFs.mkdirSync(join(root, 'r'), { recursive: true });
    nodeFs.mkdirSync(join(root, 'w'));
    nodeFs.mkdirSync(join(root, 'list1000'));
    const data1k = randomBytes(KB);
    const data1m = randomBytes(MB);
    nodeFs.writeFileSync(join(root, 'r/1k.bin'), data1k);
    nodeFs.writeFileSync(join(root, 'r/1m.bin'), data1m);
    for (let i = 0; i < 1000; i++) nodeFs.writeFileSync(join(root, `list1000/f${i}.txt`), 'x');
    const fs = await HostFilesystem.open({ root, stateDir: join(base, 'state') });
    const fsFile = await HostFilesystem.open({ root, stateDir: join(base, 'state'), durability: 'file' });

    const corpus = buildCorpus(base);
    const corpusFs = await HostFilesystem.open({ root: corpus.root, stateDir: join(base, 'corpus-state'), readOnly: true });
    const corpusJs = await HostFilesystem.open({ root: corpus.root, stateDir: join(base, 'corpus-state'), readOnly: true, grep: 'js' });
    // grep scope: the whole corpus (its one copy).
    const grepScope = process.env.CTXFS_BENCH_CORPUS ? '' : 'copy0';

    const snapRoot = join(base, 'snap-ctxfs');
    const gitRoot = join(base, 'snap-git');
    nodeFs.mkdirSync(snapRoot);
    nodeFs.mkdirSync(gitRoot);
    const snapPaths = makeSnapTree(snapRoot);
    makeSnapTree(gitRoot);
    const snapFs = await HostFilesystem.open({ root: snapRoot, stateDir: join(base, 'snap-state') });
    const gitdir = join(base, 'snap.git');
    execFileSync('git', ['init', '-q', '--bare', gitdir], { env: GIT_ENV });
    git(gitdir, gitRoot, 'add', '-A');
    git(gitdir, gitRoot, 'commit', '-q', '-m', 'first');
    await snapFs.snapshot('first');
    return {
      base,
      root,
      fs,
      fsFile,
      data1k,
      data1m,
      corpus,
      corpusFs,
      corpusJs,
      grepScope,
      snapRoot,
      gitRoot,
      snapPaths,
      snapFs,
      gitdir,
    };
  },
  async teardown(ctx) {
    for (const f of [ctx.fs, ctx.fsFile, ctx.corpusFs, ctx.corpusJs, ctx.snapFs]) await f.close();
    nodeFs.rmSync(ctx.base, { recursive: true, force: true });
  },
  cases: (ctx): Case[] => {
    const { root, fs, fsFile, data1k, data1m, corpus, corpusFs, corpusJs, grepScope, snapRoot, gitRoot, snapPaths, snapFs, gitdir, base } = ctx;
    const abs = (p: string) => join(root, p);
    const grepDir = grepScope === '' ? corpus.root : join(corpus.root, grepScope);
    const rgAvailable = findRipgrep() !== undefined;
    let firstSnapRuns = 0;
    let restoreSnap: Awaited<ReturnType<typeof snapFs.snapshot>> | undefined;
    let gitFirstCommit = '';
    let mutateK = 0;
    const cases: Case[] = [
      {
        name: 'read 1 KB',
        subjectName: 'fs.readBytes',
        subject: () => fs.readBytes('r/1k.bin'),
        baselineName: 'readFileSync',
        baseline: () => nodeFs.readFileSync(abs('r/1k.bin')),
        target: { maxRatio: 2 },
        moreBaselines: [{ name: 'fs.promises.readFile', fn: () => nodeFs.promises.readFile(abs('r/1k.bin')) }],
        verify: async () => {
          if (Buffer.compare(await fs.readBytes('r/1k.bin'), data1k) !== 0) throw new Error('read 1 KB differs');
        },
      },
      {
        name: 'read 1 MB',
        subjectName: 'fs.readBytes',
        subject: () => fs.readBytes('r/1m.bin'),
        baselineName: 'readFileSync',
        baseline: () => nodeFs.readFileSync(abs('r/1m.bin')),
        target: { maxRatio: 1.5 },
        moreBaselines: [{ name: 'fs.promises.readFile', fn: () => nodeFs.promises.readFile(abs('r/1m.bin')) }],
        verify: async () => {
          if (Buffer.compare(await fs.readBytes('r/1m.bin'), data1m) !== 0) throw new Error('read 1 MB differs');
        },
      },
      {
        name: 'atomic write 1 KB, fsync file',
        subjectName: "fs.writeBytes ('file')",
        subject: () => fsFile.writeBytes('w/1k.bin', data1k),
        baselineName: 'temp+fsync+rename',
        baseline: () => handAtomicWrite(abs('w'), 'hand.bin', data1k),
        target: { maxRatio: 1 },
        moreBaselines: [{ name: 'write-file-atomic', fn: () => writeFileAtomic(abs('w/wfa.bin'), data1k), target: { maxRatio: 0.6 } }],
        note: 'same durability on both sides: the file is fsynced before the rename; write-file-atomic (default options) does the same',
        verify: async () => {
          await fsFile.writeBytes('w/1k.bin', data1k);
          if (Buffer.compare(nodeFs.readFileSync(abs('w/1k.bin')), data1k) !== 0) throw new Error('write 1 KB differs');
        },
      },
      {
        name: 'atomic write 1 KB, fsync file+dir',
        subjectName: "fs.writeBytes ('full')",
        subject: () => fs.writeBytes('w/1k-full.bin', data1k),
        baselineName: 'temp+fsync+rename',
        baseline: () => handAtomicWrite(abs('w'), 'hand.bin', data1k),
        moreBaselines: [{ name: 'write-file-atomic', fn: () => writeFileAtomic(abs('w/wfa.bin'), data1k) }],
        note: 'the default durability also fsyncs the directory after the rename, so the new name survives a power cut; informative, no target',
      },
      single({
        kind: 'single',
        name: 'write 1 MB (seed: < 20 ms/MB)',
        subjectName: 'fs.writeBytes',
        run: () => fs.writeBytes('w/1m.bin', data1m),
        budget: { maxMs: 20 },
      }),
      single({
        kind: 'single',
        name: 'read 1 KB (seed: < 5 ms)',
        subjectName: 'fs.readBytes',
        run: () => fs.readBytes('r/1k.bin'),
        budget: { maxMs: 5 },
      }),
      single({
        kind: 'single',
        name: 'read 1 MB (seed: < 50 ms)',
        subjectName: 'fs.readBytes',
        run: () => fs.readBytes('r/1m.bin'),
        budget: { maxMs: 50 },
      }),
      single({
        kind: 'single',
        name: 'enumerate 1,000 files (seed: < 50 ms)',
        subjectName: 'fs.glob',
        run: () => drain<GlobMatch>(fs.glob('*', { cwd: 'list1000' })),
        budget: { maxMs: 50 },
      }),
      {
        name: `enumerate ${corpus.files.toLocaleString('en')} files`,
        subjectName: "fs.glob('**')",
        subject: () => drain<GlobMatch>(corpusFs.glob('**', { dot: true, kind: 'file' })),
        baselineName: 'find -type f',
        baseline: () => execFileSync('find', [corpus.root, '-type', 'f'], { maxBuffer: 256 * MB }),
        target: { maxRatio: 1.2 },
        moreBaselines: [
          { name: 'readdirSync walk', fn: () => readdirWalk(corpus.root) },
          { name: 'fast-glob stream', fn: () => drain(fastGlob.stream('**', { cwd: corpus.root, dot: true, onlyFiles: true })) },
        ],
        memory: true,
        note: corpus.note,
        verify: async () => {
          const n = await drain<GlobMatch>(corpusFs.glob('**', { dot: true, kind: 'file' }));
          if (n !== corpus.files) throw new Error(`glob found ${n} files, the tree has ${corpus.files}`);
        },
      },
      {
        name: `snapshot 10 changed of ${SNAP_FILES.toLocaleString('en')}`,
        subjectName: 'fs.snapshot',
        subject: () => {
          touch10(snapRoot, snapPaths);
          return snapFs.snapshot();
        },
        baselineName: 'git add -A && git commit',
        baseline: () => {
          touch10(gitRoot, snapPaths);
          git(gitdir, gitRoot, 'add', '-A');
          git(gitdir, gitRoot, 'commit', '-q', '--allow-empty', '-m', 'step');
        },
        target: { maxRatio: 1 },
        batch: 1,
        note: 'git CLI with an external git dir (--git-dir/--work-tree); both sides change the same 10 files first',
      },
      {
        name: `first snapshot of ${SNAP_FILES.toLocaleString('en')}`,
        subjectName: 'fs.snapshot (empty store)',
        subject: async () => {
          const h = new HostFilesystem({ root: snapRoot, stateDir: join(base, `first-${firstSnapRuns++}`) });
          await h.snapshot();
          await h.close();
        },
        baselineName: 'git init+add -A+commit',
        baseline: () => {
          const g = join(base, `first-git-${firstSnapRuns++}`);
          execFileSync('git', ['init', '-q', '--bare', g], { env: GIT_ENV });
          git(g, gitRoot, 'add', '-A');
          git(g, gitRoot, 'commit', '-q', '-m', 'first');
        },
        target: { maxRatio: 1.5 },
        batch: 1,
      },
      {
        name: `restore ${SNAP_FILES.toLocaleString('en')} (30 changed)`,
        subjectName: 'fs.restore',
        setup: async () => {
          restoreSnap = await snapFs.snapshot('restore-base');
          git(gitdir, gitRoot, 'add', '-A');
          git(gitdir, gitRoot, 'commit', '-q', '--allow-empty', '-m', 'restore-base');
          gitFirstCommit = git(gitdir, gitRoot, 'rev-parse', 'HEAD').trim();
        },
        subject: () => {
          mutate30(snapRoot, snapPaths, mutateK++);
          return snapFs.restore(restoreSnap as NonNullable<typeof restoreSnap>);
        },
        baselineName: 'git checkout -f && git clean -fd',
        baseline: () => {
          mutate30(gitRoot, snapPaths, mutateK++);
          git(gitdir, gitRoot, 'checkout', '-f', '-q', gitFirstCommit, '--', '.');
          git(gitdir, gitRoot, 'clean', '-fdq');
        },
        target: { maxRatio: 1.5 },
        batch: 1,
        verify: async () => {
          mutate30(snapRoot, snapPaths, 999_999);
          await snapFs.restore(restoreSnap as NonNullable<typeof restoreSnap>);
          if (nodeFs.existsSync(join(snapRoot, 'd0', 'new-999999-0.txt'))) throw new Error('restore kept a created file');
          if (!nodeFs.existsSync(join(snapRoot, snapPaths[15] as string))) throw new Error('restore did not bring back a deleted file');
        },
      },
    ];
    // The same searches through rg and through the JS scanner, each against `rg -j1` by hand.
    for (const [kind, pattern, literal] of [
      ['literal', GREP_LITERAL, true],
      ['regex', GREP_REGEX, false],
    ] as const) {
      const options = { path: grepScope, literal, dot: true, maxMatches: 1e9 };
      const verify = (fs: HostFilesystem) => async () => {
        const ours = await drain<GrepMatch>(fs.grep(pattern, options));
        const theirs = rgCount(grepDir, pattern, literal);
        if (ours === 0 || Math.abs(ours - theirs) > theirs * 0.01) throw new Error(`grep ${kind} found ${ours} lines, rg ${theirs}`);
      };
      if (rgAvailable) {
        cases.push({
          name: `grep ${kind} (ripgrep)`,
          subjectName: 'fs.grep → rg',
          subject: () => drain<GrepMatch>(corpusFs.grep(pattern, options)),
          baselineName: 'rg -j1',
          baseline: () => rgRaw(grepDir, pattern, literal),
          target: { maxRatio: 1.2 },
          batch: 1,
          note: `'${pattern}' over ${grepScope || 'the corpus'}; ctxfs also sorts by path, re-checks each line with the JS matcher and rescans binaries`,
          verify: verify(corpusFs),
        });
      }
      cases.push({
        name: `grep ${kind} (JS scanner)`,
        subjectName: 'fs.grep (JS)',
        subject: () => drain<GrepMatch>(corpusJs.grep(pattern, options)),
        baselineName: 'rg -j1',
        baseline: () => rgRaw(grepDir, pattern, literal),
        target: { maxRatio: 2 },
        batch: 1,
        note: literal ? undefined : 'the JS scanner runs re2js (linear time) since issue 11',
        verify: verify(corpusJs),
      });
    }
    return cases;
  },
});
