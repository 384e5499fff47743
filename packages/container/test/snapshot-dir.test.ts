/**
 * Snapshots kept in a directory outlast the instance that took them: a
 * second instance (a later CLI command, another process) lists, restores
 * and drops them. Without a directory they are the instance's own and go
 * with it. A workspace never sees or restores another's archive from a
 * shared directory. Real engine, real busybox image.
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, errorOf, removeTestContainers, seedWorkspace, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();
const text = async (fs: ContainerFilesystem, path: string) => new TextDecoder().decode(await fs.readBytes(path));

describe.runIf(available)('container snapshots in a directory', () => {
  let container: Docker.Container;
  let base = '';
  const open = (workdir: string, snapshotDir?: string | ((root: string) => string), on: Docker.Container | string = container) =>
    ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: typeof on === 'string' ? on : on.id, workdir, snapshotDir });
  /** A container of the test's own (a tmpfs, another user), `prepare` run in it as root, and a filesystem on `workdir` keeping snapshots in `base/<dir>`. */
  const ownContainer = async (create: Partial<Docker.ContainerCreateOptions>, workdir: string, dir: string, prepare = 'true') => {
    const c = await startTestContainer(create);
    await sh(c, prepare, '0');
    return { c, fs: await open(workdir, join(base, dir), c) };
  };

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

    // A listing of a directory never written to creates nothing.
    const unused = join(base, 'never-written');
    const lister = await open('/work/kept', unused);
    expect(await lister.listSnapshots()).toEqual([]);
    await lister.close();
    expect(existsSync(unused)).toBe(false);

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

  describe('a restore changes nothing until everything restored is in place', () => {
    const files = { 'a.txt': 'one\n', 'src/b.txt': 'two\n' };
    const listing = async (c: Docker.Container, abs: string) => (await sh(c, `cd ${abs} && find . | sort`)).stdout;

    it('a damaged, truncated, emptied or missing archive is ENOSNAPSHOT, and the workspace is as it was', async () => {
      await seedWorkspace(container, '/work', 'damaged', files);
      const dir = join(base, 'damaged');
      const fs = await open('/work/damaged', dir);
      try {
        const damage: Array<[string, (file: string) => void]> = [
          // The same size, other bytes: only reading it through tells.
          ['overwritten', (f) => writeFileSync(f, Buffer.alloc(statSync(f).size, 0x41))],
          ['truncated', (f) => truncateSync(f, 1536)],
          ['emptied', (f) => writeFileSync(f, '')],
          ['missing', (f) => rmSync(f)],
        ];
        for (const [how, harm] of damage) {
          const snap = await fs.snapshot(how);
          await fs.write('a.txt', `changed after ${how}\n`);
          const before = await listing(container, '/work/damaged');
          harm(join(dir, `${snap.id}.tar`));
          const err = await errorOf(fs.restore(snap.id));
          expect(err.code, how).toBe('ENOSNAPSHOT');
          expect(err.reason, how).toMatch(how === 'missing' ? /is missing from/ : /is damaged/);
          expect(err.hint, how).toMatch(/nothing in the workspace was changed/);
          expect(await listing(container, '/work/damaged'), how).toBe(before);
          expect(await text(fs, 'a.txt'), how).toBe(`changed after ${how}\n`);
        }
      } finally {
        await fs.close();
      }
    });

    it('a snapshot dropped by another process while a restore runs: the restore completes or changes nothing', async () => {
      const many = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`d${i % 20}/f${i}.txt`, `file ${i}\n`]));
      await seedWorkspace(container, '/work', 'dropped', many);
      const dir = join(base, 'dropped');
      const fs = await open('/work/dropped', dir);
      const other = await open('/work/dropped', dir);
      try {
        const snap = await fs.snapshot();
        await fs.delete('d3', { recursive: true });
        await fs.write('extra.txt', 'x\n');
        const restoring = fs.restore(snap.id).then(
          () => 'restored',
          (e: { code?: string }) => e.code,
        );
        await other.dropSnapshot(snap.id);
        const outcome = await restoring;
        const now = await listing(container, '/work/dropped');
        if (outcome === 'restored') {
          expect(now).toContain('./d3/f3.txt');
          expect(now).not.toContain('./extra.txt');
        } else {
          expect(outcome).toBe('ENOSNAPSHOT');
          expect(now).not.toContain('./d3');
          expect(now).toContain('./extra.txt');
        }
        // Nothing hidden is left behind in the root.
        expect((await sh(container, 'ls -A /work/dropped')).stdout).not.toMatch(/\.ctxfs-/);
      } finally {
        await fs.close();
        await other.close();
      }
    });

    it('a workdir that is a link is snapshotted and restored as the directory it leads to', async () => {
      await sh(container, 'mkdir -p /data');
      await seedWorkspace(container, '/data', 'real', files);
      await sh(container, 'ln -s /data/real /work/linked');
      const fs = await open('/work/linked', join(base, 'linked'));
      try {
        const snap = await fs.snapshot();
        await fs.write('a.txt', 'changed\n');
        await fs.delete('src', { recursive: true });
        await fs.restore(snap.id);
        expect(await text(fs, 'a.txt')).toBe('one\n');
        expect((await sh(container, 'cat /data/real/src/b.txt')).stdout).toBe('two\n');
        // The link is still the link.
        expect((await sh(container, 'readlink /work/linked')).stdout.trim()).toBe('/data/real');
      } finally {
        await fs.close();
      }
    });

    it('a relative link that climbs above the workdir is restored as it was', async () => {
      await sh(container, 'mkdir -p /work/deep');
      await seedWorkspace(container, '/work/deep', 'ws', files);
      await sh(container, 'cd /work/deep/ws && ln -s ../../../etc/hostname up');
      const fs = await open('/work/deep/ws', join(base, 'climbing'));
      try {
        const snap = await fs.snapshot();
        await fs.write('a.txt', 'changed\n');
        await fs.restore(snap.id);
        expect(await text(fs, 'a.txt')).toBe('one\n');
        expect((await sh(container, 'readlink /work/deep/ws/up')).stdout.trim()).toBe('../../../etc/hostname');
      } finally {
        await fs.close();
      }
    });
  });

  it('a workspace with something mounted below its root refuses snapshots, whose restore would delete through the mount', async () => {
    const { c, fs } = await ownContainer({ HostConfig: { Tmpfs: { '/work/ws/cache': '' } } }, '/work/ws', 'mounted', 'echo kept > /work/ws/cache/in-mount.txt');
    try {
      await seedWorkspace(c, '/work', 'ws', { 'top.txt': 'top\n' });
      const err = await errorOf(fs.snapshot());
      expect(err.code).toBe('EUNSUPPORTED');
      expect(err.reason).toContain('/work/ws/cache');
      expect((await sh(c, 'cat /work/ws/cache/in-mount.txt')).stdout).toBe('kept\n');
    } finally {
      await fs.close();
    }
  });

  it("a tmpfs workdir (archived by the image's tar) whose name starts with a dash", async () => {
    const { fs } = await ownContainer({ HostConfig: { Tmpfs: { '/work/-v': '' } } }, '/work/-v', 'dash');
    try {
      await fs.write('a.txt', 'one\n');
      const snap = await fs.snapshot();
      await fs.write('a.txt', 'two\n');
      await fs.write('b.txt', 'new\n');
      await fs.restore(snap.id);
      expect(await text(fs, 'a.txt')).toBe('one\n');
      expect(await fs.exists('b.txt')).toBe(false);
    } finally {
      await fs.close();
    }
  });

  it('what a swap could not delete is swept by the next restore or snapshot, never what a restore in progress uses', async () => {
    // Not root: a directory without write permission makes the swap's delete fail, as it really does for a user.
    const { c, fs } = await ownContainer({ User: '1000:1000' }, '/work/ws', 'leftovers', 'mkdir -p /work/ws && chown 1000:1000 /work/ws');
    const hidden = async () => (await sh(c, 'ls -A /work/ws')).stdout.split('\n').filter((n) => n.startsWith('.ctxfs-'));
    try {
      await sh(c, 'mkdir -p /work/ws/keep/ro && echo x > /work/ws/keep/ro/f.txt && echo one > /work/ws/a.txt');
      const snap = await fs.snapshot();
      await sh(c, 'chmod 555 /work/ws/keep/ro');
      await fs.write('a.txt', 'two\n');
      await fs.restore(snap.id);
      expect(await text(fs, 'a.txt')).toBe('one\n');
      const [left] = await hidden();
      expect(left).toMatch(/^\.ctxfs-[0-9a-f]{24}-old$/);
      // Once it can be deleted, the next snapshot takes it away before archiving the workspace.
      await sh(c, `chmod -R u+w /work/ws/${left}`);
      const clean = await fs.snapshot();
      expect(await hidden()).toEqual([]);
      expect(execFileSync('tar', ['-tf', (clean.ref ?? '').replace(/^tar:/, '')], { encoding: 'utf8' })).not.toContain('.ctxfs-');

      // Another restore's directories, while the helper that registered it lives, stay (through a swap too);
      // those of a restore whose helper is gone (a killed client) go.
      const registry = (await sh(c, 'echo /tmp/.ctxfs-restores-*')).stdout.trim();
      const [live, dead] = ['a'.repeat(24), 'b'.repeat(24)];
      const livePid = (await sh(c, 'sleep 600 >/dev/null 2>&1 & echo $!')).stdout.trim();
      const deadPid = (await sh(c, 'echo $$')).stdout.trim();
      const planted = [`.ctxfs-${live}-old`, `.ctxfs-${live}-restore`];
      await sh(
        c,
        `echo ${livePid} > ${registry}/${live} && echo ${deadPid} > ${registry}/${dead} && cd /work/ws && mkdir -p ${planted.join(' ')} .ctxfs-${dead}-restore/ws`,
      );
      await fs.restore(snap.id);
      expect(await hidden()).toEqual(planted);
      expect(await text(fs, 'a.txt')).toBe('one\n');
      await sh(c, `kill ${livePid}`);
      await fs.snapshot();
      expect(await hidden()).toEqual([]);
    } finally {
      await fs.close();
    }
  });

  it('a stopped container: its snapshots are listed and dropped; a snapshot or restore is EUNAVAILABLE saying to start it', async () => {
    const { c, fs } = await ownContainer({}, '/work/ws', 'stopped');
    await fs.write('a.txt', 'one\n');
    const kept = await fs.snapshot('kept');
    const dropped = await fs.snapshot('dropped');
    await fs.write('a.txt', 'two\n');
    await fs.close();
    await c.kill();
    const stopped = await open('/work/ws', join(base, 'stopped'), c);
    try {
      expect((await stopped.listSnapshots()).map((s) => s.id)).toEqual([kept.id, dropped.id]);
      await stopped.dropSnapshot(dropped.id);
      expect((await stopped.listSnapshots()).map((s) => s.id)).toEqual([kept.id]);
      for (const [op, call] of [
        ['snapshot', () => stopped.snapshot()],
        ['restore', () => stopped.restore(kept.id)],
      ] as const) {
        const err = await errorOf(call());
        expect(err.code, op).toBe('EUNAVAILABLE');
        expect(err.op, op).toBe(op);
        expect(err.reason, op).toMatch(new RegExp(`^container '${c.id}' is not running`));
        expect(err.hint, op).toContain(`${TEST_ENGINE.name} start ${c.id}`);
      }
      // Started, the same instance restores.
      await c.start();
      await stopped.restore(kept.id);
      expect(await text(stopped, 'a.txt')).toBe('one\n');
    } finally {
      await stopped.close();
    }
  });

  it("snapshots belong to the container as it is named: by name and by id are two sets, and a container made again under the name has the old one's", async () => {
    const name = `ctxfs-test-${randomBytes(4).toString('hex')}`;
    const dir = join(base, 'named');
    const first = await startTestContainer({ name });
    const byName = await open('/work', dir, name);
    await byName.write('a.txt', 'first\n');
    const snap = await byName.snapshot();
    await byName.close();
    const byId = await open('/work', dir, first);
    try {
      expect(await byId.listSnapshots()).toEqual([]);
    } finally {
      await byId.close();
    }
    await first.remove({ force: true });
    await startTestContainer({ name });
    const again = await open('/work', dir, name);
    try {
      expect((await again.listSnapshots()).map((s) => s.id)).toEqual([snap.id]);
      await again.restore(snap.id);
      expect(await text(again, 'a.txt')).toBe('first\n');
    } finally {
      await again.close();
    }
  });

  it('a description with a date that is no date is no snapshot: the others are listed', async () => {
    await seedWorkspace(container, '/work', 'dated', { 'a.txt': 'x\n' });
    const dir = join(base, 'dated');
    const fs = await open('/work/dated', dir);
    try {
      const good = await fs.snapshot('good');
      const bad = await fs.snapshot('bad');
      const file = join(dir, `${bad.id}.json`);
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), createdAt: 'yesterday' }));
      expect((await fs.listSnapshots()).map((s) => s.id)).toEqual([good.id]);
    } finally {
      await fs.close();
    }
  });

  it('a snapshot directory that is a file is EINVAL naming it, for every snapshot call', async () => {
    await seedWorkspace(container, '/work', 'filed', { 'a.txt': 'x\n' });
    const file = join(base, 'a-file');
    writeFileSync(file, 'not a directory');
    const fs = await open('/work/filed', file);
    try {
      for (const call of [() => fs.snapshot(), () => fs.listSnapshots(), () => fs.restore('ctr-x-1-aaaaaa'), () => fs.dropSnapshot('ctr-x-1-aaaaaa')]) {
        const err = await errorOf(call());
        expect(err.code).toBe('EINVAL');
        expect(err.reason).toContain(file);
      }
    } finally {
      await fs.close();
    }
  });
});
