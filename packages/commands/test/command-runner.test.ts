import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerFilesystem } from '@ctxfs/container';
import { type ApprovalRequest, type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, removeTestContainers, TEST_IMAGE, TEST_LABELS } from '../../container/test/docker-fixture.ts';
import { bubblewrapAvailable, CommandRunner, JustBashExecutor, UnconfinedExecutor } from '../src/index.ts';

const FILES = { 'a.txt': 'one\n', 'src/b.txt': 'two\n' };

interface Opened {
  readonly fs: Filesystem;
  readonly ctx: ContextLayer;
  readonly kind: string;
  /** The host directory of a host workspace. */
  readonly dir?: string | undefined;
}

async function withContext(fs: Filesystem, kind: string, policy?: PolicyConfig, dir?: string): Promise<Opened> {
  return { fs, kind, dir, ctx: await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy } }) };
}

const made: string[] = [];
function hostDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-commands-'));
  made.push(dir);
  writeFileSync(join(dir, 'a.txt'), FILES['a.txt']);
  mkdtempSync(join(dir, 'src-'));
  return dir;
}

const BACKENDS: Record<string, (policy?: PolicyConfig) => Promise<Opened>> = {
  memory: async (policy) => withContext(new MemoryFilesystem({ files: { ...FILES } }), 'just-bash', policy),
  host: async (policy) => {
    const dir = hostDir();
    const fs = new HostFilesystem({ root: dir });
    await fs.write('src/b.txt', FILES['src/b.txt'], { createParents: true });
    return withContext(fs, 'bubblewrap', policy, dir);
  },
  container: async (policy) => {
    const fs = await ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, workdir: '/work' });
    for (const [p, t] of Object.entries(FILES)) await fs.write(p, t, { createParents: true });
    return withContext(fs, 'container', policy);
  },
};

let docker = false;
beforeAll(async () => {
  docker = await dockerAvailable();
});
afterAll(async () => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  if (docker) await removeTestContainers();
});

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const c of stream) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

