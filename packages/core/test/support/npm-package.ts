/**
 * Real files nobody here wrote: a pinned npm package, downloaded once from
 * the registry (`npm pack`) into `~/.cache/ctxfs-tests/npm` and unpacked
 * there, so later runs read it from disk.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE = join(homedir(), '.cache', 'ctxfs-tests', 'npm');

/** The unpacked `package/` directory of `name@version`; throws with npm's message when the registry cannot be reached. */
export function npmPackage(spec: string): string {
  const dir = join(CACHE, spec.replace('/', '+'));
  const root = join(dir, 'package');
  if (existsSync(join(dir, '.complete'))) return root;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack ${spec} failed: ${pack.stderr || pack.error?.message}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error(`npm pack ${spec} wrote no tarball`);
  const untar = spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir]);
  if (untar.status !== 0) throw new Error(`cannot unpack ${tgz}: ${untar.stderr}`);
  writeFileSync(join(dir, '.complete'), `${spec}\n`);
  return root;
}

/** The text of `file` in the pinned package `spec`. */
export function npmFile(spec: string, file: string): string {
  return readFileSync(join(npmPackage(spec), file), 'utf8');
}
