/**
 * Test fixture: one real container per test file, fresh workspaces inside
 * it, and the CI rule that the container suite is never skipped. The engine
 * under test is Docker unless `CTXFS_TEST_ENGINE=podman` (the vitest project
 * `podman` sets it): every helper here and every filesystem a test opens
 * with {@link TEST_ENGINE}'s options talk to that engine only.
 */

import { randomBytes } from 'node:crypto';
import { type FsError, isFsError } from '@ctxfs/core';
import type Docker from 'dockerode';
import * as tar from 'tar-stream';
import { connectEngine, type EngineOptions, engineName } from '../src/engine.ts';

/** A container engine the suites run against. */
export interface TestEngine {
  /** `docker` or `podman`. */
  readonly name: 'docker' | 'podman';
  /** How it appears in test names. */
  readonly label: string;
  /** Pass as `engine` to `ContainerFilesystem.open`. */
  readonly options: EngineOptions;
  /** Its Unix socket (the fault tests put a proxy in front of it). */
  readonly socketPath: string;
}

function selectEngine(): TestEngine {
  const wanted = process.env.CTXFS_TEST_ENGINE ?? 'docker';
  if (wanted === 'podman') {
    // The socket .ci/system-deps.sh starts `podman system service` on.
    const socketPath = process.env.CTXFS_PODMAN_SOCKET ?? '/run/ctxfs-podman/podman.sock';
    return { name: 'podman', label: 'real Podman engine', options: { podman: true, socketPath }, socketPath };
  }
  if (wanted !== 'docker') throw new Error(`CTXFS_TEST_ENGINE=${wanted}: expected docker or podman`);
  const host = process.env.DOCKER_HOST;
  const socketPath = host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock';
  // A DOCKER_HOST other than a Unix socket is left to connectEngine, as the docker CLI would.
  const options = host !== undefined && !host.startsWith('unix://') ? {} : { socketPath };
  return { name: 'docker', label: 'real Docker engine', options, socketPath };
}

/** The engine this test run targets. */
export const TEST_ENGINE: TestEngine = selectEngine();

/** A client of {@link TEST_ENGINE}. */
export function testDocker(): Docker {
  return connectEngine(TEST_ENGINE.options);
}

export const TEST_IMAGE = process.env.CTXFS_TEST_IMAGE ?? 'ctxfs-busybox:latest';
export const TEST_LABEL = 'ctxfs.test';
/**
 * Which test file's module made a container: test files run in parallel, and
 * one file's clean-up must not remove the containers another is using.
 */
const RUN_LABEL = 'ctxfs.test.run';
const RUN_ID = randomBytes(6).toString('hex');
/** Labels of every container a test makes (pass them to `ContainerFilesystem.open` too). */
export const TEST_LABELS: Readonly<Record<string, string>> = Object.freeze({ [TEST_LABEL]: '1', [RUN_LABEL]: RUN_ID });
/** Test containers older than this are a crashed run's leftovers. */
const LEFTOVER_AGE_S = 3600;

/**
 * Whether the engine under test is usable, and is the engine it claims to be
 * (a Podman run that reached Docker would prove nothing). In CI an
 * unreachable engine is a failure (the suite must never be skipped there);
 * locally it skips with a loud warning.
 */
