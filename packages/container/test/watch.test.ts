/**
 * Container watching against a real engine, beyond the conformance suite:
 * a change made by another process in the container is seen, the declared
 * poll interval is what the watcher uses, and a watcher outlives a pause.
 */

import type { WatchEvent } from '@ctxfs/core';
import { afterAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, removeTestContainers, seedWorkspace, sh, startTestContainer } from './docker-fixture.ts';

const available = await dockerAvailable();

async function waitFor(events: WatchEvent[], path: string, ms: number): Promise<number> {
  const start = performance.now();
  while (!events.some((e) => e.path === path)) {
    if (performance.now() - start > ms) expect.fail(`no event for ${path} within ${ms} ms: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - start;
}

describe.runIf(available)('container watch (real engine)', () => {
  afterAll(async () => {
    await removeTestContainers();
  });

  it('sees files written by another process in the container, at the declared interval', async () => {
    const container = await startTestContainer();
    await seedWorkspace(container, '/work', 'w', { 'a.txt': 'a' });
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', watchPollIntervalMs: 200 });
    expect(fs.capabilities.watchPollIntervalMs).toBe(200);
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    const events: WatchEvent[] = [];
    void (async () => {
      for await (const e of watcher) events.push(e);
    })();
    await sh(container, 'echo changed > /work/w/a.txt; mkdir -p /work/w/d; echo x > /work/w/d/new.txt');
    await waitFor(events, 'd/new.txt', 5_000);
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'modified', path: 'a.txt', kind: 'file' },
        { type: 'created', path: 'd', kind: 'directory' },
        { type: 'created', path: 'd/new.txt', kind: 'file' },
      ]),
    );
    await watcher.close();
    await fs.close();
  });

  it('a watcher outlives a pause longer than the request timeout and reports what changed after', async () => {
    const container = await startTestContainer();
    await seedWorkspace(container, '/work', 'w', { 'a.txt': 'a' });
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', watchPollIntervalMs: 200, requestTimeoutMs: 1_000 });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const e of watcher) events.push(e);
    })();
    await container.pause();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await container.unpause();
    await fs.write('after.txt', 'x');
    await waitFor(events, 'after.txt', 8_000);
    await watcher.close();
    await done;
    await fs.close();
  });

  it('a watcher of a container that is removed ends with EUNAVAILABLE, where a stopped one would wait', async () => {
    const container = await startTestContainer();
    await seedWorkspace(container, '/work', 'w', { 'a.txt': 'a' });
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', watchPollIntervalMs: 200, requestTimeoutMs: 2_000 });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    const ended = (async () => {
      for await (const _ of watcher) {
        // events before the removal do not matter here
      }
    })().then(
      () => 'ended without an error',
      (err: unknown) => (err as { code?: string }).code,
    );
    await container.remove({ force: true });
    // Before: the watcher took "does not exist" for a pause and waited for ever.
    const outcome = await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still waiting after 15 s'), 15_000))]);
    expect(outcome).toBe('EUNAVAILABLE');
    await watcher.close();
    await fs.close();
  }, 30_000);

  it("never reports the helper's own files: its temporaries and the commit lock it keeps in the root without a writable /tmp", async () => {
    const container = await startTestContainer();
    await seedWorkspace(container, '/work', 'w', { 'a.txt': 'a' });
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work/w', watchPollIntervalMs: 100 });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    const events: WatchEvent[] = [];
    void (async () => {
      for await (const e of watcher) events.push(e);
    })();
    // Left in place for several rounds, as a crashed session would leave them.
    await sh(container, `cd /work/w && echo x > .ctxfs-commit.lock && echo y > .ctxfs-${'0'.repeat(24)}-w1.tmp`);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await sh(container, 'echo m > /work/w/marker');
    await waitFor(events, 'marker', 5_000);
    expect(events.filter((e) => e.path.startsWith('.ctxfs-'))).toEqual([]);
    await watcher.close();
    await fs.close();
  });

  it('the poll interval must be a positive whole number', async () => {
    await expect(ContainerFilesystem.open({ image: 'ctxfs-busybox:latest', watchPollIntervalMs: 0.5 })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
