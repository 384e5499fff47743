import { spawnSync } from 'node:child_process';
import nodeFs from 'node:fs';
import path from 'node:path';
import { collect } from '@ctxfs/conformance';
import { HostFilesystem, isTempName, TEMP_PREFIX } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const spaces: Array<{ remove(): void }> = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const w of spaces.splice(0)) w.remove();
});

async function workspace(options: { grep?: 'js' | 'auto' } = {}) {
  const ws = tempWorkspace();
  spaces.push(ws);
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, ...options });
  open.push(hfs);
  return { ws, hfs, abs: (p: string) => path.join(ws.root, p) };
}

function deadPid(): number {
  // A process that has exited: its pid is free (and not reused this instant).
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('atomic writes', () => {
  it('stages in a same-directory temp file named .ctxfs-tmp-<pid>-<random>, invisible until close', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.mkdirSync(abs('sub'));
    nodeFs.writeFileSync(abs('sub/f.txt'), 'old');
    const w = await hfs.openWrite('sub/f.txt');
    await w.write(new TextEncoder().encode('new content'));
    const staged = nodeFs.readdirSync(abs('sub')).filter(isTempName);
    expect(staged).toHaveLength(1);
    expect(staged[0]).toMatch(new RegExp(`^\\${TEMP_PREFIX}${process.pid}-[0-9a-f]{16}$`));
    expect(nodeFs.readFileSync(abs('sub/f.txt'), 'utf8')).toBe('old');
    await w.close();
    expect(nodeFs.readFileSync(abs('sub/f.txt'), 'utf8')).toBe('new content');
    expect(nodeFs.readdirSync(abs('sub')).filter(isTempName)).toEqual([]);
  });

  it('abort and a failed write remove the temp file and leave the original', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('f.txt'), 'original');
    const w = await hfs.openWrite('f.txt');
    await w.write(new Uint8Array(1000));
    await w.abort();
    expect(nodeFs.readdirSync(abs('.')).filter(isTempName)).toEqual([]);
    expect(nodeFs.readFileSync(abs('f.txt'), 'utf8')).toBe('original');
    const w2 = await hfs.openWrite('f.txt');
    await expect(w2.write('not bytes' as unknown as Uint8Array)).rejects.toMatchObject({ code: 'EINVAL' });
    await w2.abort();
    expect(nodeFs.readdirSync(abs('.')).filter(isTempName)).toEqual([]);
  });

  it('temp files never show in list, glob or grep (rg and JS scanner)', async () => {
    for (const grep of ['auto', 'js'] as const) {
      const { hfs, abs } = await workspace({ grep });
      nodeFs.writeFileSync(abs(`${TEMP_PREFIX}${process.pid}-abc`), 'needle\n');
      nodeFs.mkdirSync(abs('d'));
      nodeFs.writeFileSync(abs(`d/${TEMP_PREFIX}1-x`), 'needle\n');
      nodeFs.writeFileSync(abs('d/real.txt'), 'needle\n');
      expect((await hfs.list()).map((e) => e.name)).toEqual(['d']);
      expect((await collect(hfs.glob('**', { dot: true }))).map((m) => m.path)).toEqual(['d', 'd/real.txt']);
      expect((await collect(hfs.grep('needle', { dot: true }))).map((m) => m.path)).toEqual(['d/real.txt']);
    }
  });

  it('keeps the mode of the file it replaces; new files get 0666 less the umask', async () => {
    const { hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('script.sh'), '#!/bin/sh\n');
    nodeFs.chmodSync(abs('script.sh'), 0o750);
    await hfs.write('script.sh', '#!/bin/sh\necho hi\n');
    expect(nodeFs.statSync(abs('script.sh')).mode & 0o7777).toBe(0o750);
    await hfs.openWrite('script.sh', { mode: 'append' }).then(async (w) => {
      await w.write(new TextEncoder().encode('echo more\n'));
      await w.close();
    });
    expect(nodeFs.statSync(abs('script.sh')).mode & 0o7777).toBe(0o750);
    expect(nodeFs.readFileSync(abs('script.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\necho more\n');
    await hfs.write('fresh.txt', 'x');
    const umask = process.umask();
    expect(nodeFs.statSync(abs('fresh.txt')).mode & 0o7777).toBe(0o666 & ~umask);
  });

  it('concurrent appends all land; concurrent exclusive creates: exactly one wins', async () => {
    const { hfs, abs } = await workspace();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const w = await hfs.openWrite('log.txt', { mode: 'append' });
        await w.write(new TextEncoder().encode(`line ${i}\n`));
        await w.close();
      }),
    );
    const lines = nodeFs.readFileSync(abs('log.txt'), 'utf8').trim().split('\n').sort();
    expect(lines).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`).sort());
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => hfs.writeBytes('once.txt', new TextEncoder().encode(`w${i}`), { mode: 'create' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'EEXIST')).toBe(true);
    expect(nodeFs.readdirSync(abs('.')).filter(isTempName)).toEqual([]);
  });

  it('startup removes temp files of dead writers at any depth and spares live ones', async () => {
    const ws = tempWorkspace();
    spaces.push(ws);
    const dead = deadPid();
    nodeFs.mkdirSync(path.join(ws.root, 'a/b'), { recursive: true });
    const orphans = [`${TEMP_PREFIX}${dead}-0001`, `a/b/${TEMP_PREFIX}${dead}-0002`];
    const live = [`${TEMP_PREFIX}${process.pid}-0003`, `a/${TEMP_PREFIX}1-0004`];
    for (const p of [...orphans, ...live]) nodeFs.writeFileSync(path.join(ws.root, p), 'partial');
    const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
    open.push(hfs);
    for (const p of orphans) expect(nodeFs.existsSync(path.join(ws.root, p)), p).toBe(false);
    for (const p of live) expect(nodeFs.existsSync(path.join(ws.root, p)), p).toBe(true);
  });

  it('writes through a symlink that stays inside the root; refuses one that leaves it', async () => {
    const { ws, hfs, abs } = await workspace();
    nodeFs.writeFileSync(abs('target.txt'), 'old');
    nodeFs.symlinkSync('target.txt', abs('link.txt'));
    await hfs.write('link.txt', 'via link');
    expect(nodeFs.lstatSync(abs('link.txt')).isSymbolicLink()).toBe(true);
    expect(nodeFs.readFileSync(abs('target.txt'), 'utf8')).toBe('via link');
    const outside = path.join(ws.base, 'outside.txt');
    nodeFs.writeFileSync(outside, 'secret');
    nodeFs.symlinkSync(outside, abs('escape.txt'));
    await expect(hfs.write('escape.txt', 'pwned')).rejects.toMatchObject({ code: 'EPATHESCAPE', op: 'write' });
    nodeFs.symlinkSync('../outside-new.txt', abs('dangling.txt'));
    await expect(hfs.write('dangling.txt', 'pwned')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
    expect(nodeFs.readFileSync(outside, 'utf8')).toBe('secret');
    expect(nodeFs.existsSync(path.join(ws.base, 'outside-new.txt'))).toBe(false);
  });
});
