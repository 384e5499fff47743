/**
 * Workspace snapshots as tar archives kept by ctxfs on the client side.
 *
 * Why a tar kept by ctxfs and not `docker commit`: a commit captures the
 * whole container filesystem (not just the workspace, and not tmpfs or volume
 * mounts), takes seconds, and restoring it means a new container, so an
 * attached container would lose its identity. A workspace tar is exact (modes,
 * mtimes, empty directories), restores in place, works the same against a
 * remote engine, and lives where the sandboxed process cannot tamper with it.
 * The archive streams to a temporary file, so memory stays bounded.
 *
 * @module
 */

import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Snapshot } from '@ctxfs/core';
import type Docker from 'dockerode';
import { startExecStream } from './exec-stream.ts';

interface Stored {
  readonly info: Snapshot;
  readonly file: string;
  readonly bytes: number;
}

/** The snapshots of one filesystem instance, in creation order. */
export class SnapshotStore {
  #dir: string | undefined;
  readonly #byId = new Map<string, Stored>();
  #counter = 0;
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  async #directory(): Promise<string> {
    this.#dir ??= await mkdtemp(join(tmpdir(), 'ctxfs-snapshots-'));
    return this.#dir;
  }

  /**
   * Streams the archive of `rootAbs` into a new snapshot: through the
   * archive endpoint, or (`viaExec`, for a tmpfs workspace the endpoint
   * cannot see) through the image's own `tar` in an exec.
   */
  async capture(container: Docker.Container, rootAbs: string, tag: string | undefined, viaExec = false): Promise<Snapshot> {
    const id = `${this.#prefix}-${++this.#counter}`;
    const file = join(await this.#directory(), `${id}.tar`);
    try {
      if (viaExec) {
        const slash = rootAbs.lastIndexOf('/');
        const s = await startExecStream(container, ['tar', '-cf', '-', '-C', rootAbs.slice(0, slash) || '/', rootAbs.slice(slash + 1)], false);
        await pipeline(s.stdout, createWriteStream(file));
        const code = await s.exitCode();
        if (code !== 0) throw new Error(`tar exited ${code}: ${s.stderr().trim()}`);
      } else {
        const archive = (await container.getArchive({ path: rootAbs })) as unknown as NodeJS.ReadableStream;
        await pipeline(archive, createWriteStream(file));
      }
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
    const info: Snapshot = Object.freeze({ id, createdAt: new Date(), tag, ref: `tar:${file}` });
    this.#byId.set(id, { info, file, bytes: (await stat(file)).size });
    return info;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** Uploads the snapshot's archive into `parentAbs` (the workspace's parent directory). */
  async upload(container: Docker.Container, id: string, parentAbs: string, viaExec = false): Promise<void> {
    const stored = this.#byId.get(id);
    if (stored === undefined) throw new Error(`unknown snapshot ${id}`);
    if (!viaExec) {
      await container.putArchive(createReadStream(stored.file) as unknown as NodeJS.ReadableStream, { path: parentAbs });
      return;
    }
    const s = await startExecStream(container, ['tar', '-xf', '-', '-C', parentAbs], true);
    s.stdout.resume();
    for await (const chunk of createReadStream(stored.file)) {
      if (!s.socket.write(chunk)) await new Promise((resolve) => s.socket.once('drain', resolve));
    }
    s.socket.end();
    const code = await s.exitCode();
    if (code !== 0) throw new Error(`tar exited ${code}: ${s.stderr().trim()}`);
  }

  list(): Snapshot[] {
    return [...this.#byId.values()].map((s) => s.info);
  }

  async drop(id: string): Promise<boolean> {
    const stored = this.#byId.get(id);
    if (stored === undefined) return false;
    this.#byId.delete(id);
    await rm(stored.file, { force: true });
    return true;
  }

  async clear(): Promise<void> {
    this.#byId.clear();
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}
