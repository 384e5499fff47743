/**
 * The host backend: a directory on the local disk behind the ctxfs protocol.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';
import {
  type ByteReader,
  type ByteWriter,
  type Capabilities,
  type CopyOptions,
  chardetDetector,
  compareNames,
  createByteReader,
  createByteWriter,
  DETECTION_WINDOW_BYTES,
  type DigestTarget,
  type FileDigest,
  type FileEntry,
  type FileKind,
  type FileRead,
  type FileStat,
  FilesystemBase,
  type FilesystemBaseOptions,
  FsError,
  type FsErrorCode,
  type FsOperation,
  fsError,
  type GrepMatch,
  type GrepMatcher,
  type GrepPlan,
  type IgnoreRule,
  isAddressableName,
  isHostPathInside,
  isIgnored,
  type LegacyDetector,
  type MkdirOptions,
  type OpenWriteOptions,
  parentPath,
  parseGitignore,
  type RenameOptions,
  readsAsUtf8,
  realpathOfNearest,
  resolvePath,
  type Snapshot,
  scanChunks,
  type TextOptions,
  type TextReaderOptions,
  toFsError,
  type WalkPlan,
  type WatchPlan,
  type WatchSink,
  type WriteMode,
  type WriteOptions,
  type WriteResult,
} from '@ctxfs/core';
import { cleanOrphans, type Durability, isTempName, openAtomicSink } from './atomic-write.ts';
import { type DigestAnswers, DigestPool, type WorkerFailure, WorkerStartError } from './digest-pool.ts';
import { kindOfStats } from './file-kind.ts';
import { findGnuFind, findWalk } from './find-walk.ts';
import { GitSnapshotStore } from './git-snapshots.ts';
import type { jschardetDetector } from './legacy-detection.ts';
import { defaultLockDir, LockManager, type LockOptions } from './locks.ts';
import { startNativeWatch } from './native-watch.ts';
import { findRipgrep, type GrepFlags, ripgrepSearch } from './ripgrep.ts';
import { closeQuietly, DirectoryCursor, escapeError, hostError, RootGuard, type SymlinkPolicy } from './root-guard.ts';
import { encodeForFile, type TextWriteOptions } from './text-format.ts';

/** Options of {@link HostFilesystem}. */
export interface HostFilesystemOptions extends FilesystemBaseOptions {
  /** The workspace directory. It must exist. */
  root: string;
  /**
   * `follow-inside` (default): symlinks are followed when their target stays
   * inside the root and refused (`EPATHESCAPE`) otherwise. `refuse`: any
   * path through a symlink is refused.
   */
  symlinks?: SymlinkPolicy;
  /**
   * Where ctxfs keeps its own state (lock files, the snapshot git directory).
   * Must be outside the root. Default `$XDG_STATE_HOME/ctxfs/<hash of root>`
   * (`~/.local/state/ctxfs/...`).
   */
  stateDir?: string;
  /**
   * `full` (default): fsync the file and its directory; `file`: the file
   * only; `none`: no fsync (still atomic against crashes of the process, not
   * of the machine). `none` is reported as `durableWrites: false`, so the
   * context layer's edit journal skips its own flush too: a durable intent
   * protects nothing when the file it announces is not.
   */
  durability?: Durability;
  /** Lock timeout, retries, staleness and cap. */
  locks?: LockOptions;
  /** `auto` (default): ripgrep when `rg` is on PATH, the JS scanner otherwise. */
  grep?: 'auto' | 'ripgrep' | 'js';
  /**
   * Names (at any depth) that glob and grep never enter or report. Default
   * `['.git']`; pass `[]` to see everything. `list()` always shows them.
   */
  exclude?: readonly string[];
  /** Honour `.gitignore` files in glob and grep (git's rules; see gitignore.ts). Default `false`. */
  gitignore?: boolean;
  /** Names never entered by snapshots (and never touched by restore). Default `['.git']`. */
  snapshotExclude?: readonly string[];
  /**
   * Worker threads that hash files for `digest` (started on the first digest
   * of many files, stopped by `close`). Default: one per core but one, at
   * least 1 and at most 4; `0` hashes on the calling thread.
   */
  digestWorkers?: number;
  /**
   * Detector of legacy encodings for every text read and write. Default:
   * core's `chardetDetector`, which every backend uses, so a file reads as
   * the same text on the host, in memory and in a container;
   * {@link jschardetDetector} is the alternative.
   */
  legacyDetector?: LegacyDetector;
}

const O_PATH_DIR = true;

/** Fewer files than this are hashed on the calling thread. */
const DIGEST_POOL_MIN_FILES = 64;
/** Paths per worker request. */
const DIGEST_SLICE = 256;

let warnedDigestWorkers = false;

/**
 * Says once per process that digests run on the calling thread because the
 * workers cannot start (a `CTXFS_DIGEST_WORKERS` process warning): the
 * results are the same, only slower, and the cause is worth fixing.
 */
function warnDigestWorkersUnavailable(err: WorkerStartError): void {
  if (warnedDigestWorkers) return;
  warnedDigestWorkers = true;
  process.emitWarning(`${err.message}; hashing on the calling thread instead`, {
    code: 'CTXFS_DIGEST_WORKERS',
    detail:
      'digest results are unchanged, only slower. Make the installed @ctxfs/host files readable by this user, or pass { digestWorkers: 0 } to hash on the calling thread without trying workers.',
  });
}

/** The protocol's results for a slice from a worker's packed answers. */
function digestsOf(slice: readonly DigestTarget[], answers: DigestAnswers): Array<{ index: number; digest: FileDigest }> {
  const failed = new Map(answers.failures);
  const { sizes, hashes, heads, headBytes } = answers;
  return slice.map((target, i) => {
    const failure = failed.get(i);
    if (failure !== undefined) return { index: target.index, digest: failureOf(target, failure) };
    const size = sizes[i] as number;
    const at = i * headBytes;
    const head = headBytes > 0 ? heads.subarray(at, at + Math.min(size, headBytes)) : undefined;
    return { index: target.index, digest: { path: target.input, size, sha256: hashes.slice(i * 64, i * 64 + 64), head } };
  });
}

