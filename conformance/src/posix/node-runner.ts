/**
 * Applies a POSIX scenario to real `node:fs` in a fresh temp directory: the
 * oracle the scenario table is checked against. Each protocol operation maps
 * to the platform call it mirrors; only the delete rule (documented on
 * `DeleteOptions`) and the `fs.cp` error names need translating.
 *
 * @module
 */

import { existsSync } from 'node:fs';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMutation, type Outcome, type PosixOp, type Tree } from './scenarios.ts';

/** `fs.cp` reports its own error names; these are the errno codes they stand for. */
const CP_CODES: Readonly<Record<string, string>> = {
  ERR_FS_CP_EINVAL: 'EINVAL',
  ERR_FS_EISDIR: 'EISDIR',
  ERR_FS_CP_DIR_TO_NON_DIR: 'ENOTDIR',
  ERR_FS_CP_NON_DIR_TO_DIR: 'EISDIR',
  ERR_FS_CP_EEXIST: 'EEXIST',
};

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return `THROWN:${String(err)}`;
  return CP_CODES[code] ?? code;
}

/** Keeps the caller's spelling (trailing slash, `./`, `//`): the platform must see it. */
function at(root: string, path: string): string {
  return path === '' ? root : `${root}/${path}`;
}

async function seed(root: string, tree: Tree): Promise<void> {
  for (const [path, value] of Object.entries(tree)) {
    const abs = join(root, path);
    if (value === null) await mkdir(abs, { recursive: true });
    else {
      await mkdir(join(abs, '..'), { recursive: true });
      await writeFile(abs, value);
    }
  }
}

/** The tree on disk, in the scenario's notation. */
export async function readNodeTree(root: string, rel = ''): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const d of await readdir(at(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) {
      out[path] = null;
      Object.assign(out, await readNodeTree(root, path));
    } else {
      out[path] = await readFile(at(root, path), 'utf8');
    }
  }
  return out;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * ctxfs delete: with `recursive`, `rm -r`; without, `unlink` for a file and
 * `rmdir` for a directory (`rm -d`); `force` ignores what `rm -f` ignores.
 */
async function remove(path: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
  if (options.recursive) {
    await rm(path, { recursive: true, force: options.force ?? false });
    return;
  }
  try {
    try {
      await unlink(path);
    } catch (err) {
      if (codeOf(err) !== 'EISDIR') throw err;
      await rmdir(path);
    }
  } catch (err) {
    if (!options.force) throw err;
    // The platform decides what counts as "nothing there": fs.rm with force
    // succeeds exactly then (a non-empty directory still makes it throw).
    try {
      await lstat(path).then(
        () => {
          throw err;
        },
        async () => rm(path, { force: true }),
      );
    } catch {
      throw err;
    }
  }
}

async function apply(root: string, run: PosixOp): Promise<Outcome | undefined> {
  switch (run.op) {
    case 'delete':
      return void (await remove(at(root, run.path), run.options));
    case 'mkdir':
      return void (await mkdir(at(root, run.path), { recursive: run.options?.parents ?? false }));
    case 'rename':
      return void (await rename(at(root, run.from), at(root, run.to)));
    case 'copy': {
      const overwrite = run.options?.overwrite ?? true;
      return void (await cp(at(root, run.from), at(root, run.to), {
        recursive: run.options?.recursive ?? false,
        force: overwrite,
        errorOnExist: !overwrite,
      }));
    }
    case 'stat': {
      const st = await stat(at(root, run.path));
      return { stat: st.isFile() ? { kind: 'file', size: st.size } : { kind: st.isDirectory() ? 'directory' : 'other' } };
    }
    case 'exists':
      return { exists: existsSync(at(root, run.path)) };
    case 'list': {
      const entries = await readdir(at(root, run.path), { withFileTypes: true });
      return { list: entries.sort((a, b) => byCodeUnit(a.name, b.name)).map((d) => (d.isDirectory() ? `${d.name}/` : d.name)) };
    }
  }
}

/**
 * Seeds a fresh temp directory with `tree`, runs `run` there with node:fs,
 * and reports the outcome in the same shape as `runOnFilesystem`.
 */
export async function runOnNode(tree: Tree, run: PosixOp): Promise<Outcome> {
  const root = await mkdtemp(join(tmpdir(), 'ctxfs-posix-'));
  try {
    await seed(root, tree);
    let result: Outcome | undefined;
    let error: string | undefined;
    try {
      result = await apply(root, run);
    } catch (err) {
      error = codeOf(err);
    }
    if (!isMutation(run.op)) return error === undefined ? (result as Outcome) : { error };
    const after = await readNodeTree(root);
    return error === undefined ? { tree: after } : { error, tree: after };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
