import { type ChildProcess, spawn } from 'node:child_process';
import nodeFs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace } from './helpers.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures');
const env = { ...process.env, NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'ctxfs-crash-ncc') };
const spaces: Array<{ remove(): void }> = [];
const children: ChildProcess[] = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const f of open.splice(0)) {
    await f.close();
    // Locks of killed children stay behind as stale lock directories.
    if (f.lockDir) nodeFs.rmSync(f.lockDir, { recursive: true, force: true });
  }
  for (const w of spaces.splice(0)) w.remove();
});

function make(options: ConstructorParameters<typeof HostFilesystem>[0]['locks'] = {}) {
  const ws = tempWorkspace();
  spaces.push(ws);
  const hfs = new HostFilesystem({ root: ws.root, stateDir: ws.state, locks: options });
  open.push(hfs);
  return { ws, hfs };
}

function run(script: string, args: string[]): ChildProcess {
  const c = spawn(process.execPath, ['--conditions=ctxfs-source', path.join(fixtures, script), ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(c);
  return c;
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('locks', () => {
  it('readers share, a writer excludes readers and writers', async () => {
    const { hfs } = make();
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const r1 = hfs.withLock(
      'f',
      async () => {
        log.push('r1 in');
        await held;
        log.push('r1 out');
      },
      { shared: true },
    );
    const r2 = hfs.withLock('f', () => void log.push('r2 in'), { shared: true });
    await tick();
    expect(log).toEqual(['r1 in', 'r2 in']); // the second reader did not wait
    const w = hfs.withLock('f', () => void log.push('w in'));
    await tick();
    expect(log).not.toContain('w in'); // the writer waits for the reader
    release();
    await Promise.all([r1, r2, w]);
    expect(log).toEqual(['r1 in', 'r2 in', 'r1 out', 'w in']);
  });

  it('a write inside withLock reuses the lock instead of waiting for itself', async () => {
    const { hfs } = make({ timeoutMs: 500 });
    await hfs.withLock('x.txt', async () => {
      await hfs.write('x.txt', 'inside');
    });
    expect((await hfs.read('x.txt')).text).toBe('inside');
  });

  it('times out with ELOCKTIMEOUT (in-process), naming the path and what to do', async () => {
    const { hfs } = make({ timeoutMs: 100 });
    let release!: () => void;
    const holder = hfs.withLock('busy.txt', () => new Promise<void>((r) => (release = r)));
    await tick();
    const err = await hfs.withLock('busy.txt', () => 1).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ELOCKTIMEOUT', path: 'busy.txt' });
    expect(String((err as Error).message)).toMatch(/timeoutMs/);
    release();
    await holder;
  });

  it('excludes writers across processes and times out with ELOCKTIMEOUT', async () => {
    const { ws, hfs } = make({ timeoutMs: 300 });
    const child = run('hold-lock.ts', [ws.root, ws.state, 'shared.txt']);
    await new Promise((r) => child.stdout?.once('data', r));
    await expect(hfs.writeBytes('shared.txt', new Uint8Array([1]))).rejects.toMatchObject({ code: 'ELOCKTIMEOUT' });
    expect(nodeFs.existsSync(path.join(ws.root, 'shared.txt'))).toBe(false);
    // Lock files live outside the workspace (in /dev/shm or the state directory).
    expect(nodeFs.readdirSync(ws.root)).toEqual([]);
    const lockDir = hfs.lockDir as string;
    expect(lockDir.startsWith(ws.root)).toBe(false);
    expect(nodeFs.readdirSync(lockDir).some((n) => n.endsWith('.lock'))).toBe(true);
  });

  it('takes over the lock of a process killed while holding it (stale after staleMs)', async () => {
    const { ws, hfs } = make({ timeoutMs: 10_000, staleMs: 2000 });
    const child = run('hold-lock.ts', [ws.root, ws.state, 'stale.txt']);
    await new Promise((r) => child.stdout?.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const started = Date.now();
    await hfs.write('stale.txt', 'taken over');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // it did wait for staleness
    expect((await hfs.read('stale.txt')).text).toBe('taken over');
  }, 20_000);

  it('waits out the lock of a dead process by default, whatever staleMs says (the default timeout is staleMs + 5 s)', async () => {
    // Before: the timeout was 10 s whatever staleMs was, so a lock left by a killed process was never
    // waited out when staleMs was 10 s or more — and at 10 s each (the defaults), only by luck.
    const { ws, hfs } = make({ staleMs: 12_000 });
    const child = run('hold-lock.ts', [ws.root, ws.state, 'stale.txt']);
    await new Promise((r) => child.stdout?.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await hfs.write('stale.txt', 'taken over');
    expect((await hfs.read('stale.txt')).text).toBe('taken over');
  }, 30_000);

  it('caps concurrent locks (EBUSY beyond maxLocks) and releases every lock on error', async () => {
    const { hfs } = make({ maxLocks: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = hfs.withLock('a', () => gate);
    const b = hfs.withLock('b', () => gate);
    await tick();
    await expect(hfs.withLock('c', () => 1)).rejects.toMatchObject({ code: 'EBUSY' });
    release();
    await Promise.all([a, b]);
    await expect(hfs.withLock('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(hfs.heldLocks).toBe(0);
    expect(await hfs.withLock('a', () => 'free again')).toBe('free again');
  });

  it('several processes incrementing a counter under the lock lose no update', async () => {
    const { ws } = make();
    nodeFs.writeFileSync(path.join(ws.root, 'counter.txt'), '0');
    const procs = 4;
    const times = 25;
    await Promise.all(
      Array.from({ length: procs }, () => {
        const c = run('counter.ts', [ws.root, ws.state, String(times)]);
        return new Promise<void>((resolve, reject) => c.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`counter exited ${code}`)))));
      }),
    );
    expect(nodeFs.readFileSync(path.join(ws.root, 'counter.txt'), 'utf8')).toBe(String(procs * times));
  }, 60_000);
});
