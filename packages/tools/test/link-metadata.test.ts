/**
 * get_file_metadata of a symbolic link the workspace will not follow, on the
 * host backend. A link that leads out of the root answered EINVAL "'out' is
 * a symlink, not a file or directory" (with the default hint "the arguments
 * are not valid for this operation"), where read_file of the same path says
 * EPATHESCAPE, the stable code for a path that leads out of the root; a link
 * in a loop answered the same EINVAL, where read_file says ELOOP.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { Toolset } from '../src/index.ts';

const OUTSIDE_DIR = 'outside-secrets';

async function withLinks(body: (toolset: Toolset, outside: string) => Promise<void>, symlinks?: 'refuse'): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-link-metadata-'));
  const root = join(base, 'ws');
  const outside = join(base, OUTSIDE_DIR);
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(root, 'ok.txt'), 'hello\n');
  writeFileSync(join(outside, 'key.txt'), 'secret\n');
  symlinkSync(join(outside, 'key.txt'), join(root, 'out'));
  symlinkSync(outside, join(root, 'outdir'));
  symlinkSync('loop2', join(root, 'loop1'));
  symlinkSync('loop1', join(root, 'loop2'));
  const fs = await HostFilesystem.open({ root, stateDir: join(base, 'state'), ...(symlinks === undefined ? {} : { symlinks }) });
  const ctx = await createContext({ fs, safety: { policyFiles: false } });
  try {
    await body(new Toolset(ctx.session({ agent: 'llm:test' })), outside);
  } finally {
    await ctx.close();
    await fs.close();
    rmSync(base, { recursive: true, force: true });
  }
}

type ErrorData = { error: { code: string; path?: string; message: string; hint: string } };

describe('get_file_metadata of a link the workspace does not follow', () => {
  it('a link out of the root is EPATHESCAPE with the path asked for and a hint, as read_file says, and never where it leads', async () => {
    await withLinks(async (toolset, outside) => {
      for (const path of ['out', 'outdir']) {
        const r = await toolset.run('get_file_metadata', { path });
        expect(r.isError, r.text).toBe(true);
        const { error } = r.data as ErrorData;
        expect(error.code, r.text).toBe('EPATHESCAPE');
        expect(error.path).toBe(path);
        expect(error.message).toContain(`get_file_metadata '${path}'`);
        expect(error.hint).not.toBe('the arguments are not valid for this operation');
        expect(r.text).not.toContain(outside);
        expect(r.text).not.toContain(OUTSIDE_DIR);
        // The code read_file gives for the same path.
        expect(((await toolset.run('read_file', { path })).data as ErrorData).error.code).toBe('EPATHESCAPE');
      }
    });
  });

  it('a link in a loop is ELOOP with the path asked for, as read_file says', async () => {
    await withLinks(async (toolset) => {
      for (const tool of ['get_file_metadata', 'read_file']) {
        const r = await toolset.run(tool, { path: 'loop1' });
        expect((r.data as ErrorData).error, r.text).toMatchObject({ code: 'ELOOP', path: 'loop1' });
        expect(r.text).toContain("'loop2' leads back to 'loop1'");
      }
    });
  });

  it('in a workspace that refuses symlinks, every link is EPATHESCAPE saying so, with the path asked for', async () => {
    await withLinks(async (toolset, outside) => {
      for (const path of ['out', 'loop1']) {
        const r = await toolset.run('get_file_metadata', { path });
        expect((r.data as ErrorData).error, r.text).toMatchObject({ code: 'EPATHESCAPE', path });
        expect(r.text).toContain(`'${path}' is a symbolic link and this workspace refuses symlinks`);
        expect(r.text).not.toContain(outside);
      }
    }, 'refuse');
  });
});
