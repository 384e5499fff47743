/**
 * `@ctxfs/container`'s small operations on Docker and on Podman side by side,
 * in one run: the same busybox image, the same calls, one engine each. The
 * subject is Podman (through its Docker-compatible API service), the
 * baseline Docker; one exec per operation on Podman is the raw baseline the
 * helper session must beat there too (goal from issue 4: 10x). Opening a
 * filesystem (attach: inspect, helper session, probe) is timed as well: the
 * test suites open one per test.
 *
 * @module
 */

import { ContainerFilesystem } from '@ctxfs/container';
import { type Case, defineSuite, skipSuite } from '../harness.ts';
import { execOnce } from './container.ts';

const IMAGE = process.env.CTXFS_TEST_IMAGE ?? 'ctxfs-busybox:latest';
/** The socket .ci/system-deps.sh starts `podman system service` on. */
const PODMAN_SOCKET = process.env.CTXFS_PODMAN_SOCKET ?? '/run/ctxfs-podman/podman.sock';

async function openOn(engine: 'docker' | 'podman'): Promise<ContainerFilesystem> {
  const options = engine === 'podman' ? { socketPath: PODMAN_SOCKET } : {};
  try {
    return await ContainerFilesystem.open({ image: IMAGE, labels: { 'ctxfs.bench': '1' }, workdir: '/work/b', engine: options });
  } catch (err) {
    throw skipSuite(`${engine} engine or image ${IMAGE} unavailable: ${(err as Error).message}`);
  }
}

export default defineSuite({
  name: 'container-engines',
  description: '@ctxfs/container small operations: Podman (subject) vs Docker (baseline), same run',
  options: { minSamples: 5, rounds: 2 },
  async setup() {
    const docker = await openOn('docker');
    let podman: ContainerFilesystem;
    try {
      podman = await openOn('podman');
    } catch (err) {
      await docker.close();
      throw err;
    }
    const data1k = Buffer.alloc(1024, 7);
    for (const fs of [docker, podman]) {
      await fs.writeBytes('r/1k.bin', data1k, { createParents: true });
      for (let i = 0; i < 10; i++) await fs.write(`l/f${i}.txt`, `file ${i}\n`, { createParents: true });
    }
    return { docker, podman, data1k };
  },
  async teardown({ docker, podman }) {
    await Promise.all([docker.close(), podman.close()]);
  },
  cases: ({ docker, podman, data1k }): Case[] => {
    const both = (name: string, op: (fs: ContainerFilesystem) => Promise<unknown>, raw?: string[], note?: string): Case => ({
      name,
      subjectName: 'Podman',
      subject: () => op(podman),
      baselineName: 'Docker',
      baseline: () => op(docker),
      ...(raw === undefined ? {} : { moreBaselines: [{ name: '1 exec on Podman', fn: () => execOnce(podman.container, raw), target: { maxRatio: 0.1 } }] }),
      ...(note === undefined ? {} : { note }),
    });
    return [
      both('read 1 KB', (fs) => fs.readBytes('r/1k.bin'), ['cat', '/work/b/r/1k.bin']),
      both('write 1 KB', (fs) => fs.writeBytes('w/1k.bin', data1k, { createParents: true })),
      both('stat', (fs) => fs.stat('r/1k.bin'), ['stat', '-c', '%s %Y', '/work/b/r/1k.bin']),
      both('list 10 entries with stats', (fs) => fs.list('l', { stat: true })),
      {
        ...both(
          'open + close (attach)',
          async (fs) => {
            const other = await ContainerFilesystem.open({ container: fs.containerRef, workdir: '/work/b', engine: { docker: fs.docker } });
            await other.close();
          },
          undefined,
          'what every test of the container suites pays: inspect, helper exec, image probe',
        ),
        batch: 1,
      },
    ];
  },
});
