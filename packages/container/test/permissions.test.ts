/**
 * A container whose user is not root (uid 65534): the backend may do no
 * more than that user may. Two defects a campaign found (session 20): a
 * write into a directory the user cannot write ended the helper's shell
 * (every call in flight failed with "lost the helper session"), and a file
 * over 1 MiB the user cannot read was served whole, because large files
 * stream through the engine's archive endpoint, which reads as root.
 * Real engine, real busybox; Docker and Podman.
 */

import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, errorOf, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();
let container: Docker.Container;

describe.runIf(available)('a container user that is not root', () => {
  beforeAll(async () => {
    container = await startTestContainer({ User: '65534:65534' });
    const seeded = await sh(
      container,
      [
        'mkdir -p /work/rodir && chown 65534 /work',
        'dd if=/dev/urandom of=/work/secret.key bs=1024 count=2048 2>/dev/null && chmod 600 /work/secret.key',
        'printf small > /work/small.key && chmod 600 /work/small.key',
        'printf mine > /work/mine.txt && chown 65534 /work/mine.txt',
      ].join(' && '),
      '0',
    );
    expect(seeded.code).toBe(0);
  });
  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => {});
  });

  const open = () => ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: '/work', createWorkdir: false });

  it('a write into a directory it cannot write is EACCES, and the session goes on serving calls made meanwhile', async () => {
    const fs = await open();
    try {
      const write = errorOf(fs.write('rodir/new.txt', 'x\n'));
      const stats = Array.from({ length: 20 }, () => fs.stat('mine.txt'));
      expect((await write).code).toBe('EACCES');
      for (const st of await Promise.all(stats)) expect(st.size).toBe(4);
      expect((await errorOf(fs.write('rodir/other.txt', ''))).code).toBe('EACCES');
      expect((await fs.read('mine.txt')).text).toBe('mine');
    } finally {
      await fs.close();
    }
  });

  it('a file it cannot read is EACCES at every size, whichever call reads it', async () => {
    const fs = await open();
    try {
      for (const path of ['small.key', 'secret.key']) {
        expect((await errorOf(fs.readBytes(path))).code, path).toBe('EACCES');
        expect((await errorOf(fs.readBytes(path, { offset: 1024, limit: 16 }))).code, path).toBe('EACCES');
        expect((await errorOf(fs.openRead(path))).code, path).toBe('EACCES');
        expect((await errorOf(fs.read(path))).code, path).toBe('EACCES');
      }
    } finally {
      await fs.close();
    }
  });
});
