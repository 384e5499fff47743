/**
 * Test fixture: fresh workspaces on each real backend (memory, a host
 * directory, a directory in a real Docker container), each with its
 * context layer, so every adapter test runs unchanged on all three.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ContainerFilesystem } from '@ctxfs/container';
import { type ContextLayer, type ContextOptions, createContext } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import type Docker from 'dockerode';
import { dockerAvailable, removeTestContainers, sh, startTestContainer, TEST_IMAGE, TEST_LABELS } from '../../container/test/docker-fixture.ts';
import type { CommandRunner } from '../src/command-runner.ts';

export type BackendName = 'memory' | 'host' | 'container';

/** One open workspace: its filesystem, its context layer, and where a host test may look behind the backend's back. */
export interface TestWorkspace {
  readonly fs: Filesystem;
  readonly context: ContextLayer;
  /** The host directory holding the root (host backend only). */
  readonly hostRoot: string | undefined;
  /**
   * Makes a symbolic link at `path` (workspace-relative) leading to `target`
   * (as written), behind the backend's back, as a command would: the
   * protocol has no call that makes one. Absent where the backend has no
   * links (memory) or the test cannot reach the directory (a container of
   * the workspace's own).
   */
  readonly link: ((target: string, path: string) => Promise<void>) | undefined;
  close(): Promise<void>;
}

let container: Docker.Container | undefined;
let usedDocker = false;
let counter = 0;
const tempDirs: string[] = [];

/** The backends a test file runs on: all three (outside CI, the container one only where Docker answers). */
export async function backends(): Promise<BackendName[]> {
  if (await dockerAvailable()) return ['memory', 'host', 'container'];
  // Outside CI a machine without an engine still tests the other two; in CI the missing engine fails the run.
  if (process.env.CI) throw new Error('no Docker engine: the container backend cannot be tested (CI must run every backend)');
  return ['memory', 'host'];
}

/**
 * Opens a fresh workspace on `backend`, holding `files`. Container
 * workspaces share one container unless `ownContainer` asks for one of
 * their own (removed when the workspace closes): commands shown the
 * workspace at a mount path need it, since two workspaces cannot both be
 * shown at the same path of one container.
 */
export async function openWorkspace(
  backend: BackendName,
  files: Record<string, string | Uint8Array> = {},
  options: Partial<Omit<ContextOptions, 'fs' | 'store'>> = {},
  { ownContainer = false }: { readonly ownContainer?: boolean } = {},
): Promise<TestWorkspace> {
  const state = await mkdtemp(join(tmpdir(), 'ctxfs-adapters-state-'));
  tempDirs.push(state);
  let fs: Filesystem;
  let hostRoot: string | undefined;
  let link: TestWorkspace['link'];
  if (backend === 'memory') fs = new MemoryFilesystem({ files });
  else if (backend === 'host') {
    const root = await mkdtemp(join(tmpdir(), 'ctxfs-adapters-root-'));
    hostRoot = root;
    tempDirs.push(root);
    fs = await HostFilesystem.open({ root, stateDir: join(state, 'host') });
    link = (target, path) => symlink(target, join(root, path));
  } else {
    usedDocker = true;
    if (ownContainer) fs = await ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, workdir: '/work' });
    else {
      container ??= await startTestContainer();
      const shared = container;
      const workdir = `/work/a${++counter}-${process.pid}`;
      fs = await ContainerFilesystem.open({ container: shared.id, workdir });
      link = async (target, path) => {
        const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
        const r = await sh(shared, `ln -s ${quote(target)} ${quote(`${workdir}/${path}`)}`);
        if (r.code !== 0) throw new Error(`ln -s ${target} ${path} failed in the container (${r.code})`);
      };
    }
  }
  if (backend !== 'memory')
    for (const [path, content] of Object.entries(files))
      await fs.writeBytes(path, typeof content === 'string' ? new TextEncoder().encode(content) : content, { createParents: true });
  const context = await createContext({ ...options, fs, store: join(state, 'state.db'), safety: { policyFiles: false, ...options.safety } });
  return {
    fs,
    context,
    hostRoot,
    link,
    close: async () => {
      await context.close();
      await fs.close();
    },
  };
}

/** Removes the temporary directories and this file's containers. */
export async function cleanUp(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  // Own containers left by a workspace never closed go too (they carry the same labels).
  if (usedDocker) await removeTestContainers();
  container = undefined;
  usedDocker = false;
}

/**
 * A runner over node's child_process in a host workspace's directory,
 * unconfined: enough to show an adapter's wiring (streams, exit code,
 * stdin, kill, working directory). ctxfs's own runners confine commands.
 */
export function shellRunner(root: string): CommandRunner {
  return {
    description: 'Commands run through the test runner.',
    run: async (command, { cwd, signal, stdin, env }) => {
      const child = spawn('sh', ['-c', command], {
        cwd: join(root, cwd),
        env: { ...process.env, ...env },
        signal,
        stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
      const exitCode = new Promise<number>((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code, sig) => resolve(code ?? (sig ? 128 + 9 : 1)));
      });
      return {
        pid: child.pid,
        stdout: Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
        stderr: Readable.toWeb(child.stderr as Readable) as ReadableStream<Uint8Array>,
        ...(child.stdin ? { stdin: Writable.toWeb(child.stdin) as WritableStream<Uint8Array> } : {}),
        exitCode,
        kill: async () => {
          child.kill('SIGKILL');
        },
      };
    },
  };
}

/**
 * Files whose bytes the session's editor would re-encode if it took a byte
 * write as text: legacy-encoded, UTF-16 and BOM-marked text.
 */
export const NON_UTF8_TEXT: Readonly<Record<string, Uint8Array>> = {
  koi8: new Uint8Array([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4, 0x0a]), // "Привет\n" in KOI8-R
  utf16: new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00, 0x0a, 0x00]), // "hi\n", UTF-16LE with a BOM
  bom: new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]), // "hi\n", UTF-8 with a BOM
};

/** Plain UTF-8 bytes a caller wants stored as they are, with characters none of {@link NON_UTF8_TEXT}'s encodings hold. */
export const UTF8_PAYLOAD: Uint8Array = new TextEncoder().encode('retries = 5 ✅ Привет 🚀\n');

/** Bytes as hex, so a mismatch shows where. */
export const hex = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('hex');