export async function dockerAvailable(): Promise<boolean> {
  const docker = testDocker();
  try {
    await docker.ping();
    const isPodman = (await engineName(docker)) === 'podman';
    if (isPodman !== (TEST_ENGINE.name === 'podman')) {
      throw new Error(`the engine at ${TEST_ENGINE.socketPath} is ${isPodman ? 'Podman' : 'not Podman'}, expected ${TEST_ENGINE.name}`);
    }
    await docker.getImage(TEST_IMAGE).inspect();
    return true;
  } catch (err) {
    const why = `${TEST_ENGINE.name} engine (${TEST_ENGINE.socketPath}) or image ${TEST_IMAGE} unavailable: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${why}. The container suite must run in CI (see .ci/system-deps.sh).`);
    console.warn(
      `\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!! SKIPPING the container backend tests on ${TEST_ENGINE.name}: ${why}\n!! Run bash .ci/system-deps.sh to get an engine and the test image.\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
    );
    return false;
  }
}

/** Creates and starts a labelled test container. */
export async function startTestContainer(extra: Partial<Docker.ContainerCreateOptions> = {}): Promise<Docker.Container> {
  const docker = testDocker();
  const container = await docker.createContainer({
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', 'while :; do sleep 3600; done'],
    name: `ctxfs-test-${randomBytes(4).toString('hex')}`,
    ...extra,
    Labels: { ...TEST_LABELS, ...extra.Labels },
  });
  await container.start();
  return container;
}

/** Removes this test file's containers, and test containers a crashed run left an hour or more ago (on `docker`, default the engine under test). */
export async function removeTestContainers(docker: Docker = testDocker()): Promise<void> {
  const labelled = await docker.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=1`] } });
  const now = Date.now() / 1000;
  const list = labelled.filter((c) => c.Labels[RUN_LABEL] === RUN_ID || now - c.Created > LEFTOVER_AGE_S);
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
}

/** Runs a command in the container (as `user`, default the container's) and returns its stdout (for assertions). */
export async function sh(container: Docker.Container, script: string, user?: string): Promise<{ code: number; stdout: string }> {
  const exec = await container.exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true, ...(user === undefined ? {} : { User: user }) });
  const stream = (await exec.start({ hijack: true, stdin: false })) as unknown as NodeJS.ReadableStream;
  const out: Buffer[] = [];
  const { PassThrough } = await import('node:stream');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  container.modem.demuxStream(stream, stdout, stderr);
  stdout.on('data', (d: Buffer) => out.push(d));
  await new Promise((resolve) => stream.on('end', resolve));
  let info = await exec.inspect();
  while (info.Running) {
    await new Promise((r) => setTimeout(r, 10));
    info = await exec.inspect();
  }
  return { code: info.ExitCode ?? -1, stdout: Buffer.concat(out).toString('utf8') };
}

/**
 * Seeds directory `dir` (relative name under `parentAbs`) with files, empty
 * directories and symbolic links (path → target) in one archive upload.
 */
export async function seedWorkspace(
  container: Docker.Container,
  parentAbs: string,
  dir: string,
  files: Readonly<Record<string, string | Uint8Array>> = {},
  dirs: readonly string[] = [],
  links: Readonly<Record<string, string>> = {},
): Promise<void> {
  const pack = tar.pack();
  const put = container.putArchive(pack as unknown as NodeJS.ReadableStream, { path: parentAbs });
  const made = new Set<string>();
  const mkdirs = (rel: string) => {
    const parts = rel.split('/').filter(Boolean);
    let cur = dir;
    for (const p of parts) {
      cur = `${cur}/${p}`;
      if (made.has(cur)) continue;
      made.add(cur);
      pack.entry({ name: `${cur}/`, type: 'directory', mode: 0o755 });
    }
  };
  pack.entry({ name: `${dir}/`, type: 'directory', mode: 0o755 });
  for (const d of dirs) mkdirs(d);
  for (const [path, content] of Object.entries(files)) {
    const slash = path.lastIndexOf('/');
    if (slash > 0) mkdirs(path.slice(0, slash));
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    pack.entry({ name: `${dir}/${path}`, type: 'file', mode: 0o644 }, data);
  }
  for (const [path, target] of Object.entries(links)) {
    const slash = path.lastIndexOf('/');
    if (slash > 0) mkdirs(path.slice(0, slash));
    pack.entry({ name: `${dir}/${path}`, type: 'symlink', linkname: target, mode: 0o777 });
  }
  pack.finalize();
  await put;
}

/** The FsError `p` rejects with (anything else, or success, fails the test). */
export async function errorOf(p: Promise<unknown>): Promise<FsError> {
  try {
    await p;
  } catch (err) {
    if (isFsError(err)) return err;
    throw err;
  }
  throw new Error('expected an FsError, got success');
}