/** A worker's failure as the protocol's error. */
function failureOf(target: DigestTarget, answer: WorkerFailure): FileDigest {
  const err =
    answer.reason === undefined
      ? toFsError(Object.assign(new Error(answer.code), { code: answer.code }), 'digest', target.input)
      : new FsError({ code: answer.code as FsErrorCode, op: 'digest', path: target.input, reason: answer.reason, hint: answer.hint });
  return { path: target.input, error: err };
}

/** Files up to this size are read whole by the literal fast path of the JS scanner. */
const FAST_SCAN_MAX_BYTES = 8 * 1024 * 1024;

async function* iterate(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

function readWhole(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const n = fs.readSync(fd, buf, filled, size - filled, filled);
    if (n === 0) break;
    filled += n;
  }
  return buf.subarray(0, filled);
}

/** Views of `bytes` in the chunks a streaming reader would return. */
function split(bytes: Buffer, chunkSize: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += chunkSize) out.push(new Uint8Array(bytes.buffer, bytes.byteOffset + at, Math.min(chunkSize, bytes.length - at)));
  return out;
}

/** The protocol's FileStat of node's Stats. */
function statOf(path: string, s: fs.Stats): FileStat {
  const kind = kindOfStats(s);
  return {
    path,
    kind,
    size: kind === 'directory' ? 0 : s.size,
    mtime: s.mtime,
    ctime: s.ctime,
    birthtime: s.birthtimeMs > 0 ? s.birthtime : undefined,
    mode: s.mode & 0o7777,
  };
}

