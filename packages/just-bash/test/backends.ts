/**
 * The three backends the package's tests run bash on — memory, a host
 * directory, a directory in a Docker container (one container per test
 * file) — each opened under a context layer and closed after its test.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerFilesystem } from '@ctxfs/container';
import { type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { dockerAvailable, removeTestContainers, TEST_IMAGE, TEST_LABELS } from '../../container/test/docker-fixture.ts';

export interface Opened {
  readonly fs: Filesystem;
  readonly ctx: ContextLayer;
  /** The host directory, for the host backend. */
  readonly dir?: string;
}

/** Opens a workspace holding `files` under a context layer with `policy`. */
export type Open = (files: Record<string, string>, policy?: PolicyConfig) => Promise<Opened>;

/**
 * The backends of a test file, with the hooks that close what each test
 * opened (and the file's container after it). `open(name)` refuses the
 * container backend without a Docker engine (in CI it must be there).
 */
export function useBackends(prefix: string): { readonly BACKENDS: Readonly<Record<'memory' | 'host' | 'container', Open>>; open(name: string): Open } {
  const opened: Opened[] = [];
  let docker = false;
  let container: ContainerFilesystem | undefined;
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.ctx.close();
      await o.fs.close();
      if (o.dir !== undefined) rmSync(o.dir, { recursive: true, force: true });
    }
  });
  beforeAll(async () => {
    docker = await dockerAvailable();
  }, 60_000);
  afterAll(async () => {
    await container?.close();
    if (docker) await removeTestContainers();
  });
  const BACKENDS = {
    memory: async (files: Record<string, string>, policy?: PolicyConfig): Promise<Opened> => {
      const fs = new MemoryFilesystem({ files });
      const o = { fs, ctx: await createContext({ fs, safety: { policyFiles: false, policy } }) };
      opened.push(o);
      return o;
    },
    host: async (files: Record<string, string>, policy?: PolicyConfig): Promise<Opened> => {
      const dir = mkdtempSync(join(tmpdir(), `ctxfs-just-bash-${prefix}-`));
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(join(dir, p, '..'), { recursive: true });
        writeFileSync(join(dir, p), text);
      }
      const fs = new HostFilesystem({ root: dir });
      const o = { fs, dir, ctx: await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy } }) };
      opened.push(o);
      return o;
    },
    container: async (files: Record<string, string>, policy?: PolicyConfig): Promise<Opened> => {
      // One container for the file; each test gets a fresh workspace directory in it.
      container ??= await ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, workdir: '/work' });
      const dir = `${prefix}${opened.length}-${Date.now().toString(36)}`;
      await container.mkdir(dir, { parents: true });
      const fs = await ContainerFilesystem.open({ container: container.containerRef, workdir: `/work/${dir}` });
      for (const [p, t] of Object.entries(files)) await fs.write(p, t, { createParents: true });
      const o = { fs, ctx: await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy } }) };
      opened.push(o);
      return o;
    },
  };
  return {
    BACKENDS,
    open: (name) => (files, policy) => {
      if (name === 'container' && !docker) throw new Error('no Docker engine: the container backend cannot be tested here');
      return BACKENDS[name as keyof typeof BACKENDS](files, policy);
    },
  };
}
