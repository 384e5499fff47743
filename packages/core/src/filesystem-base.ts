/**
 * The shared half of every backend. A backend extends {@link FilesystemBase}
 * and implements a handful of primitives on normalized, validated paths; the
 * base supplies everything else the protocol promises, identically for all:
 * path rules, read-only refusal, POSIX pre-conditions of the mutating
 * operations, the bounded convenience layer, glob and grep over a lazy walk,
 * and the error model (every failure an {@link FsError} with op and path).
 *
 * @module
 */

import { type CopyStep, copiedLinkLeavesRoot, linkTextLeavesRoot, uncopyableEntry, uncopyableLink } from './copy-tree.ts';
import { DIGEST_BUFFER_BYTES, digestStream, MAX_DIGEST_HEAD_BYTES } from './digest.ts';
import { createDecoder, type DetectOptions, detectBom, encodeText, normalizeEncoding } from './encoding.ts';
import { FsError, type FsErrorCode, type FsOperation, fsError, symlinkLoop, toFsError } from './errors.ts';
import { compileFileFilter, compileGlob } from './glob.ts';
import { compileGrep, type GrepMatcher, scanChunks } from './grep.ts';
import { validateIfMatch } from './if-match.ts';
import { chardetDetector, detectLineEnding, detectTextFormat } from './legacy-detector.ts';
import { DEFAULT_READ_LINES, resolveLimits } from './limits.ts';
import {
  displayPath,
  isSameOrInside,
  joinPath,
  type LinkLoopClosure,
  linkLoopClosure,
  parentPath,
  resolvePath,
  trailingSlashError,
  unfollowedLink,
} from './path.ts';
import { createTextReader, type TextReaderOptions } from './text-reader.ts';
import type {
  ByteReader,
  ByteWriter,
  Capabilities,
  CopyOptions,
  DecodedText,
  DecodeTextOptions,
  DeleteOptions,
  DigestOptions,
  FileDigest,
  FileEntry,
  FileRead,
  FileStat,
  Filesystem,
  FilesystemLimits,
  GlobMatch,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  ListOptions,
  MkdirOptions,
  OpenReadOptions,
  OpenWriteOptions,
  ReadBytesOptions,
  ReadTextOptions,
  ReadWithStatOptions,
  RenameOptions,
  Snapshot,
  TextOptions,
  TextPage,
  TextReader,
  WalkOptions,
  Watcher,
  WatchOptions,
  WriteMode,
  WriteOptions,
  WriteResult,
  WriteTextOptions,
} from './types.ts';
import { compareWalkOrder, walkBatches } from './walk.ts';
import { createWatcher, DEFAULT_WATCH_DEBOUNCE_MS, type WatchPlan, type WatchSink, watchUnsupported } from './watch.ts';

/** Reads of a file that changed between its stat and its bytes, before `readWithStat`'s default gives up. */
const STAT_READ_PASSES = 3;

/** Whether two stats of one path describe the same content (size and change times). */
function sameFileStat(a: FileStat, b: FileStat): boolean {
  return a.kind === b.kind && a.size === b.size && a.mtime.getTime() === b.mtime.getTime() && a.ctime?.getTime() === b.ctime?.getTime();
}

/** Options every backend accepts. */
export interface FilesystemBaseOptions {
  /** Refuse every mutation with `EROFS`. */
  readOnly?: boolean;
  /** Override default limits (path shape, convenience cap, chunk size, grep matches). */
  limits?: Partial<FilesystemLimits>;
}

/**
 * Creates a Node-style error for a primitive to throw; the base adds the
 * operation and path.
 */
