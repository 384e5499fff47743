/**
 * Real source trees nobody here wrote: pinned npm packages, downloaded from
 * the registry with `npm pack` on first use and unpacked under
 * `~/.cache/ctxfs-bench/releases/<name>@<version>/package` (the cache the
 * patch eval shares).
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';

const CACHE = join(homedir(), '.cache', 'ctxfs-bench', 'releases');

/** The unpacked root of `name@version`, downloading it when missing. */
export function npmPackage(name: string, version: string): string {
  const dir = join(CACHE, `${name.replace('/', '+')}@${version}`);
  const root = join(dir, 'package');
  if (existsSync(join(root, 'package.json'))) return root;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr || pack.error?.message}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error(`npm pack ${name}@${version} left no tarball`);
  const untar = spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir]);
  if (untar.status !== 0) throw new Error(`cannot unpack ${tgz}`);
  return root;
}

/** Text files below `root` (relative path → content), optionally only under `under` and matching `keep`. */
export function packageFiles(root: string, keep: (path: string) => boolean = () => true, maxBytes = 1024 * 1024): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split('\\').join('/');
      if (e.isDirectory()) walk(abs);
      else if (e.isFile() && keep(rel) && statSync(abs).size <= maxBytes) out[rel] = readFileSync(abs, 'utf8');
    }
  };
  walk(root);
  return out;
}
