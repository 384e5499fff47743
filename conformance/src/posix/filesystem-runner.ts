/**
 * Applies a POSIX scenario to a ctxfs {@link Filesystem} and observes the
 * outcome through the protocol only, so any backend can be checked.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { isMutation, type Outcome, type PosixOp, type Tree } from './scenarios.ts';

const decoder = new TextDecoder();

/** Reads the whole tree back through `list` and `readBytes`. */
export async function readTree(fs: Filesystem, dir = ''): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const entry of await fs.list(dir)) {
    if (entry.kind === 'directory') {
      out[entry.path] = null;
      Object.assign(out, await readTree(fs, entry.path));
    } else {
      out[entry.path] = decoder.decode(await fs.readBytes(entry.path));
    }
  }
  return out;
}

async function apply(fs: Filesystem, run: PosixOp): Promise<Outcome | undefined> {
  switch (run.op) {
    case 'delete':
      return void (await fs.delete(run.path, run.options));
    case 'mkdir':
      return void (await fs.mkdir(run.path, run.options));
    case 'rename':
      return void (await fs.rename(run.from, run.to, run.options));
    case 'copy':
      return void (await fs.copy(run.from, run.to, run.options));
    case 'stat': {
      const st = await fs.stat(run.path);
      return { stat: st.kind === 'file' ? { kind: st.kind, size: st.size } : { kind: st.kind } };
    }
    case 'exists':
      return { exists: await fs.exists(run.path) };
    case 'list':
      return { list: (await fs.list(run.path)).map((e) => (e.kind === 'directory' ? `${e.name}/` : e.name)) };
  }
}

/**
 * Runs `run` on `fs` and reports what happened: the error code, and for
 * mutations the whole resulting tree (also after an error).
 */
export async function runOnFilesystem(fs: Filesystem, run: PosixOp): Promise<Outcome> {
  let result: Outcome | undefined;
  let error: string | undefined;
  try {
    result = await apply(fs, run);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    error = typeof code === 'string' ? code : `THROWN:${String(err)}`;
  }
  if (!isMutation(run.op)) return error === undefined ? (result as Outcome) : { error };
  const tree: Tree = await readTree(fs);
  return error === undefined ? { tree } : { error, tree };
}
