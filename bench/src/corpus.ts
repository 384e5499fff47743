/**
 * The context bench's corpus: a real `node_modules` of about 35,000 files
 * (284 packages, 371 MB) that nobody here wrote, installed once from the npm
 * registry into `~/.cache/ctxfs-bench/corpus` with pinned versions, so every
 * run and every machine measures the same tree.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Pinned top-level packages; their dependencies come with them. */
export const CORPUS_PACKAGES: readonly string[] = [
  'date-fns@2.30.0',
  'lodash@4.18.1',
  'rxjs@7.8.2',
  'core-js@3.51.0',
  'typescript@5.9.3',
  '@fortawesome/fontawesome-free@6.7.2',
  'three@0.187.0',
  'moment@2.31.0',
  'ramda@0.32.0',
  '@angular/core@17.3.12',
  'es-abstract@1.24.2',
  'caniuse-lite@1.0.30001826',
  '@types/node@26.6.6',
  'aws-sdk@2.1693.0',
  'eslint@8.57.1',
  'webpack@5.112.2',
  '@ant-design/icons-svg@4.6.0',
];

const DIR = join(homedir(), '.cache', 'ctxfs-bench', 'corpus');
const DONE = join(DIR, '.complete');

/**
 * Path of the corpus's `node_modules`, installing it first when missing
 * (about 20 s). Throws with npm's message when the registry is unreachable.
 */
export function nodeModulesCorpus(): string {
  const modules = join(DIR, 'node_modules');
  if (existsSync(DONE)) return modules;
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, 'package.json'), `${JSON.stringify({ name: 'ctxfs-bench-corpus', private: true })}\n`);
  const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--legacy-peer-deps', '--no-package-lock', '--loglevel=error', ...CORPUS_PACKAGES];
  const run = spawnSync('npm', args, { cwd: DIR, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm install of the bench corpus failed: ${run.stderr || run.error?.message}`);
  writeFileSync(DONE, `${CORPUS_PACKAGES.join('\n')}\n`);
  return modules;
}
