/**
 * The body of a digest worker (see digest-pool.ts): opens each file through
 * its own root guard and hashes it with core's shared `digestStream`, through
 * one buffer for the worker's whole life.
 *
 * @module
 */

import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { DIGEST_BUFFER_BYTES, digestStream, FsError } from '@ctxfs/core';
import type { DigestReply, DigestRequest, DigestWorkerData, WorkerDigest } from './digest-pool.ts';
import { closeQuietly, RootGuard } from './root-guard.ts';

const data = workerData as DigestWorkerData;
const guard = new RootGuard(data.rootReal, data.policy);
const buffer = Buffer.allocUnsafeSlow(DIGEST_BUFFER_BYTES);

/**
 * The directory of the previous file, opened (and verified) through the
 * guard: a request's paths come grouped by directory, so most files are
 * opened relative to it (see `RootGuard.openRegularAt`). It is held for one
 * request at most.
 */
let current: { dir: string; fd: number } | undefined;

function releaseDirectory(): void {
  closeQuietly(current?.fd);
  current = undefined;
}

function openFile(path: string): { fd: number; size: number } {
  const slash = path.lastIndexOf('/');
  const dir = slash < 0 ? '' : path.slice(0, slash);
  if (current?.dir !== dir) {
    releaseDirectory();
    try {
      current = { dir, fd: guard.openPath(dir, true) };
    } catch {
      // The guarded open below reports what is wrong with the path.
    }
  }
  const fast = current === undefined ? undefined : guard.openRegularAt(current.fd, path.slice(slash + 1));
  return fast ?? guard.openRegular(path);
}

async function digestOne(path: string, dirOnly: boolean, headBytes: number, headTarget: Uint8Array): Promise<WorkerDigest> {
  let fd: number | undefined;
  try {
    if (dirOnly) {
      fd = guard.openPath(path);
      const code = fs.fstatSync(fd).isDirectory() ? 'EISDIR' : 'ENOTDIR';
      return { code, reason: undefined, hint: undefined };
    }
    const file = openFile(path);
    fd = file.fd;
    const handle = file.fd;
    let position = 0;
    let ended = false;
    const d = await digestStream(
      (target) => {
        // A short read of a regular file is its end: asking again would cost
        // a system call a file just to hear 0 (most files fit in one read).
        if (ended) return 0;
        const n = fs.readSync(handle, target, 0, target.byteLength, position);
        position += n;
        ended = n < target.byteLength;
        return n;
      },
      buffer,
      headBytes,
      headTarget,
    );
    return { size: d.size, sha256: d.sha256, head: d.head };
  } catch (err) {
    if (err instanceof FsError) return { code: err.code, reason: err.reason, hint: err.hint };
    const code = (err as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'EIO', reason: typeof code === 'string' ? undefined : String(err), hint: undefined };
  } finally {
    closeQuietly(fd);
  }
}

parentPort?.on('message', async (request: DigestRequest) => {
  const { headBytes } = request;
  // The heads of a request share one buffer, handed over (not copied) with
  // the reply: one allocation a request instead of one a file on each side.
  const heads = new Uint8Array(request.paths.length * headBytes);
  const results: WorkerDigest[] = [];
  for (let i = 0; i < request.paths.length; i++) {
    const target = heads.subarray(i * headBytes, (i + 1) * headBytes);
    results.push(await digestOne(request.paths[i] as string, request.dirOnly[i] === true, headBytes, target));
  }
  releaseDirectory();
  parentPort?.postMessage({ id: request.id, results } satisfies DigestReply, headBytes > 0 ? [heads.buffer] : []);
});