describe.each(Object.keys(BACKENDS))('commands on %s', (name) => {
  const open = async (policy?: PolicyConfig): Promise<Opened> => {
    // A missing engine fails the container's tests rather than passing them unrun.
    if (name === 'container' && !docker) throw new Error('no Docker engine: the container backend cannot be tested here');
    if (name === 'host') expect(bubblewrapAvailable(), 'bubblewrap must start here (apt-get install bubblewrap)').toBe(true);
    return (BACKENDS[name] as (policy?: PolicyConfig) => Promise<Opened>)(policy);
  };
  const done = async (o: Opened): Promise<void> => {
    await o.ctx.close();
    await o.fs.close();
  };

  it('runs in the workspace: exit status, stdout and stderr apart, stdin, cwd, a minimal environment', async () => {
    const o = await open();
    try {
      const runner = new CommandRunner(o.ctx);
      expect(runner.kind).toBe(o.kind);
      const r = await runner.run('cat a.txt; cat; echo oops >&2; echo "[$SECRET_TOKEN]"; exit 3', { stdin: 'from stdin\n' });
      expect(r).toMatchObject({ exitCode: 3, stdout: 'one\nfrom stdin\n[]\n', stderr: 'oops\n', runner: o.kind, limits: [], aborted: false });
      const inSrc = await runner.run('cat b.txt; echo new > c.txt', { cwd: 'src', env: { GREETING: 'hi' } });
      expect(inSrc.stdout).toBe('two\n');
      expect(new TextDecoder().decode(await o.fs.readBytes('src/c.txt'))).toBe('new\n');
      expect((await runner.run('echo $GREETING', { env: { GREETING: 'hi' } })).stdout).toBe('hi\n');
      await expect(runner.run('ls', { cwd: '../..' })).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      await expect(runner.run('ls', { cwd: 'a.txt' })).rejects.toMatchObject({ code: 'ENOTDIR' });
    } finally {
      await done(o);
    }
  });

  it('shows the workspace at a mount path, so that absolute paths there name its files', async () => {
    const o = await open();
    try {
      const runner = new CommandRunner(o.ctx);
      const r = await runner.run('pwd; cat /workspace/a.txt; echo made > /workspace/src/made.txt; echo $HOME', { cwd: 'src', mountPath: '/workspace' });
      expect(r).toMatchObject({ exitCode: 0, stdout: '/workspace/src\none\n/workspace\n', stderr: '' });
      expect(new TextDecoder().decode(await o.fs.readBytes('src/made.txt'))).toBe('made\n');
      // Made where nothing was (directories and all), and again for the next command.
      for (let i = 0; i < 2; i++) expect((await runner.run('cat /tmp/ctxfs-mount/ws/a.txt', { mountPath: '/tmp/ctxfs-mount/ws' })).stdout).toBe('one\n');
      for (const bad of ['workspace', '/workspace/', '/a/../b', '/a/./b', '/a\nb', '//a'])
        await expect(runner.run('true', { mountPath: bad }), bad).rejects.toMatchObject({ code: 'EINVAL' });
      // Where the executor cannot show it: refused before it runs, naming the path and what to choose instead.
      const refused =
        { memory: [], host: ['/', '/etc/ctxfs-no-such-dir', '/proc/ws'], container: ['/', '/etc', '/work/inside', '/tmp/ctxfs-mount'] }[name] ?? [];
      for (const mountPath of refused)
        await expect(runner.run('echo ran > /tmp/ran', { mountPath }), mountPath).rejects.toMatchObject({
          code: 'EUNSUPPORTED',
          hint: expect.stringContaining('mount path'),
        });
      if (name === 'memory') expect((await runner.run('cat /a.txt', { mountPath: '/' })).stdout).toBe('one\n');
    } finally {
      await done(o);
    }
  });

  it('states the time limit when it stops a command, and stops it when the caller aborts', async () => {
    const o = await open();
    try {
      const runner = new CommandRunner(o.ctx);
      const slow = await runner.run('echo started; sleep 20; echo never', { timeoutMs: 800 });
      expect(slow.exitCode).toBeNull();
      expect(slow.limits).toEqual([{ limit: 'time', detail: expect.stringContaining('stopped after 0.8 s') }]);
      expect(slow.stdout).not.toContain('never');
      const p = runner.spawn('sleep 20; echo never');
      setTimeout(() => p.kill(), 300);
      const [out, end] = await Promise.all([text(p.stdout), p.exited]);
      expect(out).toBe('');
      expect(end.exitCode).toBeNull();
      // The caller's signal stops it too, and the result says so.
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const aborted = await runner.run('sleep 20; echo never', { signal: controller.signal });
      expect(aborted).toMatchObject({ exitCode: null, aborted: true, stdout: '' });
    } finally {
      await done(o);
    }
  });

  it('keeps the first bytes past the output limit and says how many there were', async () => {
    const o = await open();
    try {
      const r = await new CommandRunner(o.ctx).run('i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done', { maxOutputBytes: 100 });
      expect(r.stdout).toHaveLength(100);
      expect(r.stdoutBytes).toBeGreaterThan(100);
      expect(r.limits).toEqual([{ limit: 'output', detail: expect.stringMatching(/^stdout: [\d,]+ bytes, the first 100 kept/) }]);
    } finally {
      await done(o);
    }
  });

  it('decides every command by the command rules and records it in the audit', async () => {
    const o = await open({ commands: { deny: ['rm *'], ask: ['touch *'], allow: ['echo *', 'cat *'], default: 'deny' } });
    try {
      const runner = new CommandRunner(o.ctx);
      await expect(runner.run('echo hi && rm a.txt')).rejects.toMatchObject({ code: 'EDENIED', reason: expect.stringContaining('deny "rm *"') });
      expect(await o.fs.exists('a.txt')).toBe(true);
      await expect(runner.run('ls')).rejects.toMatchObject({ code: 'EDENIED' });
      // "ask" without an approver is a refusal.
      await expect(runner.run('touch x')).rejects.toMatchObject({ code: 'EDENIED' });
      expect((await runner.run('echo hi; cat a.txt')).stdout).toBe('hi\none\n');
      const rows = (await o.ctx.store.auditLog({ limit: 4 })).reverse();
      expect(rows.map((r) => [r.op, r.result])).toEqual([
        ['command', 'denied'],
        ['command', 'denied'],
        ['command', 'denied'],
        ['command', 'ok'],
      ]);
      expect(rows[0]?.params).toMatchObject({ command: 'echo hi && rm a.txt', opClass: 'command' });
    } finally {
      await done(o);
    }
  });
});

