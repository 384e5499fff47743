/**
 * The in-memory backend: a memfs volume behind the ctxfs protocol.
 *
 * Content buffers are treated as immutable once committed: an overwrite
 * installs a new buffer, an append writes only past the bytes any reader or
 * snapshot can see. That single rule is what makes readers stable, copies
 * free and snapshots cheap (they keep references, never bytes).
 *
 * @module
 */

import {
  assertIfMatch,
  type ByteReader,
  type ByteWriter,
  type Capabilities,
  concatBytes,
  createByteReader,
  createByteWriter,
  errno,
  type FileEntry,
  type FileKind,
  type FileRead,
  type FileStat,
  FilesystemBase,
  type FilesystemBaseOptions,
  fsError,
  type GrepMatch,
  type GrepMatcher,
  type GrepPlan,
  joinPath,
  type Snapshot,
  scanChunks,
  sha256Hex,
  type WatchEvent,
  type WatchPlan,
  type WatchSink,
  type WriteMode,
} from '@ctxfs/core';
import { Volume } from 'memfs';
import { type ContentNode, setContent, viewOf } from './node-content.ts';
import { captureTree, restoreTree, type TreeImage } from './tree-image.ts';

/** Options of {@link MemoryFilesystem}. */
export interface MemoryFilesystemOptions extends FilesystemBaseOptions {
  /** Initial files: path → text or bytes. Parent directories are created. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** Initial empty directories (parents are created). */
  dirs?: readonly string[];
}

interface LinkLike {
  readonly children: Map<string, LinkLike | undefined>;
  getNode(): ContentNode;
}

interface StoredSnapshot {
  readonly info: Snapshot;
  readonly image: TreeImage;
}

/** A node's stat, from the inode rather than statSync: memfs's Stats copies twenty fields this drops. */
function statOfNode(path: string, node: ContentNode): FileStat {
  const kind = kindOf(node);
  return {
    path,
    kind,
    size: kind === 'directory' ? 0 : node.getSize(),
    // Copies: callers may mutate what they get.
    mtime: new Date(node.mtime.getTime()),
    ctime: new Date(node.ctime.getTime()),
    birthtime: new Date(node.btime.getTime()),
    mode: node.mode & 0o7777,
  };
}

function kindOf(node: ContentNode): FileKind {
  return node.isFile() ? 'file' : node.isDirectory() ? 'directory' : node.isSymlink() ? 'symlink' : 'other';
}

const EMPTY = new Uint8Array(0);

/**
 * An isolated in-memory workspace: fast, snapshot/restore between agent
 * steps, every protocol operation with the same semantics as the other
 * backends.
 *
 * @example
 * ```ts
 * import { MemoryFilesystem } from '@ctxfs/memory';
 * const fs = new MemoryFilesystem({ files: { 'src/index.ts': 'export {};\n' } });
 * const snap = await fs.snapshot('before');
 * await fs.write('src/index.ts', 'broken');
 * await fs.restore(snap); // exact, and no file content was copied
 * ```
 */
export class MemoryFilesystem extends FilesystemBase {
  readonly root = 'memory:';
  readonly capabilities: Capabilities;
  /** Nothing here outlives the process: the records kept about its files need no flush either. */
  readonly durableWrites = false;
  #vol: Volume;
  readonly #snapshots = new Map<string, StoredSnapshot>();
  #snapshotCounter = 0;
  /** Sinks of the open watchers: this backend reports its own mutations, as they commit. */
  readonly #sinks = new Set<WatchSink>();

  constructor(options: MemoryFilesystemOptions = {}) {
    super(options);
    this.#vol = new Volume();
    this.capabilities = Object.freeze({
      snapshots: true,
      watch: true,
      symlinks: false,
      nativeGrep: false,
      readOnly: this.readOnly,
      permissions: true,
      birthtime: true,
      snapshotsKeepEmptyDirs: true,
      compareAndSwap: true,
      watchRenames: true,
    });
    for (const dir of options.dirs ?? []) {
      this.#vol.mkdirSync(`/${this.resolve(dir, 'mkdir').path}`, { recursive: true });
    }
    for (const [path, content] of Object.entries(options.files ?? {})) {
      const p = this.resolve(path, 'write').path;
      const abs = `/${p}`;
      this.#vol.mkdirSync(abs.slice(0, abs.lastIndexOf('/')) || '/', { recursive: true });
      this.#install(abs, typeof content === 'string' ? new TextEncoder().encode(content) : content.slice());
    }
  }

