/**
 * Per-request timeouts against a real engine: a call on a paused container
 * (`docker pause`) or on a wedged helper fails with EUNAVAILABLE within the
 * configured time, and the same filesystem works again once the container
 * answers.
 */

import { type FsError, isFsError } from '@ctxfs/core';
import type Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, removeTestContainers, seedWorkspace, sh, startTestContainer } from './docker-fixture.ts';

const available = await dockerAvailable();
const TIMEOUT_MS = 1_500;
/** The engine is asked why a call failed, for at most 3 s; the rest is slack for a loaded machine. */
const BOUND_MS = TIMEOUT_MS + 3_000 + 1_500;

async function failure(p: Promise<unknown>): Promise<{ err: FsError; ms: number }> {
  const start = performance.now();
  try {
    await p;
  } catch (err) {
    if (!isFsError(err)) throw err;
    return { err, ms: performance.now() - start };
  }
  return expect.fail('expected the call to fail');
}

/** Runs `fn` with `container` paused (unpaused after, whatever happens); how it failed and how long it took. */
async function failureWhilePaused(container: Docker.Container, fn: () => Promise<unknown>): Promise<{ err: FsError; ms: number }> {
  await container.pause();
  try {
    return await failure(fn());
  } finally {
    await container.unpause();
  }
}

async function fresh(): Promise<{ container: Docker.Container; fs: ContainerFilesystem }> {
  const container = await startTestContainer();
  await seedWorkspace(container, '/work', 'w', { 'a.txt': 'original' });
  const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', requestTimeoutMs: TIMEOUT_MS });
  return { container, fs };
}

describe.runIf(available)('per-request timeouts (real engine)', () => {
  afterAll(async () => {
    await removeTestContainers();
  });

  it('a call on a paused container fails with EUNAVAILABLE saying so within the timeout, and the filesystem recovers on unpause', async () => {
    const { container, fs } = await fresh();
    await container.pause();
    try {
      const first = await failure(fs.stat('a.txt'));
      expect(first.err.code).toBe('EUNAVAILABLE');
      expect(first.err.message).toMatch(/paused/);
      expect(first.err.message).toMatch(/unpause/);
      expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(first.ms).toBeLessThan(BOUND_MS);
      // While it stays paused, later calls fail too (no new session can start), also in time.
      const again = await failure(fs.write('b.txt', 'x'));
      expect(again.err.code).toBe('EUNAVAILABLE');
      expect(again.ms).toBeLessThan(BOUND_MS);
    } finally {
      await container.unpause();
    }
    expect((await fs.read('a.txt')).text).toBe('original');
    await fs.write('b.txt', 'after');
    expect((await fs.read('b.txt')).text).toBe('after');
    await fs.close();
  });

  it('calls already waiting when the container is paused all fail, none hangs', async () => {
    const { container, fs } = await fresh();
    await container.pause();
    try {
      const start = performance.now();
      const results = await Promise.allSettled([fs.stat('a.txt'), fs.list(''), fs.exists('a.txt'), fs.readBytes('a.txt')]);
      expect(results.map((r) => (r.status === 'rejected' ? (r.reason as FsError).code : 'OK'))).toEqual([
        'EUNAVAILABLE',
        'EUNAVAILABLE',
        'EUNAVAILABLE',
        'EUNAVAILABLE',
      ]);
      expect(performance.now() - start).toBeLessThan(BOUND_MS);
    } finally {
      await container.unpause();
    }
    expect(await fs.exists('a.txt')).toBe(true);
    await fs.close();
  });

  it('a wedged helper (stopped, container running) fails the call in time; the next call starts a new session', async () => {
    const { container, fs } = await fresh();
    await fs.stat('a.txt');
    const { stdout } = await sh(container, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline | grep -q '[c]txfs-helper' && basename $p; done");
    const pids = stdout.trim().split(/\s+/).filter(Boolean);
    expect(pids.length).toBeGreaterThan(0);
    await sh(container, `kill -STOP ${pids.join(' ')}`);
    const { err, ms } = await failure(fs.stat('a.txt'));
    expect(err.code).toBe('EUNAVAILABLE');
    expect(err.message).toMatch(/no answer within 1500 ms/);
    expect(ms).toBeLessThan(BOUND_MS);
    expect((await fs.read('a.txt')).text).toBe('original');
    await sh(container, `kill -KILL ${pids.join(' ')}`);
    await fs.close();
  });

  it('a streaming read whose container is paused mid-stream fails with EUNAVAILABLE in time, and reads work after unpause', async () => {
    const container = await startTestContainer();
    await sh(container, 'mkdir -p /work/w && head -c 33554432 /dev/zero > /work/w/big.bin');
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', requestTimeoutMs: TIMEOUT_MS });
    const reader = await fs.openRead('big.bin', { chunkSize: 1 << 20 });
    expect((await reader.read()).byteLength).toBeGreaterThan(0);
    const { err, ms } = await failureWhilePaused(container, async () => {
      while ((await reader.read()).byteLength > 0) {}
    });
    expect(err.code).toBe('EUNAVAILABLE');
    expect(ms).toBeLessThan(BOUND_MS);
    await reader.close();
    expect((await fs.stat('big.bin')).size).toBe(33554432);
    const again = await fs.openRead('big.bin', { offset: 33554432 - 10 });
    expect((await again.read()).byteLength).toBe(10);
    await again.close();
    await fs.close();
  });

  it('a streaming write whose container is paused mid-stream fails with EUNAVAILABLE in time and leaves no file', async () => {
    const { container, fs } = await fresh();
    const writer = await fs.openWrite('out.bin');
    const chunk = new Uint8Array(1 << 20);
    for (let i = 0; i < 10; i++) await writer.write(chunk);
    const { err, ms } = await failureWhilePaused(container, async () => {
      for (let i = 0; i < 4096; i++) await writer.write(chunk);
      await writer.close();
    });
    expect(err.code).toBe('EUNAVAILABLE');
    expect(ms).toBeLessThan(BOUND_MS);
    await writer.abort();
    expect(await fs.exists('out.bin')).toBe(false);
    await fs.write('out.bin', 'small');
    expect((await fs.read('out.bin')).text).toBe('small');
    await fs.close();
  });

  it('a long answer that keeps arriving is not cut by the timeout', async () => {
    const container = await startTestContainer();
    // 150 files of 1 MiB: hashing them all takes several times the timeout, the answers stream all along.
    await sh(container, 'mkdir -p /work/w && cd /work/w && head -c 1048576 /dev/urandom > f1 && for i in $(seq 2 150); do cp f1 f$i; done');
    // A timeout well under the whole answer's time (hashing 150 MiB) and well over the gap between two of its parts.
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', requestTimeoutMs: 250 });
    const paths = Array.from({ length: 150 }, (_, i) => `f${i + 1}`);
    const start = performance.now();
    let hashed = 0;
    for await (const batch of fs.digest(paths)) hashed += batch.filter((d) => d.error === undefined).length;
    const ms = performance.now() - start;
    expect(hashed).toBe(150);
    // Only meaningful if the whole answer outlasted the timeout.
    expect(ms).toBeGreaterThan(250);
    await fs.close();
  });

  it('requestTimeoutMs must be a positive number', async () => {
    await expect(ContainerFilesystem.open({ image: 'ctxfs-busybox:latest', requestTimeoutMs: 0 })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(ContainerFilesystem.open({ image: 'ctxfs-busybox:latest', requestTimeoutMs: Number.NaN })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
