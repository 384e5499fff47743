/**
 * CtxfsBashFs given links a script may find (out of the root, in a loop,
 * leading nowhere, to a file inside): `rm` removes the link itself, as
 * rm(1) and fs.rm do, never failing on or touching what it leads to, and
 * keeps no version of it (a link has no content of its own).
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ContextLayer, createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { CtxfsBash, CtxfsBashFs } from '../src/index.ts';

const LINKS = { 'sys.lnk': '/etc', 'host.lnk': '/etc/hostname', 'loop.lnk': 'loop.lnk', 'dangling.lnk': 'nowhere', 'to-file.lnk': 'a.txt' };

const open: Array<{ ctx: ContextLayer; root: string }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.ctx.close();
    rmSync(o.root, { recursive: true, force: true });
  }
});

async function workspace(): Promise<{ ctx: ContextLayer; root: string }> {
  const root = mkdtempSync(join(tmpdir(), 'ctxfs-just-bash-hostile-'));
  writeFileSync(join(root, 'a.txt'), 'a\n');
  for (const [name, target] of Object.entries(LINKS)) symlinkSync(target, join(root, name));
  const ctx = await createContext({ fs: new HostFilesystem({ root }), store: ':memory:', safety: { policyFiles: false } });
  const o = { ctx, root };
  open.push(o);
  return o;
}

describe('CtxfsBashFs, hostile links on host', () => {
  it('rm of a link removes the link, wherever it leads, and leaves what it leads to', async () => {
    const { ctx, root } = await workspace();
    const fs = new CtxfsBashFs(ctx);
    for (const name of Object.keys(LINKS)) await fs.rm(`/${name}`);
    expect(readdirSync(root)).toEqual(['a.txt']);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync('/etc/hostname').byteLength).toBeGreaterThan(0);
  });

  it('a script removing a link inside the root changes no file and records no version of the link', async () => {
    const { ctx, root } = await workspace();
    const r = await new CtxfsBash(ctx).exec('rm to-file.lnk');
    expect(r.exitCode).toBe(0);
    expect(r.changes).toEqual([]);
    await expect(ctx.history('to-file.lnk')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(root)).not.toContain('to-file.lnk');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
  });
});
