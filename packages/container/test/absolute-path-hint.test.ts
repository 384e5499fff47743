/**
 * A model working in a container sees the workspace at the container's own
 * directory (`pwd` in a command it runs says `/work`), and writes paths
 * like `/work/src/a.ts`. On the host the refusal of an absolute path inside
 * the root names the relative path to use; on a container the root's name
 * (`docker://…/work`) is no path, so the refusal said only "use a path
 * relative to the workspace root, e.g. src/index.ts". The container now
 * gives its directory (and where a link there leads) as the root's absolute
 * spellings, and the context layer names the relative path from them; the
 * path it names works. A path outside the directory is refused as before,
 * naming nothing. Real engine, real busybox; Docker and Podman.
 */

import { createContext } from '@ctxfs/context';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem } from '../src/index.ts';
import { dockerAvailable, sh, startTestContainer, TEST_ENGINE } from './docker-fixture.ts';

const available = await dockerAvailable();
const GENERIC = 'use a path relative to the workspace root, e.g. "src/index.ts"';
/** The relative path a refusal names, if any. */
const named = (err: unknown) => /use the path relative to the workspace root: "([^"]+)"/.exec(String((err as Error)?.message))?.[1];
let container: Docker.Container;

describe.runIf(available)('an absolute path inside a container workspace', () => {
  beforeAll(async () => {
    container = await startTestContainer();
    // /tmp/abs-link leads to /tmp/abs-real: a command may see either (`pwd`, `pwd -P`).
    const made = await sh(
      container,
      'mkdir -p /tmp/abs/src /tmp/abs-real/src && printf "export const a = 1;\\n" > /tmp/abs/src/a.ts && cp /tmp/abs/src/a.ts /tmp/abs-real/src/ && ln -s /tmp/abs-real /tmp/abs-link',
    );
    expect(made.code).toBe(0);
  });
  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => {});
  });

  /** A context over the container's workspace at `workdir`, closed after `body`. */
  const withSession = async (workdir: string, body: (s: ReturnType<Awaited<ReturnType<typeof createContext>>['session']>) => Promise<void>) => {
    const fs = await ContainerFilesystem.open({ engine: TEST_ENGINE.options, container: container.id, workdir, createWorkdir: false });
    const ctx = await createContext({ fs, safety: { policyFiles: false } });
    try {
      await body(ctx.session({ agent: 'llm:test', profile: 'small' }));
    } finally {
      await ctx.close();
      await fs.close();
    }
  };

  it('a read, a listing and an edit of the workdir path are refused naming the relative path, which works', async () => {
    const pwd = (await sh(container, 'cd /tmp/abs && pwd')).stdout.trim();
    expect(pwd).toBe('/tmp/abs');
    await withSession(pwd, async (s) => {
      const read = await s.readFile(`${pwd}/src/a.ts`).catch((e: unknown) => e);
      expect(named(read), String(read)).toBe('src/a.ts');
      expect((await s.readFile('src/a.ts')).text).toContain('export const a = 1;');

      const list = await s.listFiles(`${pwd}/src`).catch((e: unknown) => e);
      expect(named(list), String(list)).toBe('src');
      expect((await s.listFiles('src')).items.map((f) => f.path)).toEqual(['src/a.ts']);

      const edit = await s.replace(`${pwd}/src/a.ts`, '= 1', '= 2').catch((e: unknown) => e);
      expect(named(edit), String(edit)).toBe('src/a.ts');
      await s.replace('src/a.ts', '= 1', '= 2');
      expect((await s.readFile('src/a.ts')).text).toContain('export const a = 2;');

      const root = await s.listFiles(pwd).catch((e: unknown) => e);
      expect(String(root)).toContain('that is the workspace root itself: name it "."');
    });
  });

  it('a workdir that is a link: both its path and where it leads name the relative path', async () => {
    const real = (await sh(container, 'cd /tmp/abs-link && pwd -P')).stdout.trim();
    expect(real).toBe('/tmp/abs-real');
    await withSession('/tmp/abs-link', async (s) => {
      for (const dir of ['/tmp/abs-link', real]) {
        const read = await s.readFile(`${dir}/src/a.ts`).catch((e: unknown) => e);
        expect(named(read), `${dir}: ${String(read)}`).toBe('src/a.ts');
      }
      expect((await s.readFile('src/a.ts')).text).toContain('export const a = 1;');
    });
  });

  it('a path outside the workdir, or one that climbs out of it, is refused as before', async () => {
    await withSession('/tmp/abs', async (s) => {
      for (const path of ['/etc/passwd', '/tmp/abs/../abs-real/src/a.ts', '/tmp/abs2/src/a.ts', '/tmp', '/work/src/a.ts']) {
        const err = await s.readFile(path).catch((e: unknown) => e);
        expect(err, path).toBeInstanceOf(Error);
        expect(String(err), path).toContain(GENERIC);
        expect(named(err), path).toBeUndefined();
      }
    });
  });
});
