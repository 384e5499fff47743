import { describeFilesystemConformance } from '@ctxfs/conformance';
import type Docker from 'dockerode';
import { afterAll, beforeAll } from 'vitest';
import { ContainerFilesystem, containerCapabilities } from '../src/index.ts';
import { dockerAvailable, removeTestContainers, seedWorkspace, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

// One container for the whole file; every test gets a fresh workspace
// directory inside it, seeded with one archive upload.
const available = await dockerAvailable();
let container: Docker.Container;
let counter = 0;

if (available) {
  beforeAll(async () => {
    container = await startTestContainer();
  });
  afterAll(async () => {
    await removeTestContainers();
  });

  describeFilesystemConformance({
    name: `container (busybox, ${TEST_ENGINE.label})`,
    capabilities: containerCapabilities(),
    timeout: 120_000,
    create: async ({ files, dirs, links, readOnly }) => {
      const dir = `t${++counter}`;
      await seedWorkspace(container, '/work', dir, files, dirs, links);
      return ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: `/work/${dir}`, readOnly, createWorkdir: false });
    },
    removeRoot: async (fs) => {
      const { code } = await sh(container, `rm -rf '${(fs as ContainerFilesystem).workdir}'`);
      if (code !== 0) throw new Error(`rm -rf of the workdir exited ${code}`);
    },
  });
}
