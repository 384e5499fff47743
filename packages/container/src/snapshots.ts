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
import { createWriteStream, existsSync } from 'node:fs';
import { type FileHandle, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type FsOperation, fsError, type Snapshot } from '@ctxfs/core';
import type Docker from 'dockerode';
import * as tar from 'tar-stream';
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

/** A snapshot's archive, open and checked, for one restore. */
export interface HeldArchive {
  /** The archive's top directory: the workspace root's name when it was taken. */
  readonly base: string;
  /** The archive from its start (each call a new stream over the open file). */
  stream(): NodeJS.ReadableStream & AsyncIterable<Uint8Array>;
  close(): Promise<void>;
}

/**
 * Reads a tar archive through and returns its one top directory: every
 * entry must be that directory or inside it (`./` allowed before it), with
 * no `..` segment, and the archive must end where its headers say.
 */
async function topDirectory(input: NodeJS.ReadableStream): Promise<string> {
  const extract = tar.extract();
  let base: string | undefined;
  let problem: string | undefined;
  extract.on('entry', (header, entry, next) => {
    const segments = header.name
      .replace(/^(\.\/)+/, '')
      .split('/')
      .filter((s) => s !== '');
    const top = segments[0];
    if (top === undefined || segments.includes('..')) problem ??= `an entry is named '${header.name}'`;
    else if (base === undefined) base = top;
    else if (top !== base) problem ??= `entries are under both '${base}' and '${top}'`;
    entry.on('end', next);
    entry.resume();
  });
  await pipeline(input, extract as unknown as NodeJS.WritableStream);
  if (problem !== undefined) throw new Error(problem);
  if (base === undefined) throw new Error('it holds no entry');
  return base;
}

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

  async #directory(op: FsOperation): Promise<string> {
    if (this.#dir !== undefined) return this.#dir;
    if (this.#persistent === undefined) this.#dir = await mkdtemp(join(tmpdir(), 'ctxfs-snapshots-'));
    else {
      try {
        // The archives hold the workspace's files, secrets included: the user's alone.
        await mkdir(this.#persistent, { recursive: true, mode: 0o700 });
        if (!(await stat(this.#persistent)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        throw fsError(e.code === 'EACCES' || e.code === 'EPERM' ? 'EACCES' : 'EINVAL', op, undefined, {
          reason: `the snapshot directory ${this.#persistent} cannot be used: ${e.code === 'EEXIST' ? 'a file is in its place' : e.message}`,
          hint: 'name a directory this user can write as snapshotDir (the ctxfs CLI keeps them under $XDG_STATE_HOME/ctxfs)',
          cause: err,
        });
      }
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
    const dir = await this.#directory('snapshot');
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
        // ./name: a workdir whose name starts with '-' is not taken for an option.
        const s = await startExecStream(container, ['tar', '-cf', '-', '-C', rootAbs.slice(0, slash) || '/', `./${rootAbs.slice(slash + 1)}`], false);
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
  async #find(id: string, op: FsOperation): Promise<Description | undefined> {
    if (!ID.test(id)) return undefined;
    const d = await this.#read(join(await this.#directory(op), `${id}.json`));
    return d?.id === id && d.root === this.#root ? d : undefined;
  }

  async #read(path: string): Promise<Description | undefined> {
    try {
      const d = JSON.parse(await readFile(path, 'utf8')) as Partial<Description>;
      if (typeof d.id !== 'string' || typeof d.root !== 'string' || typeof d.createdAt !== 'string' || Number.isNaN(Date.parse(d.createdAt))) return undefined;
      return d as Description;
    } catch {
      // Gone (dropped meanwhile) or not one of ours: not a snapshot.
      return undefined;
    }
  }

  /**
   * Takes hold of snapshot `id`'s archive for a restore, before anything in
   * the workspace is touched: the archive is opened (a drop meanwhile cannot
   * take it away) and read through once — its size must be the one
   * recorded, its headers whole, every entry inside one top directory.
   * Unknown, missing or damaged, it is `ENOSNAPSHOT` and nothing was
   * changed.
   */
  async hold(id: string): Promise<HeldArchive> {
    const unknown = (reason: string, cause?: unknown) =>
      fsError('ENOSNAPSHOT', 'restore', undefined, {
        reason,
        hint: 'nothing in the workspace was changed; list the snapshots with listSnapshots() (ctxfs snapshot list), drop a damaged one and take a new one',
        cause,
      });
    const d = await this.#find(id, 'restore');
    if (d === undefined) throw unknown(`unknown snapshot '${id}'`);
    const file = join(await this.#directory('restore'), `${id}.tar`);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      throw unknown(`the archive of snapshot '${id}' is missing from ${dirname(file)}`, err);
    }
    try {
      const size = (await handle.stat()).size;
      if (size !== d.bytes) throw new Error(`it has ${size} bytes where ${d.bytes} were recorded`);
      const base = await topDirectory(handle.createReadStream({ start: 0, autoClose: false }));
      return {
        base,
        stream: () => handle.createReadStream({ start: 0, autoClose: false }),
        close: () => handle.close(),
      };
    } catch (err) {
      await handle.close();
      throw unknown(`the archive of snapshot '${id}' is damaged (${(err as Error).message}): it cannot be restored`, err);
    }
  }

  /** Uploads an archive into `parentAbs` (it unpacks there as its top directory). */
  async upload(container: Docker.Container, archive: HeldArchive, parentAbs: string, viaExec = false): Promise<void> {
    if (!viaExec) {
      await container.putArchive(archive.stream() as unknown as NodeJS.ReadableStream, { path: parentAbs });
      return;
    }
    const s = await startExecStream(container, ['tar', '-xf', '-', '-C', parentAbs], true);
    s.stdout.resume();
    for await (const chunk of archive.stream()) {
      if (!s.socket.write(chunk)) await new Promise((resolve) => s.socket.once('drain', resolve));
    }
    s.socket.end();
    const code = await s.exitCode();
    if (code !== 0) throw new Error(`tar exited ${code}: ${s.stderr().trim()}`);
  }

  /** This workspace's snapshots, oldest first. */
  async list(): Promise<Snapshot[]> {
    // A listing creates nothing: a directory never written to holds no snapshot.
    if (this.#dir === undefined && this.#persistent !== undefined && !existsSync(this.#persistent)) return [];
    const dir = await this.#directory('listSnapshots');
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
    if ((await this.#find(id, 'dropSnapshot')) === undefined) return false;
    const dir = await this.#directory('dropSnapshot');
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
