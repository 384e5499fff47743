/**
 * Three-way merge agreement with `git merge-file` on real divergent edits.
 *
 * Public git histories are out of reach here (only the npm registry is), so
 * the divergent branches come from release lines: when a project publishes a
 * patch release of an older minor after a newer minor is out, the two share
 * the last release before the split. For every file both sides changed, the
 * merge of (base, backport, newer minor) is computed by ctxfs's `merge3` and
 * by real `git merge-file`; they must agree on clean vs conflict, and clean
 * merges must be identical.
 *
 * Run: `pnpm eval:merge` (writes bench/results/latest-merge-agreement.json).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { merge3 } from '@ctxfs/context';
import { gitMergeFile } from '../../../packages/context/test/support/git-merge.ts';

const PACKAGES = [
  'vite',
  'eslint',
  'typescript-eslint',
  'webpack',
  'mocha',
  'undici',
  'express',
  'ws',
  'semver',
  'prettier',
  'rollup',
  'vitest',
  'mongoose',
  'fastify',
  'jest-config',
];
const MAX_TRIPLES_PER_PACKAGE = 3;
const CACHE = join(homedir(), '.cache', 'ctxfs-bench', 'releases');
const work = mkdtempSync(join(tmpdir(), 'ctxfs-merge-eval-'));

type Version = { v: string; major: number; minor: number; patch: number; time: number };

function versions(name: string): Version[] {
  const r = spawnSync('npm', ['view', name, 'time', '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) return [];
  const times = JSON.parse(r.stdout) as Record<string, string>;
  const out: Version[] = [];
  for (const [v, t] of Object.entries(times)) {
    const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
    if (m) out.push({ v, major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), time: Date.parse(t) });
  }
  return out;
}

/** (base, backport, newer) triples: a patch of minor M published after minor M+1 came out. */
function triples(all: readonly Version[]): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  const byLine = new Map<string, Version[]>();
  for (const v of all) {
    const key = `${v.major}.${v.minor}`;
    const line = byLine.get(key) ?? [];
    line.push(v);
    byLine.set(key, line);
  }
  for (const [key, line] of byLine) {
    const [major, minor] = key.split('.').map(Number) as [number, number];
    const next = all.find((v) => v.major === major && v.minor === minor + 1 && v.patch === 0);
    if (next === undefined) continue;
    const before = line.filter((v) => v.time < next.time).sort((a, b) => a.time - b.time);
    const after = line.filter((v) => v.time > next.time).sort((a, b) => a.time - b.time);
    const base = before[before.length - 1];
    // A real backport is a later patch than the base (registries also hold re-publishes).
    const backport = base === undefined ? undefined : after.find((v) => v.patch > base.patch);
    if (base && backport) out.push([base.v, backport.v, next.v]);
  }
  return out.sort((a, b) => (a[2] < b[2] ? 1 : -1)).slice(0, MAX_TRIPLES_PER_PACKAGE);
}

function unpack(name: string, version: string): string | undefined {
  const dir = join(CACHE, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (pack.status !== 0 || tgz === undefined) return undefined;
  if (spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir]).status !== 0) return undefined;
  return join(dir, 'package');
}

function textFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|mjs|cjs|ts|mts|cts|md|json)$/.test(e.name) && statSync(p).size < 1_000_000) out.set(relative(root, p), readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return out;
}

const gitMerge = (base: string, ours: string, theirs: string) => gitMergeFile(work, base, ours, theirs);

function main(): void {
  let merges = 0;
  let cleanAgree = 0;
  let conflictAgree = 0;
  let gitClean = 0;
  let slowestMs = 0;
  const disagreements: string[] = [];
  const used: string[] = [];
  for (const name of PACKAGES) {
    for (const [b, o, t] of triples(versions(name))) {
      const [bd, od, td] = [unpack(name, b), unpack(name, o), unpack(name, t)];
      if (!bd || !od || !td) continue;
      used.push(`${name} ${b} → ${o} | ${t}`);
      const base = textFiles(bd);
      const ours = textFiles(od);
      const theirs = textFiles(td);
      for (const [path, baseText] of base) {
        const oursText = ours.get(path);
        const theirsText = theirs.get(path);
        if (oursText === undefined || theirsText === undefined) continue;
        if (oursText === baseText || theirsText === baseText || oursText === theirsText) continue;
        const git = gitMerge(baseText, oursText, theirsText);
        const started = performance.now();
        const mine = merge3(baseText, oursText, theirsText);
        slowestMs = Math.max(slowestMs, performance.now() - started);
        merges++;
        if (git.clean) gitClean++;
        if (mine.clean === git.clean && (!git.clean || mine.text === git.text)) {
          if (git.clean) cleanAgree++;
          else conflictAgree++;
        } else if (disagreements.length < 20)
          disagreements.push(`${name} ${b}/${o}/${t} ${path}: git ${git.clean ? 'clean' : 'conflict'}, ctxfs ${mine.clean ? 'clean' : 'conflict'}`);
      }
    }
  }
  console.log(`release triples used:\n  ${used.join('\n  ')}`);
  console.log(
    `${merges} three-way merges of files changed on both sides: git clean ${gitClean}, conflicts ${merges - gitClean}; ` +
      `agreement: ${cleanAgree}/${gitClean} clean merges identical, ${conflictAgree}/${merges - gitClean} conflicts reported; slowest merge ${slowestMs.toFixed(1)} ms`,
  );
  for (const d of disagreements) console.log(`  DISAGREE ${d}`);
  const results = join(import.meta.dirname, '..', '..', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    join(results, 'latest-merge-agreement.json'),
    JSON.stringify({ used, merges, gitClean, cleanAgree, conflictAgree, slowestMs, disagreements }, null, 2),
  );
  rmSync(work, { recursive: true, force: true });
}

main();
