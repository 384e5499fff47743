import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Filesystem } from '@ctxfs/core';
import { Bash, defineCommand } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { CtxfsBash, CtxfsBashFs } from '../src/index.ts';
import { useBackends } from './backends.ts';

const TEN = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`src/m${i}.ts`, `export const v${i} = 'old';\n`]));

const { BACKENDS, open: openOn } = useBackends('t');

const text = async (fs: Filesystem, path: string): Promise<string> => new TextDecoder().decode(await fs.readBytes(path));

describe.each(Object.keys(BACKENDS))('just-bash over ctxfs %s', (name) => {
  // The container backend needs the Docker engine (in CI it must be there: dockerAvailable throws).
  const open = openOn(name);
  it('a script edits ten files as one command, and undo restores each', async () => {
    const { fs, ctx } = await open(TEN);
    // just-bash's default options: its guard against host APIs is on while the script runs.
    const bash = new CtxfsBash(ctx);
    const script = `for f in src/*.ts; do sed -i "s/'old'/'new'/" "$f"; done; grep -l new src/*.ts | wc -l`;
    const r = await bash.exec(script);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe('10');
    expect(r.changes.map((c) => c.path).sort()).toEqual(Object.keys(TEN).sort());
    for (const p of Object.keys(TEN)) expect(await text(fs, p)).toContain("'new'");

    // The audit records the command, with the hash of every file before and after.
    const [record] = await ctx.store.auditLog({ limit: 1 });
    expect(record).toMatchObject({ op: 'command', result: 'ok' });
    const params = record?.params as { command: string; opClass: string; after?: Record<string, string> };
    expect(params).toMatchObject({ command: script, opClass: 'command' });
    expect(Object.keys(params.after ?? {}).sort()).toEqual(Object.keys(TEN).sort());
    // One version per file, made by the command, with the command as its message.
    const history = await ctx.history('src/m3.ts');
    expect(history[0]).toMatchObject({ op: 'write', author: 'default', message: `$ ${script}` });

    for (const p of Object.keys(TEN)) expect((await ctx.undo(p)).success, p).toBe(true);
    for (const [p, before] of Object.entries(TEN)) expect(await text(fs, p)).toBe(before);
  });

  it("a script's write over a file another agent changed since the script read it merges that change, or is refused when they collide", async () => {
    const lines = `${Array.from({ length: 30 }, (_, i) => `line${i}`).join('\n')}\n`;
    const { fs, ctx } = await open({ 'a.txt': lines, 'b.txt': lines });
    const other = ctx.session({ agent: 'other' });
    const host = AsyncLocalStorage.snapshot();
    // sed -i's steps through just-bash's own command interface, with the other agent's edit landing between the read and the write.
    const rewrite = defineCommand('rewrite', async ([path, theirs], c) => {
      const target = c.fs.resolvePath(c.cwd, path as string);
      const read = await c.fs.readFile(target);
      const edited = await host(() => other.replace(path as string, `${theirs}\n`, 'OTHER\n'));
      try {
        await c.fs.writeFile(target, read.replace('line7\n', 'SED7\n'));
        return { stdout: '', stderr: '', exitCode: edited.success ? 0 : 2 };
      } catch (err) {
        return { stdout: '', stderr: `${(err as Error).message}\n`, exitCode: 1 };
      }
    });
    const bash = new CtxfsBash(ctx.session({ agent: 'shell' }), { customCommands: [rewrite] });

    expect(await bash.exec('rewrite a.txt line12')).toMatchObject({ stderr: '', exitCode: 0 });
    expect(await text(fs, 'a.txt')).toBe(lines.replace('line7\n', 'SED7\n').replace('line12\n', 'OTHER\n'));

    const collided = await bash.exec('rewrite b.txt line7');
    expect(collided.exitCode).toBe(1);
    expect(collided.stderr).toContain("'/b.txt' (ECONFLICT: it changed since the script read it");
    expect(await text(fs, 'b.txt')).toBe(lines.replace('line7\n', 'OTHER\n'));
  });

  it("undo of a command whose write merged another agent's edit made since the script read the file reverts the script's change only", async () => {
    const lines = `${Array.from({ length: 30 }, (_, i) => `line${i}`).join('\n')}\n`;
    const { fs, ctx } = await open({ 'a.txt': lines });
    const other = ctx.session({ agent: 'other' });
    const host = AsyncLocalStorage.snapshot();
    const rewrite = defineCommand('rewrite', async ([path], c) => {
      const target = c.fs.resolvePath(c.cwd, path as string);
      const read = await c.fs.readFile(target);
      await host(() => other.replace(path as string, 'line12\n', 'OTHER\n'));
      await c.fs.writeFile(target, read.replace('line7\n', 'SED7\n'));
      return { stdout: '', stderr: '', exitCode: 0 };
    });
    const shell = ctx.session({ agent: 'shell' });
    const bash = new CtxfsBash(shell, { customCommands: [rewrite] });
    expect(await bash.exec('rewrite a.txt')).toMatchObject({ stderr: '', exitCode: 0 });
    const both = lines.replace('line7\n', 'SED7\n').replace('line12\n', 'OTHER\n');
    expect(await text(fs, 'a.txt')).toBe(both);
    // The command's recorded before already holds the other agent's edit: its undo takes the script's change away, not theirs.
    expect((await shell.undo('a.txt')).success).toBe(true);
    expect(await text(fs, 'a.txt')).toBe(lines.replace('line12\n', 'OTHER\n'));
  });

  it('runs under the plain Bash class too, each change a command of its own', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'one\n' });
    const bash = new Bash({ fs: new CtxfsBashFs(ctx), cwd: '/' });
    const r = await bash.exec('echo two >> a.txt; cat a.txt; mkdir -p d/e; echo x > d/e/f.txt; mv d/e/f.txt d/g.txt; ls d');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('one\ntwo\ne\ng.txt\n');
    expect(await text(fs, 'd/g.txt')).toBe('x\n');
    expect((await ctx.undo('a.txt')).success).toBe(true);
    expect(await text(fs, 'a.txt')).toBe('one\n');
  });

  it('mv and cp onto an existing file replace it, and split writes its parts, as bash does', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n', 'd.txt': 'one\ntwo\n' });
    const run = new CtxfsBash(ctx);
    // just-bash refuses both unless it can tell the two files apart (its same-file check: a stat identity, a realpath).
    for (const cmd of ['mv a.txt b.txt', 'cp c.txt d2.txt', 'cp c.txt b.txt', 'split -l 1 d.txt part_']) {
      const r = await run.exec(cmd);
      expect(r.stderr, cmd).toBe('');
      expect(r.exitCode, cmd).toBe(0);
    }
    expect(await fs.exists('a.txt')).toBe(false);
    expect(await text(fs, 'b.txt')).toBe('charlie\n');
    expect([await text(fs, 'part_aa'), await text(fs, 'part_ab')]).toEqual(['one\n', 'two\n']);
    // The same file under two names is still refused.
    const same = await run.exec('cp b.txt ./b.txt');
    expect(same.exitCode).toBe(1);
    expect(same.stderr).toContain('are the same file');
  });

  it('fails a write the policy denies with EACCES, as bash reports it, and leaves the file', async () => {
    const { fs, ctx } = await open({ 'locked/a.txt': 'keep\n', 'b.txt': 'b\n' }, { readOnly: ['locked/'] });
    const bash = new CtxfsBash(ctx);
    const r = await bash.exec('echo changed > locked/a.txt');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^bash: \/locked\/a\.txt: Permission denied \(policy: locked\/a\.txt is read-only/);
    expect(await text(fs, 'locked/a.txt')).toBe('keep\n');
    const rm = await bash.exec('rm locked/a.txt');
    expect(rm.exitCode).not.toBe(0);
    expect(rm.stderr).toContain("rm: cannot remove 'locked/a.txt': EACCES: permission denied");
    expect(await fs.exists('locked/a.txt')).toBe(true);
  });

  it('keeps files the policy withholds out of reads and listings', async () => {
    const { ctx } = await open(
      { 'secrets/key.txt': 'SECRET\n', 'a.txt': 'a\n' },
      { rules: [{ effect: 'deny', paths: ['secrets/'], ops: ['read', 'search'] }] },
    );
    await expect(new CtxfsBashFs(ctx).readFile('/secrets/key.txt')).rejects.toMatchObject({ code: 'EACCES' });
    expect(await new CtxfsBashFs(ctx).exists('/secrets/key.txt')).toBe(false);
    expect(await new CtxfsBashFs(ctx).exists('/a.txt')).toBe(true);
    const bash = new CtxfsBash(ctx);
    const cat = await bash.exec('cat secrets/key.txt');
    expect(cat.stdout).toBe('');
    // just-bash's cat says the same of every file it cannot read.
    expect(cat.stderr).toBe('cat: secrets/key.txt: No such file or directory\n');
    expect((await bash.exec('ls secrets')).stdout).toBe('');
    expect((await bash.exec('grep -r SECRET .')).stdout).toBe('');
    // Its metadata is withheld too: stat says what exists says.
    await expect(new CtxfsBashFs(ctx).stat('/secrets/key.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await bash.exec('stat secrets/key.txt')).stdout).not.toMatch(/\b7\b/);
  });

  it('refuses a command the command rules deny, with bash\'s "Permission denied" and exit status 126', async () => {
    const { fs, ctx } = await open({ 'a.txt': 'a\n' }, { commands: { deny: ['rm *'] } });
    const r = await new CtxfsBash(ctx).exec('echo hi; rm a.txt');
    expect(r.exitCode).toBe(126);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Permission denied');
    expect(r.stderr).toContain('rm a.txt');
    expect(await fs.exists('a.txt')).toBe(true);
    expect((await ctx.store.auditLog({ limit: 1 }))[0]).toMatchObject({ op: 'command', result: 'denied' });
  });

  it("answers bad paths with just-bash's ENOENT and EISDIR forms, never reaching outside the root", async () => {
    const { ctx } = await open({ 'a.txt': 'a\n', 'dir/b.txt': 'b\n' });
    const bash = new CtxfsBash(ctx);
    const passwd = await bash.exec('cat /etc/passwd');
    expect(passwd.stderr).toBe('cat: /etc/passwd: No such file or directory\n');
    const up = await bash.exec('cat ../../../../etc/passwd');
    expect(up.stderr).toContain('No such file or directory');
    expect((await bash.exec('cat /../../a.txt')).stdout).toBe('a\n');
    const intoDir = await bash.exec('echo x > dir');
    expect(intoDir.stderr).toBe('bash: dir: Is a directory\n');
    const fs = new CtxfsBashFs(ctx);
    await expect(fs.readFile('/dir')).rejects.toMatchObject({ code: 'EISDIR', message: "EISDIR: illegal operation on a directory, read '/dir'" });
    await expect(fs.readFile('/etc/passwd')).rejects.toMatchObject({ code: 'ENOENT', message: "ENOENT: no such file or directory, open '/etc/passwd'" });
    await expect(fs.readdir('/a.txt')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(fs.readFile('/a\0.txt')).rejects.toThrow('null byte');
    await expect(fs.readFile('/a\0.txt')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('just-bash over ctxfs host: links out of the root', () => {
  it('refuses a symlink that leads outside with EACCES, and the message names no host path', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'ctxfs-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
    const o = await BACKENDS.host({ 'a.txt': 'a\n' });
    const dir = o.dir as string;
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'leak.txt'));
    symlinkSync(outside, join(dir, 'leakdir'));
    const bash = new CtxfsBash(o.ctx);
    for (const cmd of ['cat leak.txt', 'cat leakdir/secret.txt', 'ls leakdir', 'echo x > leak.txt', 'echo x > leakdir/new.txt']) {
      const r = await bash.exec(cmd);
      expect(r.exitCode, cmd).not.toBe(0);
      expect(r.stdout, cmd).not.toContain('TOP SECRET');
      expect(r.stderr, cmd).not.toContain(outside);
      expect(r.stderr, cmd).not.toContain(dir);
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    await expect(new CtxfsBashFs(o.ctx).symlink('/etc/passwd', '/p')).rejects.toMatchObject({ code: 'EPERM' });
  });

  it('knows a link inside the root and the file it leads to as one file: cp onto it is refused, the file kept', async () => {
    const o = await BACKENDS.host({ 'a.txt': 'alpha\n' });
    symlinkSync('a.txt', join(o.dir as string, 'link.txt'));
    const r = await new CtxfsBash(o.ctx).exec('cp a.txt link.txt');
    expect(r.stderr).toContain("cp: 'a.txt' and '/link.txt' are the same file");
    expect(await new CtxfsBashFs(o.ctx).realpath('/link.txt')).toBe('/a.txt');
    expect(readFileSync(join(o.dir as string, 'a.txt'), 'utf8')).toBe('alpha\n');
  });

  it('refuses a link inside the root to a file the policy withholds, as it refuses the file', async () => {
    const o = await BACKENDS.host({ '.env': 'API_TOKEN=tok_live_abcdefghijklmnop\n', 'a.txt': 'a\n' });
    const dir = o.dir as string;
    symlinkSync('.env', join(dir, 'notes.txt'));
    const bash = new CtxfsBash(o.ctx);
    for (const cmd of ['cat notes.txt', 'cp notes.txt copy.txt', 'grep TOKEN notes.txt', 'echo x >> notes.txt']) {
      const r = await bash.exec(cmd);
      expect(r.stdout, cmd).not.toContain('tok_live');
      expect(r.exitCode, cmd).not.toBe(0);
    }
    await expect(new CtxfsBashFs(o.ctx).readFile('/notes.txt')).rejects.toMatchObject({ code: 'EACCES' });
    expect(existsSync(join(dir, 'copy.txt'))).toBe(false);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('API_TOKEN=tok_live_abcdefghijklmnop\n');
    // The link is listed by its own name, as ls shows it.
    expect((await bash.exec('ls')).stdout).toContain('notes.txt');
  });
});
