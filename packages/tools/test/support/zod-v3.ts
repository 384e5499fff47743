/**
 * Real files for the tests of what an answer costs: zod's published `src/v3`
 * (83 files, 61 of them in `tests/`, the directory the MCP bench lists) on
 * the memory backend, and the helpers that read an answer's rows as a model
 * does.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContextLayer, createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, beforeAll } from 'vitest';
import { Toolset } from '../../src/index.ts';

/** zod's `src/v3` on disk. */
export const V3 = join(import.meta.dirname, '../../node_modules/zod/src/v3');

/** Every file under `dir`, keyed by its path under `prefix`. */
function filesOf(dir: string, prefix: string, out: Record<string, string> = {}): Record<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) filesOf(join(dir, e.name), `${prefix}/${e.name}`, out);
    else if (e.isFile()) out[`${prefix}/${e.name}`] = readFileSync(join(dir, e.name), 'utf8');
  }
  return out;
}

/** The files of the workspace, by path (`zod/src/v3/…`). */
export const FILES = filesOf(V3, 'zod/src/v3');

/** The rows between an answer's delimiters. */
export function rows(text: string): string[] {
  const open = text.indexOf('>\n', text.indexOf('<file '));
  const close = text.lastIndexOf('\n</file ');
  return text.slice(open + 2, close).split('\n');
}

/** `dir` joined with a row's name, as a model joins them. */
export const joined = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);

/**
 * The workspace of {@link FILES}, scanned before the file's tests and closed
 * after them; the function it returns makes a toolset of a session (call it
 * in a test or a later `beforeAll`).
 */
export function zodWorkspace(): (options: Parameters<ContextLayer['session']>[0]) => Toolset {
  let fs: MemoryFilesystem | undefined;
  let ctx: ContextLayer | undefined;
  beforeAll(async () => {
    fs = new MemoryFilesystem({ files: { ...FILES } });
    ctx = await createContext({ fs, safety: { policyFiles: false } });
    await ctx.scan();
  });
  afterAll(async () => {
    await ctx?.close();
    await fs?.close();
  });
  return (options) => {
    if (ctx === undefined) throw new Error('zodWorkspace: the workspace is made in beforeAll');
    return new Toolset(ctx.session(options));
  };
}
