/**
 * Container-specific behaviour beyond the conformance suite: attach/create,
 * mode and owner of written files, symlink containment inside the container,
 * streaming in bounded memory, and ENOENT never confused with a missing
 * container. Real engine, real busybox image.
 */

import { createHash } from 'node:crypto';
import { type FsError, type GrepOptions, isFsError, notRegularFile, sha256Hex } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import {
  dockerAvailable,
  removeTestContainers,
  seedWorkspace,
  sh,
  startTestContainer,
  TEST_ENGINE,
  TEST_IMAGE,
  TEST_LABELS,
  testDocker,
} from './docker-fixture.ts';

const available = await dockerAvailable();

let container: Docker.Container;
let counter = 0;

async function workspace(
  files: Record<string, string | Uint8Array> = {},
  dirs: string[] = [],
  extra: Partial<Parameters<typeof ContainerFilesystem.open>[0]> = {},
) {
  const dir = `c${++counter}`;
  await seedWorkspace(container, '/work', dir, files, dirs);
  const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: `/work/${dir}`, ...extra });
  return { fs, abs: `/work/${dir}` };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    return isFsError(err) ? err.code : `non-FsError: ${String(err)}`;
  }
}

function pattern(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe.runIf(available)('container backend', () => {
  beforeAll(async () => {
    container = await startTestContainer();
  });
  afterAll(async () => {
    await removeTestContainers();
  });

  describe('a stream reader whose file is replaced', () => {
    it('that goes back fails with ECONFLICT instead of mixing the new file into the old (a stream opened again reads by name)', async () => {
      const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: '/work/replaced' });
      try {
        await fs.writeBytes('f.bin', new Uint8Array(4_000_000).fill(0x41));
        for (const replacement of [new Uint8Array(4_000_000).fill(0x42), new TextEncoder().encode('short')]) {
          const r = await fs.openRead('f.bin');
          expect(new TextDecoder().decode(await r.read(8))).toBe('AAAAAAAA');
          await r.read(1_000_000);
          await fs.writeBytes('f.bin', replacement);
          r.seek(0);
          const err = await r.read(8).then(
            (bytes) => new TextDecoder().decode(bytes),
            (e: { code?: string }) => e.code,
          );
          // Before: "BBBBBBBB" (the new file read as the old), or EUNAVAILABLE for a shorter one.
          expect(err).toBe('ECONFLICT');
          await r.close();
          await fs.writeBytes('f.bin', new Uint8Array(4_000_000).fill(0x41));
        }
        // Unreplaced, a reader that goes back reads the same file again.
        const r = await fs.openRead('f.bin');
        await r.read(2_000_000);
        r.seek(10);
        expect(new TextDecoder().decode(await r.read(4))).toBe('AAAA');
        await r.close();
      } finally {
        await fs.close();
      }
    });
  });

  describe('attach and create', () => {
    it('attaches by name and reports a docker:// root', async () => {
      const info = await container.inspect();
      const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: info.Name.replace(/^\//, ''), workdir: '/work/by-name' });
      try {
        expect(fs.root).toBe(`docker://${info.Name.replace(/^\//, '')}/work/by-name`);
        await fs.write('a.txt', 'hi');
        expect((await sh(container, 'cat /work/by-name/a.txt')).stdout).toBe('hi');
      } finally {
        await fs.close();
      }
    });

    it('creates a container from an image and removes it on close', async () => {
      const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, image: TEST_IMAGE, labels: TEST_LABELS });
      const id = fs.containerRef;
      await fs.write('x/y.txt', 'made', { createParents: true });
      expect(await fs.read('x/y.txt')).toMatchObject({ text: 'made' });
      await fs.close();
      const err = await testDocker()
        .getContainer(id)
        .inspect()
        .then(
          () => undefined,
          (e: { statusCode?: number }) => e.statusCode,
        );
      expect(err).toBe(404);
    });

    it('keepContainer leaves a created container in place', async () => {
      const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, image: TEST_IMAGE, labels: TEST_LABELS, keepContainer: true });
      await fs.close();
      const info = await testDocker().getContainer(fs.containerRef).inspect();
      expect(info.State.Running).toBe(true);
      await testDocker().getContainer(fs.containerRef).remove({ force: true });
    });

    it('a missing container is EUNAVAILABLE naming it, at open', async () => {
      const err = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: 'ctxfs-no-such-container' }).catch((e: unknown) => e);
      expect(isFsError(err, 'EUNAVAILABLE')).toBe(true);
      expect(String((err as Error).message)).toContain("container 'ctxfs-no-such-container' does not exist");
    });

    it("a missing image is EUNAVAILABLE naming the image, with the engine's command that gets it", async () => {
      // It said only the engine's words, with the hint for an engine that cannot be reached ("check that it is running").
      const err = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, image: 'ctxfs-no-such-image:latest', labels: TEST_LABELS }).catch(
        (e: unknown) => e,
      );
      expect(isFsError(err, 'EUNAVAILABLE'), String(err)).toBe(true);
      expect((err as FsError).reason).toMatch(/^cannot create a container from image 'ctxfs-no-such-image:latest': no such image/i);
      expect((err as FsError).hint).toBe(
        `pull it first (${TEST_ENGINE.name} pull ctxfs-no-such-image:latest), or name an image the engine has (${TEST_ENGINE.name} images lists them); no container was created`,
      );
    });

    it('a missing file is ENOENT, not EUNAVAILABLE, on every read path', async () => {
      const { fs } = await workspace({ 'a.txt': 'a' });
      try {
        expect(await codeOf(fs.stat('missing.txt'))).toBe('ENOENT');
        expect(await codeOf(fs.readBytes('missing.txt'))).toBe('ENOENT');
        expect(await codeOf(fs.openRead('missing.txt'))).toBe('ENOENT');
        expect(await codeOf(fs.list('missing'))).toBe('ENOENT');
        expect(await codeOf(fs.readBytes('a.txt/x'))).toBe('ENOTDIR');
      } finally {
        await fs.close();
      }
    });

    it('a stopped container is attached stopped, each call EUNAVAILABLE saying to start it, unless startIfStopped starts it', async () => {
      const c = await startTestContainer();
      await c.kill();
      const stopped = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: c.id });
      try {
        const err = await stopped.stat('.').catch((e: unknown) => e);
        expect(isFsError(err, 'EUNAVAILABLE')).toBe(true);
        expect(String((err as Error).message)).toMatch(/is not running/);
        expect((err as FsError).hint).toContain(`${TEST_ENGINE.name} start ${c.id}`);
      } finally {
        await stopped.close();
      }
      const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: c.id, startIfStopped: true });
      await fs.write('ok.txt', 'ok');
      expect(await fs.exists('ok.txt')).toBe(true);
      await fs.close();
    });

    it('refuses a relative or root workdir', async () => {
      expect(await codeOf(ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: 'work' }))).toBe('EINVAL');
      expect(await codeOf(ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: '/' }))).toBe('EINVAL');
    });
  });

  describe('mode and owner', () => {
    it.each([
      ['inline (small)', 100],
      ['archive (large)', 600_000],
      ['archive parts (streamed)', 9 << 20],
    ])('new files get mode 0644 and the container user as owner: %s', async (_label, size) => {
      const { fs, abs } = await workspace();
      try {
        await fs.writeBytes('f.bin', pattern(size, 1));
        expect((await sh(container, `stat -c '%a %u %g %s' ${abs}/f.bin`)).stdout.trim()).toBe(`644 0 0 ${size}`);
        expect((await fs.stat('f.bin')).mode).toBe(0o644);
      } finally {
        await fs.close();
      }
    });

    it.each([
      ['inline (small)', 100],
      ['archive (large)', 600_000],
    ])('explicit fileMode and owner are applied: %s', async (_label, size) => {
      const { fs, abs } = await workspace({}, [], { fileMode: 0o600, owner: { uid: 1234, gid: 2345 } });
      try {
        await fs.writeBytes('f.bin', pattern(size, 2));
        expect((await sh(container, `stat -c '%a %u %g' ${abs}/f.bin`)).stdout.trim()).toBe('600 1234 2345');
      } finally {
        await fs.close();
      }
    });

    it.each([
      ['inline (small)', 100],
      ['archive (large)', 600_000],
    ])('an overwrite keeps the mode and owner of the file it replaces: %s', async (_label, size) => {
      const { fs, abs } = await workspace({ 'run.sh': '#!/bin/sh\n' });
      try {
        await sh(container, `chmod 750 ${abs}/run.sh && chown 42:43 ${abs}/run.sh`);
        await fs.writeBytes('run.sh', pattern(size, 3));
        expect((await sh(container, `stat -c '%a %u %g' ${abs}/run.sh`)).stdout.trim()).toBe('750 42 43');
        await fs.write('run.sh', 'appended\n', { mode: 'append' });
        expect((await sh(container, `stat -c '%a %u %g' ${abs}/run.sh`)).stdout.trim()).toBe('750 42 43');
      } finally {
        await fs.close();
      }
    });
  });

  describe('symlinks inside the container', () => {
    it('follows links that stay inside and refuses links that leave, for every operation', async () => {
      const { fs, abs } = await workspace({ 'real/f.txt': 'inside' });
      try {
        await sh(container, `cd ${abs} && ln -s real inner && ln -s /etc out && ln -s .. up && ln -s real/f.txt file-link && ln -s /etc/passwd pw`);
        expect((await fs.readBytes('inner/f.txt')).byteLength).toBe(6);
        expect(new TextDecoder().decode(await fs.readBytes('file-link'))).toBe('inside');
        expect((await fs.stat('inner')).kind).toBe('directory');
        const kinds = Object.fromEntries((await fs.list()).map((e) => [e.name, e.kind]));
        expect(kinds).toMatchObject({ inner: 'symlink', out: 'symlink', up: 'symlink', real: 'directory' });
        const ops: Array<() => Promise<unknown>> = [
          () => fs.readBytes('out/passwd'),
          () => fs.readBytes('pw'),
          () => fs.stat('up/c1'),
          () => fs.list('out'),
          () => fs.write('out/evil', 'x'),
          () => fs.writeBytes('up/evil', new Uint8Array(600_000)),
          () => fs.mkdir('out/evil'),
          () => fs.delete('out/passwd'),
          () => fs.openRead('pw'),
          () => fs.copy('pw', 'stolen'),
          () => fs.rename('real/f.txt', 'out/moved'),
        ];
        for (const op of ops) expect(await codeOf(op())).toBe('EPATHESCAPE');
        expect((await sh(container, 'ls /etc/evil /work/evil 2>&1; grep -c root /etc/passwd')).stdout).toMatch(/No such file[\s\S]*No such file[\s\S]*1/);
        // realpath: where each path leads, links inside followed, out of the root refused, a path not there yet kept.
        await sh(container, `cd ${abs} && ln -s real/none.txt dangling && mkdir -p d && ln -s ../real d/back`);
        expect(await fs.realpath('file-link')).toBe('real/f.txt');
        expect(await fs.realpath('inner/f.txt')).toBe('real/f.txt');
        expect(await fs.realpath('d/back/f.txt')).toBe('real/f.txt');
        expect(await fs.realpath('inner/new/file.txt')).toBe('real/new/file.txt');
        expect(await fs.realpath('dangling')).toBe('real/none.txt');
        expect(await fs.realpath('real')).toBe('real');
        expect(await fs.realpath('')).toBe('');
        for (const path of ['pw', 'out/passwd', 'up/x']) expect(await codeOf(fs.realpath(path)), path).toBe('EPATHESCAPE');
        // A loop is an entry like any link: listings and walks with metadata (a scan) go on past it.
        await sh(container, `cd ${abs} && ln -s loopy loopy`);
        expect((await fs.list('', { stat: true })).some((e) => e.name === 'real')).toBe(true);
        const walked: string[] = [];
        for await (const batch of fs.walk('', { stat: true })) walked.push(...batch.map((e) => e.path));
        expect(walked).toContain('real/f.txt');
      } finally {
        await fs.close();
      }
    });

    it('grep and glob do not descend into symlinked directories', async () => {
      const { fs, abs } = await workspace({ 'a/x.txt': 'needle' });
      try {
        await sh(container, `cd ${abs} && ln -s / root-link && ln -s a loop`);
        const hits = [];
        for await (const m of fs.grep('needle')) hits.push(m.path);
        expect(hits).toEqual(['a/x.txt']);
        const globbed = [];
        for await (const g of fs.glob('**/*.txt')) globbed.push(g.path);
        expect(globbed).toEqual(['a/x.txt']);
      } finally {
        await fs.close();
      }
    });
  });

  describe('grep agrees with the shared scanner', () => {
    const tree: Record<string, string | Uint8Array> = {
      'a.txt': 'needle one\nno\nNEEDLE two needle\n',
      'b/c.txt': 'x\r\nneedle crlf\r\n',
      'b/a.txt': 'needle in b/a\n',
      'b.txt': 'needle after dir b\n',
      '.hidden/h.txt': 'needle hidden\n',
      '.dot.txt': 'needle dot\n',
      'bin.dat': new Uint8Array([110, 101, 101, 100, 108, 101, 0, 1, 2]),
      'late-nul.txt': `${'needle early\n'.repeat(10_000)}\0needle after nul\n`,
      'utf16.txt': new Uint8Array([0xff, 0xfe, ...Array.from(Buffer.from('needle wide\n', 'utf16le'))]),
      'emoji.txt': '🚀 needle 🎉 needle\n',
      'deep/x/y/z.md': 'a needle in markdown\n',
      'big.txt': `${'filler line\n'.repeat(120_000)}needle at the end\n`,
    };
    const cases: Array<[string, GrepOptions]> = [
      ['needle', {}],
      ['needle', { ignoreCase: true }],
      ['needle', { dot: true }],
      ['needle', { glob: '*.txt' }],
      ['needle', { path: 'b' }],
      ['needle', { path: 'b/c.txt' }],
      ['needle', { maxMatches: 3 }],
      ['ne+dle\\b', {}],
      ['🎉', { literal: true }],
      ['(?:🚀 )needle', {}],
    ];
    it.each(cases)('%s %j', async (pattern, options) => {
      const { fs } = await workspace(tree);
      const mem = new MemoryFilesystem({ files: tree });
      try {
        const ours = [];
        for await (const m of fs.grep(pattern, options)) ours.push(m);
        const theirs = [];
        for await (const m of mem.grep(pattern, options)) theirs.push(m);
        expect(ours).toEqual(theirs);
        expect(ours.length).toBeGreaterThan(0);
      } finally {
        await fs.close();
        await mem.close();
      }
    });
  });

  describe('compare-and-swap across helper sessions', () => {
    it('two instances on one workspace (two helper sessions, as two processes have) racing swaps lose nothing', { timeout: 120_000 }, async () => {
      const { fs: a, abs } = await workspace({ 'n.txt': '0' });
      const b = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir: abs });
      try {
        let conflicts = 0;
        const increments = async (f: ContainerFilesystem, times: number) => {
          for (let i = 0; i < times; i++) {
            for (;;) {
              const bytes = await f.readBytes('n.txt');
              try {
                await f.write('n.txt', String(Number(new TextDecoder().decode(bytes)) + 1), { ifMatch: sha256Hex(bytes) });
                break;
              } catch (err) {
                if (!isFsError(err, 'ECONFLICT')) throw err;
                conflicts++;
              }
            }
          }
        };
        await Promise.all([increments(a, 40), increments(b, 40), increments(a, 40), increments(b, 40)]);
        expect((await a.read('n.txt')).text).toBe('160');
        // The sessions did race: some swaps found the file changed under them.
        expect(conflicts).toBeGreaterThan(0);
      } finally {
        await b.close();
        await a.close();
      }
    });

    it('a commit lock left by a session that died mid-commit is taken over once stale', { timeout: 60_000 }, async () => {
      const { fs, abs } = await workspace({ 'a.txt': 'old' });
      try {
        // The helper's lock for this workspace (helper-script.ts), made as a dead session would leave it.
        const made = await sh(
          container,
          `L=/tmp/.ctxfs-commit-$(printf '%s' "$(readlink -f ${abs})" | sha256sum | cut -c1-16) && : > "$L" && touch -d '2000-01-01 00:00:00' "$L" && echo "$L"`,
        );
        expect(made.code).toBe(0);
        const started = Date.now();
        await fs.write('a.txt', 'new', { ifMatch: sha256Hex(new TextEncoder().encode('old')) });
        // Taken over at the first staleness check (about a second of polling), not after the 20 s timeout.
        expect(Date.now() - started).toBeLessThan(15_000);
        expect((await fs.read('a.txt')).text).toBe('new');
      } finally {
        await fs.close();
      }
    });
  });

  describe('streams', () => {
    it('a 160 MiB file streams both ways byte for byte (memory: see the bench)', { timeout: 120_000 }, async () => {
      const { fs } = await workspace();
      try {
        const chunk = 1 << 20;
        const total = 160;
        const hashIn = createHash('sha256');
        const w = await fs.openWrite('big.bin');
        for (let i = 0; i < total; i++) {
          const c = pattern(chunk, i);
          hashIn.update(c);
          await w.write(c);
        }
        await w.close();
        expect((await fs.stat('big.bin')).size).toBe(total * chunk);
        const hashOut = createHash('sha256');
        const r = await fs.openRead('big.bin', { chunkSize: 1 << 20 });
        let n = 0;
        for await (const c of r) {
          hashOut.update(c);
          n += c.byteLength;
        }
        expect(n).toBe(total * chunk);
        expect(hashOut.digest('hex')).toBe(hashIn.digest('hex'));
        expect((await fs.list()).map((e) => e.name)).toEqual(['big.bin']);
      } finally {
        await fs.close();
      }
    });

    it('a large reader can seek backwards and forwards', async () => {
      const data = pattern(3 << 20, 9);
      const { fs } = await workspace({ 'f.bin': data });
      try {
        const r = await fs.openRead('f.bin');
        r.seek(2 << 20);
        expect(Buffer.from(await r.read(10)).equals(Buffer.from(data.subarray(2 << 20, (2 << 20) + 10)))).toBe(true);
        r.seek(5);
        expect(Buffer.from(await r.read(10)).equals(Buffer.from(data.subarray(5, 15)))).toBe(true);
        await r.close();
        const tail = await fs.readBytes('f.bin', { offset: (3 << 20) - 100 });
        expect(Buffer.from(tail).equals(Buffer.from(data.subarray((3 << 20) - 100)))).toBe(true);
      } finally {
        await fs.close();
      }
    });

    it('a long path (PAX territory) works on the archive paths', async () => {
      const deep = Array.from({ length: 30 }, (_, i) => `segment-${i}-${'x'.repeat(100)}`).join('/');
      const { fs } = await workspace();
      try {
        const data = pattern(700_000, 4);
        await fs.writeBytes(`${deep}/f.bin`, data, { createParents: true });
        expect(Buffer.from(await fs.readBytes(`${deep}/f.bin`)).equals(Buffer.from(data))).toBe(true);
        const snap = await fs.snapshot();
        await fs.delete(deep.split('/')[0] as string, { recursive: true });
        await fs.restore(snap);
        expect((await fs.stat(`${deep}/f.bin`)).size).toBe(700_000);
      } finally {
        await fs.close();
      }
    });

    it('an aborted streamed write leaves the old file and no temporary', async () => {
      const { fs, abs } = await workspace({ 'f.bin': 'old' });
      try {
        const w = await fs.openWrite('f.bin');
        for (let i = 0; i < 10; i++) await w.write(pattern(1 << 20, i));
        await w.abort();
        expect(new TextDecoder().decode(await fs.readBytes('f.bin'))).toBe('old');
        expect((await sh(container, `ls -A ${abs}`)).stdout.trim()).toBe('f.bin');
      } finally {
        await fs.close();
      }
    });

    it("a FIFO is refused as the host refuses it: EINVAL, not a regular file, in the host's words (it said 'invalid argument')", async () => {
      const { fs, abs } = await workspace({ 'ok.txt': 'hello\n' });
      try {
        expect((await sh(container, `mkfifo ${abs}/pipe`)).code).toBe(0);
        const expected = notRegularFile('openRead', 'pipe');
        for (const call of [fs.readBytes('pipe'), fs.read('pipe'), fs.openRead('pipe')]) {
          const err = await call.then(
            () => undefined,
            (e: unknown) => e,
          );
          if (!isFsError(err)) throw new Error(`expected an FsError, got ${String(err)}`);
          expect(err.code).toBe('EINVAL');
          expect(err.reason).toBe(expected.reason);
          expect(err.hint).toBe(expected.hint);
          expect(err.path).toBe('pipe');
        }
        expect(new TextDecoder().decode(await fs.readBytes('ok.txt'))).toBe('hello\n');
      } finally {
        await fs.close();
      }
    });

    it("a FIFO in a copied tree refuses the copy before busybox's cp -R (which would make one) writes anything", async () => {
      const { fs, abs } = await workspace({ 'lib/a.txt': 'a' }, ['merge']);
      try {
        expect((await sh(container, `mkfifo ${abs}/lib/pipe`)).code).toBe(0);
        for (const to of ['lc', 'merge']) {
          const err = await fs.copy('lib', to, { recursive: true }).catch((e: unknown) => e);
          expect(err, to).toMatchObject({ code: 'EINVAL', op: 'copy', path: 'lib/pipe', dest: `${to}/pipe` });
        }
        expect((await sh(container, `ls -A ${abs}; ls -A ${abs}/merge`)).stdout.trim().split('\n')).toEqual(['lib', 'merge']);
      } finally {
        await fs.close();
      }
    });
  });
});
