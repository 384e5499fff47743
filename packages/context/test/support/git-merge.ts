/** Real `git merge-file -p` on three texts, as the reference for merge3. */

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs git in `dir` (a scratch directory) and returns its verdict and merged text. */
export function gitMergeFile(dir: string, base: string, ours: string, theirs: string): { clean: boolean; text: string } {
  writeFileSync(join(dir, 'base'), base);
  writeFileSync(join(dir, 'ours'), ours);
  writeFileSync(join(dir, 'theirs'), theirs);
  const r = spawnSync('git', ['merge-file', '-p', join(dir, 'ours'), join(dir, 'base'), join(dir, 'theirs')], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status === null || r.status < 0 || r.status > 127) throw new Error(`git merge-file failed: ${r.stderr}`);
  return { clean: r.status === 0, text: r.stdout };
}
