/**
 * A server on an image backend (`--backend image:<ref>`) creates its
 * container and must remove it when its client goes away, however it goes:
 * stdin closed, or the SDK client's close. Closing the transport stops the
 * server from within its own stop; that second stop must wait for the first
 * (and a second close of the backend for the first), or the process exits
 * while the container is still being removed, and the container stays.
 */

import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, TEST_IMAGE, testDocker } from '../../container/test/docker-fixture.ts';
import { connectStdio, NODE_ARGS, serverEnv } from './support/server.ts';

const available = await dockerAvailable();
// A tag of the test image for this file alone: the containers made from it are this file's, whatever else runs.
// They are told apart by the name they were created from: the engine's `ancestor` filter resolves a tag to its
// image id, and so counted every container of the test image that other files made meanwhile.
const TAG = `ctxfs-image-close-${process.pid}:latest`;

describe.runIf(available)('a server on an image backend removes its container when its client goes away', () => {
  const docker = testDocker();
  const made = async () => (await docker.listContainers({ all: true })).filter((c) => c.Image === TAG);
  const ours = async () => (await made()).length;
  const gone = async () => {
    await expect.poll(ours, { timeout: 20_000 }).toBe(0);
  };

  beforeAll(async () => {
    const [repo, tag] = TAG.split(':') as [string, string];
    await docker.getImage(TEST_IMAGE).tag({ repo, tag });
  });
  afterAll(async () => {
    for (const c of await made()) await docker.getContainer(c.Id).remove({ force: true });
    await docker.getImage(TAG).remove();
  });

  it('when the SDK client closes', { timeout: 60_000 }, async () => {
    const c = await connectStdio(['--backend', `image:${TAG}`, '--workdir', '/tmp'], { listTools: false });
    const r = await c.client.callTool({ name: 'list_files', arguments: {} });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(await ours()).toBe(1);
    await c.close();
    await gone();
  });

  it('when its stdin ends', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [...NODE_ARGS, '--backend', `image:${TAG}`, '--workdir', '/tmp'], {
      env: serverEnv(),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    await expect.poll(ours, { timeout: 20_000 }).toBe(1);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    // The process has exited: whatever it left now stays.
    expect(await ours()).toBe(0);
  });
});