describe('commands on the host', () => {
  it('are confined by bubblewrap: the root writable, the system read-only, no network', async () => {
    expect(bubblewrapAvailable()).toBe(true);
    const dir = hostDir();
    const fs = new HostFilesystem({ root: dir });
    const ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
    try {
      const outside = join(tmpdir(), `ctxfs-escape-${process.pid}`);
      const r = await new CommandRunner(ctx).run(
        `echo in > inside.txt; echo out > ${outside}; echo etc > /etc/ctxfs-x; cat /proc/net/dev | grep -c ':' ; node -e "require('net').connect(80,'1.1.1.1').on('error',e=>{console.log(e.code);process.exit(0)})"`,
      );
      expect(readFileSync(join(dir, 'inside.txt'), 'utf8')).toBe('in\n');
      expect(existsSync(outside)).toBe(false);
      expect(existsSync('/etc/ctxfs-x')).toBe(false);
      expect(r.stderr).toContain('Read-only file system');
      // Only the loopback interface, and no route out.
      expect(r.stdout).toMatch(/^1\nENETUNREACH\n$/);
    } finally {
      await ctx.close();
    }
  });

  it('refuses to run unconfined unless the policy says so', async () => {
    const dir = hostDir();
    const fs = new HostFilesystem({ root: dir });
    const refusing = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
    const allowing = await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy: { commands: { unconfined: true } } } });
    try {
      await expect(new CommandRunner(refusing, { executor: new UnconfinedExecutor(dir) }).run('echo hi')).rejects.toMatchObject({
        code: 'EDENIED',
        reason: expect.stringContaining('unconfined'),
      });
      const r = await new CommandRunner(allowing, { executor: new UnconfinedExecutor(dir) }).run('pwd; echo $HOME');
      expect(r).toMatchObject({ exitCode: 0, runner: 'unconfined' });
      expect(r.stdout).toBe(`${realpathSync(dir)}\n${realpathSync(dir)}\n`);
      // Nothing unconfined can show the root elsewhere: refused, naming no host path.
      const elsewhere = new CommandRunner(allowing, { executor: new UnconfinedExecutor(dir) }).run('touch x', { mountPath: '/workspace' });
      await expect(elsewhere).rejects.toMatchObject({ code: 'EUNSUPPORTED', reason: expect.not.stringContaining(dir) });
      expect(existsSync(join(dir, 'x'))).toBe(false);
    } finally {
      await refusing.close();
      await allowing.close();
    }
  });
});

describe('commands the rules ask about', () => {
  it('run once a person approves, shown the command line; not when they decline', async () => {
    const asked: ApprovalRequest[] = [];
    let answer = true;
    const fs = new MemoryFilesystem({ files: { ...FILES } });
    const ctx = await createContext({
      fs,
      safety: {
        policyFiles: false,
        policy: { commands: { ask: ['rm *'] } },
        approver: {
          name: 'test',
          approve: async (request) => {
            asked.push(request);
            return { approved: answer, approver: 'tester' };
          },
        },
      },
    });
    try {
      const runner = new CommandRunner(ctx);
      answer = false;
      await expect(runner.run('rm a.txt')).rejects.toMatchObject({ code: 'EDENIED' });
      expect(await fs.exists('a.txt')).toBe(true);
      answer = true;
      expect((await runner.run('rm a.txt')).exitCode).toBe(0);
      expect(await fs.exists('a.txt')).toBe(false);
      expect(asked.map((a) => [a.op, a.opClass, a.summary])).toEqual([
        ['command', 'command', 'rm a.txt'],
        ['command', 'command', 'rm a.txt'],
      ]);
      expect(asked[0]?.reason).toContain('ask "rm *"');
      // No one is asked about a command no ask rule names.
      await runner.run('echo hi');
      expect(asked).toHaveLength(2);
    } finally {
      await ctx.close();
    }
  });
});

describe('commands in memory', () => {
  it('go through just-bash: each change recorded with the command, undone by undo', async () => {
    const fs = new MemoryFilesystem({ files: { ...FILES } });
    const ctx = await createContext({ fs, safety: { policyFiles: false, policy: { readOnly: ['src/'] } } });
    try {
      const runner = new CommandRunner(ctx);
      const r = await runner.run("sed -i 's/one/ONE/' a.txt; echo x > src/b.txt");
      expect(r.stderr).toContain('Permission denied');
      expect(r.changes.map((c) => c.path)).toEqual(['a.txt']);
      expect(new TextDecoder().decode(await fs.readBytes('src/b.txt'))).toBe('two\n');
      await ctx.undo('a.txt');
      expect(new TextDecoder().decode(await fs.readBytes('a.txt'))).toBe('one\n');
    } finally {
      await ctx.close();
    }
  });

  it("state just-bash's memory and work limits when they stop a script", async () => {
    const ctx = await createContext({ fs: new MemoryFilesystem({ files: { ...FILES } }), safety: { policyFiles: false } });
    try {
      const runner = new CommandRunner(ctx);
      const memory = await runner.run('x=a; while true; do x="$x$x"; done');
      expect(memory.exitCode).toBe(126);
      expect(memory.limits).toEqual([{ limit: 'memory', detail: expect.stringMatching(/string length limit exceeded \(\d+ bytes\)/) }]);
      const work = await new CommandRunner(ctx, { executor: new JustBashExecutor(ctx, { limits: { maxLoopIterations: 50 } }) }).run('while true; do :; done');
      expect(work.limits).toEqual([{ limit: 'work', detail: expect.stringContaining('too many iterations (50)') }]);
    } finally {
      await ctx.close();
    }
  });
});