  #notify(event: WatchEvent): void {
    for (const sink of this.#sinks) sink.emit(event);
  }

  /** Every path below `abs` (children before their directory), for the events of a recursive delete. */
  #descendants(path: string, link: LinkLike, out: WatchEvent[]): WatchEvent[] {
    for (const [name, child] of link.children) {
      if (child === undefined || name === '.' || name === '..') continue;
      const childPath = joinPath(path, name);
      const kind = kindOf(child.getNode());
      if (kind === 'directory') this.#descendants(childPath, child, out);
      out.push({ type: 'deleted', path: childPath, kind });
    }
    return out;
  }

  /** Number of snapshots held. */
  get snapshotCount(): number {
    return this.#snapshots.size;
  }

  #node(abs: string): ContentNode | undefined {
    return this.#link(abs)?.getNode();
  }

  /**
   * The link at `abs` (`/` + a normalized path), or undefined when missing;
   * throws ENOTDIR when a file is in the way. Walks the children maps
   * directly: memfs's own walk re-parses the path, makes two uid/gid
   * syscalls and stamps atimes on every call, which was most of the cost of
   * a small read or write. Normalized paths hold no `.`/`..` and this
   * backend creates no symlinks, so there is nothing else to resolve.
   */
  #link(abs: string): LinkLike | undefined {
    let link = this.#vol._core.root as unknown as LinkLike;
    let start = 1;
    if (abs.length <= start) return link;
    for (;;) {
      if (!link.getNode().isDirectory()) throw errno('ENOTDIR');
      const end = abs.indexOf('/', start);
      const next = link.children.get(end < 0 ? abs.slice(start) : abs.slice(start, end));
      if (next === undefined) return undefined;
      link = next;
      if (end < 0) return link;
      start = end + 1;
    }
  }

  /** Creates or truncates `abs` and makes `bytes` its content without copying. */
  #install(abs: string, bytes: Uint8Array, existing: ContentNode | undefined = this.#node(abs)): void {
    let node = existing;
    if (node === undefined) {
      this.#vol.writeFileSync(abs, EMPTY);
      node = this.#node(abs);
    }
    if (node === undefined) throw errno('ENOENT');
    setContent(node, bytes);
  }

  protected async statPath(path: string): Promise<FileStat> {
    const node = this.#node(`/${path}`);
    if (node === undefined) throw errno('ENOENT');
    return statOfNode(path, node);
  }

  /** The stat and the bytes of one node, taken in one synchronous run: no write can land between them. */
  protected override async readFileWithStat(path: string, maxBytes: number): Promise<FileRead> {
    const node = this.#fileNode(path);
    const view = viewOf(node);
    return { stat: statOfNode(path, node), bytes: view.byteLength > maxBytes ? undefined : copyOut(view, 0, view.byteLength) };
  }

  protected async readDirectory(path: string): Promise<FileEntry[]> {
    // From the children map, not readdirSync: no Dirent objects, no sort
    // (the caller sorts), no path parsing. Same ENOENT/ENOTDIR as readdir.
    const link = this.#link(`/${path}`);
    if (link === undefined) throw errno('ENOENT');
    if (!link.getNode().isDirectory()) throw errno('ENOTDIR');
    const prefix = path === '' ? '' : `${path}/`;
    const out: FileEntry[] = [];
    for (const [name, child] of link.children) {
      if (child === undefined || name === '.' || name === '..') continue;
      out.push({ name, path: prefix + name, kind: kindOf(child.getNode()) });
    }
    return out;
  }

  /** The node of the file `path`; throws ENOENT / ENOTDIR / EISDIR as a read does. */
  #fileNode(path: string): ContentNode {
    const abs = `/${path}`;
    const node = this.#node(abs);
    if (node === undefined) {
      this.#vol.statSync(abs); // throws the precise ENOENT / ENOTDIR
      throw errno('ENOENT');
    }
    if (node.isDirectory()) throw errno('EISDIR');
    return node;
  }

  #contentView(path: string): Uint8Array {
    return viewOf(this.#fileNode(path));
  }

  protected async openFileReader(path: string, chunkSize: number, offset: number): Promise<ByteReader> {
    // The view is fixed at open: later writes install new buffers or append
    // past its end, so this reader sees exactly the content it opened.
    const view = this.#contentView(path);
    return createByteReader(
      {
        size: view.byteLength,
        readAt: (pos, len) => copyOut(view, pos, pos + len),
        readInto(pos, target) {
          const part = view.subarray(Math.min(pos, view.byteLength), Math.min(pos + target.byteLength, view.byteLength));
          target.set(part);
          return part.byteLength;
        },
      },
      { path, chunkSize, offset },
    );
  }

  /**
   * The shared scanner fed straight from the stored bytes: a grep reads each
   * file once and hands out only decoded lines, so the per-file reader and
   * the per-chunk copies a caller's read needs are pure overhead here.
   */
  protected override async *scanFiles(matcher: GrepMatcher, plan: GrepPlan): AsyncGenerator<GrepMatch> {
    let remaining = plan.maxMatches;
    for await (const path of this.grepCandidates(plan)) {
      let view: Uint8Array;
      try {
        view = this.#contentView(path);
      } catch (err) {
        // Files that vanish mid-walk are skipped, as the base scanner does.
        const code = (err as { code?: unknown }).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') continue;
        throw err;
      }
      for await (const m of scanChunks(path, chunksOf(view, this.limits.chunkSize), matcher, remaining, this.grepDetection())) {
        yield m;
        if (--remaining <= 0) return;
      }
    }
  }

  protected override async readRange(path: string, offset: number, limit: number | undefined, cap: number): Promise<Uint8Array> {
    const view = this.#contentView(path);
    const remaining = Math.max(0, view.byteLength - offset);
    if (limit === undefined && remaining > cap) {
      throw fsError('ETOOLARGE', 'readBytes', path, { reason: `${remaining} bytes exceed the convenience limit of ${cap} bytes` });
    }
    return copyOut(view, offset, offset + Math.min(limit ?? remaining, remaining));
  }

  protected async openFileWriter(path: string, mode: WriteMode, ifMatch?: string): Promise<ByteWriter> {
    const abs = `/${path}`;
    const check = () => {
      const node = this.#node(abs);
      if (node?.isDirectory()) throw errno('EISDIR');
      if (mode === 'create' && node !== undefined) throw errno('EEXIST');
      return node;
    };
    check();
    const chunks: Uint8Array[] = [];
    let total = 0;
    return createByteWriter(
      {
        write: (chunk) => {
          // Copy: the caller may reuse its buffer after write resolves.
          chunks.push(copyBytes(chunk));
          total += chunk.byteLength;
        },
        commit: () => {
          const node = check();
          // Checked and swapped in one synchronous run: nothing else in the
          // process can change the file between the two.
          if (ifMatch !== undefined) assertIfMatch(ifMatch, node === undefined ? undefined : sha256Hex(viewOf(node)), 'write', path);
          const data = chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, total);
          if (mode === 'append' && node !== undefined) {
            // memfs grows capacity geometrically and writes only past the
            // current size, so many small appends stay linear overall.
            if (data.byteLength > 0) node.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength), 0, data.byteLength, node.getSize());
            else node.touch();
          } else {
            this.#install(abs, data, node);
          }
          this.#notify({ type: node === undefined ? 'created' : 'modified', path, kind: 'file' });
        },
        abort: () => {
          chunks.length = 0;
        },
      },
      path,
      mode,
    );
  }

  protected async removeFile(path: string): Promise<void> {
    this.#vol.unlinkSync(`/${path}`);
    this.#notify({ type: 'deleted', path, kind: 'file' });
  }

  protected async removeDirectory(path: string, recursive: boolean): Promise<void> {
    const link = this.#sinks.size > 0 && recursive ? this.#link(`/${path}`) : undefined;
    const gone = link === undefined ? [] : this.#descendants(path, link, []);
    if (recursive) this.#vol.rmSync(`/${path}`, { recursive: true });
    else this.#vol.rmdirSync(`/${path}`);
    for (const event of gone) this.#notify(event);
    this.#notify({ type: 'deleted', path, kind: 'directory' });
  }

  protected async createDirectory(path: string): Promise<void> {
    this.#vol.mkdirSync(`/${path}`);
    this.#notify({ type: 'created', path, kind: 'directory' });
  }

  protected async renamePath(from: string, to: string): Promise<void> {
    const dest = this.#node(`/${to}`);
    // The base already checked kinds and emptiness; replacing is POSIX rename.
    if (dest?.isDirectory()) this.#vol.rmdirSync(`/${to}`);
    else if (dest !== undefined) this.#vol.unlinkSync(`/${to}`);
    this.#vol.renameSync(`/${from}`, `/${to}`);
    const moved = this.#node(`/${to}`);
    this.#notify({ type: 'renamed', path: to, oldPath: from, kind: moved === undefined ? undefined : kindOf(moved) });
  }

  protected async copyFile(from: string, to: string): Promise<void> {
    const src = this.#node(`/${from}`);
    if (src === undefined) throw errno('ENOENT');
    if (src.isDirectory()) throw errno('EISDIR');
    const existed = this.#node(`/${to}`) !== undefined;
    // Sharing the buffer is safe: content is never mutated below its size.
    this.#install(`/${to}`, viewOf(src));
    this.#vol.chmodSync(`/${to}`, src.mode & 0o7777);
    this.#notify({ type: existed ? 'modified' : 'created', path: to, kind: 'file' });
  }

  /**
   * No debounce by default: events are exact and already in order, so they
   * are handed over as soon as the mutation's caller yields, and a reader of
   * the watcher knows of a change as soon as the write resolves.
   */
  protected override defaultWatchDebounceMs(): number {
    return 0;
  }

  /** Exact and immediate: this backend sees every mutation as it commits. */
  protected override async startWatch(_plan: WatchPlan, sink: WatchSink): Promise<() => void> {
    this.#sinks.add(sink);
    return () => {
      this.#sinks.delete(sink);
    };
  }

  protected override async createSnapshot(tag: string | undefined): Promise<Snapshot> {
    const image = captureTree(this.#vol._core.root as unknown as Parameters<typeof captureTree>[0]);
    const id = `mem-${++this.#snapshotCounter}`;
    const info: Snapshot = Object.freeze({ id, createdAt: new Date(), tag, ref: id });
    this.#snapshots.set(id, { info, image });
    return info;
  }

  protected override async restoreSnapshot(id: string): Promise<void> {
    const stored = this.#snapshots.get(id);
    if (stored === undefined) throw fsError('ENOSNAPSHOT', 'restore', undefined, { reason: `unknown snapshot '${id}'` });
    const vol = new Volume();
    restoreTree(vol, stored.image);
    this.#vol = vol;
    // Anything may differ now: every watcher is told to rescan.
    for (const sink of this.#sinks) sink.overflow();
  }

  protected override async snapshotList(): Promise<Snapshot[]> {
    return [...this.#snapshots.values()].map((s) => s.info);
  }

  protected override async removeSnapshot(id: string): Promise<void> {
    if (!this.#snapshots.delete(id)) throw fsError('ENOSNAPSHOT', 'dropSnapshot', undefined, { reason: `unknown snapshot '${id}'` });
  }

  protected override async closeBackend(): Promise<void> {
    this.#snapshots.clear();
    this.#vol = new Volume();
  }
}

/** `view` in chunks of at most `size` bytes, without copying. */
async function* chunksOf(view: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < view.byteLength; at += size) yield view.subarray(at, at + size);
}

/**
 * A private copy of `view[start, end)` for a caller. Unpooled and not
 * zero-filled first (every byte is overwritten at once), which is what made
 * `slice()` lose to memfs's own `readFileSync` on large files.
 */
function copyOut(view: Uint8Array, start: number, end: number): Uint8Array {
  const len = Math.max(0, Math.min(end, view.byteLength) - start);
  const out = Buffer.allocUnsafeSlow(len);
  out.set(view.subarray(start, start + len));
  return new Uint8Array(out.buffer, out.byteOffset, len);
}

/**
 * A private copy of bytes to store. Not `slice()`: on a Buffer that returns a
 * view of the same memory. `allocUnsafe` takes small copies from Node's pool,
 * as memfs's own writeFileSync does: a fresh ArrayBuffer per small write was
 * a quarter of its cost. Sharing a pool slab is safe because stored content is
 * never written below its size.
 */
function copyBytes(bytes: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(bytes.byteLength);
  out.set(bytes);
  return out;
}
