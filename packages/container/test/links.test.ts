/**
 * Symbolic links inside the workspace behave as on the host backend: a write
 * through a link changes the file it leads to (the link stays a link), a
 * dangling relative link leads where it points from its own directory (busybox's
 * `readlink -f` resolves it from the current one, and took it for a link out of
 * the workspace), and a recursive copy of a link to a directory copies the
 * directory. Found by session 20's container campaign; each failed before.
 * Real engine, real busybox; Docker and Podman.
 */

import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();
const text = async (fs: ContainerFilesystem, path: string) => new TextDecoder().decode(await fs.readBytes(path));
let container: Docker.Container;
let counter = 0;

describe.runIf(available)('links inside the workspace', () => {
  beforeAll(async () => {
    container = await startTestContainer();
  });
  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => {});
  });

  /** A fresh workspace made by `script` (run in it, as root). */
  const workspace = async (script: string) => {
    const dir = `/tmp/links-${++counter}`;
    const made = await sh(container, `mkdir -p ${dir} && cd ${dir} && ${script}`);
    expect(made.code).toBe(0);
    return { dir, fs: await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: dir, createWorkdir: false }) };
  };
  const kind = async (dir: string, path: string) =>
    (await sh(container, `cd ${dir} && if [ -L ${path} ]; then echo link; elif [ -f ${path} ]; then echo file; else echo none; fi`)).stdout.trim();

  it('a write through a link to a file writes the file; the link stays a link', async () => {
    const { dir, fs } = await workspace('printf old > t.txt && ln -s t.txt link.txt && mkdir -p d && ln -s ../t.txt d/up.txt');
    try {
      await fs.write('link.txt', 'new\n');
      expect(await text(fs, 't.txt')).toBe('new\n');
      expect(await kind(dir, 'link.txt')).toBe('link');
      // Large enough to be staged through the engine, and through a link in another directory.
      const big = 'x'.repeat(300_000);
      await fs.write('d/up.txt', big);
      expect((await fs.readBytes('t.txt')).byteLength).toBe(300_000);
      expect(await kind(dir, 'd/up.txt')).toBe('link');
    } finally {
      await fs.close();
    }
  });

  it('a dangling relative link leads where it points from its own directory, and a write through it makes that file', async () => {
    const { dir, fs } = await workspace('mkdir sub && ln -s nowhere.txt sub/dang && ln -s ../made.txt sub/up');
    try {
      expect(await fs.realpath('sub/dang')).toBe('sub/nowhere.txt');
      expect(await fs.realpath('sub/up')).toBe('made.txt');
      await fs.write('sub/dang', 'a\n');
      await fs.write('sub/up', 'b\n');
      expect(await text(fs, 'sub/nowhere.txt')).toBe('a\n');
      expect(await text(fs, 'made.txt')).toBe('b\n');
      expect(await kind(dir, 'sub/dang')).toBe('link');
    } finally {
      await fs.close();
    }
  });

  it('a recursive copy of a link to a directory copies the directory: a write into the copy leaves the original alone', async () => {
    const { dir, fs } = await workspace('mkdir d && printf original > d/f.txt && ln -s d dlink');
    try {
      await fs.copy('dlink', 'backup', { recursive: true });
      expect((await sh(container, `cd ${dir} && [ -d backup ] && [ ! -L backup ] && echo dir`)).stdout.trim()).toBe('dir');
      await fs.write('backup/f.txt', 'changed in the copy');
      expect(await text(fs, 'd/f.txt')).toBe('original');
    } finally {
      await fs.close();
    }
  });
});