/** Up to `want` bytes of `fd` from `position`, fewer when the file ends first. */
function readFully(fd: number, position: number, want: number): Uint8Array {
  const b = Buffer.allocUnsafe(want);
  const buf = new Uint8Array(b.buffer, b.byteOffset, want);
  let filled = 0;
  while (filled < want) {
    const n = fs.readSync(fd, buf, filled, want - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return filled === want ? buf : buf.subarray(0, filled);
}

function defaultStateDir(rootReal: string): string {
  const base = process.env.XDG_STATE_HOME || nodePath.join(os.homedir(), '.local', 'state');
  return nodePath.join(base, 'ctxfs', createHash('sha256').update(rootReal).digest('hex').slice(0, 16));
}

/**
 * A workspace directory on the host disk.
 *
 * - The root is a wall: paths are validated before any I/O, every descriptor
 *   is verified after open, symlinks are followed only inside the root.
 * - Writes are atomic (temp file, fsync, rename) and keep the file's mode;
 *   text writes to an existing file keep its encoding, BOM and line endings.
 * - Writers exclude each other within the process and across processes.
 * - Snapshots are git commits in a git directory outside the workspace.
 *
 * @example
 * ```ts
 * import { HostFilesystem } from '@ctxfs/host';
 * await using fs = await HostFilesystem.open({ root: '/path/to/repo' });
 * const page = await fs.read('src/index.ts');
 * await fs.write('notes.txt', 'hello\n');          // atomic
 * const snap = await fs.snapshot('before-refactor');
 * await fs.restore(snap);                          // tree exactly as it was
 * ```
 */
export class HostFilesystem extends FilesystemBase {
  /** The root's real path: links resolved, so every check compares like with like. */
  readonly root: string;
  /**
   * The root as it was given, when that is not its real path (opened
   * through a link, or macOS's `/var/…` that is `/private/var/…`): a caller
   * who writes a path under it is told the relative path to use. Absent
   * when the root was given by its real path.
   */
  readonly absoluteRoots?: readonly string[];
  readonly capabilities: Capabilities;
  /** Directory with lock files and the snapshot git directory. */
  readonly stateDir: string;
  readonly #guard: RootGuard;
  readonly #durability: Durability;
  /** False under `durability: 'none'` (see {@link HostFilesystemOptions.durability}). */
  readonly durableWrites: boolean;
  readonly #locks: LockManager;
  readonly #rg: string | undefined;
  readonly #writers = new Set<ByteWriter>();
  readonly #snapshotExclude: ReadonlySet<string>;
  readonly #exclude: ReadonlySet<string>;
  readonly #gitignore: boolean;
  readonly #legacyDetector: LegacyDetector;
  #snapshots: GitSnapshotStore | undefined;
  readonly #digestWorkers: number;
  #digestPool: DigestPool | undefined;
  /** The digest workers could not start: digests are hashed on the calling thread. */
  #digestWorkersFailed = false;

  /**
   * Opens `options.root` synchronously. Prefer {@link HostFilesystem.open},
   * which also removes temp files orphaned by a crashed process.
   * Throws ENOENT/ENOTDIR/EACCES (with a remedy) when the root is unusable.
   */
  constructor(options: HostFilesystemOptions) {
    super(options);
    if (typeof options?.root !== 'string' || options.root === '') {
      throw fsError('EINVAL', 'open', String(options?.root), { reason: 'root must be a directory path', hint: 'pass { root: "/path/to/workspace" }' });
    }
    const { given, real: rootReal } = HostFilesystem.#checkRoot(options.root, this.readOnly);
    this.root = rootReal;
    // `given` names the same directory (its real path is the root's), so a path under it lies in the workspace.
    if (given !== rootReal) this.absoluteRoots = Object.freeze([given]);
    this.#guard = new RootGuard(rootReal, options.symlinks ?? 'follow-inside');
    this.#durability = options.durability ?? 'full';
    this.durableWrites = this.#durability !== 'none';
    this.stateDir = nodePath.resolve(options.stateDir ?? defaultStateDir(rootReal));
    if (isHostPathInside(rootReal, realpathOfNearest(this.stateDir))) {
      throw fsError('EINVAL', 'open', this.stateDir, {
        reason: 'the state directory is inside the workspace',
        hint: 'choose a stateDir outside the root, so lock files and snapshots never show in the workspace',
      });
    }
    const lockDir = this.readOnly
      ? undefined
      : defaultLockDir(createHash('sha256').update(rootReal).digest('hex').slice(0, 24), nodePath.join(this.stateDir, 'locks'));
    this.#locks = new LockManager(rootReal, lockDir, options.locks);
    const mode = options.grep ?? 'auto';
    this.#rg = mode === 'js' ? undefined : findRipgrep();
    if (mode === 'ripgrep' && this.#rg === undefined) {
      throw fsError('EUNAVAILABLE', 'open', undefined, { reason: "ripgrep ('rg') is not on PATH", hint: "install ripgrep or pass { grep: 'auto' }" });
    }
    this.#snapshotExclude = new Set(options.snapshotExclude ?? ['.git']);
    this.#exclude = new Set(options.exclude ?? ['.git']);
    this.#gitignore = options.gitignore ?? false;
    this.#legacyDetector = options.legacyDetector ?? chardetDetector;
    // One core stays with the caller, who records what the workers hash.
    const workers = options.digestWorkers ?? Math.max(1, Math.min(4, os.availableParallelism() - 1));
    if (!Number.isSafeInteger(workers) || workers < 0) {
      throw fsError('EINVAL', 'open', undefined, { reason: `digestWorkers must be a non-negative integer, got ${String(options.digestWorkers)}` });
    }
    this.#digestWorkers = workers;
    let birthtime = false;
    try {
      birthtime = fs.statSync(rootReal).birthtimeMs > 0;
    } catch {
      birthtime = false;
    }
    this.capabilities = Object.freeze({
      snapshots: true,
      watch: true,
      symlinks: this.#guard.policy === 'follow-inside',
      nativeGrep: this.#rg !== undefined,
      readOnly: this.readOnly,
      permissions: true,
      birthtime,
      snapshotsKeepEmptyDirs: true,
      compareAndSwap: true,
      watchRenames: false,
    });
  }

  /**
   * Opens a workspace and removes temp files left by crashed writers.
   *
   * @example
   * ```ts
   * const fs = await HostFilesystem.open({ root: process.cwd(), locks: { timeoutMs: 2000 } });
   * ```
   */
  static async open(options: HostFilesystemOptions & { cleanOrphans?: boolean }): Promise<HostFilesystem> {
    const hfs = new HostFilesystem(options);
    if (!hfs.readOnly && options.cleanOrphans !== false) hfs.cleanOrphans();
    return hfs;
  }

  /** The root as given (absolute, lexically normal) and its real path; throws when it is no usable directory. */
  static #checkRoot(root: string, readOnly: boolean): { given: string; real: string } {
    const abs = nodePath.resolve(root);
    let real: string;
    try {
      real = fs.realpathSync.native(abs);
    } catch (err) {
      const code = (err as { code?: string }).code === 'ENOENT' ? 'ENOENT' : 'EACCES';
      throw fsError(code, 'open', abs, {
        reason: code === 'ENOENT' ? 'the workspace root does not exist' : 'the workspace root cannot be resolved',
        hint: code === 'ENOENT' ? 'create the directory first, or pass an existing root' : 'check the permissions of the root and its parents',
        cause: err,
      });
    }
    const st = fs.statSync(real);
    if (!st.isDirectory()) throw fsError('ENOTDIR', 'open', abs, { reason: 'the workspace root is not a directory', hint: 'pass a directory as root' });
    try {
      fs.accessSync(real, fs.constants.R_OK | fs.constants.X_OK | (readOnly ? 0 : fs.constants.W_OK));
    } catch (err) {
      throw fsError('EACCES', 'open', abs, {
        reason: `the workspace root is not ${readOnly ? 'readable' : 'readable and writable'} by this process`,
        hint: readOnly ? `chmod u+rx '${abs}'` : `chmod u+rwx '${abs}', or open it with { readOnly: true }`,
        cause: err,
      });
    }
    return { given: abs, real };
  }

  /** Removes temp files whose writer process is dead; returns how many. */
  cleanOrphans(): number {
    return cleanOrphans(this.#guard);
  }

  /** Where cross-process lock files live (never inside the workspace); undefined when locks are in-process only. */
  get lockDir(): string | undefined {
    return this.#locks.dir;
  }

  /** Held locks (for leak checks). */
  get heldLocks(): number {
    return this.#locks.heldCount;
  }

  /**
   * Runs `fn` while holding the lock of `path`: exclusive (default) against
   * every writer in this and other processes, or shared with other readers
   * of this process. Writes inside `fn` reuse the lock.
   *
   * @example
   * ```ts
   * await fs.withLock('counter.txt', async () => {
   *   const n = Number((await fs.read('counter.txt')).text);
   *   await fs.write('counter.txt', String(n + 1));
   * });
   * ```
   */
  async withLock<T>(path: string, fn: () => Promise<T> | T, options: { shared?: boolean } = {}): Promise<T> {
    const p = this.resolve(path, 'lock').path;
    return this.#locks.with(await this.#fileKey(p), options.shared ? 'shared' : 'exclusive', fn);
  }

  /**
   * The lock key of the file `path` names: where its links lead, so that
   * every spelling of one file (`link/a.ts`, `real/a.ts`) takes one lock and
   * two writers' compare-and-swap cannot interleave.
   */
  async #fileKey(path: string): Promise<string> {
    return await this.followLinks(path).catch(() => path);
  }

  /** The lock key of the directory entry `path` (a remove or a rename acts on the entry, a link itself included): its parent's links followed. */
  async #entryKey(path: string): Promise<string> {
    const i = path.lastIndexOf('/');
    if (i < 0) return path;
    const parent = await this.#fileKey(path.slice(0, i));
    return parent === '' ? path.slice(i + 1) : `${parent}/${path.slice(i + 1)}`;
  }

  // ------------------------------------------------------------ escape probes

  /**
   * Refuses a path whose parent directory resolves outside the root, before
   * the base's POSIX pre-checks (which would see a symlink to outside as
   * "not a directory" and report ENOTDIR instead of EPATHESCAPE).
   */
  #probeParent(input: unknown, op: FsOperation): void {
    let p: string;
    try {
      p = resolvePath(input, op, this.limits).path;
    } catch {
      return; // the base reports invalid paths itself
    }
    if (p === '') return;
    try {
      const fd = this.#guard.openPath(parentPath(p), true);
      fs.closeSync(fd);
    } catch (err) {
      if (err instanceof FsError && err.code === 'EPATHESCAPE')
        throw new FsError({ code: 'EPATHESCAPE', op, path: String(input), reason: err.reason, hint: err.hint, cause: err.cause });
    }
  }

  /** Runs `fn`; a "not a directory" or "not found" caused by a parent outside the root is reported as EPATHESCAPE. */
  async #escapeAware<T>(path: unknown, op: FsOperation, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof FsError && (err.code === 'ENOTDIR' || err.code === 'ENOENT')) this.#probeParent(path, op);
      throw err;
    }
  }

  override openWrite(path: string, options?: OpenWriteOptions): Promise<ByteWriter> {
    return this.#escapeAware(path, 'openWrite', () => super.openWrite(path, options));
  }

  override mkdir(path: string, options?: MkdirOptions): Promise<void> {
    return this.#escapeAware(path, 'mkdir', () => super.mkdir(path, options));
  }

  override rename(from: string, to: string, options?: RenameOptions): Promise<void> {
    return this.#escapeAware(to, 'rename', () => super.rename(from, to, options));
  }

  override copy(from: string, to: string, options?: CopyOptions): Promise<void> {
    return this.#escapeAware(to, 'copy', () => super.copy(from, to, options));
  }

  // ------------------------------------------------------------ primitives

  protected override async followLinks(path: string): Promise<string> {
    const abs = this.#guard.abs(path);
    let real: string;
    try {
      // The common case: the path is there, and the kernel resolves it in one open.
      real = this.#guard.realPath(path) ?? fs.realpathSync.native(abs);
    } catch (err) {
      // A loop leads nowhere: not to the link the kernel gave up on, whose name the caller never gave (the base refuses it).
      if ((err as { code?: unknown }).code === 'ELOOP') throw err;
      real = realpathOfNearest(abs);
      // A link whose target does not exist yet: a write through it would make the target.
      try {
        if (path !== '' && fs.lstatSync(abs).isSymbolicLink()) real = realpathOfNearest(nodePath.resolve(nodePath.dirname(real), fs.readlinkSync(abs)));
      } catch {
        // Not there at all: the path as given is where a write would go.
      }
    }
    if (!isHostPathInside(this.root, real)) {
      throw escapeError(path, real);
    }
    return nodePath.relative(this.root, real).split(nodePath.sep).join('/');
  }

  protected override async readLink(path: string): Promise<string | undefined> {
    const target = this.#atEntry(path, (entry) => fs.readlinkSync(entry));
    if (target === undefined || !nodePath.isAbsolute(target)) return target;
    // An absolute target is told only as a path from the workspace root, and only when it lies inside it.
    return isHostPathInside(this.root, target) ? `/${nodePath.relative(this.root, target).split(nodePath.sep).join('/')}` : undefined;
  }

  /** One stat of the root's real path: no descriptor to open and verify, for every missing path a call meets. */
  protected override async rootGone(): Promise<boolean> {
    return !this.#guard.rootIsDirectory();
  }

  /** A path that is not there is told by one lstat, without the error a failed open builds (`exists` of a missing `.gitignore` at every listing). */
  protected override async tryStat(path: string): Promise<FileStat | undefined> {
    return this.#guard.absent(path) ? undefined : await super.tryStat(path);
  }

  protected async statPath(path: string): Promise<FileStat> {
    let s: fs.Stats;
    try {
      const fd = this.#guard.openPath(path);
      try {
        s = fs.fstatSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      // A symlink whose target is outside (or refused), or that loops, is
      // still an entry of the workspace: it stats as a symlink, can be
      // listed, renamed and deleted, but never followed. (A loop failed
      // every stat listing and walk above it, and with them a whole scan.)
      const code = (err as { code?: string }).code;
      const link = code === 'EPATHESCAPE' || code === 'ELOOP' ? this.#lstatLink(path) : undefined;
      if (link === undefined) throw err;
      s = link;
    }
    return statOf(path, s);
  }

  #lstatLink(path: string): fs.Stats | undefined {
    const st = this.#atEntry(path, (entry) => fs.lstatSync(entry));
    return st?.isSymbolicLink() === true ? st : undefined;
  }

  /**
   * `read` of the entry `path` itself (not followed), reached through its
   * parent's checked descriptor; undefined for the root, or when the
   * parent cannot be opened or `read` fails.
   */
  #atEntry<T>(path: string, read: (entry: string) => T): T | undefined {
    if (path === '') return undefined;
    let parent: { dfd: number; name: string };
    try {
      parent = this.#parent(path);
    } catch {
      return undefined;
    }
    try {
      return read(this.#guard.via(parent.dfd, parent.name));
    } catch {
      return undefined;
    } finally {
      fs.closeSync(parent.dfd);
    }
  }

  protected async readDirectory(path: string): Promise<FileEntry[]> {
    return this.#list(path);
  }

  /**
   * Stats a directory's entries through one checked handle on the directory:
   * `lstat` of `/proc/self/fd/N/name` resolves no component but the last and
   * follows nothing, so it needs no per-entry guard. Symlinks go through the
   * guarded `statPath`, which follows them only inside the root.
   */
  protected override async statEntries(dir: string, entries: FileEntry[]): Promise<FileEntry[]> {
    const dfd = this.#guard.openPath(dir, O_PATH_DIR);
    const out: FileEntry[] = [];
    try {
      for (const entry of entries) {
        let s: fs.Stats;
        try {
          s = fs.lstatSync(this.#guard.via(dfd, entry.name));
        } catch (err) {
          if ((err as { code?: string }).code === 'ENOENT') continue;
          throw err;
        }
        if (s.isSymbolicLink()) {
          const followed = await this.tryStat(entry.path);
          if (followed !== undefined) out.push({ ...entry, stat: followed });
          continue;
        }
        out.push({ ...entry, stat: statOf(entry.path, s) });
      }
    } finally {
      fs.closeSync(dfd);
    }
    return out;
  }

  #list(path: string): FileEntry[] {
    const fd = this.#guard.openPath(path, O_PATH_DIR);
    try {
      return this.#listAt(fd, path);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The entries of the directory `path`, through `fd`, a verified descriptor on it. */
  #listAt(fd: number, path: string): FileEntry[] {
    const dirents = fs.readdirSync(this.#guard.via(fd), { withFileTypes: true });
    const prefix = path === '' ? '' : `${path}/`;
    const out: FileEntry[] = [];
    for (const d of dirents) {
      const name = d.name;
      if (isTempName(name) || !isAddressableName(name)) continue;
      out.push({ name, path: prefix + name, kind: kindOfStats(d) });
    }
    return out;
  }

  protected async openFileReader(path: string, chunkSize: number, offset: number): Promise<ByteReader> {
    const { fd, size } = this.#guard.openRegular(path);
    return createByteReader(
      {
        size,
        readAt(position, length) {
          // Synchronous reads: from the page cache they cost microseconds,
          // several times less than a thread-pool round trip.
          const b = Buffer.allocUnsafe(length);
          const n = fs.readSync(fd, b, 0, length, position);
          // A plain Uint8Array view: callers compare and keep it as protocol bytes, not a Buffer.
          return new Uint8Array(b.buffer, b.byteOffset, n);
        },
        readInto(position, target) {
          return fs.readSync(fd, target, 0, target.byteLength, position);
        },
        close() {
          fs.closeSync(fd);
        },
      },
      { path, chunkSize, offset },
    );
  }

  protected override async readRange(path: string, offset: number, limit: number | undefined, cap: number): Promise<Uint8Array> {
    const { fd, size } = this.#guard.openRegular(path);
    try {
      // The size comes from the open handle, so a file swapped after a stat
      // cannot slip past the cap.
      const remaining = Math.max(0, size - offset);
      if (limit === undefined && remaining > cap) {
        throw hostError('ETOOLARGE', path, `${remaining} bytes exceed the convenience limit of ${cap} bytes`);
      }
      return readFully(fd, offset, Math.min(limit ?? remaining, remaining));
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The stat and the bytes through one guarded open: the stat is the
   * descriptor's, so it is of the very file read, and the path is walked
   * and checked once where `stat` then `readBytes` walked it twice.
   */
  protected override async readFileWithStat(path: string, maxBytes: number): Promise<FileRead> {
    const { fd, stats } = this.#guard.openRegular(path);
    try {
      if (stats.size > maxBytes) return { stat: statOf(path, stats), bytes: undefined };
      const bytes = readFully(fd, 0, stats.size);
      // Cut short or grown in place while read: the stat said at the end is the one the bytes agree with.
      return { stat: statOf(path, bytes.byteLength === stats.size ? stats : fs.fstatSync(fd)), bytes };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The writer opens (and verifies) the parent directory first, failing as the base's own check would. */
  protected override readonly writerChecksParent = true;

  protected async openFileWriter(path: string, mode: WriteMode, ifMatch?: string): Promise<ByteWriter> {
    let writer: ByteWriter | undefined;
    const sink = openAtomicSink(this.#guard, path, mode, {
      durability: this.#durability,
      ifMatch,
      lock: async () => this.#locks.acquire(await this.#fileKey(path), 'exclusive', { brief: mode !== 'append' }),
      onSettled: () => {
        if (writer) this.#writers.delete(writer);
      },
    });
    writer = createByteWriter(sink, path, mode);
    this.#writers.add(writer);
    return writer;
  }

  #parent(path: string): { dfd: number; name: string } {
    const i = path.lastIndexOf('/');
    const parent = i < 0 ? '' : path.slice(0, i);
    return { dfd: this.#guard.openPath(parent, O_PATH_DIR), name: i < 0 ? path : path.slice(i + 1) };
  }

  protected async removeFile(path: string): Promise<void> {
    await this.#locks.with(await this.#entryKey(path), 'exclusive', () => {
      const { dfd, name } = this.#parent(path);
      try {
        fs.unlinkSync(this.#guard.via(dfd, name));
      } finally {
        fs.closeSync(dfd);
      }
    });
  }

  protected async removeDirectory(path: string, recursive: boolean): Promise<void> {
    const { dfd, name } = this.#parent(path);
    try {
      const target = this.#guard.via(dfd, name);
      // A symlink to a directory is removed as a link; its target is untouched.
      if (fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target);
      else if (recursive) fs.rmSync(target, { recursive: true });
      else fs.rmdirSync(target);
    } finally {
      fs.closeSync(dfd);
    }
  }

  protected async createDirectory(path: string): Promise<void> {
    const { dfd, name } = this.#parent(path);
    try {
      fs.mkdirSync(this.#guard.via(dfd, name));
    } finally {
      fs.closeSync(dfd);
    }
  }

  /** A recursive copy's link: the text as read, an absolute one (`/x`, from the root) made absolute again on this disk. */
  protected override async createLink(path: string, text: string): Promise<void> {
    const { dfd, name } = this.#parent(path);
    try {
      fs.symlinkSync(text.startsWith('/') ? nodePath.join(this.root, text.slice(1)) : text, this.#guard.via(dfd, name));
    } finally {
      fs.closeSync(dfd);
    }
  }

  protected async renamePath(from: string, to: string): Promise<void> {
    const [keyFrom, keyTo] = [await this.#entryKey(from), await this.#entryKey(to)];
    const [a, b] = keyFrom < keyTo ? [keyFrom, keyTo] : [keyTo, keyFrom];
    await this.#locks.with(a, 'exclusive', () =>
      this.#locks.with(b, 'exclusive', () => {
        const src = this.#parent(from);
        let dst: { dfd: number; name: string } | undefined;
        try {
          dst = this.#parent(to);
          fs.renameSync(this.#guard.via(src.dfd, src.name), this.#guard.via(dst.dfd, dst.name));
        } finally {
          fs.closeSync(src.dfd);
          closeQuietly(dst?.dfd);
        }
      }),
    );
  }

  protected async copyFile(from: string, to: string): Promise<void> {
    const { fd, size } = this.#guard.openRegular(from);
    try {
      const mode = fs.fstatSync(fd).mode & 0o7777;
      const sink = openAtomicSink(this.#guard, to, 'overwrite', {
        durability: this.#durability,
        lock: async () => this.#locks.acquire(await this.#fileKey(to), 'exclusive', { brief: true }),
        mode,
      });
      try {
        const buf = Buffer.allocUnsafe(Math.min(Math.max(size, 1), 1 << 20));
        let pos = 0;
        for (;;) {
          const n = fs.readSync(fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          await sink.write(buf.subarray(0, n));
          pos += n;
        }
        await sink.commit();
      } catch (err) {
        await sink.abort();
        throw err;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  // ------------------------------------------------------------ walk

  /**
   * A walk with stats through GNU find: one child process lists and stats the
   * tree on the other core, with no per-entry guard (see find-walk.ts). Walks
   * without stats, with `.gitignore` rules, or where find is not GNU go
   * through the JavaScript walk.
   */
  protected override nativeWalk(plan: WalkPlan): AsyncIterable<readonly FileEntry[]> | undefined {
    if (!plan.stat || this.#gitignore || !this.#guard.hasProcFd) return undefined;
    const find = findGnuFind();
    return find === undefined ? undefined : this.#findWalk(find, plan);
  }

  async *#findWalk(find: string, plan: WalkPlan): AsyncGenerator<readonly FileEntry[]> {
    const { exclude } = plan;
    const prefix = plan.start === '' ? '' : `${plan.start}/`;
    // find reports a directory's subtree right after it, so one prefix is
    // enough to leave out what lies below a directory that is not entered.
    let pruned: string | undefined;
    for await (const found of findWalk(this.#guard, find, { dir: plan.start, maxDepth: plan.maxDepth, exclude })) {
      const out: FileEntry[] = [];
      for (const f of found) {
        if (pruned !== undefined) {
          if (f.rel.startsWith(pruned)) continue;
          pruned = undefined;
        }
        const name = f.rel.slice(f.rel.lastIndexOf('/') + 1);
        const kind: FileKind = f.type === 'f' ? 'file' : f.type === 'd' ? 'directory' : f.type === 'l' ? 'symlink' : 'other';
        if (isTempName(name) || !isAddressableName(name) || exclude.has(name)) {
          if (kind === 'directory') pruned = `${f.rel}/`;
          continue;
        }
        const path = prefix + f.rel;
        // A symlink's stat is its target's when that stays inside the root: the guarded stat decides.
        const stat: FileStat | undefined =
          kind === 'symlink'
            ? await this.tryStat(path)
            : { path, kind, size: kind === 'directory' ? 0 : f.size, mtime: f.mtime, ctime: f.ctime, birthtime: undefined, mode: f.mode };
        if (stat === undefined) continue;
        const entry: FileEntry = { name, path, kind, stat };
        out.push(entry);
        if (kind === 'directory' && plan.enter !== undefined && !plan.enter(entry)) pruned = `${f.rel}/`;
      }
      if (out.length > 0) yield out;
    }
  }

  // ------------------------------------------------------------ digest

  /**
   * Many files are hashed in worker threads, a slice of paths per request
   * and two requests per worker in flight, so the workers never wait for the
   * caller; a few files are not worth the round trip.
   */
  protected override async *digestFiles(targets: readonly DigestTarget[], headBytes: number): AsyncGenerator<Array<{ index: number; digest: FileDigest }>> {
    if (targets.length < DIGEST_POOL_MIN_FILES || this.#digestWorkers === 0 || this.#digestWorkersFailed) {
      yield* super.digestFiles(targets, headBytes);
      return;
    }
    this.#digestPool ??= new DigestPool({ rootReal: this.#guard.rootReal, policy: this.#guard.policy }, this.#digestWorkers);
    const pool = this.#digestPool;
    const slices: Array<readonly DigestTarget[]> = [];
    for (let i = 0; i < targets.length; i += DIGEST_SLICE) slices.push(targets.slice(i, i + DIGEST_SLICE));
    const send = (slice: readonly DigestTarget[]) => {
      const p = pool.run(
        slice.map((t) => t.path),
        slice.map((t) => t.dirOnly),
        headBytes,
      );
      p.catch(() => {}); // awaited below; a consumer that stops early must not leave it unhandled
      return p;
    };
    const inFlight: Array<{ slice: readonly DigestTarget[]; results: Promise<DigestAnswers> }> = [];
    let next = 0;
    while (next < slices.length || inFlight.length > 0) {
      while (inFlight.length < pool.size * 2 && next < slices.length) {
        const slice = slices[next++] as readonly DigestTarget[];
        inFlight.push({ slice, results: send(slice) });
      }
      const { slice, results } = inFlight.shift() as (typeof inFlight)[number];
      let answers: DigestAnswers;
      try {
        answers = await results;
      } catch (err) {
        if (!(err instanceof WorkerStartError)) throw err;
        // No worker can start here: this slice and every later one are hashed on this thread, now and from now on.
        this.#digestWorkersFailed = true;
        warnDigestWorkersUnavailable(err);
        yield* super.digestFiles([slice, ...inFlight.map((f) => f.slice), ...slices.slice(next)].flat(), headBytes);
        return;
      }
      yield digestsOf(slice, answers);
    }
  }

  // ------------------------------------------------------------ glob

  /** The base's walk, run synchronously a directory at a time and handed out in batches. */
  protected override async *walkEntries(start: string, maxDepth: number, enter: (entry: FileEntry) => boolean): AsyncGenerator<readonly FileEntry[]> {
    yield* this.#walk(start, maxDepth, enter);
  }

  /**
   * The walk of core's `walkTree` (depth-first, parents before children,
   * siblings by name, vanished directories skipped), run synchronously and
   * handed out in batches of entries, so the per-entry cost is a loop
   * iteration instead of several async steps.
   */
  *#walk(start: string, maxDepth: number, enter: (entry: FileEntry) => boolean): Generator<FileEntry[]> {
    if (maxDepth < 1) return;
    const sorted = (entries: FileEntry[]) => entries.sort((a, b) => compareNames(a.name, b.name));
    // Each frame keeps a descriptor on its directory while the walk is in it, and a subdirectory is opened
    // through it: one component resolved, not followed, no landing check (a readlink per directory before,
    // and a path resolved from the root). Descriptors are closed whenever a batch is handed out, so a
    // consumer that stops without closing the walk holds none; a frame reopens its own (checked) when needed.
    type Frame = { path: string; entries: FileEntry[]; index: number; depth: number; rules: readonly IgnoreRule[]; fd: number | undefined };
    const stack: Frame[] = [];
    const closeAll = () => {
      for (const f of stack) {
        if (f.fd !== undefined) fs.closeSync(f.fd);
        f.fd = undefined;
      }
    };
    try {
      const startFd = this.#guard.openPath(start, O_PATH_DIR);
      stack.push({ path: start, entries: [], index: 0, depth: 1, rules: this.#gitignore ? this.#rulesFor(start) : [], fd: startFd });
      (stack[0] as Frame).entries = sorted(this.#listAt(startFd, start));
      let batch: FileEntry[] = [];
      while (stack.length > 0) {
        const top = stack[stack.length - 1] as Frame;
        if (top.index >= top.entries.length) {
          stack.pop();
          if (top.fd !== undefined) fs.closeSync(top.fd);
          continue;
        }
        const entry = top.entries[top.index++] as FileEntry;
        if (this.#exclude.has(entry.name)) continue;
        if (top.rules.length > 0 && isIgnored(top.rules, entry.path, entry.kind === 'directory')) continue;
        batch.push(entry);
        if (entry.kind === 'directory' && top.depth < maxDepth && enter(entry)) {
          let children: FileEntry[] | undefined;
          let fd: number | undefined;
          try {
            top.fd ??= this.#guard.openPath(top.path, O_PATH_DIR);
            fd = this.#guard.openDirectoryAt(top.fd, entry.name) ?? this.#guard.openPath(entry.path, O_PATH_DIR);
            children = this.#listAt(fd, entry.path);
          } catch (err) {
            if (fd !== undefined) fs.closeSync(fd);
            fd = undefined;
            // A directory removed, replaced or made unreadable while we walk
            // is passed over, as the base walk (and find, and ripgrep) does.
            const code = (err as { code?: string }).code;
            if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EACCES' && code !== 'EPERM') throw err;
          }
          if (children !== undefined) {
            const rules = this.#gitignore ? [...top.rules, ...this.#loadGitignore(entry.path)] : top.rules;
            stack.push({ path: entry.path, entries: sorted(children), index: 0, depth: top.depth + 1, rules, fd });
          }
        }
        if (batch.length >= 512) {
          closeAll();
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) {
        closeAll();
        yield batch;
      }
    } finally {
      closeAll();
    }
  }

  /** The rules of `dir/.gitignore`, none when it is missing or unreadable. */
  #loadGitignore(dir: string): IgnoreRule[] {
    const path = dir === '' ? '.gitignore' : `${dir}/.gitignore`;
    try {
      const { fd, size } = this.#guard.openRegular(path);
      try {
        return parseGitignore(new TextDecoder().decode(readWhole(fd, Math.min(size, 1 << 20))), dir);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return [];
    }
  }

  /** Rules in force in `dir`: every `.gitignore` from the root down to it. */
  #rulesFor(dir: string, cache?: Map<string, readonly IgnoreRule[]>): readonly IgnoreRule[] {
    const hit = cache?.get(dir);
    if (hit !== undefined) return hit;
    const rules = dir === '' ? this.#loadGitignore('') : [...this.#rulesFor(parentPath(dir), cache), ...this.#loadGitignore(dir)];
    cache?.set(dir, rules);
    return rules;
  }

  /** Whether a walk from `scope` would skip `path` (a file below it): an excluded or ignored component. */
  #hiddenFromWalk(path: string, scope: string, cache: Map<string, readonly IgnoreRule[]>): boolean {
    const parts = path.split('/');
    const first = scope === '' ? 0 : scope.split('/').length;
    if (parts.slice(first).some((p) => this.#exclude.has(p))) return true;
    if (!this.#gitignore) return false;
    let dir = parts.slice(0, first).join('/');
    for (let i = first; i < parts.length; i++) {
      const here = dir === '' ? (parts[i] as string) : `${dir}/${parts[i]}`;
      const isDir = i < parts.length - 1;
      if (isIgnored(this.#rulesFor(dir, cache), here, isDir)) return true;
      dir = here;
    }
    return false;
  }

  // ------------------------------------------------------------ grep

  protected override nativeGrep(matcher: GrepMatcher, plan: GrepPlan): AsyncIterable<GrepMatch> {
    return this.#grep(matcher, plan, { ignoreCase: plan.ignoreCase, literal: plan.literal });
  }

  async *#grep(matcher: GrepMatcher, plan: GrepPlan, flags: GrepFlags | undefined): AsyncGenerator<GrepMatch> {
    if (this.#rg === undefined || flags === undefined) {
      yield* this.#scan(matcher, plan, flags);
      return;
    }
    const st = await this.statPath(plan.scope);
    if (st.kind !== 'directory') {
      // One file: the shared scanner is as fast, and rg treats named files differently.
      yield* this.#scan(matcher, plan, flags);
      return;
    }
    const ignoreCache = new Map<string, readonly IgnoreRule[]>();
    yield* ripgrepSearch({
      rg: this.#rg,
      guard: this.#guard,
      matcher,
      plan,
      flags,
      rescan: (path, limit) => this.#scanOne(path, matcher, limit),
      fallback: () => this.#scan(matcher, plan, flags),
      exclude: [...this.#exclude, ...plan.exclude],
      keep: this.#gitignore ? (path) => !this.#hiddenFromWalk(path, plan.scope, ignoreCache) : undefined,
    });
  }

  /**
   * The shared scanner, with a fast path for patterns with a literal every
   * match contains (a literal pattern, or a regex's required piece): a file
   * whose bytes do not contain the literal's UTF-8 bytes cannot have a
   * matching line, so it is skipped after one `indexOf` instead of being
   * decoded and split (with a non-ASCII literal, only if its bytes read as
   * UTF-8: a legacy-encoded file holds the text in other bytes). Files that may match go through core's `scanChunks` in the same
   * chunks the base scanner uses, so results are identical.
   */
  async *#scan(matcher: GrepMatcher, plan: GrepPlan, flags: GrepFlags | undefined): AsyncGenerator<GrepMatch> {
    const source = matcher.source;
    const caseless = source.toLowerCase() === source.toUpperCase();
    // The text every match contains: a literal pattern's own, or what a case-sensitive regex requires.
    const needle = flags?.literal && (!flags.ignoreCase || caseless) ? source : matcher.literal;
    const literal = needle !== undefined && needle.length > 0 && !needle.includes('\ufffd') ? Buffer.from(needle, 'utf8') : undefined;
    if (literal === undefined) {
      yield* this.scanFiles(matcher, plan);
      return;
    }
    const asciiLiteral = literal.every((b) => b < 0x80);
    const chunkSize = this.limits.chunkSize;
    let remaining = plan.maxMatches;
    // Files of one directory come one after another: opened relative to it, without a landing check each.
    const files = new DirectoryCursor(this.#guard);
    try {
      for await (const path of this.grepCandidates(plan)) {
        let file: { fd: number; size: number };
        try {
          file = files.open(path);
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL' || code === 'EPATHESCAPE') continue;
          throw err;
        }
        let chunks: Uint8Array[] | undefined;
        let skip = false;
        try {
          if (file.size <= FAST_SCAN_MAX_BYTES) {
            const bytes = readWhole(file.fd, file.size);
            const wide = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
            // UTF-16 files are decoded by the scanner. Without the literal's UTF-8 bytes, a file cannot match
            // if it reads as UTF-8; with a non-ASCII literal, a legacy-encoded one may (its text is decoded).
            if (!wide && bytes.indexOf(literal) < 0 && (asciiLiteral || readsAsUtf8(bytes))) skip = true;
            else chunks = split(bytes, chunkSize);
          }
        } finally {
          fs.closeSync(file.fd);
        }
        if (skip) continue;
        // Matches go to the caller, who may take its time: no directory is held meanwhile.
        files.release();
        // Too large to hold: streamed, as the base scanner does.
        const reader = chunks === undefined ? await this.openFileReader(path, chunkSize, 0) : undefined;
        try {
          for await (const m of scanChunks(path, reader ?? iterate(chunks ?? []), matcher, remaining, this.grepDetection())) {
            yield m;
            if (--remaining <= 0) return;
          }
        } finally {
          await reader?.close();
        }
      }
    } finally {
      files.release();
    }
  }

  async *#scanOne(path: string, matcher: GrepMatcher, limit: number): AsyncGenerator<GrepMatch> {
    yield* this.scanFiles(matcher, {
      scope: path,
      maxMatches: limit,
      filter: undefined,
      dot: true,
      pattern: matcher.source,
      ignoreCase: false,
      literal: false,
      exclude: new Set(),
    });
  }

  // ------------------------------------------------------------ text

  /** Text reads (`openText`, `read`, `decodeText`) detect with this backend's legacy detector. */
  protected override textOptions(options: TextOptions): TextReaderOptions {
    return { ...options, detect: { legacyDetector: this.#legacyDetector } };
  }

  /**
   * Writes text. Without an explicit `encoding`, an existing file keeps its
   * encoding, byte-order mark and line endings (reading a file and writing the
   * same text back is byte-identical); a new file is UTF-8 without BOM.
   */
  override async write(path: string, text: string, options: WriteOptions & TextWriteOptions = {}): Promise<WriteResult> {
    if (typeof text !== 'string') return super.write(path, text, options);
    let bytes: Uint8Array;
    try {
      const r = this.resolve(path, 'write');
      const readPrefix = async (limit: number | undefined): Promise<Uint8Array | undefined> => {
        try {
          return await this.readRange(r.path, 0, limit, this.limits.maxConvenienceBytes);
        } catch {
          return undefined;
        }
      };
      bytes = await encodeForFile(
        text,
        { ...options, mode: options.mode },
        { head: () => readPrefix(DETECTION_WINDOW_BYTES + 1), all: () => readPrefix(undefined) },
        this.#legacyDetector,
      );
    } catch (err) {
      if (err instanceof FsError) throw err.withOperation('write');
      throw err;
    }
    try {
      return await this.writeBytes(path, bytes, options);
    } catch (err) {
      throw err instanceof FsError ? err.withOperation('write') : err;
    }
  }

  // ------------------------------------------------------------ snapshots

  #store(): GitSnapshotStore {
    this.#snapshots ??= new GitSnapshotStore({
      guard: this.#guard,
      gitdir: nodePath.join(this.stateDir, 'snapshots.git'),
      exclude: (name) => this.#snapshotExclude.has(name) || isTempName(name) || !isAddressableName(name),
    });
    return this.#snapshots;
  }

  protected override async createSnapshot(tag: string | undefined): Promise<Snapshot> {
    return this.#store().snapshot(tag);
  }

  protected override async restoreSnapshot(id: string): Promise<void> {
    await this.#store().restore(id);
  }

  protected override async snapshotList(): Promise<Snapshot[]> {
    return this.#store().list();
  }

  protected override async removeSnapshot(id: string): Promise<void> {
    await this.#store().drop(id);
  }

  /** One watch a directory on Linux, the platform's recursive watcher elsewhere (native-watch.ts); `exclude` names are not watched. */
  protected override startWatch(plan: WatchPlan, sink: WatchSink): Promise<() => Promise<void>> {
    return startNativeWatch({ root: this.root, exclude: this.#exclude }, plan, sink);
  }

  /** ctxfs's own temp files, and anything under an excluded name (`.git`), are never reported. */
  protected override watchIgnores(path: string): boolean {
    for (const segment of path.split('/')) if (isTempName(segment) || this.#exclude.has(segment)) return true;
    return false;
  }

  protected override async closeBackend(): Promise<void> {
    await this.#digestPool?.close();
    for (const w of [...this.#writers]) await w.abort();
    this.#writers.clear();
    this.#locks.dispose();
  }
}
