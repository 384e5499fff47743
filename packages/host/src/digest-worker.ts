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
import { type DigestReply, type DigestRequest, type DigestWorkerData, WORKER_READY, type WorkerFailure } from './digest-pool.ts';
import { closeQuietly, DirectoryCursor, RootGuard } from './root-guard.ts';

const data = workerData as DigestWorkerData;
const guard = new RootGuard(data.rootReal, data.policy);
const buffer = Buffer.allocUnsafeSlow(DIGEST_BUFFER_BYTES);

/** A request's paths come grouped by directory: most files are opened relative to it. Held for one request at most. */
const files = new DirectoryCursor(guard);

/** One file's size and hex SHA-256 (its head written to `headTarget`), or why it could not be hashed. */
async function digestOne(
  path: string,
  dirOnly: boolean,
  headBytes: number,
  headTarget: Uint8Array,
): Promise<{ readonly size: number; readonly sha256: string } | WorkerFailure> {
  let fd: number | undefined;
  try {
    if (dirOnly) {
      fd = guard.openPath(path);
      const code = fs.fstatSync(fd).isDirectory() ? 'EISDIR' : 'ENOTDIR';
      return { code, reason: undefined, hint: undefined };
    }
    const file = files.open(path);
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
    return { size: d.size, sha256: d.sha256 };
  } catch (err) {
    if (err instanceof FsError) return { code: err.code, reason: err.reason, hint: err.hint };
    const code = (err as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'EIO', reason: typeof code === 'string' ? undefined : String(err), hint: undefined };
  } finally {
    closeQuietly(fd);
  }
}

/** Stands for the hash of a path that failed, so every path has 64 characters in `hashes`. */
const NO_HASH = '-'.repeat(64);

parentPort?.on('message', async (request: DigestRequest) => {
  const { headBytes } = request;
  const count = request.paths.length;
  // The arrays are handed over with the reply, not copied.
  const sizes = new Float64Array(count);
  const heads = new Uint8Array(count * headBytes);
  const hashes: string[] = [];
  const failures: Array<readonly [number, WorkerFailure]> = [];
  for (let i = 0; i < count; i++) {
    const target = heads.subarray(i * headBytes, (i + 1) * headBytes);
    const d = await digestOne(request.paths[i] as string, request.dirOnly[i] === true, headBytes, target);
    if ('sha256' in d) {
      sizes[i] = d.size;
      hashes.push(d.sha256);
    } else {
      sizes[i] = -1;
      hashes.push(NO_HASH);
      failures.push([i, d]);
    }
  }
  files.release();
  const reply: DigestReply = { id: request.id, sizes, hashes: hashes.join(''), heads, headBytes, failures };
  parentPort?.postMessage(reply, [sizes.buffer, heads.buffer]);
});

// Everything above loaded and ran: the pool may count on this worker.
parentPort?.postMessage(WORKER_READY);
