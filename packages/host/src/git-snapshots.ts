/**
 * Snapshots as git commits in a git directory of their own, kept in the
 * state directory outside the workspace: a workspace that is itself a git
 * repository is never touched (its `.git` is excluded by default).
 *
 * - `snapshot` walks the tree and writes blobs only for files whose stat
 *   (size, mtime, ctime, inode, mode) differs from the cache of the last
 *   snapshot or restore, as git's index does; files changed too close to the
 *   cache time are re-hashed ("racy git"). Trees are cached per directory.
 * - Blobs and trees are ordinary git loose objects, hashed and deflated with
 *   node's native crypto and zlib (what isomorphic-git's `writeObject` with
 *   `format: 'deflated'` stores); commits, refs and the repository itself go
 *   through isomorphic-git (`refs/ctxfs/<id>`), so the store is a valid bare
 *   repository (`git --git-dir=... log refs/ctxfs/...`, `git fsck` clean).
 * - Exact modes (git keeps only 644/755) and the tag are stored in the commit
 *   message as JSON. Empty directories are stored as empty trees, so they
 *   survive restore. Symlinks are stored as git symlinks (mode 120000).
 * - `restore` makes the tree exactly the snapshot's: files created since are
 *   removed, deleted and changed ones rewritten (atomically, temp + rename),
 *   modes restored; unchanged files are not rewritten.
 * - `drop` deletes the ref, then garbage-collects: loose objects no remaining
 *   ref reaches are deleted (mark from every ref, sweep `objects/xx/…`).
 *   Packfiles are never written by ctxfs and are left alone.
 *
 * @module
 */

import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import nodePath from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Snapshot } from '@ctxfs/core';
import { tempName } from './atomic-write.ts';
import { lockFileWithin, tryLockFile } from './locks.ts';
import { closeQuietly, hostError, O_PATH, type RootGuard } from './root-guard.ts';

/** zlib, loaded when a snapshot is first made or read: the host backend is opened by every command, few snapshot. */
const zlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib');

const { O_DIRECTORY, O_NOFOLLOW, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;

/** Options of {@link GitSnapshotStore}. */
export interface GitSnapshotStoreOptions {
  guard: RootGuard;
  /** Bare git directory (created on first use). */
  gitdir: string;
  /** Names (at any depth) never snapshotted and never touched by restore. */
  exclude: (name: string) => boolean;
}

interface CacheEntry {
  size: number;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
  mode: number;
  oid: string;
}

interface TreeCacheEntry {
  sig: string;
  oid: string;
}

interface Meta {
  ctxfs: 1;
  id: string;
  tag?: string | undefined;
  createdAt: string;
  /** Exact modes where git's 644/755/040000 would lose bits: path → mode. */
  modes: Record<string, number>;
}

interface GitEntry {
  mode: string;
  path: string;
  oid: string;
  type: 'blob' | 'tree';
}

type Git = typeof import('isomorphic-git').default;
let gitModule: Git | undefined;
// Loaded on first use: most sessions never snapshot, and it costs ~50 ms at startup.
async function loadGit(): Promise<Git> {
  gitModule ??= (await import('isomorphic-git')).default;
  return gitModule;
}

const REF_PREFIX = 'refs/ctxfs/';
const RACY_MARGIN_NS = 50_000_000n; // timestamps come from a coarse clock
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const STORE_LOCK_STALE_MS = 10_000;
const STORE_LOCK_TIMEOUT_MS = 60_000;
const TMP_OBJECT_MAX_AGE_MS = 3_600_000; // a temp object this old belongs to a crashed write
const OID = /^[0-9a-f]{40}$/;

/** Files larger than this are hashed, deflated and restored a chunk at a time. */
const STREAMED_BLOB_BYTES = 64 << 20;

/** The size a loose blob object's header states, from its first bytes. */
function blobSize(path: string): number {
  const fd = fs.openSync(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    const out = zlib().inflateSync(head.subarray(0, n), { finishFlush: zlib().constants.Z_SYNC_FLUSH });
    const m = /^blob (\d+)\0/.exec(out.subarray(0, 32).toString('latin1'));
    return m === null ? Number.POSITIVE_INFINITY : Number(m[1]);
  } finally {
    fs.closeSync(fd);
  }
}

function gitHash(type: string, body: Uint8Array): { oid: string; wrapped: Buffer } {
  const wrapped = Buffer.concat([Buffer.from(`${type} ${body.byteLength}\0`), body]);
  return { oid: createHash('sha1').update(wrapped).digest('hex'), wrapped };
}

function treeBody(entries: GitEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => {
    const x = a.type === 'tree' ? `${a.path}/` : a.path;
    const y = b.type === 'tree' ? `${b.path}/` : b.path;
    return Buffer.compare(Buffer.from(x), Buffer.from(y));
  });
  const parts: Buffer[] = [];
  for (const e of sorted) {
    parts.push(Buffer.from(`${e.mode === '040000' ? '40000' : e.mode} ${e.path}\0`), Buffer.from(e.oid, 'hex'));
  }
  return Buffer.concat(parts);
}

