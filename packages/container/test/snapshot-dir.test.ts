/**
 * Snapshots kept in a directory outlast the instance that took them: a
 * second instance (a later CLI command, another process) lists, restores
 * and drops them. Without a directory they are the instance's own and go
 * with it. A workspace never sees or restores another's archive from a
 * shared directory. Real engine, real busybox image.
 */

import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, errorOf, removeTestContainers, seedWorkspace, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();
const text = async (fs: ContainerFilesystem, path: string) => new TextDecoder().decode(await fs.readBytes(path));

describe.runIf(available)('container snapshots in a directory', () => {
  let container: Docker.Container;
  let base = '';
  const open = (workdir: string, snapshotDir?: string | ((root: string) => string)) =>
    ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir, snapshotDir });

  beforeAll(async () => {
    container = await startTestContainer();
    base = mkdtempSync(join(tmpdir(), 'ctxfs-snapdir-'));
  });
  afterAll(async () => {
    await removeTestContainers();
    rmSync(base, { recursive: true, force: true });
  });

  it('a snapshot taken by one instance is listed, restored and dropped by the next', async () => {
    await seedWorkspace(container, '/work', 'kept', { 'a.txt': 'one\n', 'src/b.txt': 'two\n' }, ['empty']);
    const dir = join(base, 'kept');
    const first = await open('/work/kept', dir);
    const snap = await first.snapshot('before');
    await first.close();
    // The archive and its description are the user's alone.
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o600);

    const second = await open('/work/kept', (root) => {
      expect(root).toBe(`docker://${container.id}/work/kept`);
      return dir;
    });
    try {
      expect((await second.listSnapshots()).map((s) => [s.id, s.tag])).toEqual([[snap.id, 'before']]);
      await second.write('a.txt', 'changed\n');
      await second.delete('src', { recursive: true });
      await second.write('new.txt', 'new\n');
      await second.restore(snap.id);
      expect(await text(second, 'a.txt')).toBe('one\n');
      expect(await text(second, 'src/b.txt')).toBe('two\n');
      expect(await second.exists('new.txt')).toBe(false);
      expect((await second.stat('empty')).kind).toBe('directory');
      const later = await second.snapshot();
      expect((await second.listSnapshots()).map((s) => s.id)).toEqual([snap.id, later.id]);
      await second.dropSnapshot(snap.id);
      expect((await errorOf(second.restore(snap.id))).code).toBe('ENOSNAPSHOT');
    } finally {
      await second.close();
    }
    // Closing kept the directory and what is left in it.
    const third = await open('/work/kept', dir);
    try {
      expect((await third.listSnapshots()).length).toBe(1);
    } finally {
      await third.close();
    }
  });

  it("another workspace sharing the directory neither lists nor restores this one's", async () => {
    await seedWorkspace(container, '/work', 'mine', { 'a.txt': 'mine\n' });
    await seedWorkspace(container, '/work', 'theirs', { 'a.txt': 'theirs\n' });
    const dir = join(base, 'shared');
    const mine = await open('/work/mine', dir);
    const theirs = await open('/work/theirs', dir);
    try {
      const snap = await mine.snapshot();
      expect(await theirs.listSnapshots()).toEqual([]);
      expect((await errorOf(theirs.restore(snap.id))).code).toBe('ENOSNAPSHOT');
      expect((await errorOf(theirs.dropSnapshot(snap.id))).code).toBe('ENOSNAPSHOT');
      expect(await text(theirs, 'a.txt')).toBe('theirs\n');
      expect((await mine.listSnapshots()).map((s) => s.id)).toEqual([snap.id]);
      // An id that could name a path outside the directory is no snapshot.
      expect((await errorOf(mine.restore('../shared/x'))).code).toBe('ENOSNAPSHOT');
    } finally {
      await mine.close();
      await theirs.close();
    }
  });

  it('without a directory, snapshots are the instance’s own and go when it closes', async () => {
    await seedWorkspace(container, '/work', 'own', { 'a.txt': 'x\n' });
    const fs = await open('/work/own');
    const snap = await fs.snapshot();
    const file = (snap.ref ?? '').replace(/^tar:/, '');
    expect(existsSync(file)).toBe(true);
    await fs.close();
    expect(existsSync(file)).toBe(false);
    const next = await open('/work/own');
    try {
      expect(await next.listSnapshots()).toEqual([]);
    } finally {
      await next.close();
    }
  });
});
