/**
 * How the context layer refuses a path through a link it will not follow,
 * on the host backend (the memory backend has no links).
 *
 * A loop (`loop1 -> loop2 -> loop1`): the session resolves a path's links
 * before the call, and the backend's realpath answered `loop2` for `loop1`
 * (the link it was on when it gave up), so the read failed with ELOOP naming
 * `loop2`, a name the caller never gave.
 *
 * A link out of the root: a listing, a search or the metadata of one was
 * EINVAL "'out' is a symlink, not a file or directory", where every other
 * call says EPATHESCAPE, the one code for a path that leads out of the root.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FsError } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { hostBackend } from './backends.ts';
import { testState } from './support/test-state.ts';

/** A directory outside the root, next to it, that the links below point at. */
const OUTSIDE_DIR = 'outside-secrets';

async function withLinks(body: (ctx: ContextLayer, outside: string) => Promise<void>): Promise<void> {
  const ws = await hostBackend.create({ 'ok.txt': 'hello\n' });
  const root = ws.fs.root as string;
  const outside = join(dirname(root), OUTSIDE_DIR);
  mkdirSync(outside);
  writeFileSync(join(outside, 'key.txt'), 'secret\n');
  symlinkSync('loop2', join(root, 'loop1'));
  symlinkSync('loop1', join(root, 'loop2'));
  symlinkSync(join(outside, 'key.txt'), join(root, 'out'));
  symlinkSync(outside, join(root, 'outdir'));
  const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test', safety: { policyFiles: false } });
  try {
    await body(ctx, outside);
  } finally {
    await ctx.close();
    await ws.cleanup();
  }
}

async function refusal(p: Promise<unknown>): Promise<FsError> {
  let answer: unknown;
  try {
    answer = await p;
  } catch (err) {
    return err as FsError;
  }
  throw new Error(`expected a refusal, got ${JSON.stringify(answer)}`);
}

describe('a loop of links through the context layer', () => {
  it('a read of loop1 is ELOOP naming loop1, the path asked for, not loop2', async () => {
    await withLinks(async (ctx) => {
      const err = await refusal(ctx.readFile('loop1'));
      expect(err).toMatchObject({ code: 'ELOOP', path: 'loop1' });
      expect(err.message).toContain("'loop1'");
      expect(err.message).toContain("'loop2' leads back to 'loop1'");
    });
  });
});

describe('a link out of the root through the context layer', () => {
  it('a listing or a search of it is EPATHESCAPE naming the path asked for, never where it leads', async () => {
    await withLinks(async (ctx, outside) => {
      for (const [path, call] of [
        ['out', () => ctx.listFiles('out')],
        ['outdir', () => ctx.listFiles('outdir')],
        ['out', () => ctx.grep('secret', { path: 'out' })],
      ] as const) {
        const err = await refusal(call());
        expect(err.code, err.message).toBe('EPATHESCAPE');
        expect(err.path).toBe(path);
        expect(err.message).toContain(`'${path}'`);
        expect(err.hint.length).toBeGreaterThan(0);
        expect(`${err.message} ${err.hint}`).not.toContain(OUTSIDE_DIR);
        expect(`${err.message} ${err.hint}`).not.toContain(outside);
      }
    });
  });

  it('a loop listed or searched is ELOOP naming the path asked for', async () => {
    await withLinks(async (ctx) => {
      const err = await refusal(ctx.listFiles('loop1'));
      expect(err).toMatchObject({ code: 'ELOOP', path: 'loop1' });
    });
  });
});