export function errno(code: FsErrorCode, message?: string): Error & { code: FsErrorCode } {
  const err = new Error(message ?? code) as Error & { code: FsErrorCode };
  err.code = code;
  return err;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Operations that convenience calls delegate to; their errors take the caller's name. */
const DELEGATED_OPS: ReadonlySet<string> = new Set(['openRead', 'openText', 'openWrite', 'writeBytes']);

const WRITE_MODES: ReadonlySet<string> = new Set(['create', 'overwrite', 'append']);

/**
 * The absolute paths a caller may write for the workspace root: `root`
 * (on the host, the directory) and the backend's
 * {@link Filesystem.absoluteRoots} (the spelling a host root was opened by,
 * a container's directory inside it). An absolute path inside one is
 * refused naming the relative path ({@link resolvePath}'s `hostRoots`); a
 * spelling that is no absolute path (`memory:`, `docker://…`) places nothing.
 *
 * @example
 * ```ts
 * rootSpellings(containerFs); // ['docker://sandbox/work', '/work']
 * rootSpellings(memoryFs);    // ['memory:']
 * ```
 */
export function rootSpellings(fs: Pick<Filesystem, 'root' | 'absoluteRoots'>): readonly string[] {
  return fs.absoluteRoots === undefined ? [fs.root] : [fs.root, ...fs.absoluteRoots];
}

/**
 * Base class of every backend. Subclasses implement the `protected abstract`
 * primitives; each receives normalized paths (root `''`) that already passed
 * validation and read-only checks, and throws Node-style errors (`code`).
 *
 * @example
 * ```ts
 * class MyBackend extends FilesystemBase {
 *   readonly root = 'my:';
 *   readonly capabilities = { ...NO_CAPABILITIES };
 *   protected async statPath(path: string) { ... }
 *   // ... the other primitives
 * }
 * ```
 */
export abstract class FilesystemBase implements Filesystem {
  abstract readonly root: string;
  abstract readonly capabilities: Capabilities;
  readonly limits: Readonly<FilesystemLimits>;
  readonly readOnly: boolean;
  /** Set before the close's body runs, whose synchronous start (a watcher's close) could otherwise still get in. */
  #closed = false;
  /** The close under way or done: a second close waits for it. */
  #closing: Promise<void> | undefined;
  readonly #watchers = new Set<Watcher>();

  constructor(options: FilesystemBaseOptions = {}) {
    this.limits = resolveLimits(options.limits);
    this.readOnly = options.readOnly ?? false;
  }

  // ---------------------------------------------------------------- primitives

  /** Metadata of `path`, following symlinks that stay inside the root. Throws ENOENT/ENOTDIR. */
  protected abstract statPath(path: string): Promise<FileStat>;
  /** Entries of a directory, any order. Throws ENOENT/ENOTDIR. */
  protected abstract readDirectory(path: string): Promise<FileEntry[]>;
  /** A reader over a regular file. Throws ENOENT/EISDIR/ENOTDIR. */
  protected abstract openFileReader(path: string, chunkSize: number, offset: number): Promise<ByteReader>;
  /**
   * A writer whose close commits atomically. The parent directory exists. Throws EEXIST (create), EISDIR.
   * `ifMatch` (already validated; only passed when `capabilities.compareAndSwap`) is checked at
   * commit, atomically with it, through `assertIfMatch` (if-match.ts).
   */
  protected abstract openFileWriter(path: string, mode: WriteMode, ifMatch?: string): Promise<ByteWriter>;
  /**
   * `openFileWriter` itself fails with ENOENT or ENOTDIR when the parent
   * directory is missing or not a directory (the host's open of the parent
   * does), so `openWrite` skips its own look at the parent before every write
   * and asks only when the writer failed, to explain the failure. Default
   * `false`: the base checks the parent first.
   */
  protected readonly writerChecksParent: boolean = false;
  /** Removes a file (not a directory). */
  protected abstract removeFile(path: string): Promise<void>;
  /** Removes a directory; with `recursive` false it must be empty (ENOTEMPTY). */
  protected abstract removeDirectory(path: string, recursive: boolean): Promise<void>;
  /** Creates one directory; the parent exists. Throws EEXIST. */
  protected abstract createDirectory(path: string): Promise<void>;
  /** POSIX rename with pre-conditions already checked (kinds compatible, not into itself). */
  protected abstract renamePath(from: string, to: string): Promise<void>;
  /** Copies one regular file over/to `to` (whose parent exists), keeping its mode. */
  protected abstract copyFile(from: string, to: string): Promise<void>;

  /**
   * Optional fast path for bounded whole-range reads (`readBytes`). Receives
   * the cap; must throw ETOOLARGE itself when `limit` is undefined and the
   * remaining size exceeds it.
   */
  protected readRange?(path: string, offset: number, limit: number | undefined, cap: number): Promise<Uint8Array>;

  /**
   * Optional primitive of `readWithStat`: the stat of `path` and, when it is
   * at most `maxBytes`, its bytes, from one look at one file (the host stats
   * the descriptor it reads). Throws as `openFileReader` does (EISDIR for a
   * directory). Without it the base stats, reads and stats again, and
   * answers only when the two stats and the bytes agree.
   */
  protected readFileWithStat?(path: string, maxBytes: number): Promise<FileRead>;

  /** Optional native grep over files below `path`; must agree with the shared scanner. */
  protected nativeGrep?(matcher: GrepMatcher, plan: GrepPlan): AsyncIterable<GrepMatch>;
  /**
   * A faster walk for `plan` (an external tool, one pass of the engine), or
   * `undefined` to let the base walk (a `readDirectory`, and `statEntries`
   * when asked, per directory). It must yield
   * what the base would — the same entries, `exclude` and `enter` applied,
   * stats when asked — in any order that keeps parents before children.
   */
  protected nativeWalk?(plan: WalkPlan): AsyncIterable<readonly FileEntry[]> | undefined;

  /** Snapshot primitives; the defaults refuse with EUNSUPPORTED. */
  protected async createSnapshot(_tag: string | undefined): Promise<Snapshot> {
    throw errno('EUNSUPPORTED', 'snapshots are not supported by this backend');
  }
  protected async restoreSnapshot(_id: string): Promise<void> {
    throw errno('EUNSUPPORTED', 'snapshots are not supported by this backend');
  }
  protected async snapshotList(): Promise<Snapshot[]> {
    throw errno('EUNSUPPORTED', 'snapshots are not supported by this backend');
  }
  protected async removeSnapshot(_id: string): Promise<void> {
    throw errno('EUNSUPPORTED', 'snapshots are not supported by this backend');
  }
  /**
   * Starts watching `plan` (its path exists and is of `plan.kind`): report
   * raw changes to `sink`, with normalized paths; resolve, once changes are
   * being observed, with the function that stops. Only called when
   * `capabilities.watch`. Scope, names, debounce and overflow are the base's.
   */
  protected startWatch?(plan: WatchPlan, sink: WatchSink): Promise<() => Promise<void> | void>;
  /** Debounce of a watcher that asks for none: the backend's own batching may make it 0. */
  protected defaultWatchDebounceMs(): number {
    return DEFAULT_WATCH_DEBOUNCE_MS;
  }
  /** Paths a watcher never reports: the backend's own temp and lock files. */
  protected watchIgnores(_path: string): boolean {
    return false;
  }
  /** Releases backend resources. */
  protected async closeBackend(): Promise<void> {}

  /**
   * Decoding options of every text read of this backend (`openText`, `read`,
   * `decodeText`): by default core's detection with its chardet-based legacy
   * detector, the same on every backend so the same bytes read as the same
   * text everywhere. Override to plug another detector.
   */
  protected textOptions(options: TextOptions): TextReaderOptions {
    return { ...options, detect: { legacyDetector: chardetDetector } };
  }

  // ---------------------------------------------------------------- helpers

  /**
   * Validates a caller path for `op`. With the root's own spellings, an
   * absolute path inside the root is refused naming the relative path, as
   * the context layer's refusal does.
   */
  protected resolve(input: unknown, op: FsOperation): { path: string; dirOnly: boolean } {
    if (this.#closed) throw fsError('ECLOSED', op, typeof input === 'string' ? input : undefined, { reason: 'filesystem is closed' });
    return resolvePath(input, op, this.limits, rootSpellings(this));
  }

  /** Throws EROFS when read-only. */
  protected assertWritable(op: FsOperation, path: string): void {
    if (this.readOnly) throw fsError('EROFS', op, displayPath(path));
  }

  /** Stat that answers undefined for a missing path (ENOENT or a file in the way). */
  protected async tryStat(path: string): Promise<FileStat | undefined> {
    try {
      return await this.statPath(path);
    } catch (err) {
      const code = codeOf(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  async #requireParentDir(path: string, op: FsOperation): Promise<void> {
    const parent = parentPath(path);
    if (parent === path) return;
    const st = await this.tryStat(parent);
    if (st === undefined) {
      // Distinguish "a file is in the way" (ENOTDIR) from "missing" (ENOENT).
      let p = parentPath(parent);
      while (p !== parent) {
        const s = await this.tryStat(p);
        if (s !== undefined) {
          if (s.kind !== 'directory') throw fsError('ENOTDIR', op, path);
          break;
        }
        if (p === '') break;
        p = parentPath(p);
      }
      throw fsError('ENOENT', op, path, {
        reason: `parent directory '${displayPath(parent)}' does not exist`,
        hint: 'create it with mkdir(..., { parents: true }) or pass { createParents: true }',
      });
    }
    // A directory on the way that stats as a link: a stat follows links that stay inside, so this one leads out
    // of the workspace or loops. Nothing is made through it.
    if (st.kind === 'symlink') throw await unfollowedLink(this, op, path, parent);
    if (st.kind !== 'directory') throw fsError('ENOTDIR', op, path, { reason: `'${displayPath(parent)}' is not a directory` });
  }

  async #ensureDirs(path: string, op: FsOperation): Promise<void> {
    const parts = path === '' ? [] : path.split('/');
    let current = '';
    for (const part of parts) {
      current = joinPath(current, part);
      const st = await this.tryStat(current);
      if (st === undefined) {
        try {
          await this.createDirectory(current);
        } catch (err) {
          // Lost a race with another creator: fine if it made a directory.
          if (codeOf(err) !== 'EEXIST') throw err;
          const again = await this.tryStat(current);
          if (again?.kind !== 'directory') throw fsError('ENOTDIR', op, path);
        }
      } else if (st.kind === 'symlink') {
        throw await unfollowedLink(this, op, path, current);
      } else if (st.kind !== 'directory') {
        throw fsError('ENOTDIR', op, path, { reason: `'${current}' is not a directory` });
      }
    }
  }

  async #guard<T>(op: FsOperation, path: string | undefined, fn: () => Promise<T>, dest?: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // A loop the backend met (its errno, not yet an FsError) is refused under the path asked for, naming the
      // link that leads back into it: whichever link the backend was on when it gave up, the caller named none.
      if (codeOf(err) === 'ELOOP' && !(err instanceof FsError)) throw await this.#loopRefusal(err, op, path, dest);
      throw await this.#publicError(err, op, path, dest);
    }
  }

  /**
   * The error a public call throws; a path "missing" because the root itself
   * is gone (removed or moved away under an open workspace) is said to be
   * that, or every call would answer ENOENT of its own path and every hint
   * (list it, create it) would fail the same way.
   */
  async #publicError(err: unknown, op: FsOperation, path: string | undefined, dest?: string): Promise<FsError> {
    const e = asPublicError(err, op, path, dest);
    if ((e.code === 'ENOENT' || e.code === 'ENOTDIR') && !this.#closed && (await this.rootGone())) return rootGoneError(op, path, dest, e);
    return e;
  }

  /**
   * True when the root is no longer a directory: removed, moved away or
   * replaced by a file. Asked after every ENOENT and ENOTDIR a call meets;
   * a backend with a cheaper look than `statPath('')` overrides it.
   */
  protected async rootGone(): Promise<boolean> {
    try {
      return (await this.statPath('')).kind !== 'directory';
    } catch (err) {
      const code = codeOf(err);
      return code === 'ENOENT' || code === 'ENOTDIR';
    }
  }

  /** Throws the root-gone refusal for a lookup that found nothing, when that is why. */
  async #assertRootPresent(op: FsOperation, path: string): Promise<void> {
    if (await this.rootGone()) throw rootGoneError(op, path, undefined);
  }

  async #loopRefusal(err: unknown, op: FsOperation, path: string | undefined, dest: string | undefined): Promise<FsError> {
    let closure: LinkLoopClosure | undefined;
    for (const input of [path, dest]) {
      if (closure !== undefined || input === undefined) continue;
      try {
        closure = await linkLoopClosure(resolvePath(input, op, this.limits).path, (p) => this.readLink(p));
      } catch {
        // A link that cannot be read (gone since, or unreadable): the loop is refused without naming it.
      }
    }
    return symlinkLoop(op, path, { closure, dest, cause: err });
  }

  // ---------------------------------------------------------------- streaming

  openRead(path: string, options: OpenReadOptions = {}): Promise<ByteReader> {
    return this.#guard('openRead', path, async () => {
      const r = this.resolve(path, 'openRead');
      const chunkSize = options.chunkSize ?? this.limits.chunkSize;
      const offset = options.offset ?? 0;
      if (!Number.isSafeInteger(chunkSize) || chunkSize <= 0) throw fsError('EINVAL', 'openRead', path, { reason: 'chunkSize must be a positive integer' });
      if (!Number.isSafeInteger(offset) || offset < 0) throw fsError('EINVAL', 'openRead', path, { reason: 'offset must be a non-negative integer' });
      if (r.dirOnly) await this.#assertDirOnlyTarget(r.path, 'openRead');
      return this.openFileReader(r.path, chunkSize, offset);
    });
  }

  async #assertDirOnlyTarget(path: string, op: FsOperation): Promise<never> {
    const st = await this.statPath(path);
    throw trailingSlashError(op, path, st.kind, false) ?? fsError('EISDIR', op, path);
  }

  openWrite(path: string, options: OpenWriteOptions = {}): Promise<ByteWriter> {
    return this.#guard('openWrite', path, async () => {
      const r = this.resolve(path, 'openWrite');
      const mode = options.mode ?? 'overwrite';
      if (!WRITE_MODES.has(mode))
        throw fsError('EINVAL', 'openWrite', path, { reason: `unknown write mode '${String(mode)}'`, hint: "use 'create', 'overwrite' or 'append'" });
      validateIfMatch(options.ifMatch, 'openWrite', path);
      this.assertWritable('openWrite', r.path);
      if (options.ifMatch !== undefined && !this.capabilities.compareAndSwap)
        throw fsError('EUNSUPPORTED', 'openWrite', path, {
          reason: 'this backend cannot check ifMatch atomically with the write',
          hint: 'write without ifMatch',
        });
      if (r.path === '') throw fsError('EISDIR', 'openWrite', '.', { reason: 'the workspace root is a directory' });
      if (r.dirOnly) {
        const st = await this.tryStat(r.path);
        throw trailingSlashError('openWrite', r.path, st?.kind, true) ?? fsError('EISDIR', 'openWrite', path);
      }
      if (options.createParents) await this.#ensureDirs(parentPath(r.path), 'openWrite');
      else if (this.writerChecksParent) {
        try {
          return await this.openFileWriter(r.path, mode, options.ifMatch);
        } catch (err) {
          const code = codeOf(err);
          // The precise error (which ancestor is missing or in the way); the writer's own when the parent is fine after all.
          if (code === 'ENOENT' || code === 'ENOTDIR') await this.#requireParentDir(r.path, 'openWrite');
          throw err;
        }
      } else await this.#requireParentDir(r.path, 'openWrite');
      return this.openFileWriter(r.path, mode, options.ifMatch);
    });
  }

  openText(path: string, options: TextOptions = {}): Promise<TextReader> {
    return this.#guard('openText', path, async () => {
      const reader = await this.openRead(path);
      return createTextReader(reader, this.textOptions(options));
    });
  }

  decodeText(bytes: Uint8Array, options: DecodeTextOptions = {}): DecodedText {
    if (this.#closed) throw fsError('ECLOSED', 'decodeText', options.path, { reason: 'filesystem is closed' });
    if (!(bytes instanceof Uint8Array)) throw fsError('EINVAL', 'decodeText', options.path, { reason: 'bytes must be a Uint8Array' });
    if (options.encoding !== undefined) {
      const encoding = normalizeEncoding(options.encoding);
      const bom = detectBom(bytes);
      const bomLength = bom !== undefined && bom.encoding === encoding ? bom.length : 0;
      const decoder = createDecoder(encoding, { op: 'decodeText', path: options.path });
      const text = decoder.decode(bytes.subarray(bomLength)) + decoder.end();
      return { text, encoding, bomLength, binary: false, lineEnding: detectLineEnding(text.slice(0, 8192)), source: 'explicit', confidence: 1 };
    }
    const format = detectTextFormat(bytes, { ...this.textOptions({}).detect, partial: false });
    if (format.binary)
      return { text: '', encoding: format.encoding, bomLength: 0, binary: true, lineEnding: 'none', source: format.source, confidence: format.confidence };
    const decoder = createDecoder(format.encoding, { op: 'decodeText', path: options.path });
    const text = decoder.decode(bytes.subarray(format.bomLength)) + decoder.end();
    return {
      text,
      encoding: format.encoding,
      bomLength: format.bomLength,
      binary: false,
      lineEnding: format.lineEnding,
      source: format.source,
      confidence: format.confidence,
    };
  }

  // ---------------------------------------------------------------- convenience

  readBytes(path: string, options: ReadBytesOptions = {}): Promise<Uint8Array> {
    return this.#guard('readBytes', path, async () => {
      const r = this.resolve(path, 'readBytes');
      const offset = options.offset ?? 0;
      const cap = this.limits.maxConvenienceBytes;
      const limit = options.limit;
      if (!Number.isSafeInteger(offset) || offset < 0) throw fsError('EINVAL', 'readBytes', path, { reason: 'offset must be a non-negative integer' });
      if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0))
        throw fsError('EINVAL', 'readBytes', path, { reason: 'limit must be a non-negative integer' });
      if (limit !== undefined && limit > cap) throw this.#tooLarge('readBytes', r.path, limit);
      if (r.dirOnly) await this.#assertDirOnlyTarget(r.path, 'readBytes');
      return this.#readRange(r.path, offset, limit);
    });
  }

  /** The bytes of `path` (normalized) from `offset`, at most `limit` (the whole rest, within the cap, when undefined). */
  async #readRange(path: string, offset: number, limit: number | undefined): Promise<Uint8Array> {
    const cap = this.limits.maxConvenienceBytes;
    if (this.readRange) return this.readRange(path, offset, limit, cap);
    const reader = await this.openFileReader(path, this.limits.chunkSize, offset);
    try {
      const remaining = Math.max(0, reader.size - offset);
      if (limit === undefined && remaining > cap) throw this.#tooLarge('readBytes', path, remaining);
      const want = Math.min(limit ?? remaining, cap);
      const out = new Uint8Array(want);
      let filled = 0;
      while (filled < want) {
        const chunk = await reader.read(want - filled);
        if (chunk.byteLength === 0) break;
        out.set(chunk, filled);
        filled += chunk.byteLength;
      }
      return filled === want ? out : out.slice(0, filled);
    } finally {
      await reader.close();
    }
  }

  readWithStat(path: string, options: ReadWithStatOptions = {}): Promise<FileRead> {
    return this.#guard('readWithStat', path, async () => {
      const r = this.resolve(path, 'readWithStat');
      const cap = this.limits.maxConvenienceBytes;
      const maxBytes = options.maxBytes ?? cap;
      if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw fsError('EINVAL', 'readWithStat', path, { reason: 'maxBytes must be a non-negative integer' });
      if (r.dirOnly) await this.#assertDirOnlyTarget(r.path, 'readWithStat');
      const within = Math.min(maxBytes, cap);
      return this.readFileWithStat ? this.readFileWithStat(r.path, within) : this.#statReadStat(r.path, within);
    });
  }

  /**
   * `readWithStat` of a backend that cannot answer from one open: a stat, the
   * bytes, a stat again. The answer stands only when both stats agree and
   * the bytes are as long as they say, so a file replaced between the looks
   * is read again rather than told with another file's stat.
   */
  async #statReadStat(path: string, maxBytes: number): Promise<FileRead> {
    for (let pass = 1; ; pass++) {
      const stat = await this.statPath(path);
      if (stat.kind === 'directory') throw errno('EISDIR');
      if (stat.kind === 'file' && stat.size > maxBytes) return { stat, bytes: undefined };
      // A link that cannot be followed, or a special file, is refused here as readBytes refuses it.
      const bytes = await this.#readRange(path, 0, undefined);
      const after = await this.statPath(path);
      if (stat.kind === 'file' && sameFileStat(stat, after) && bytes.byteLength === stat.size) return { stat, bytes };
      if (pass >= STAT_READ_PASSES) {
        throw fsError('EBUSY', 'readWithStat', path, {
          reason: `the file changed between its stat and its read, each of ${STAT_READ_PASSES} times`,
          hint: 'it is being written; read it again when the writer is done',
        });
      }
    }
  }

  #tooLarge(op: FsOperation, path: string, size: number): FsError {
    return fsError('ETOOLARGE', op, path, {
      reason: `${size} bytes exceed the convenience limit of ${this.limits.maxConvenienceBytes} bytes`,
    });
  }

  read(path: string, options: ReadTextOptions = {}): Promise<TextPage> {
    return this.#guard('read', path, async () => {
      const offset = options.offset ?? 0;
      const limit = options.limit ?? DEFAULT_READ_LINES;
      if (!Number.isSafeInteger(offset) || offset < 0) throw fsError('EINVAL', 'read', path, { reason: 'offset must be a non-negative line index' });
      if (!Number.isSafeInteger(limit) || limit < 0) throw fsError('EINVAL', 'read', path, { reason: 'limit must be a non-negative number of lines' });
      const text = await this.openText(path, options);
      const cap = this.limits.maxConvenienceBytes;
      try {
        const lines: string[] = [];
        let index = 0;
        let size = 0;
        let hasMore = false;
        for await (const line of text.lines()) {
          if (index++ < offset) continue;
          if (lines.length === limit) {
            hasMore = true;
            break;
          }
          size += line.length + 1;
          if (size > cap) {
            throw fsError('ETOOLARGE', 'read', text.path, {
              reason: `the page exceeds the convenience limit of ${cap} bytes`,
              hint: 'pass a smaller { limit } of lines, or stream with openText()',
            });
          }
          lines.push(line);
        }
        return {
          path: text.path,
          lines,
          text: lines.join('\n'),
          offset,
          hasMore,
          nextOffset: hasMore ? offset + lines.length : undefined,
          encoding: text.encoding,
        };
      } finally {
        await text.close();
      }
    });
  }

  writeBytes(path: string, data: Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    return this.#guard('writeBytes', path, async () => {
      if (!(data instanceof Uint8Array)) throw fsError('EINVAL', 'writeBytes', path, { reason: 'data must be a Uint8Array' });
      if (data.byteLength > this.limits.maxConvenienceBytes) {
        throw fsError('ETOOLARGE', 'writeBytes', path, {
          reason: `${data.byteLength} bytes exceed the convenience limit of ${this.limits.maxConvenienceBytes} bytes`,
          hint: 'use openWrite() and write the data in chunks',
        });
      }
      const writer = await this.openWrite(path, options);
      try {
        await writer.write(data);
        return await writer.close();
      } finally {
        await writer.abort();
      }
    });
  }

  write(path: string, text: string, options: WriteTextOptions = {}): Promise<WriteResult> {
    return this.#guard('write', path, async () => {
      if (typeof text !== 'string') throw fsError('EINVAL', 'write', path, { reason: 'text must be a string' });
      return this.writeBytes(path, encodeText(text, options.encoding ?? 'utf-8'), options);
    });
  }

  // ---------------------------------------------------------------- metadata

  exists(path: string): Promise<boolean> {
    return this.#guard('exists', path, async () => {
      const r = this.resolve(path, 'exists');
      const st = await this.tryStat(r.path);
      if (st === undefined) {
        // "No" would be true of every path; the caller would go on to create what cannot be written.
        await this.#assertRootPresent('exists', path);
        return false;
      }
      return !r.dirOnly || st.kind === 'directory';
    });
  }

  stat(path: string): Promise<FileStat> {
    return this.#guard('stat', path, async () => {
      const r = this.resolve(path, 'stat');
      const st = await this.statPath(r.path);
      if (r.dirOnly && st.kind !== 'directory') throw trailingSlashError('stat', r.path, st.kind, false);
      return st;
    });
  }

  realpath(path: string): Promise<string> {
    return this.#guard('realpath', path, async () => {
      const r = this.resolve(path, 'realpath');
      if (r.dirOnly) {
        const wrong = trailingSlashError('realpath', r.path, (await this.tryStat(r.path))?.kind, false);
        if (wrong !== undefined) throw wrong;
      }
      return this.capabilities.symlinks ? await this.followLinks(r.path) : r.path;
    });
  }

  /**
   * `path` (normalized) with every symbolic link in its existing part
   * followed, for {@link realpath}; a link out of the root is
   * `EPATHESCAPE`. Backends that declare `symlinks` override it.
   */
  protected followLinks(path: string): Promise<string> {
    return Promise.resolve(path);
  }

  /**
   * The target of the symbolic link at `path` (normalized; its parent holds
   * no link) as the link's text gives it: relative to the link's directory,
   * or from the workspace root with a leading `/` for an absolute target
   * inside the root; `undefined` when `path` is no link, or its target lies
   * outside the root (which is never told). Used only to name the link that
   * closes a loop in an `ELOOP` refusal; backends that declare `symlinks`
   * override it, and a loop is refused without the name where they do not.
   */
  protected readLink(_path: string): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  list(path = '', options: ListOptions = {}): Promise<FileEntry[]> {
    return this.#guard('list', path, async () => {
      const r = this.resolve(path, 'list');
      const entries = await this.readDirectory(r.path);
      const listed = options.stat === true ? await this.statEntries(r.path, entries) : entries;
      return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  }

  /**
   * Adds `stat` to the entries of one directory, leaving out entries that
   * vanished meanwhile. The default stats each entry; backends override it
   * with one pass over the directory.
   */
  protected async statEntries(_dir: string, entries: FileEntry[]): Promise<FileEntry[]> {
    const out: FileEntry[] = [];
    for (const entry of entries) {
      const stat = await this.tryStat(entry.path);
      if (stat !== undefined) out.push({ ...entry, stat });
    }
    return out;
  }

  walk(path = '', options: WalkOptions = {}): AsyncIterableIterator<readonly FileEntry[]> {
    return this.#iterate('walk', path, () => this.#walk(path, options));
  }

  async *#walk(path: string, options: WalkOptions): AsyncGenerator<readonly FileEntry[]> {
    const start = this.resolve(path, 'walk').path;
    const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
    if (maxDepth !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(maxDepth) || maxDepth < 0)) {
      throw fsError('EINVAL', 'walk', path, { reason: `maxDepth must be a non-negative integer, got ${String(options.maxDepth)}` });
    }
    const kind = (await this.statPath(start)).kind;
    // A symlink the backend would not follow is refused the way list refuses it.
    if (kind === 'symlink') await this.readDirectory(start);
    if (kind !== 'directory') throw fsError('ENOTDIR', 'walk', path);
    const plan: WalkPlan = { start, maxDepth, stat: options.stat === true, exclude: new Set(options.exclude ?? []), enter: options.enter };
    if (maxDepth === 0) return;
    const native = this.nativeWalk?.(plan);
    if (native) {
      yield* native;
      return;
    }
    const { exclude, enter } = plan;
    // Each directory is read (and statted) once, when the walk reaches it.
    const read = async (dir: string) => {
      const listed = await this.readDirectory(dir);
      const kept = exclude.size === 0 ? listed : listed.filter((entry) => !exclude.has(entry.name));
      return plan.stat ? this.statEntries(dir, kept) : kept;
    };
    for await (const batch of walkBatches(read, start, { maxDepth, enter })) yield batch.map((step) => step.entry);
  }

  digest(paths: readonly string[], options: DigestOptions = {}): AsyncIterableIterator<readonly FileDigest[]> {
    return this.#iterate('digest', '', () => this.#digest(paths, options));
  }

  async *#digest(paths: readonly string[], options: DigestOptions): AsyncGenerator<readonly FileDigest[]> {
    if (this.#closed) throw fsError('ECLOSED', 'digest', undefined, { reason: 'filesystem is closed' });
    if (!Array.isArray(paths)) throw fsError('EINVAL', 'digest', undefined, { reason: 'paths must be an array of paths' });
    const headBytes = options.headBytes ?? 0;
    if (!Number.isSafeInteger(headBytes) || headBytes < 0 || headBytes > MAX_DIGEST_HEAD_BYTES) {
      throw fsError('EINVAL', 'digest', undefined, {
        reason: `headBytes must be an integer from 0 to ${MAX_DIGEST_HEAD_BYTES}, got ${String(options.headBytes)}`,
      });
    }
    const targets: DigestTarget[] = [];
    const early = new Map<number, FileDigest>();
    paths.forEach((input, i) => {
      try {
        const r = this.resolve(input, 'digest');
        targets.push({ input, path: r.path, dirOnly: r.dirOnly, index: i });
      } catch (err) {
        early.set(i, { path: String(input), error: toFsError(err, 'digest', String(input)) });
      }
    });
    // Results keep the caller's order: invalid paths slot in where they were given.
    let next = 0;
    const flushEarly = (upTo: number, out: FileDigest[]) => {
      for (; next < upTo; next++) {
        const e = early.get(next);
        if (e) out.push(e);
      }
    };
    for await (const batch of this.digestFiles(targets, headBytes)) {
      const out: FileDigest[] = [];
      for (const { index, digest } of batch) {
        flushEarly(index, out);
        next = index + 1;
        out.push(digest);
      }
      if (out.length > 0) yield out;
    }
    const tail: FileDigest[] = [];
    flushEarly(paths.length, tail);
    if (tail.length > 0) yield tail;
  }

  /**
   * Hashes `targets` in order, a batch of results at a time, each carrying
   * its target's index. The default streams every file through one reused
   * buffer; backends override it to hash where the bytes are.
   */
  protected async *digestFiles(targets: readonly DigestTarget[], headBytes: number): AsyncGenerator<Array<{ index: number; digest: FileDigest }>> {
    const buffer = new Uint8Array(DIGEST_BUFFER_BYTES);
    let batch: Array<{ index: number; digest: FileDigest }> = [];
    for (const t of targets) {
      batch.push({ index: t.index, digest: await this.digestOne(t, headBytes, buffer) });
      if (batch.length >= 256) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /**
   * Hashes one target through `buffer`, or, without one, through a buffer
   * sized to the file (for callers that hash several files at once);
   * failures come back as the target's error.
   */
  protected async digestOne(t: DigestTarget, headBytes: number, buffer?: Uint8Array): Promise<FileDigest> {
    try {
      if (t.dirOnly) await this.#assertDirOnlyTarget(t.path, 'digest');
      const reader = await this.openFileReader(t.path, this.limits.chunkSize, 0);
      try {
        // One byte over the size lets a file that fits be hashed in one shot.
        const through = buffer ?? new Uint8Array(Math.min(reader.size + 1, DIGEST_BUFFER_BYTES));
        const d = await digestStream((target) => reader.readInto(target), through, headBytes);
        return { path: t.input, size: d.size, sha256: d.sha256, head: d.head };
      } finally {
        await reader.close();
      }
    } catch (err) {
      return { path: t.input, error: toFsError(err, 'digest', t.input).withOperation('digest') };
    }
  }

  glob(pattern: string, options: GlobOptions = {}): AsyncIterableIterator<GlobMatch> {
    return this.#iterate('glob', pattern, () => this.#glob(pattern, options));
  }

  async *#glob(pattern: string, options: GlobOptions): AsyncGenerator<GlobMatch> {
    const cwd = this.resolve(options.cwd ?? '', 'glob').path;
    const plan = compileGlob(pattern, { dot: options.dot, ignore: options.ignore, maxDepth: options.maxDepth });
    const want = options.kind ?? 'any';
    const start = joinPath(cwd, plan.base);
    const startStat = await this.tryStat(start);
    if (startStat === undefined) await this.#assertRootPresent('glob', pattern);
    if (startStat?.kind !== 'directory') return;
    const prefix = cwd === '' ? 0 : cwd.length + 1;
    const rel = (p: string) => p.slice(prefix);
    const namesDot = this.#patternNamesDot(pattern);
    const enter = (entry: FileEntry) => !plan.ignored(rel(entry.path)) && (options.dot === true || !entry.name.startsWith('.') || namesDot);
    for await (const batch of this.walkEntries(start, plan.maxDepth, enter)) {
      const out: GlobMatch[] = [];
      for (const entry of batch) {
        if ((want === 'any' || entry.kind === want) && plan.matches(rel(entry.path))) out.push({ path: entry.path, kind: entry.kind });
      }
      yield* out;
    }
  }

  #patternNamesDot(pattern: string): boolean {
    return /(^|\/)\./.test(pattern);
  }

  grep(pattern: string, options: GrepOptions = {}): AsyncIterableIterator<GrepMatch> {
    return this.#iterate('grep', options.path ?? '', () => this.#grep(pattern, options));
  }

  async *#grep(pattern: string, options: GrepOptions): AsyncGenerator<GrepMatch> {
    const { path: scope, dirOnly } = this.resolve(options.path ?? '', 'grep');
    if (dirOnly) {
      const wrong = trailingSlashError('grep', scope, (await this.tryStat(scope))?.kind, false);
      if (wrong !== undefined) throw wrong;
    }
    const matcher = compileGrep(pattern, options);
    const max = options.maxMatches ?? this.limits.maxGrepMatches;
    if (!Number.isSafeInteger(max) || max < 0) throw fsError('EINVAL', 'grep', options.path, { reason: 'maxMatches must be a non-negative integer' });
    const filter = options.glob === undefined ? undefined : compileFileFilter(options.glob);
    const plan: GrepPlan = {
      scope,
      maxMatches: max,
      filter,
      dot: options.dot ?? false,
      pattern,
      ignoreCase: options.ignoreCase ?? false,
      literal: options.literal ?? false,
      exclude: new Set(options.exclude ?? []),
    };
    if (max === 0) return;
    if (this.nativeGrep) {
      yield* this.nativeGrep(matcher, plan);
      return;
    }
    yield* this.scanFiles(matcher, plan);
  }

  /** The shared JS grep over the walk; native implementations may fall back to it. */
  protected async *scanFiles(matcher: GrepMatcher, plan: GrepPlan): AsyncGenerator<GrepMatch> {
    let remaining = plan.maxMatches;
    for await (const path of this.grepCandidates(plan)) {
      let reader: ByteReader;
      try {
        reader = await this.openFileReader(path, this.limits.chunkSize, 0);
      } catch (err) {
        // Files that vanish or cannot be read mid-walk are skipped, as rg does.
        const code = codeOf(err);
        if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'EPERM') continue;
        throw err;
      }
      try {
        for await (const m of scanChunks(path, reader, matcher, remaining, this.grepDetection())) {
          yield m;
          if (--remaining <= 0) return;
        }
      } finally {
        await reader.close();
      }
    }
  }

  /** How grep's scanner detects a file's encoding: as this backend's text reads do. */
  protected grepDetection(): DetectOptions | undefined {
    return this.textOptions({}).detect;
  }

  /** Files grep would search for `plan`, in deterministic order. */
  protected async *grepCandidates(plan: GrepPlan): AsyncGenerator<string> {
    const st = await this.statPath(plan.scope);
    if (st.kind === 'file') {
      yield plan.scope;
      return;
    }
    if (st.kind !== 'directory') return;
    const prefix = plan.scope === '' ? 0 : plan.scope.length + 1;
    const { exclude } = plan;
    const enter = (entry: FileEntry) => (plan.dot || !entry.name.startsWith('.')) && !exclude.has(entry.name);
    for await (const batch of this.walkEntries(plan.scope, Number.POSITIVE_INFINITY, enter)) {
      const out: string[] = [];
      for (const entry of batch) {
        if (entry.kind !== 'file') continue;
        if (!plan.dot && entry.name.startsWith('.')) continue;
        if (exclude.has(entry.name)) continue;
        if (plan.filter && !plan.filter(entry.path.slice(prefix))) continue;
        out.push(entry.path);
      }
      yield* out;
    }
  }

  /**
   * The tree walk behind glob and grep: every entry below `start`, parents
   * before children, siblings by name, directories entered only when
   * `enter` allows and above `maxDepth`; directories that vanish or cannot
   * be read are passed over. Yields batches so a backend with a faster,
   * synchronous walk can override this and pay one async step per batch
   * instead of several per entry — with exactly these semantics.
   */
  protected async *walkEntries(start: string, maxDepth: number, enter: (entry: FileEntry) => boolean): AsyncGenerator<readonly FileEntry[]> {
    for await (const batch of walkBatches((p) => this.readDirectory(p), start, { maxDepth, enter })) yield batch.map((step) => step.entry);
  }

  #iterate<T>(op: FsOperation, path: string, make: () => AsyncGenerator<T>): AsyncIterableIterator<T> {
    let inner: AsyncGenerator<T> | undefined;
    const it: AsyncIterableIterator<T> = {
      next: async () => {
        inner ??= make();
        try {
          return await inner.next();
        } catch (err) {
          throw await this.#publicError(err, op, typeof path === 'string' ? path : undefined);
        }
      },
      async return(value?: unknown) {
        if (inner) await inner.return(value as T);
        return { done: true, value: undefined as T };
      },
      [Symbol.asyncIterator]() {
        return it;
      },
    };
    return it;
  }

  // ---------------------------------------------------------------- mutations

  delete(path: string, options: DeleteOptions = {}): Promise<void> {
    return this.#guard('delete', path, async () => {
      const r = this.resolve(path, 'delete');
      this.assertWritable('delete', r.path);
      if (r.path === '')
        throw fsError('EPERM', 'delete', '.', { reason: 'the workspace root cannot be deleted', hint: 'delete the entries inside it instead' });
      const st = await this.tryStat(r.path);
      // stat follows a link: a dangling one stats as missing, one to a directory as the directory. The link itself
      // is what goes, as rm removes one, never what it leads to (the parent's listing names its own kind).
      if ((st === undefined || st.kind === 'directory') && !r.dirOnly && (await this.#isLink(r.path))) {
        await this.removeFile(r.path);
        return;
      }
      if (st === undefined) {
        // Like node's fs.rm: force forgives a missing path, not a file where a directory should be.
        try {
          await this.statPath(r.path);
        } catch (err) {
          if (options.force && codeOf(err) === 'ENOENT') return;
          throw err;
        }
        return;
      }
      if (r.dirOnly && st.kind !== 'directory') throw trailingSlashError('delete', r.path, st.kind, false);
      if (st.kind === 'directory') await this.removeDirectory(r.path, options.recursive ?? false);
      else await this.removeFile(r.path);
    });
  }

  /** Whether the entry at `path` (normalized) is itself a symbolic link, by its parent directory's listing. */
  async #isLink(path: string): Promise<boolean> {
    if (!this.capabilities.symlinks) return false;
    const slash = path.lastIndexOf('/');
    const entries = await this.readDirectory(slash < 0 ? '' : path.slice(0, slash)).catch(() => []);
    const name = path.slice(slash + 1);
    return entries.some((e) => e.name === name && e.kind === 'symlink');
  }

  mkdir(path: string, options: MkdirOptions = {}): Promise<void> {
    return this.#guard('mkdir', path, async () => {
      const r = this.resolve(path, 'mkdir');
      this.assertWritable('mkdir', r.path);
      const st = await this.tryStat(r.path);
      if (st !== undefined) {
        if (st.kind === 'directory' && (options.existOk || options.parents)) return;
        throw fsError('EEXIST', 'mkdir', displayPath(r.path));
      }
      if (options.parents) {
        await this.#ensureDirs(r.path, 'mkdir');
        return;
      }
      await this.#requireParentDir(r.path, 'mkdir');
      await this.createDirectory(r.path);
    });
  }

  rename(from: string, to: string, options: RenameOptions = {}): Promise<void> {
    return this.#guard(
      'rename',
      from,
      async () => {
        const src = this.resolve(from, 'rename');
        const dst = this.resolve(to, 'rename');
        this.assertWritable('rename', src.path);
        if (src.path === '' || dst.path === '')
          throw fsError('EBUSY', 'rename', from, { dest: to, reason: 'the workspace root cannot be renamed or replaced' });
        // rename(2) resolves both parents before anything else: a bad destination
        // parent wins over a missing source, a trailing slash and moving into itself.
        let s: FileStat;
        try {
          s = await this.statPath(src.path);
        } catch (err) {
          if (codeOf(err) === 'ENOENT' && (await this.tryStat(parentPath(src.path)))?.kind === 'directory') await this.#requireParentDir(dst.path, 'rename');
          throw err;
        }
        if (src.path !== dst.path) await this.#requireParentDir(dst.path, 'rename');
        if ((src.dirOnly || dst.dirOnly) && s.kind !== 'directory') throw slashedName('rename', from, to, src.dirOnly ? 'source' : 'destination');
        if (src.path === dst.path) return;
        if (s.kind === 'directory' && isSameOrInside(src.path, dst.path)) {
          throw fsError('EINVAL', 'rename', from, { dest: to, reason: 'cannot move a directory into itself' });
        }
        const d = await this.tryStat(dst.path);
        if (d !== undefined) {
          if (options.overwrite === false)
            throw fsError('EEXIST', 'rename', from, { dest: to, reason: 'destination exists', hint: 'pass { overwrite: true } or choose another name' });
          if (s.kind !== 'directory' && d.kind === 'directory') throw fsError('EISDIR', 'rename', from, { dest: to, reason: 'destination is a directory' });
          if (s.kind === 'directory' && d.kind !== 'directory')
            throw fsError('ENOTDIR', 'rename', from, { dest: to, reason: 'destination is not a directory' });
          if (d.kind === 'directory' && (await this.readDirectory(dst.path)).length > 0) {
            throw fsError('ENOTEMPTY', 'rename', from, { dest: to, reason: 'destination directory is not empty' });
          }
        }
        await this.renamePath(src.path, dst.path);
      },
      to,
    );
  }

  copy(from: string, to: string, options: CopyOptions = {}): Promise<void> {
    return this.#guard(
      'copy',
      from,
      async () => {
        const src = this.resolve(from, 'copy');
        const dst = this.resolve(to, 'copy');
        // Like node:fs, the error names the source as path and the destination as dest.
        if (this.readOnly) throw fsError('EROFS', 'copy', from, { dest: to });
        const s = await this.statPath(src.path);
        if (src.dirOnly && s.kind !== 'directory') throw slashedName('copy', from, to, 'source');
        if (src.path === dst.path) throw fsError('EINVAL', 'copy', from, { dest: to, reason: 'source and destination are the same' });
        if (s.kind === 'directory') {
          if (!options.recursive)
            throw fsError('EISDIR', 'copy', from, { dest: to, reason: 'source is a directory', hint: 'pass { recursive: true } to copy a directory' });
          if (isSameOrInside(src.path, dst.path)) throw fsError('EINVAL', 'copy', from, { dest: to, reason: 'cannot copy a directory into itself' });
        }
        const d = await this.tryStat(dst.path);
        if (d !== undefined) {
          if (s.kind !== 'directory' && d.kind === 'directory')
            throw fsError('EISDIR', 'copy', from, { dest: to, reason: 'cannot overwrite a directory with a file' });
          if (s.kind === 'directory' && d.kind !== 'directory')
            throw fsError('ENOTDIR', 'copy', from, { dest: to, reason: 'cannot overwrite a file with a directory' });
          // fs.cp with errorOnExist refuses an existing directory too, before merging anything.
          if (options.overwrite === false)
            throw fsError('EEXIST', 'copy', from, { dest: to, reason: 'destination exists', hint: 'pass { overwrite: true } or choose another name' });
        }
        // As open(2) with O_CREAT: `new/` cannot be created as a file (EISDIR), `file/` is not a directory.
        if (dst.dirOnly && s.kind !== 'directory') throw slashedName('copy', from, to, 'destination', d === undefined ? 'EISDIR' : 'ENOTDIR');
        await this.#ensureDirs(parentPath(dst.path), 'copy');
        if (s.kind !== 'directory') {
          await this.copyFile(src.path, dst.path);
          return;
        }
        await this.copyTree(src.path, dst.path, options.overwrite ?? true);
      },
      to,
    );
  }

  /**
   * Recursive copy through the primitives; backends may override with a
   * native one that follows the same rules ({@link copyTreePlan} first).
   * Links are recreated with their text, never followed into a copy of
   * what they lead to.
   */
  protected async copyTree(from: string, to: string, overwrite: boolean): Promise<void> {
    const plan = await this.copyTreePlan(from, to);
    if ((await this.tryStat(to)) === undefined) await this.createDirectory(to);
    for (const { entry, target, link } of plan) {
      const existing = await this.tryStat(target);
      if (entry.kind === 'directory') {
        if (existing === undefined) await this.createDirectory(target);
        else if (existing.kind !== 'directory')
          throw fsError('ENOTDIR', 'copy', entry.path, { dest: target, reason: 'cannot overwrite a file with a directory' });
        continue;
      }
      // A link at the destination is replaced as an entry, like a file: what it leads to is not the copy's business.
      const isLink = link !== undefined && (await this.#isLink(target));
      if (existing?.kind === 'directory' && !isLink)
        throw fsError('EISDIR', 'copy', entry.path, { dest: target, reason: 'cannot overwrite a directory with a file' });
      if ((existing !== undefined || isLink) && !overwrite) throw fsError('EEXIST', 'copy', entry.path, { dest: target });
      if (link === undefined) {
        await this.copyFile(entry.path, target);
        continue;
      }
      if (existing !== undefined || isLink) await this.removeFile(target);
      await this.createLink(target, link);
    }
  }

  /**
   * The entries of the tree at `from` to copy to `to`, parents first, each
   * with where it goes and, for a link, its text: walked whole before a
   * copy writes anything, so that a tree the copy would have to leave a
   * part of is refused with nothing written. A link that leads out of the
   * root, or whose text would from its place in the copy, is
   * `EPATHESCAPE`; a link on a backend without links is `EUNSUPPORTED`; a
   * FIFO, socket or device is `EINVAL`.
   */
  protected async copyTreePlan(from: string, to: string): Promise<CopyStep[]> {
    // Through the walk, so a backend with a native one (a container's single `find`) pays one request, not one a
    // directory; in the base walk's order whatever order that one answers in, so the refusal names the same entry.
    const entries: FileEntry[] = [];
    for await (const batch of this.#walk(from, {})) entries.push(...batch);
    entries.sort((a, b) => compareWalkOrder(a.path, b.path));
    const plan: CopyStep[] = [];
    for (const entry of entries) {
      const target = joinPath(to, entry.path.slice(from === '' ? 0 : from.length + 1));
      if (entry.kind === 'file' || entry.kind === 'directory') {
        plan.push({ entry, target });
        continue;
      }
      if (entry.kind === 'other') throw uncopyableEntry(entry.path, target);
      if (!this.capabilities.symlinks) throw uncopyableLink(entry.path, target);
      // readLink tells no text that leads outside.
      const link = await this.readLink(entry.path);
      if (link === undefined || linkTextLeavesRoot(entry.path, link) || linkTextLeavesRoot(target, link)) throw copiedLinkLeavesRoot(entry.path, target);
      plan.push({ entry, target, link });
    }
    return plan;
  }

  /**
   * Makes a symbolic link at `path` (normalized; its parent exists, the name
   * is free) with `text` in {@link readLink}'s form: relative as written, or
   * from the workspace root with a leading `/`. Used by a recursive copy;
   * backends that declare `symlinks` override it.
   */
  protected createLink(path: string, _text: string): Promise<void> {
    return Promise.reject(fsError('EUNSUPPORTED', 'copy', path, { reason: 'this workspace does not make symbolic links' }));
  }

  // ---------------------------------------------------------------- watching

  watch(path: string, options: WatchOptions = {}): Watcher {
    const { path: target } = this.resolve(path, 'watch');
    const start = this.startWatch?.bind(this);
    if (!this.capabilities.watch || start === undefined) throw watchUnsupported(target);
    const { recursive = false, debounceMs, maxPending, signal } = options ?? {};
    if (typeof recursive !== 'boolean') throw fsError('EINVAL', 'watch', target, { reason: 'recursive must be a boolean' });
    for (const [name, value] of [
      ['debounceMs', debounceMs],
      ['maxPending', maxPending],
    ] as const) {
      if (value !== undefined && !(Number.isFinite(value) && value >= (name === 'maxPending' ? 1 : 0))) {
        throw fsError('EINVAL', 'watch', target, { reason: `${name} must be a ${name === 'maxPending' ? 'positive' : 'non-negative'} number` });
      }
    }
    const watcher = createWatcher(
      { path: target, kind: 'directory', recursive },
      async (sink) => {
        const st = await this.statPath(target).catch((err: unknown) => {
          throw asPublicError(err, 'watch', target);
        });
        const plan: WatchPlan = { path: target, kind: st.kind, recursive: st.kind === 'directory' && recursive };
        return start(plan, sink);
      },
      {
        debounceMs: debounceMs ?? this.defaultWatchDebounceMs(),
        maxPending,
        signal,
        ignore: (p) => this.watchIgnores(p),
        onClose: () => this.#watchers.delete(watcher),
      },
    );
    this.#watchers.add(watcher);
    return watcher;
  }

  // ---------------------------------------------------------------- snapshots

  #requireSnapshots(op: FsOperation): void {
    if (this.#closed) throw fsError('ECLOSED', op, undefined, { reason: 'filesystem is closed' });
    if (!this.capabilities.snapshots) throw fsError('EUNSUPPORTED', op, undefined, { reason: 'this backend does not support snapshots' });
  }

  snapshot(tag?: string): Promise<Snapshot> {
    return this.#guard('snapshot', undefined, async () => {
      this.#requireSnapshots('snapshot');
      if (tag !== undefined && typeof tag !== 'string') throw fsError('EINVAL', 'snapshot', undefined, { reason: 'tag must be a string' });
      return this.createSnapshot(tag);
    });
  }

  restore(snapshot: Snapshot | string): Promise<void> {
    return this.#guard('restore', undefined, async () => {
      this.#requireSnapshots('restore');
      this.assertWritable('restore', '');
      const id = snapshotId(snapshot, 'restore');
      await this.restoreSnapshot(id);
    });
  }

  listSnapshots(): Promise<Snapshot[]> {
    return this.#guard('listSnapshots', undefined, async () => {
      this.#requireSnapshots('listSnapshots');
      return this.snapshotList();
    });
  }

  dropSnapshot(snapshot: Snapshot | string): Promise<void> {
    return this.#guard('dropSnapshot', undefined, async () => {
      this.#requireSnapshots('dropSnapshot');
      await this.removeSnapshot(snapshotId(snapshot, 'dropSnapshot'));
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /** True once {@link close} has been called. */
  get closed(): boolean {
    return this.#closed;
  }

  close(): Promise<void> {
    // A close while one is under way waits for it: a caller that closes twice (a server's hang-up
    // and its own stop) must not go on while a container is still being removed.
    if (this.#closing === undefined) {
      this.#closed = true;
      this.#closing = (async () => {
        await Promise.all([...this.#watchers].map((w) => w.close()));
        await this.closeBackend();
      })();
    }
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * The error a public operation throws: an FsError raised under a delegated
 * op (a primitive labels its errors `openRead`) takes the caller's op; any
 * other error becomes an FsError of `op`.
 */
function asPublicError(err: unknown, op: FsOperation, path: string | undefined, dest?: string): FsError {
  if (err instanceof FsError && DELEGATED_OPS.has(err.op)) return err.withOperation(op);
  return toFsError(err, op, path, dest);
}

/** `EUNAVAILABLE` for a call that met a root no longer there; `cause` is what the call itself met. */
function rootGoneError(op: FsOperation, path: string | undefined, dest: string | undefined, cause?: FsError): FsError {
  return fsError('EUNAVAILABLE', op, path, {
    dest,
    reason: "the workspace's root directory no longer exists (it was removed or moved away after the workspace was opened)",
    hint: 'recreate or restore the root directory, or open the workspace again on a directory that exists; until then every call fails',
    cause,
  });
}

/** One file a {@link Filesystem.digest} call asks for, its path validated. */
export interface DigestTarget {
  /** The path as the caller gave it (results carry it back). */
  readonly input: string;
  /** Normalized path. */
  readonly path: string;
  /** The caller wrote a trailing slash. */
  readonly dirOnly: boolean;
  /** Position in the caller's list. */
  readonly index: number;
}

/** What a {@link Filesystem.walk} asks for, validated and normalized. */
export interface WalkPlan {
  /** Normalized directory to walk below. */
  readonly start: string;
  /** Deepest level to yield (≥ 1, or infinite). */
  readonly maxDepth: number;
  readonly stat: boolean;
  readonly exclude: ReadonlySet<string>;
  readonly enter: ((entry: FileEntry) => boolean) | undefined;
}

/** What grep searches: the scope, the limit and the file filter. */
export interface GrepPlan {
  /** Normalized file or directory to search. */
  readonly scope: string;
  readonly maxMatches: number;
  /** File filter on paths relative to a directory scope. */
  readonly filter: ((relativePath: string) => boolean) | undefined;
  readonly dot: boolean;
  /** The pattern as the caller gave it, for native engines that compile their own. */
  readonly pattern: string;
  readonly ignoreCase: boolean;
  readonly literal: boolean;
  /** Names neither searched nor entered ({@link GrepOptions.exclude}). */
  readonly exclude: ReadonlySet<string>;
}

function snapshotId(snapshot: Snapshot | string, op: FsOperation): string {
  const id = typeof snapshot === 'string' ? snapshot : snapshot?.id;
  if (typeof id !== 'string' || id.length === 0) throw fsError('EINVAL', op, undefined, { reason: 'expected a Snapshot or a snapshot id' });
  return id;
}

/** Capabilities of a backend that declares nothing. */
export const NO_CAPABILITIES: Capabilities = Object.freeze({
  snapshots: false,
  watch: false,
  symlinks: false,
  nativeGrep: false,
  readOnly: false,
  permissions: false,
  birthtime: false,
  snapshotsKeepEmptyDirs: false,
  compareAndSwap: false,
  watchRenames: false,
});

/**
 * A rename or copy whose source or destination ends in `/` (a directory's
 * name) where a file is moved: which of the two, and the fix. `code` is
 * `ENOTDIR`, or `EISDIR` for a file copied to a slashed name where nothing
 * is (as `open(2)` with `O_CREAT` answers).
 */
function slashedName(op: 'rename' | 'copy', from: string, to: string, which: 'source' | 'destination', code: 'ENOTDIR' | 'EISDIR' = 'ENOTDIR'): FsError {
  const named = which === 'source' ? from : to;
  return fsError(code, op, from, {
    dest: to,
    reason: `the ${which} "${named}" ends in "/", which names a directory, and ${which === 'source' ? 'it is a file' : `a file is not ${op === 'copy' ? 'copied' : 'moved'} to one`}`,
    hint: `drop the trailing "/" from the ${which}${which === 'destination' ? ' to name the file' : ''}`,
  });
}
