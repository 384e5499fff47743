/**
 * Device paths in a script over ctxfs (a campaign's finding): `2>/dev/null`,
 * `> /dev/null`, `&>/dev/null` made a real `dev/null` in the workspace,
 * recorded as an edit, and `< /dev/null` failed until it existed. The
 * absolute device paths are now devices of the adapter: nothing of them
 * reaches the workspace, its history or its audit.
 */

import type { Filesystem } from '@ctxfs/core';
import { Bash } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { CtxfsBash, CtxfsBashFs } from '../src/index.ts';
import { useBackends } from './backends.ts';

const { BACKENDS, open: openOn } = useBackends('dev');

const text = async (fs: Filesystem, path: string): Promise<string> => new TextDecoder().decode(await fs.readBytes(path));
const names = async (fs: Filesystem, path = ''): Promise<string[]> => (await fs.list(path)).map((e) => e.name).sort();

describe.each(Object.keys(BACKENDS))('device paths over ctxfs %s', (name) => {
  const open = openOn(name);

  it('/dev/null takes writes and reads as empty, and leaves no file, version or audit of a write', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' });
    const bash = new CtxfsBash(ctx);
    const script = 'echo hi > /dev/null; cat /dev/null; ls /dev/null; echo x 2>/dev/null; grep foo missing.txt 2>/dev/null || true; wc -c < /dev/null';
    const r = await bash.exec(script);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('/dev/null\nx\n0\n');
    expect(r.changes).toEqual([]);
    for (const more of ['echo a &>/dev/null', 'echo b >> /dev/null', 'ls missing 2>/dev/null; true', 'echo c | tee /dev/null', 'cat a.txt > /dev/null 2>&1']) {
      const m = await bash.exec(more);
      expect(m.stderr, more).toBe('');
      expect(m.exitCode, more).toBe(0);
      expect(m.changes, more).toEqual([]);
    }
    expect((await bash.exec('cat /dev/null | wc -c; wc -c < /dev/null')).stdout).toBe('0\n0\n');
    expect(await names(fs)).toEqual(['a.txt']);
    // The audit holds the commands, and not one of them changed a file.
    const records = await ctx.store.auditLog({ limit: 100 });
    expect(records.length).toBe(7);
    for (const rec of records) {
      expect(rec.op).toBe('command');
      expect((rec.params as { after?: Record<string, string> }).after ?? {}).toEqual({});
    }
    // No version of it was ever made.
    await expect(ctx.history('dev/null')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a script under the plain Bash class writes to /dev/null without a single command or audit record', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' });
    const bash = new Bash({ fs: new CtxfsBashFs(ctx), cwd: '/' });
    const r = await bash.exec('echo hi > /dev/null; cat a.txt 2>/dev/null >/dev/null; ls nothing &>/dev/null; true < /dev/null; echo ok');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('ok\n');
    expect(await names(fs)).toEqual(['a.txt']);
    expect(await ctx.store.auditLog({ limit: 10 })).toEqual([]);
  });

  it('/dev/null is neither a file nor a directory, readable and writable, empty, and is not removed, moved over or made', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' });
    const bash = new CtxfsBash(ctx);
    const tests = await bash.exec(
      'test -e /dev/null && echo e; [ -c /dev/null ] && echo c; [ -f /dev/null ] || echo not-f; [ -d /dev/null ] || echo not-d; [ -s /dev/null ] || echo empty; [ -r /dev/null ] && [ -w /dev/null ] && echo rw; stat /dev/null',
    );
    expect(tests.stdout).toMatch(/^e\nc\nnot-f\nnot-d\nempty\nrw\n {2}File: \/dev\/null\n {2}Size: 0\t/);
    expect(tests.stdout).toContain('Access: (0666/');
    const b = new CtxfsBashFs(ctx);
    expect(await b.stat('/dev/null')).toMatchObject({ isFile: false, isDirectory: false, isSymbolicLink: false, size: 0, mode: 0o666 });
    expect(await b.realpath('/dev/../dev/null')).toBe('/dev/null');
    expect(await b.readFile('/dev/null')).toBe('');
    await b.writeFile('/dev/null', 'x');
    await b.appendFile('/dev/null', 'y');
    await b.utimes('/dev/null', new Date(), new Date());
    await expect(b.rm('/dev/null', { force: true })).rejects.toMatchObject({ code: 'EACCES' });
    await expect(b.mkdir('/dev/null', { recursive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(b.readdir('/dev/null')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(b.mv('/a.txt', '/dev/null')).rejects.toMatchObject({ code: 'EACCES' });
    await expect(b.readlink('/dev/null')).rejects.toMatchObject({ code: 'EINVAL' });
    // Below it nothing is, as under any file.
    expect(await b.exists('/dev/null/x')).toBe(false);
    expect(await b.exists('/dev/null/')).toBe(false);
    await expect(b.writeFile('/dev/null/x', 'x')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(b.readFile('/dev/null/')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(b.mkdir('/dev/null/x', { recursive: true })).rejects.toMatchObject({ code: 'ENOTDIR' });

    // cp(1) from /dev/null makes an empty file (a change like any other); to it, reads the source and drops it.
    const cp = await bash.exec('cp /dev/null empty.txt && cp a.txt /dev/null && wc -c < empty.txt');
    expect(cp).toMatchObject({ stderr: '', exitCode: 0, stdout: '0\n' });
    expect(cp.changes.map((c) => c.path)).toEqual(['empty.txt']);
    expect((await bash.exec('cp missing.txt /dev/null')).exitCode).not.toBe(0);
    const refused = await bash.exec('rm /dev/null; mv a.txt /dev/null; mv /dev/null b.txt');
    expect(refused.stderr.split('\n').filter(Boolean)).toHaveLength(3);
    expect(refused.changes).toEqual([]);
    expect(await text(fs, 'a.txt')).toBe('a\n');
    expect(await names(fs)).toEqual(['a.txt', 'empty.txt']);
  });

  it("a workspace's own dev directory works beside the devices; its file dev/null is behind the device", async () => {
    const { fs, ctx } = await open({ 'dev/notes.txt': 'n\n', 'dev/null': 'real\n' });
    const bash = new CtxfsBash(ctx);
    const r = await bash.exec('cat dev/notes.txt; echo more >> /dev/notes.txt; ls dev; cat /dev/null; echo gone > /dev/null; cd dev && cat null notes.txt');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('n\nnotes.txt\nnull\nn\nmore\n');
    expect(r.changes.map((c) => c.path)).toEqual(['dev/notes.txt']);
    expect(await text(fs, 'dev/null')).toBe('real\n');
    expect(await text(fs, 'dev/notes.txt')).toBe('n\nmore\n');
  });

  it('/dev/zero, /dev/urandom take writes and refuse reads (endless); /dev/stdout and /dev/stderr are redirections; /dev/stdin is not a file', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' });
    const bash = new CtxfsBash(ctx);
    const b = new CtxfsBashFs(ctx);
    for (const dev of ['/dev/zero', '/dev/random', '/dev/urandom', '/dev/full']) {
      await expect(b.readFileBuffer(dev), dev).rejects.toMatchObject({ code: 'EFBIG', message: expect.stringContaining('endless') });
      expect(await b.exists(dev), dev).toBe(true);
      expect(await b.stat(dev), dev).toMatchObject({ isFile: false, isDirectory: false, size: 0 });
    }
    await b.writeFile('/dev/zero', 'x');
    await expect(b.writeFile('/dev/full', 'x')).rejects.toMatchObject({ code: 'ENOSPC' });
    const zero = await bash.exec('head -c 4 /dev/zero | wc -c; echo x > /dev/zero; echo x > /dev/urandom; echo $?');
    expect(zero.stdout).toBe('0\n0\n');
    expect(zero.stderr).toContain('/dev/zero');
    for (const dev of ['/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/tty']) {
      await expect(b.readFile(dev), dev).rejects.toMatchObject({ code: 'ENXIO' });
      await expect(b.writeFile(dev, 'x'), dev).rejects.toMatchObject({ code: 'ENXIO' });
      expect(await b.exists(dev), dev).toBe(true);
    }
    // just-bash connects these in a redirection before the filesystem is asked.
    const streams = await bash.exec('echo out > /dev/stdout; echo err > /dev/stderr; echo gone 2>/dev/null 1>&2; echo in | cat -');
    expect(streams).toMatchObject({ stdout: 'out\nin\n', stderr: 'err\n', exitCode: 0 });
    // Its process substitution mounts its own /dev/fd when the filesystem refuses one.
    const subst = await bash.exec('diff <(echo a) <(echo a) && cat <(echo sub)');
    expect(subst).toMatchObject({ stdout: 'sub\n', exitCode: 0 });
    expect(await names(fs)).toEqual(['a.txt']);
    expect(zero.changes).toEqual([]);
    expect(streams.changes).toEqual([]);
    expect(subst.changes).toEqual([]);
  });

  it('writes to /dev/null on a workspace the policy makes read-only', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' }, { readOnly: ['**'] });
    const bash = new CtxfsBash(ctx);
    expect(await bash.exec('cat a.txt > /dev/null 2>/dev/null && echo x >> /dev/null && echo ok')).toMatchObject({ stdout: 'ok\n', stderr: '', exitCode: 0 });
    expect((await bash.exec('echo no > a.txt')).stderr).toContain('Permission denied');
    expect(await names(fs)).toEqual(['a.txt']);
    expect(await text(fs, 'a.txt')).toBe('a\n');
  });
});
