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
  type ByteReader,
  type ByteWriter,
  type Capabilities,
  createByteReader,
  createByteWriter,
  errno,
  type FileEntry,
  type FileKind,
  type FileStat,
  FilesystemBase,
  type FilesystemBaseOptions,
  fsError,
  type Snapshot,
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

interface StoredSnapshot {
  readonly info: Snapshot;
  readonly image: TreeImage;
}

interface MemfsStats {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  size: number;
  mode: number;
  mtime: Date;
  ctime: Date;
  birthtime: Date;
}

interface MemfsDirent {
  name: string | Uint8Array;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

function kindOf(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FileKind {
  return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : s.isSymbolicLink() ? 'symlink' : 'other';
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
  #vol: Volume;
  readonly #snapshots = new Map<string, StoredSnapshot>();
  #snapshotCounter = 0;

  constructor(options: MemoryFilesystemOptions = {}) {
    super(options);
    this.#vol = new Volume();
    this.capabilities = Object.freeze({
      snapshots: true,
      watch: false,
      symlinks: false,
      nativeGrep: false,
      readOnly: this.readOnly,
      permissions: true,
      birthtime: true,
      snapshotsKeepEmptyDirs: true,
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

  /** Number of snapshots held. */
  get snapshotCount(): number {
    return this.#snapshots.size;
  }

  #node(abs: string): ContentNode | undefined {
    return this.#vol._core.getResolvedLink(abs)?.getNode() as ContentNode | undefined;
  }

  /** Creates or truncates `abs` and makes `bytes` its content without copying. */
  #install(abs: string, bytes: Uint8Array): void {
    const existing = this.#node(abs);
    if (existing === undefined) this.#vol.writeFileSync(abs, EMPTY);
    const node = this.#node(abs);
    if (node === undefined) throw errno('ENOENT');
    setContent(node, bytes);
  }

  protected async statPath(path: string): Promise<FileStat> {
    const s = this.#vol.statSync(`/${path}`) as unknown as MemfsStats;
    return {
      path,
      kind: kindOf(s),
      size: s.isDirectory() ? 0 : s.size,
      mtime: s.mtime,
      ctime: s.ctime,
      birthtime: s.birthtime,
      mode: s.mode & 0o7777,
    };
  }

  protected async readDirectory(path: string): Promise<FileEntry[]> {
    const dirents = this.#vol.readdirSync(`/${path}`, { withFileTypes: true }) as unknown as MemfsDirent[];
    const prefix = path === '' ? '' : `${path}/`;
    return dirents.map((d) => {
      const name = String(d.name);
      return { name, path: prefix + name, kind: kindOf(d) };
    });
  }

  #contentView(path: string): Uint8Array {
    const abs = `/${path}`;
    const node = this.#node(abs);
    if (node === undefined) {
      this.#vol.statSync(abs); // throws the precise ENOENT / ENOTDIR
      throw errno('ENOENT');
    }
    if (node.isDirectory()) throw errno('EISDIR');
    return viewOf(node);
  }

  protected async openFileReader(path: string, chunkSize: number, offset: number): Promise<ByteReader> {
    // The view is fixed at open: later writes install new buffers or append
    // past its end, so this reader sees exactly the content it opened.
    const view = this.#contentView(path);
    return createByteReader({ size: view.byteLength, readAt: (pos, len) => view.slice(pos, pos + len) }, { path, chunkSize, offset });
  }

  protected override async readRange(path: string, offset: number, limit: number | undefined, cap: number): Promise<Uint8Array> {
    const view = this.#contentView(path);
    const remaining = Math.max(0, view.byteLength - offset);
    if (limit === undefined && remaining > cap) {
      throw fsError('ETOOLARGE', 'readBytes', path, { reason: `${remaining} bytes exceed the convenience limit of ${cap} bytes` });
    }
    return view.slice(offset, offset + Math.min(limit ?? remaining, remaining));
  }

  protected async openFileWriter(path: string, mode: WriteMode): Promise<ByteWriter> {
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
          chunks.push(chunk.slice());
          total += chunk.byteLength;
        },
        commit: () => {
          const node = check();
          const data = chunks.length === 1 ? (chunks[0] as Uint8Array) : concat(chunks, total);
          if (mode === 'append' && node !== undefined) {
            // memfs grows capacity geometrically and writes only past the
            // current size, so many small appends stay linear overall.
            if (data.byteLength > 0) node.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength), 0, data.byteLength, node.getSize());
            else node.touch();
            return;
          }
          this.#install(abs, data);
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
  }

  protected async removeDirectory(path: string, recursive: boolean): Promise<void> {
    if (recursive) this.#vol.rmSync(`/${path}`, { recursive: true });
    else this.#vol.rmdirSync(`/${path}`);
  }

  protected async createDirectory(path: string): Promise<void> {
    this.#vol.mkdirSync(`/${path}`);
  }

  protected async renamePath(from: string, to: string): Promise<void> {
    const dest = this.#node(`/${to}`);
    // The base already checked kinds and emptiness; replacing is POSIX rename.
    if (dest?.isDirectory()) this.#vol.rmdirSync(`/${to}`);
    else if (dest !== undefined) this.#vol.unlinkSync(`/${to}`);
    this.#vol.renameSync(`/${from}`, `/${to}`);
  }

  protected async copyFile(from: string, to: string): Promise<void> {
    const src = this.#node(`/${from}`);
    if (src === undefined) throw errno('ENOENT');
    if (src.isDirectory()) throw errno('EISDIR');
    // Sharing the buffer is safe: content is never mutated below its size.
    this.#install(`/${to}`, viewOf(src));
    this.#vol.chmodSync(`/${to}`, src.mode & 0o7777);
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

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
