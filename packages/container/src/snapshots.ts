/**
 * Workspace snapshots as tar archives kept by ctxfs on the client side.
 *
 * Why a tar kept by ctxfs and not `docker commit`: a commit captures the
 * whole container filesystem (not just the workspace, and not tmpfs or volume
 * mounts), takes seconds, and restoring it means a new container, so an
 * attached container would lose its identity. A workspace tar is exact (modes,
 * mtimes, empty directories), restores in place, works the same against a
 * remote engine, and lives where the sandboxed process cannot tamper with it.
 * The archive streams to a file, so memory stays bounded.
 *
 * Where the archives live: in a directory the caller names, they outlast the
 * instance, and every instance and process naming it (the CLI's commands, an
 * MCP server) sees the same snapshots; otherwise in a temporary directory of
 * the instance's, removed when it closes. Each snapshot is its archive
 * (`<id>.tar`) and, once the archive is complete, a description
 * (`<id>.json`): a listing never shows one being taken.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Snapshot } from '@ctxfs/core';
import type Docker from 'dockerode';
import { startExecStream } from './exec-stream.ts';

/** What `<id>.json` holds. */
interface Description {
  readonly id: string;
  readonly createdAt: string;
  readonly tag?: string | undefined;
  /** The filesystem root the archive is of: a directory shared by mistake never restores another workspace's. */
  readonly root: string;
  readonly bytes: number;
}

const ID = /^[a-z0-9-]+$/;

/** The snapshots of one workspace (a container and its workdir). */
export class SnapshotStore {
  readonly #persistent: string | undefined;
  #dir: string | undefined;
  readonly #prefix: string;
  readonly #root: string;

  /**
   * @param prefix starts every id (`ctr-<container>`).
   * @param root the filesystem's root, recorded in each snapshot and required of it.
   * @param dir where the archives are kept; undefined: a temporary directory removed by {@link clear}.
   */
  constructor(prefix: string, root: string, dir?: string) {
    this.#prefix = prefix;
    this.#root = root;
    this.#persistent = dir;
  }

  async #directory(): Promise<string> {
    if (this.#dir !== undefined) return this.#dir;
    if (this.#persistent === undefined) this.#dir = await mkdtemp(join(tmpdir(), 'ctxfs-snapshots-'));
    else {
      // The archives hold the workspace's files, secrets included: the user's alone.
      await mkdir(this.#persistent, { recursive: true, mode: 0o700 });
      this.#dir = this.#persistent;
    }
    return this.#dir;
  }

  /**
   * Streams the archive of `rootAbs` into a new snapshot: through the
   * archive endpoint, or (`viaExec`, for a tmpfs workspace the endpoint
   * cannot see) through the image's own `tar` in an exec.
   */
  async capture(container: Docker.Container, rootAbs: string, tag: string | undefined, viaExec = false): Promise<Snapshot> {
    const dir = await this.#directory();
    const createdAt = new Date();
    // Unique across the processes sharing the directory, and in creation order.
    const id = `${this.#prefix}-${createdAt.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
    const file = join(dir, `${id}.tar`);
    let description: Description;
    try {
      // 'wx': never another's archive, and the user's alone.
      const sink = createWriteStream(file, { flags: 'wx', mode: 0o600 });
      if (viaExec) {
        const slash = rootAbs.lastIndexOf('/');
        const s = await startExecStream(container, ['tar', '-cf', '-', '-C', rootAbs.slice(0, slash) || '/', rootAbs.slice(slash + 1)], false);
        await pipeline(s.stdout, sink);
        const code = await s.exitCode();
        if (code !== 0) throw new Error(`tar exited ${code}: ${s.stderr().trim()}`);
      } else {
        const archive = (await container.getArchive({ path: rootAbs })) as unknown as NodeJS.ReadableStream;
        await pipeline(archive, sink);
      }
      description = { id, createdAt: createdAt.toISOString(), tag, root: this.#root, bytes: (await stat(file)).size };
      const temp = join(dir, `.${id}.json.tmp`);
      await writeFile(temp, JSON.stringify(description), { mode: 0o600 });
      await rename(temp, join(dir, `${id}.json`));
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
    return snapshotOf(description, file);
  }

  /** The description of snapshot `id` of this workspace, if there is one. */
  async #find(id: string): Promise<Description | undefined> {
    if (!ID.test(id)) return undefined;
    const d = await this.#read(join(await this.#directory(), `${id}.json`));
    return d?.id === id && d.root === this.#root ? d : undefined;
  }

  async #read(path: string): Promise<Description | undefined> {
    try {
      const d = JSON.parse(await readFile(path, 'utf8')) as Partial<Description>;
      if (typeof d.id !== 'string' || typeof d.createdAt !== 'string' || typeof d.root !== 'string') return undefined;
      return d as Description;
    } catch {
      // Gone (dropped meanwhile) or not one of ours: not a snapshot.
      return undefined;
    }
  }

  async has(id: string): Promise<boolean> {
    return (await this.#find(id)) !== undefined;
  }

  /** Uploads the snapshot's archive into `parentAbs` (the workspace's parent directory). */
  async upload(container: Docker.Container, id: string, parentAbs: string, viaExec = false): Promise<void> {
    if ((await this.#find(id)) === undefined) throw new Error(`unknown snapshot ${id}`);
    const file = join(await this.#directory(), `${id}.tar`);
    if (!viaExec) {
      await container.putArchive(createReadStream(file) as unknown as NodeJS.ReadableStream, { path: parentAbs });
      return;
    }
    const s = await startExecStream(container, ['tar', '-xf', '-', '-C', parentAbs], true);
    s.stdout.resume();
    for await (const chunk of createReadStream(file)) {
      if (!s.socket.write(chunk)) await new Promise((resolve) => s.socket.once('drain', resolve));
    }
    s.socket.end();
    const code = await s.exitCode();
    if (code !== 0) throw new Error(`tar exited ${code}: ${s.stderr().trim()}`);
  }

  /** This workspace's snapshots, oldest first. */
  async list(): Promise<Snapshot[]> {
    const dir = await this.#directory();
    const found: Snapshot[] = [];
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const d = await this.#read(join(dir, name));
      if (d !== undefined && d.root === this.#root && `${d.id}.json` === name) found.push(snapshotOf(d, join(dir, `${d.id}.tar`)));
    }
    return found.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  /** Removes snapshot `id`; false when this workspace has none by that id. */
  async drop(id: string): Promise<boolean> {
    if ((await this.#find(id)) === undefined) return false;
    const dir = await this.#directory();
    // The description first: a listing stops showing it before its archive goes.
    await rm(join(dir, `${id}.json`), { force: true });
    await rm(join(dir, `${id}.tar`), { force: true });
    return true;
  }

  /** Removes a temporary directory and its archives; a directory the caller named is kept. */
  async clear(): Promise<void> {
    if (this.#persistent === undefined && this.#dir !== undefined) await rm(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

function snapshotOf(d: Description, file: string): Snapshot {
  return Object.freeze({ id: d.id, createdAt: new Date(d.createdAt), tag: d.tag ?? undefined, ref: `tar:${file}` });
}
