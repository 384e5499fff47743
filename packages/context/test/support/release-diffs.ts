/**
 * Real single-file edits from public history: pairs of consecutive releases
 * of npm packages, downloaded from the registry with `npm pack` (cached
 * under ~/.cache/ctxfs-bench/releases, pinned by name@version), compared file
 * by file. Shared by the patch eval (bench/src/evals/patch-apply-rate.ts) and
 * the test that holds the patcher to its goals on a pinned slice.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';

export const RELEASE_CACHE = join(homedir(), '.cache', 'ctxfs-bench', 'releases');

/** A package and two consecutive releases of it. */
export type ReleasePair = readonly [name: string, from: string, to: string];

/** The patch eval's release pairs: consecutive releases with unminified sources. */
export const PATCH_EVAL_RELEASES: readonly ReleasePair[] = [
  ['webpack', '5.90.0', '5.91.0'],
  ['eslint', '8.56.0', '8.57.0'],
  ['date-fns', '3.3.0', '3.3.1'],
  ['ajv', '8.12.0', '8.13.0'],
  ['undici', '6.6.0', '6.7.0'],
  ['mocha', '10.3.0', '10.4.0'],
  ['postcss', '8.4.35', '8.4.38'],
  ['commander', '11.1.0', '12.0.0'],
  ['yargs', '17.6.2', '17.7.2'],
  ['semver', '7.5.4', '7.6.0'],
  ['ws', '8.16.0', '8.17.0'],
  ['acorn', '8.11.3', '8.12.0'],
  ['marked', '12.0.0', '12.0.2'],
  ['glob', '10.3.10', '10.4.1'],
  ['luxon', '3.4.3', '3.4.4'],
  ['@babel/core', '7.24.0', '7.24.4'],
  ['prettier', '3.2.4', '3.2.5'],
  ['typescript-eslint', '7.0.1', '7.0.2'],
  ['esbuild', '0.20.0', '0.20.1'],
  ['rxjs', '7.8.0', '7.8.1'],
  ['@babel/parser', '7.23.9', '7.24.0'],
  ['eslint', '8.55.0', '8.56.0'],
  ['webpack', '5.89.0', '5.90.0'],
];
/** One file as two releases have it. */
export interface ReleaseEdit {
  readonly release: string;
  readonly file: string;
  readonly before: string;
  readonly after: string;
}

/** Downloads and unpacks `name@version` once; returns its `package` directory. */
export function unpackRelease(name: string, version: string): string {
  const dir = join(RELEASE_CACHE, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error(`no tarball for ${name}@${version}`);
  const untar = spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir]);
  if (untar.status !== 0) throw new Error(`cannot unpack ${tgz}`);
  return join(dir, 'package');
}

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|mjs|cjs|ts|md)$/.test(e.name) && statSync(p).size < 200_000) out.push(relative(root, p));
    }
  };
  walk(root);
  return out.sort();
}

/** `git diff` of two texts, through files in `work`. */
export function gitDiff(work: string, a: string, b: string, context: number): string {
  writeFileSync(join(work, 'a'), a);
  writeFileSync(join(work, 'b'), b);
  return spawnSync('git', ['diff', '--no-index', '--no-color', `-U${context}`, join(work, 'a'), join(work, 'b')], { encoding: 'utf8', maxBuffer: 1 << 28 })
    .stdout;
}

/**
 * The files each pair changed (sources and docs, no minified lines), at most
 * `perRelease` a pair, in path order. A pair that cannot be downloaded is
 * reported to `onSkip` and left out.
 */
export function releaseEdits(pairs: readonly ReleasePair[], perRelease: number, onSkip: (message: string) => void = () => {}): ReleaseEdit[] {
  const out: ReleaseEdit[] = [];
  for (const [name, from, to] of pairs) {
    let a: string;
    let b: string;
    try {
      a = unpackRelease(name, from);
      b = unpackRelease(name, to);
    } catch (err) {
      onSkip(`skipping ${name}: ${(err as Error).message}`);
      continue;
    }
    const bFiles = new Set(sourceFiles(b));
    let taken = 0;
    for (const file of sourceFiles(a)) {
      if (taken >= perRelease || !bFiles.has(file)) continue;
      const before = readFileSync(join(a, file), 'utf8');
      const after = readFileSync(join(b, file), 'utf8');
      if (before === after || before.split('\n').some((l) => l.length > 500)) continue;
      out.push({ release: `${name}@${from}..${to}`, file, before, after });
      taken++;
    }
  }
  return out;
}