function canonicalMode(gm: string): number {
  return gm === '040000' ? 0o755 : gm === '100755' ? 0o755 : gm === '120000' ? 0o777 : 0o644;
}

/** One snapshot store per workspace. */
export class GitSnapshotStore {
  readonly #guard: RootGuard;
  readonly #gitdir: string;
  readonly #exclude: (name: string) => boolean;
  #ready = false;
  #cache = new Map<string, CacheEntry>();
  #trees = new Map<string, TreeCacheEntry>();
  #cacheLoaded = false;
  /** The prune generation the in-memory cache was last checked against (see {@link #checkCache}). */
  #gcSeen: string | undefined;
  #busy: Promise<unknown> = Promise.resolve();

  constructor(options: GitSnapshotStoreOptions) {
    this.#guard = options.guard;
    this.#gitdir = options.gitdir;
    this.#exclude = options.exclude;
  }

  /** Serializes store operations: a snapshot never interleaves with a restore. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#busy.then(fn, fn);
    this.#busy = run.catch(() => {});
    return run;
  }

  async #init(): Promise<void> {
    if (this.#ready) return;
    const git = await loadGit();
    if (!fs.existsSync(nodePath.join(this.#gitdir, 'HEAD'))) {
      fs.mkdirSync(this.#gitdir, { recursive: true, mode: 0o700 });
      await git.init({ fs, gitdir: this.#gitdir, bare: true, defaultBranch: 'ctxfs' });
    }
    if (!this.#cacheLoaded) {
      this.#cacheLoaded = true;
      try {
        const raw = JSON.parse(fs.readFileSync(nodePath.join(this.#gitdir, 'ctxfs-cache.json'), 'utf8')) as {
          files: Record<string, CacheEntry>;
          trees: Record<string, TreeCacheEntry>;
        };
        this.#cache = new Map(Object.entries(raw.files ?? {}));
        this.#trees = new Map(Object.entries(raw.trees ?? {}));
      } catch {
        // No cache yet (or unreadable): everything is hashed once.
      }
    }
    this.#ready = true;
  }

  #saveCache(): void {
    const file = nodePath.join(this.#gitdir, 'ctxfs-cache.json');
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ files: Object.fromEntries(this.#cache), trees: Object.fromEntries(this.#trees) }));
    fs.renameSync(tmp, file);
  }

  async #writeObject(type: 'blob' | 'tree', body: Uint8Array): Promise<string> {
    const { oid, wrapped } = gitHash(type, body);
    const dir = nodePath.join(this.#gitdir, 'objects', oid.slice(0, 2));
    const path = nodePath.join(dir, oid.slice(2));
    if (fs.existsSync(path)) return oid;
    // A loose object exactly as git (and isomorphic-git's writeObject) writes
    // it: zlib of "<type> <size>\0<body>", created under a temp name and
    // renamed, so a crash never leaves a truncated object. Hashing and
    // deflating natively is what makes hashing a thousand files cheap.
    fs.mkdirSync(dir, { recursive: true });
    const tmp = nodePath.join(dir, `tmp_${process.pid}_${randomBytes(6).toString('hex')}`);
    fs.writeFileSync(tmp, zlib().deflateSync(wrapped, { level: 1 }), { mode: 0o444 });
    fs.renameSync(tmp, path);
    return oid;
  }

  /**
   * A large file's blob, hashed and deflated a chunk at a time from one open
   * descriptor: memory stays at a chunk whatever the size (a whole file in a
   * buffer stopped at 2 GiB, and took twice the file's size before that).
   */
  async #writeStreamedBlob(p: string, rel: string): Promise<string> {
    const fd = fs.openSync(p, fs.constants.O_RDONLY | O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const objects = nodePath.join(this.#gitdir, 'objects');
    const tmp = nodePath.join(objects, `tmp_${process.pid}_${randomBytes(6).toString('hex')}`);
    try {
      const size = fs.fstatSync(fd).size;
      const hash = createHash('sha1').update(`blob ${size}\0`);
      const deflate = zlib().createDeflate({ level: 1 });
      const written = pipeline(deflate, fs.createWriteStream(tmp, { mode: 0o444 }));
      // A failure of the writer ends the reading loop at its next chunk.
      let failed: unknown;
      written.catch((err: unknown) => {
        failed ??= err;
      });
      deflate.write(`blob ${size}\0`);
      const chunk = Buffer.allocUnsafe(1 << 20);
      let total = 0;
      for (;;) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0 || failed !== undefined) break;
        total += n;
        const piece = Buffer.from(chunk.subarray(0, n));
        hash.update(piece);
        if (!deflate.write(piece)) await once(deflate, 'drain');
      }
      deflate.end();
      await written;
      if (total !== size) {
        throw hostError(
          'ECONFLICT',
          rel,
          `${rel} changed size while it was snapshotted (${size} bytes, then ${total})`,
          'take the snapshot again once the file is no longer being written',
        );
      }
      const oid = hash.digest('hex');
      const path = nodePath.join(objects, oid.slice(0, 2), oid.slice(2));
      if (fs.existsSync(path)) fs.rmSync(tmp, { force: true });
      else {
        fs.mkdirSync(nodePath.dirname(path), { recursive: true });
        fs.renameSync(tmp, path);
      }
      return oid;
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Writes blob `oid`'s content to descriptor `fd`: inflated whole when it is
   * small, a chunk at a time when it is large (the object's header, read
   * from its first bytes, says which).
   */
  async #writeBlobTo(oid: string, fd: number): Promise<void> {
    const path = nodePath.join(this.#gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
    const compressed = fs.statSync(path, { throwIfNoEntry: false })?.size;
    if (compressed === undefined || compressed < 64 * 1024 || blobSize(path) <= STREAMED_BLOB_BYTES) {
      fs.writeSync(fd, (await this.#readObject(oid)).body);
      return;
    }
    let header = true;
    const inflate = fs.createReadStream(path).pipe(zlib().createInflate());
    for await (const piece of inflate as AsyncIterable<Buffer>) {
      let body = piece;
      if (header) {
        const nul = piece.indexOf(0);
        // "blob <size>" fits in the first piece inflated (at least 16 KiB).
        body = piece.subarray(nul + 1);
        header = false;
      }
      for (let at = 0; at < body.length; ) at += fs.writeSync(fd, body, at);
    }
  }

  async #readObject(oid: string): Promise<{ type: string; body: Buffer }> {
    const path = nodePath.join(this.#gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
    try {
      const raw = zlib().inflateSync(fs.readFileSync(path));
      const sp = raw.indexOf(0x20);
      const nul = raw.indexOf(0);
      return { type: raw.subarray(0, sp).toString(), body: raw.subarray(nul + 1) };
    } catch {
      const git = await loadGit();
      const r = await git.readObject({ fs, gitdir: this.#gitdir, oid, format: 'content' });
      return { type: r.type, body: Buffer.from(r.object as Uint8Array) };
    }
  }

  async #readTree(oid: string): Promise<GitEntry[]> {
    if (oid === EMPTY_TREE) return [];
    const { body } = await this.#readObject(oid);
    const out: GitEntry[] = [];
    let i = 0;
    while (i < body.length) {
      const sp = body.indexOf(0x20, i);
      const nul = body.indexOf(0, sp);
      const mode = body.subarray(i, sp).toString().padStart(6, '0');
      const path = body.subarray(sp + 1, nul).toString();
      const eoid = body.subarray(nul + 1, nul + 21).toString('hex');
      out.push({ mode, path, oid: eoid, type: mode === '040000' ? 'tree' : 'blob' });
      i = nul + 21;
    }
    return out;
  }

  // ---------------------------------------------------------------- snapshot

  snapshot(tag: string | undefined): Promise<Snapshot> {
    return this.#serial(async () => {
      await this.#init();
      const release = await this.#lockStore('snapshot');
      try {
        return await this.#snapshotLocked(tag);
      } finally {
        release();
      }
    });
  }

  async #snapshotLocked(tag: string | undefined): Promise<Snapshot> {
    this.#checkCache();
    const started = BigInt(Date.now()) * 1_000_000n;
    const modes: Record<string, number> = {};
    const seen = new Set<string>();
    const tree = await this.#snapDir('', started, modes, seen);
    for (const key of this.#cache.keys()) if (!seen.has(key)) this.#cache.delete(key);
    const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const createdAt = new Date();
    const meta: Meta = { ctxfs: 1, id, tag, createdAt: createdAt.toISOString(), modes };
    const git = await loadGit();
    const who = { name: 'ctxfs', email: 'ctxfs@localhost', timestamp: Math.floor(createdAt.getTime() / 1000), timezoneOffset: 0 };
    const commit = await git.writeCommit({
      fs,
      gitdir: this.#gitdir,
      commit: { message: `ctxfs snapshot${tag ? ` ${tag}` : ''}\n\n${JSON.stringify(meta)}\n`, tree, parent: [], author: who, committer: who },
    });
    await git.writeRef({ fs, gitdir: this.#gitdir, ref: REF_PREFIX + id, value: commit, force: true });
    this.#saveCache();
    return Object.freeze({ id, createdAt, tag, ref: commit });
  }

  async #snapDir(dir: string, started: bigint, modes: Record<string, number>, seen: Set<string>): Promise<string> {
    const dfd = this.#guard.open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    const entries: GitEntry[] = [];
    try {
      const dirMode = fs.fstatSync(dfd).mode & 0o7777;
      if (dir !== '' && dirMode !== 0o755) modes[dir] = dirMode;
      const names = fs.readdirSync(this.#guard.via(dfd));
      for (const name of names) {
        if (this.#exclude(name)) continue;
        const rel = dir === '' ? name : `${dir}/${name}`;
        const p = this.#guard.via(dfd, name);
        let st: fs.BigIntStats;
        try {
          st = fs.lstatSync(p, { bigint: true });
        } catch {
          continue; // vanished while walking
        }
        const mode = Number(st.mode & 0o7777n);
        if (st.isDirectory()) {
          entries.push({ mode: '040000', path: name, oid: await this.#snapDir(rel, started, modes, seen), type: 'tree' });
          continue;
        }
        if (!st.isFile() && !st.isSymbolicLink()) continue; // FIFOs, sockets, devices are not content
        const gm = st.isSymbolicLink() ? '120000' : mode & 0o111 ? '100755' : '100644';
        if (gm !== '120000' && mode !== canonicalMode(gm)) modes[rel] = mode;
        seen.add(rel);
        const cached = this.#cache.get(rel);
        const key = { size: Number(st.size), mtimeNs: st.mtimeNs.toString(), ctimeNs: st.ctimeNs.toString(), ino: st.ino.toString(), mode };
        let oid: string;
        if (
          cached !== undefined &&
          cached.size === key.size &&
          cached.mtimeNs === key.mtimeNs &&
          cached.ctimeNs === key.ctimeNs &&
          cached.ino === key.ino &&
          cached.mode === key.mode
        ) {
          oid = cached.oid;
        } else {
          if (st.isSymbolicLink()) oid = await this.#writeObject('blob', Buffer.from(fs.readlinkSync(p, { encoding: 'buffer' })));
          else if (key.size > STREAMED_BLOB_BYTES) oid = await this.#writeStreamedBlob(p, rel);
          else oid = await this.#writeObject('blob', this.#readFile(p));
        }
        // Racily clean entries (changed within the clock's granularity of now) are hashed again next time.
        if (st.mtimeNs < started - RACY_MARGIN_NS && st.ctimeNs < started - RACY_MARGIN_NS) this.#cache.set(rel, { ...key, oid });
        else this.#cache.delete(rel);
        entries.push({ mode: gm, path: name, oid, type: 'blob' });
      }
    } finally {
      fs.closeSync(dfd);
    }
    const sig = entries
      .map((e) => `${e.mode} ${e.path} ${e.oid}`)
      .sort()
      .join('\n');
    const cachedTree = this.#trees.get(dir);
    if (cachedTree?.sig === sig) return cachedTree.oid;
    const oid = entries.length === 0 ? await this.#writeObject('tree', Buffer.alloc(0)) : await this.#writeObject('tree', treeBody(entries));
    this.#trees.set(dir, { sig, oid });
    return oid;
  }

  #readFile(p: string): Buffer {
    // O_NOFOLLOW: the entry was a regular file a moment ago; if it became a link, do not follow it.
    const fd = fs.openSync(p, fs.constants.O_RDONLY | O_NOFOLLOW | fs.constants.O_NONBLOCK);
    try {
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  // ---------------------------------------------------------------- restore

  restore(id: string): Promise<void> {
    return this.#serial(async () => {
      await this.#init();
      // Locked so that another process cannot drop and prune this snapshot's objects mid-restore.
      const release = await this.#lockStore('restore');
      try {
        const { tree, meta } = await this.#lookup(id, 'restore');
        await this.#restoreDir('', tree, meta.modes);
        this.#saveCache();
      } finally {
        release();
      }
    });
  }

  async #lookup(id: string, op: string): Promise<{ commit: string; tree: string; meta: Meta }> {
    if (!/^[0-9a-z]+-[0-9a-f]+$/.test(id)) throw this.#unknown(id, op);
    const git = await loadGit();
    let commit: string;
    try {
      commit = await git.resolveRef({ fs, gitdir: this.#gitdir, ref: REF_PREFIX + id });
    } catch {
      throw this.#unknown(id, op);
    }
    const c = await git.readCommit({ fs, gitdir: this.#gitdir, oid: commit });
    return { commit, tree: c.commit.tree, meta: parseMeta(c.commit.message, id) };
  }

  #unknown(id: string, _op: string) {
    return hostError('ENOSNAPSHOT', '', `unknown snapshot '${id}'`, 'list the known snapshots with listSnapshots()');
  }

  async #restoreDir(dir: string, treeOid: string, modes: Record<string, number>): Promise<void> {
    const want = await this.#readTree(treeOid);
    const dfd = this.#guard.open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    try {
      const wanted = new Map(want.map((e) => [e.path, e]));
      for (const d of fs.readdirSync(this.#guard.via(dfd), { withFileTypes: true })) {
        const name = d.name;
        if (this.#exclude(name) || wanted.has(name)) continue;
        // FIFOs, sockets and devices are not content: never snapshotted, never removed.
        if (!d.isFile() && !d.isDirectory() && !d.isSymbolicLink()) continue;
        fs.rmSync(this.#guard.via(dfd, name), { recursive: true, force: true });
        this.#forget(dir === '' ? name : `${dir}/${name}`);
      }
      for (const e of want) {
        const rel = dir === '' ? e.path : `${dir}/${e.path}`;
        const p = this.#guard.via(dfd, e.path);
        let st: fs.BigIntStats | undefined;
        try {
          st = fs.lstatSync(p, { bigint: true });
        } catch {
          st = undefined;
        }
        if (e.type === 'tree') {
          if (st !== undefined && !st.isDirectory()) {
            fs.rmSync(p, { force: true });
            this.#forget(rel);
            st = undefined;
          }
          if (st === undefined) fs.mkdirSync(p);
          await this.#restoreDir(rel, e.oid, modes);
          const mode = modes[rel] ?? 0o755;
          if (st === undefined || Number(st.mode & 0o7777n) !== mode) fs.chmodSync(p, mode);
          continue;
        }
        const mode = modes[rel] ?? canonicalMode(e.mode);
        if (st?.isDirectory()) {
          fs.rmSync(p, { recursive: true, force: true });
          this.#forget(rel);
          st = undefined;
        }
        if (e.mode === '120000') {
          const target = (await this.#readObject(e.oid)).body;
          if (st?.isSymbolicLink() && fs.readlinkSync(p, { encoding: 'buffer' }).equals(target)) continue;
          if (st !== undefined) fs.rmSync(p, { force: true });
          fs.symlinkSync(target, p);
          this.#cache.delete(rel);
          continue;
        }
        const cached = this.#cache.get(rel);
        const same =
          st?.isFile() &&
          cached !== undefined &&
          cached.oid === e.oid &&
          cached.size === Number(st.size) &&
          cached.mtimeNs === st.mtimeNs.toString() &&
          cached.ctimeNs === st.ctimeNs.toString() &&
          cached.ino === st.ino.toString();
        if (same && st !== undefined) {
          if (Number(st.mode & 0o7777n) !== mode) {
            fs.chmodSync(p, mode);
            this.#cache.delete(rel); // ctime changed
          }
          continue;
        }
        const tmp = this.#guard.via(dfd, tempName());
        const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
        try {
          await this.#writeBlobTo(e.oid, fd);
          fs.fchmodSync(fd, mode);
        } catch (err) {
          fs.closeSync(fd);
          fs.rmSync(tmp, { force: true });
          throw err;
        }
        fs.closeSync(fd);
        try {
          fs.renameSync(tmp, p);
        } catch (err) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
        this.#cache.delete(rel); // re-hashed (cheaply, it is small or just written) on the next snapshot
      }
    } finally {
      closeQuietly(dfd);
    }
    this.#trees.delete(dir);
  }

  #forget(rel: string): void {
    this.#cache.delete(rel);
    const prefix = `${rel}/`;
    for (const k of this.#cache.keys()) if (k.startsWith(prefix)) this.#cache.delete(k);
  }

  // ---------------------------------------------------------------- list / drop

  list(): Promise<Snapshot[]> {
    return this.#serial(async () => {
      await this.#init();
      const git = await loadGit();
      const refs = await git.listRefs({ fs, gitdir: this.#gitdir, filepath: 'refs/ctxfs' });
      const out: Snapshot[] = [];
      for (const name of refs) {
        const id = name.replace(/^refs\/ctxfs\//, '');
        try {
          const { commit, meta } = await this.#lookup(id, 'listSnapshots');
          out.push(Object.freeze({ id, createdAt: new Date(meta.createdAt), tag: meta.tag, ref: commit }));
        } catch {
          // A ref that is not one of ours is ignored.
        }
      }
      return out.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    });
  }

  drop(id: string): Promise<void> {
    return this.#serial(async () => {
      await this.#init();
      await this.#lookup(id, 'dropSnapshot');
      const git = await loadGit();
      await git.deleteRef({ fs, gitdir: this.#gitdir, ref: REF_PREFIX + id });
      // The drop has happened; a failed prune only leaves garbage that the next drop collects.
      try {
        await this.#prune();
      } catch {
        // nothing deleted that any ref reaches: mark completes before the sweep starts
      }
    });
  }

  // ---------------------------------------------------------------- garbage collection

  /**
   * Deletes the loose objects that no ref reaches, so that snapshots dropped
   * over a long session do not grow the state directory without bound.
   * Run by `drop` (inside the serialization, so it never races a snapshot of
   * this store); exposed for tests and maintenance.
   *
   * Returns what was deleted, or `undefined` when another process held the
   * store (it is snapshotting or restoring; the next drop collects instead).
   *
   * @example
   * ```ts
   * const { deleted, kept } = (await store.prune()) ?? { deleted: 0, kept: 0 };
   * ```
   */
  prune(): Promise<{ deleted: number; kept: number } | undefined> {
    return this.#serial(() => this.#prune());
  }

  async #prune(): Promise<{ deleted: number; kept: number } | undefined> {
    await this.#init();
    let release: () => void;
    try {
      release = this.#tryLockStore();
    } catch {
      return undefined;
    }
    try {
      return await this.#pruneLocked();
    } finally {
      release();
    }
  }

  async #pruneLocked(): Promise<{ deleted: number; kept: number }> {
    // Mark everything first: any error here (unreadable ref, missing or
    // corrupt object) aborts before a single file is deleted.
    const marked = new Set<string>();
    const visited = new Set<string>(); // commits and trees already walked: shared subtrees are read once
    for (const oid of this.#refTips()) await this.#mark(oid, 'commit', marked, visited);

    // The incremental-hash cache reuses blob/tree oids of the last snapshot
    // without rewriting them. If that snapshot was just dropped, those oids
    // are about to vanish: forget every cached oid that is not marked, and
    // persist that *before* sweeping, so that neither this store nor a later
    // one loading ctxfs-cache.json can build a tree over a deleted object
    // even if the sweep dies halfway. Other processes see the new generation
    // token and re-check their in-memory caches on their next snapshot.
    for (const [k, e] of this.#cache) if (!marked.has(e.oid)) this.#cache.delete(k);
    for (const [k, e] of this.#trees) if (!marked.has(e.oid)) this.#trees.delete(k);
    this.#saveCache();
    this.#gcSeen = this.#writeGcToken();

    let deleted = 0;
    let kept = 0;
    const objects = nodePath.join(this.#gitdir, 'objects');
    const now = Date.now();
    for (const fan of fs.readdirSync(objects)) {
      if (!/^[0-9a-f]{2}$/.test(fan)) continue; // pack/, info/: never written by ctxfs, left alone
      const dir = nodePath.join(objects, fan);
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        continue;
      }
      let left = names.length;
      for (const name of names) {
        const file = nodePath.join(dir, name);
        try {
          if (/^[0-9a-f]{38}$/.test(name)) {
            if (marked.has(fan + name)) {
              kept++;
              continue;
            }
          } else if (!(name.startsWith('tmp_') && now - fs.lstatSync(file).mtimeMs > TMP_OBJECT_MAX_AGE_MS)) {
            continue;
          }
          fs.unlinkSync(file);
          deleted++;
          left--;
        } catch {
          // Not deletable now (permissions, vanished): harmless garbage, retried next prune.
        }
      }
      if (left === 0) {
        try {
          fs.rmdirSync(dir);
        } catch {
          // not empty after all
        }
      }
    }
    return { deleted, kept };
  }

  /** Commit oids of every ref (loose and packed), not only ours: anything a ref names is kept. */
  #refTips(): string[] {
    const tips: string[] = [];
    const walk = (dir: string) => {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOENT') return;
        throw err;
      }
      for (const d of entries) {
        const p = nodePath.join(dir, d.name);
        if (d.isDirectory()) walk(p);
        else if (d.name.endsWith('.lock')) continue;
        else {
          const value = fs.readFileSync(p, 'utf8').trim();
          if (value.startsWith('ref: ')) continue; // symbolic: its target is a ref file of its own
          if (!OID.test(value)) throw new Error(`unreadable ref ${p}`);
          tips.push(value);
        }
      }
    };
    walk(nodePath.join(this.#gitdir, 'refs'));
    let packed = '';
    try {
      packed = fs.readFileSync(nodePath.join(this.#gitdir, 'packed-refs'), 'utf8');
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw err;
    }
    for (const line of packed.split('\n')) {
      const oid = line.replace(/^\^/, '').slice(0, 40);
      if (OID.test(oid)) tips.push(oid);
    }
    return tips;
  }

  async #mark(oid: string, type: 'commit' | 'tree', marked: Set<string>, visited: Set<string>): Promise<void> {
    if (visited.has(oid)) return;
    visited.add(oid);
    marked.add(oid);
    if (oid === EMPTY_TREE && type === 'tree') return;
    const obj = await this.#readObject(oid);
    if (obj.type !== type) throw new Error(`object ${oid} is a ${obj.type}, expected a ${type}`);
    if (type === 'commit') {
      // Header lines up to the blank line: the tree and any parents. The
      // snapshot metadata lives in the message, not in objects of its own.
      const header = obj.body.toString('latin1', 0, Math.max(0, obj.body.indexOf('\n\n')));
      for (const line of header.split('\n')) {
        const [key, value] = line.split(' ');
        if (key === 'tree' && value !== undefined) await this.#mark(value, 'tree', marked, visited);
        else if (key === 'parent' && value !== undefined) await this.#mark(value, 'commit', marked, visited);
      }
      return;
    }
    for (const e of await this.#readTree(oid)) {
      if (e.type === 'tree') await this.#mark(e.oid, 'tree', marked, visited);
      else if (e.mode !== '160000') marked.add(e.oid); // blobs are not read; gitlinks name no object here
    }
  }

  #writeGcToken(): string {
    const token = randomBytes(8).toString('hex');
    const file = nodePath.join(this.#gitdir, 'ctxfs-gc-token');
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, token);
    fs.renameSync(tmp, file);
    return token;
  }

  #readGcToken(): string {
    try {
      return fs.readFileSync(nodePath.join(this.#gitdir, 'ctxfs-gc-token'), 'utf8');
    } catch {
      return '';
    }
  }

  /**
   * Before a snapshot reuses cached oids: if a prune ran since this cache was
   * last checked (in another process, or before this process loaded
   * ctxfs-cache.json), forget entries whose object is gone. Safe because the
   * store lock is held: no prune can run between this check and the ref write.
   */
  #checkCache(): void {
    const token = this.#readGcToken();
    if (token === this.#gcSeen) return;
    const exists = (oid: string) => fs.existsSync(nodePath.join(this.#gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
    for (const [k, e] of this.#cache) if (!exists(e.oid)) this.#cache.delete(k);
    for (const [k, e] of this.#trees) if (!exists(e.oid)) this.#trees.delete(k);
    this.#gcSeen = token;
  }

  // ---------------------------------------------------------------- cross-process store lock

  // In-process, #serial orders operations; this lock extends that to other
  // processes sharing the state directory (the default stateDir is derived
  // from the workspace, so two processes on one workspace share the store):
  // a prune must never run between a snapshot writing its objects and
  // writing its ref.
  #tryLockStore(): () => void {
    return tryLockFile(this.#gitdir, nodePath.join(this.#gitdir, 'ctxfs-store.lock'), STORE_LOCK_STALE_MS);
  }

  #lockStore(op: string): Promise<() => void> {
    return lockFileWithin(this.#gitdir, nodePath.join(this.#gitdir, 'ctxfs-store.lock'), {
      staleMs: STORE_LOCK_STALE_MS,
      deadline: Date.now() + STORE_LOCK_TIMEOUT_MS,
      retryMinMs: 5,
      retryMaxMs: 100,
      timeout: () =>
        hostError(
          'ELOCKTIMEOUT',
          '',
          `${op}: the snapshot store stayed locked by another process for ${STORE_LOCK_TIMEOUT_MS} ms`,
          'retry later; a lock of a dead process is taken over after 10 s',
        ),
    });
  }
}

function parseMeta(message: string, id: string): Meta {
  // The metadata is the message's last line (one JSON line); the tag before it may hold braces and newlines.
  const last = message.trimEnd().split('\n').at(-1) ?? '';
  if (last.startsWith('{')) {
    try {
      const meta = JSON.parse(last) as Meta;
      if (meta.ctxfs === 1) return meta;
    } catch {
      // fall through
    }
  }
  return { ctxfs: 1, id, createdAt: new Date(0).toISOString(), modes: {} };
}
