/**
 * The three backends a test serves the same files on: memory (seeded from a
 * temporary directory), a host directory, and a directory inside a real
 * container (`docker:<id>`, the container package's fixture: labelled,
 * removed after the file, and never skipped in CI). Each says how to see the
 * file as the backend holds it and how someone outside ctxfs changes it.
 *
 * @module
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerAvailable, removeTestContainers, seedWorkspace, sh, startTestContainer } from '../../../container/test/docker-fixture.ts';
import { tempWorkspace } from './workspace.ts';

export type BackendKind = 'memory' | 'host' | 'container';

/** A workspace on one backend, ready to serve. */
export interface BackendWorkspace {
  readonly kind: BackendKind;
  /** The server arguments that serve it. */
  readonly args: readonly string[];
  /** The file as the backend holds it; memory has no disk to look at (`undefined`). */
  readonly readBack: ((path: string) => Promise<string>) | undefined;
  /** Someone outside ctxfs replaces `from` by `to` in the file (memory: no outside, `undefined`). */
  readonly editOutside: ((path: string, from: string, to: string) => Promise<void>) | undefined;
  remove(): Promise<void>;
}

/**
 * The backends this machine can serve: all three, or memory and host with a
 * loud warning where Docker is missing outside CI (in CI a missing engine
 * fails the suite: see the container fixture).
 */
export async function availableBackends(): Promise<BackendKind[]> {
  return (await dockerAvailable()) ? ['memory', 'host', 'container'] : ['memory', 'host'];
}

// The container's type comes from the fixture: dockerode is the container package's dependency, not this one's.
let container: ReturnType<typeof startTestContainer> | undefined;
/** The host directory mounted at the container's /work. */
let mounted: string | undefined;
let seeded = 0;

/**
 * The test container, started on first use. Its /work is a directory of this
 * machine's memory (/dev/shm) mounted in: thousands of files unpack there in
 * a moment, where the container's own layer on a busy disk takes seconds.
 * ctxfs still reaches them only through the engine, inside the container.
 */
function testContainer(): ReturnType<typeof startTestContainer> {
  if (container === undefined) {
    mounted = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'ctxfs-mcp-container-'));
    container = startTestContainer({ HostConfig: { Binds: [`${mounted}:/work`] } });
  }
  return container;
}

/** Removes the container this test file started, if it started one, and its /work. */
export async function removeBackendContainers(): Promise<void> {
  if (container === undefined) return;
  container = undefined;
  await removeTestContainers();
  if (mounted !== undefined) rmSync(mounted, { recursive: true, force: true });
}

/** Writes `files` to a fresh workspace on `kind`. */
export async function backendWorkspace(kind: BackendKind, files: Readonly<Record<string, string | Uint8Array>>): Promise<BackendWorkspace> {
  if (kind !== 'container') {
    const ws = tempWorkspace(files);
    const args = kind === 'host' ? ['--root', ws.root] : ['--backend', 'memory', '--root', ws.root];
    const host = kind === 'host';
    return {
      kind,
      args,
      readBack: host ? (path) => Promise.resolve(ws.read(path)) : undefined,
      editOutside: host ? (path, from, to) => Promise.resolve(ws.write(path, ws.read(path).replace(from, to))) : undefined,
      remove: () => Promise.resolve(ws.remove()),
    };
  }
  const c = await testContainer();
  const dir = `mcp${++seeded}`;
  await seedWorkspace(c, '/work', dir, files);
  const abs = `/work/${dir}`;
  const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  return {
    kind,
    args: ['--backend', `docker:${c.id}`, '--workdir', abs],
    async readBack(path) {
      const out = await sh(c, `cat ${quote(`${abs}/${path}`)}`);
      if (out.code !== 0) throw new Error(`cat ${path} in the container exited ${out.code}`);
      return out.stdout;
    },
    async editOutside(path, from, to) {
      // busybox sed, in the container itself: the change ctxfs did not make.
      const pattern = from.replace(/[\\/.*[\]^$]/g, '\\$&');
      const replacement = to.replace(/[\\/&]/g, '\\$&');
      const out = await sh(c, `sed -i ${quote(`s/${pattern}/${replacement}/`)} ${quote(`${abs}/${path}`)}`);
      if (out.code !== 0) throw new Error(`sed in the container exited ${out.code}`);
    },
    async remove() {
      await sh(c, `rm -rf ${quote(abs)}`);
    },
  };
}
