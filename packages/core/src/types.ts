/**
 * The Filesystem protocol: the types every backend implements and every
 * caller programs against. Three layers, as in the design: streaming
 * (primary), convenience (bounded, built on streaming) and core operations.
 *
 * All paths are workspace-relative POSIX paths (see `resolvePath`); results
 * carry normalized paths where the root is `''`.
 *
 * @module
 */

import type { FsError } from './errors.ts';
import type { PathLimits } from './path.ts';

/** What a path names. Backends without symlink support never report `symlink`. */
export type FileKind = 'file' | 'directory' | 'symlink' | 'other';

/** Metadata of one file or directory. */
export interface FileStat {
  /** Normalized workspace-relative path (`''` for the root). */
  readonly path: string;
  readonly kind: FileKind;
  /** Size in bytes; 0 for directories. */
  readonly size: number;
  /** Last content modification. */
  readonly mtime: Date;
  /** Last metadata change, where the backend knows it. */
  readonly ctime?: Date | undefined;
  /** Creation time, where the backend knows it. */
  readonly birthtime?: Date | undefined;
  /** POSIX permission bits (`0o644`), where the backend has them. */
  readonly mode?: number | undefined;
}

/** One entry of a directory listing. */
export interface FileEntry {
  /** Last path segment. */
  readonly name: string;
  /** Normalized workspace-relative path. */
  readonly path: string;
  readonly kind: FileKind;
  /** The entry's metadata, when the listing was asked for it (`list(dir, { stat: true })`). */
  readonly stat?: FileStat | undefined;
}

/** Options of {@link Filesystem.list}. */
export interface ListOptions {
  /**
   * Include each entry's {@link FileStat} (as `stat` would report it,
   * following symlinks that stay inside the root). Backends answer this in
   * one pass over the directory, much cheaper than a `stat` per entry.
   * Entries that vanish between listing and stat are left out.
   */
  stat?: boolean;
}

/**
 * Options of {@link Filesystem.walk}.
 *
 * @example
 * ```ts
 * for await (const batch of fs.walk('', { stat: true, exclude: ['node_modules', '.git'] })) {
 *   for (const entry of batch) if (entry.kind === 'file') console.log(entry.path, entry.stat?.size);
 * }
 * ```
 */
export interface WalkOptions {
  /** Include each entry's {@link FileStat}, exactly as `list(dir, { stat: true })` would. Default `false`. */
  stat?: boolean;
  /** Deepest level to yield; the start directory's children are depth 1. Default: no limit. */
  maxDepth?: number;
  /**
   * Names left out wherever they occur: a file so named is not yielded, a
   * directory so named is neither yielded nor entered. Backends apply it
   * natively, so it is the cheap way to keep out `node_modules` or `.git`.
   */
  exclude?: readonly string[];
  /**
   * Asked for each directory (after `exclude`) before the walk goes below
   * it; `false` yields the directory but nothing under it.
   */
  enter?: (entry: FileEntry) => boolean;
}

/** Options of {@link Filesystem.digest}. */
export interface DigestOptions {
  /** Also return each file's first `headBytes` bytes (to sniff its type or a marker). Default 0, at most 64 KiB. */
  headBytes?: number;
}

/** One file's outcome in {@link Filesystem.digest}: its SHA-256, or why there is none. */
export type FileDigest =
  | {
      /** The path as it was passed. */
      readonly path: string;
      readonly size: number;
      /** Lower-case hex SHA-256 of the content. */
      readonly sha256: string;
      /**
       * The first `headBytes` bytes, when asked for. It may be a view into a
       * buffer shared with the other digests of its batch: copy it
       * (`head.slice()`) to keep it long after the batch.
       */
      readonly head?: Uint8Array | undefined;
      readonly error?: undefined;
    }
  | {
      readonly path: string;
      /** Why this file has no digest: `ENOENT`, `EISDIR`, `EACCES`, `EPATHESCAPE`, `EINVAL`... */
      readonly error: FsError;
    };

/** One path matched by {@link Filesystem.glob}. */
export interface GlobMatch {
  readonly path: string;
  readonly kind: FileKind;
}

/** A span within a line, in Unicode code points (not UTF-16 units, not bytes). */
export interface MatchSpan {
  readonly start: number;
  readonly end: number;
}

/** One matching line found by {@link Filesystem.grep}. */
export interface GrepMatch {
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  /** The line's text without its terminator (`\n` or `\r\n`). */
  readonly text: string;
  /** Code-point offset of the first match in `text`. */
  readonly matchStart: number;
  /** Code-point offset just past the first match. */
  readonly matchEnd: number;
  /**
   * Every non-overlapping match in the line, in order (on a very long line
   * where listing them all would take quadratic time, those found within a
   * work budget; see `compileGrep`).
   */
  readonly spans: readonly MatchSpan[];
}

/** What a write did. */
export interface WriteResult {
  readonly path: string;
  readonly bytesWritten: number;
  readonly mode: WriteMode;
}

/**
 * - `create`: fail with `EEXIST` if the file exists;
 * - `overwrite`: replace the content, creating the file if needed;
 * - `append`: add to the end, creating the file if needed.
 */
export type WriteMode = 'create' | 'overwrite' | 'append';

/** Relative position for {@link ByteReader.seek}. */
export type SeekWhence = 'start' | 'current' | 'end';

/**
 * A streaming reader of one file's bytes. Iterate it for chunks of at most
 * `chunkSize` bytes; memory stays bounded by the chunk size (and a read-ahead
 * of about 1 MiB), however large the file.
 *
 * **A chunk is lent, not given.** A chunk handed out by iteration is valid
 * until the next chunk is requested (the iterator's next `next()`, the next
 * turn of a `for await` loop), or the reader is sought or closed. After that
 * a backend may reuse its memory for later bytes: iterated chunks can be
 * views of a small buffer the reader refills, which is what lets a stream run
 * at memory speed without garbage. A caller that keeps a chunk beyond that
 * point (collects chunks in an array, hands them to a stream that writes
 * them later, holds the first ones back to sniff a header) keeps a copy:
 * `chunk.slice()`. Writing into a chunk never changes the file.
 *
 * Everything else is the caller's to keep: `read()` returns a fresh array,
 * and `readInto()` fills the caller's own buffer. Backends may hand out
 * fresh arrays from iteration too; callers must not rely on either.
 *
 * @example
 * ```ts
 * await using reader = await fs.openRead('big.bin', { chunkSize: 1 << 20 });
 * for await (const chunk of reader) hash.update(chunk); // used at once: no copy needed
 *
 * const kept: Uint8Array[] = [];
 * for await (const chunk of await fs.openRead('small.bin')) kept.push(chunk.slice()); // kept: copied
 * ```
 */
export interface ByteReader extends AsyncIterable<Uint8Array>, AsyncDisposable {
  /** Normalized path of the file. */
  readonly path: string;
  /** Size of the file when it was opened. */
  readonly size: number;
  /** Offset of the next byte to be read. */
  readonly position: number;
  /**
   * Reads up to `length` bytes (default: chunk size) from the position; empty
   * at end of file. The array is the caller's to keep (unlike iterated chunks).
   */
  read(length?: number): Promise<Uint8Array>;
  /**
   * Reads up to `target.byteLength` bytes from the position into `target`
   * and returns how many (0 at end of file). Nothing is allocated, so one
   * buffer can carry a whole stream, or many files, at constant memory.
   *
   * @example
   * ```ts
   * const buffer = new Uint8Array(1 << 20);
   * await using reader = await fs.openRead('big.bin');
   * for (let n = await reader.readInto(buffer); n > 0; n = await reader.readInto(buffer)) hash.update(buffer.subarray(0, n));
   * ```
   */
  readInto(target: Uint8Array): Promise<number>;
  /** Moves the position; returns the new absolute offset. Throws `EINVAL` for a negative result. */
  seek(offset: number, whence?: SeekWhence): number;
  /** Releases the reader. Idempotent; later reads throw `ECLOSED`. */
  close(): Promise<void>;
}

/**
 * A streaming writer. Nothing is visible at the target until {@link close}
 * commits; {@link abort} (or disposal without close) discards everything, so
 * an interrupted overwrite leaves the old content and an interrupted create
 * leaves no file.
 *
 * @example
 * ```ts
 * const w = await fs.openWrite('out.log', { mode: 'append' });
 * try {
 *   for (const line of lines) await w.write(encoder.encode(line));
 *   await w.close();
 * } finally {
 *   await w.abort(); // no-op after a successful close
 * }
 * ```
 */
export interface ByteWriter extends AsyncDisposable {
  readonly path: string;
  readonly mode: WriteMode;
  /** Bytes accepted so far. */
  readonly bytesWritten: number;
  write(chunk: Uint8Array): Promise<void>;
  /** Commits the bytes to the target. Idempotent once committed. */
  close(): Promise<WriteResult>;
  /** Discards the bytes; the target is left as it was. Idempotent; a no-op after close. */
  abort(): Promise<void>;
}

/**
 * Lazy text decoding over a {@link ByteReader}. Iterate for decoded text
 * chunks, or call {@link lines} for one line at a time.
 */
export interface TextReader extends AsyncIterable<string>, AsyncDisposable {
  readonly path: string;
  /**
   * The encoding used to decode (WHATWG label, e.g. `utf-8`, `utf-16le`).
   * When the first non-ASCII byte comes after the first 64 KiB, the reader
   * detects again there, and this changes once, before any non-ASCII text
   * is yielded.
   */
  readonly encoding: string;
  /** Whether the file began with a byte-order mark (it is not part of the text). */
  readonly bom: boolean;
  /** Lines without their terminators; `\r\n` and `\n` both end a line. */
  lines(): AsyncIterableIterator<string>;
  close(): Promise<void>;
}

/** Options of {@link Filesystem.openRead}. */
export interface OpenReadOptions {
  /** Byte offset to start at. */
  offset?: number;
  /**
   * Most bytes of one iterated chunk; default 64 KiB. Chunks are lent until
   * the next one is requested (see {@link ByteReader}).
   */
  chunkSize?: number;
}

/** Options of {@link Filesystem.openWrite}. */
export interface OpenWriteOptions {
  /** Default `overwrite`. */
  mode?: WriteMode;
  /** Create missing parent directories. Default `false` (`ENOENT`). */
  createParents?: boolean;
  /**
   * Compare-and-swap: commit only if the file is, at the moment of the
   * commit, the one expected — its lowercase hex SHA-256, or `'absent'` for
   * a file that must not exist. Otherwise the write fails with `ECONFLICT`
   * naming the current hash and the file is untouched. Checked at `close()`
   * (the commit), not at open. Other values fail with `EINVAL`; a backend
   * without `capabilities.compareAndSwap` fails with `EUNSUPPORTED`.
   */
  ifMatch?: string | 'absent';
}

/** Options of {@link Filesystem.openText} and text reads. */
export interface TextOptions {
  /**
   * WHATWG encoding label. Default: detected from a BOM, else UTF-8. A file
   * that looks binary is refused with `EBINARY` unless an encoding is given.
   */
  encoding?: string;
  /** Throw `EDECODE` on invalid bytes instead of substituting U+FFFD. Default `false`. */
  fatal?: boolean;
}

/** Options of {@link Filesystem.decodeText}. */
export interface DecodeTextOptions {
  /** Decode as this encoding instead of detecting (a BOM of that encoding is still skipped). */
  encoding?: string;
  /** The file the bytes come from, for error messages. */
  path?: string;
}

/** A file's bytes decoded as the backend's text reads decode them. */
export interface DecodedText {
  /** The text, without the byte-order mark; `''` when {@link DecodedText.binary}. */
  readonly text: string;
  /** WHATWG label of the encoding (`utf-8`, `shift_jis`, `koi8-r`...); `binary` for binary data. */
  readonly encoding: string;
  /** Length of the byte-order mark the text starts after; 0 if none. */
  readonly bomLength: number;
  /** The bytes look like binary data (a NUL, many control bytes): nothing was decoded. */
  readonly binary: boolean;
  /** Line terminators of the first lines. */
  readonly lineEnding: 'lf' | 'crlf' | 'mixed' | 'none';
  /** How the encoding was found (`bom`, `utf-8`, `legacy`, `explicit`...). */
  readonly source: string;
  /** 0..1; 1 for a BOM, an explicit encoding and valid UTF-8. */
  readonly confidence: number;
}

/** Options of {@link Filesystem.readBytes}. */
export interface ReadBytesOptions {
  offset?: number;
  /** Most bytes to return; default and maximum: the convenience cap. */
  limit?: number;
}

/** Options of {@link Filesystem.readWithStat}. */
export interface ReadWithStatOptions {
  /**
   * Largest file whose bytes are read; a larger one is answered with its
   * stat alone (`bytes` undefined), so the caller refuses it in its own
   * words without its bytes ever having been read. Default and maximum: the
   * convenience cap.
   */
  maxBytes?: number;
}

/**
 * A file's bytes and its metadata from one look at one file: `stat` is the
 * stat of the very file whose bytes these are, never of a file that replaced
 * it between two looks. `bytes` is undefined when the file is larger than
 * the call's `maxBytes`.
 */
export interface FileRead {
  readonly stat: FileStat;
  readonly bytes: Uint8Array | undefined;
}

/** Options of {@link Filesystem.read}. */
export interface ReadTextOptions extends TextOptions {
  /** 0-based index of the first line to return. */
  offset?: number;
  /** Most lines to return; default 2,000. */
  limit?: number;
}

/** A page of lines returned by {@link Filesystem.read}. */
export interface TextPage {
  readonly path: string;
  /** The lines, without terminators. */
  readonly lines: string[];
  /** `lines.join('\n')`, for callers that want one string. */
  readonly text: string;
  /** 0-based index of `lines[0]`. */
  readonly offset: number;
  /** More lines follow the page. */
  readonly hasMore: boolean;
  /** Offset to pass for the next page, when `hasMore`. */
  readonly nextOffset: number | undefined;
  readonly encoding: string;
}

/** Options of {@link Filesystem.writeBytes}. */
export type WriteOptions = OpenWriteOptions;

/** Options of {@link Filesystem.write}. */
export interface WriteTextOptions extends WriteOptions {
  /** Encoding of the bytes written; default UTF-8 (no BOM). */
  encoding?: string;
}

/** Options of {@link Filesystem.glob}. */
export interface GlobOptions {
  /** Directory the pattern is relative to; default the root. */
  cwd?: string;
  /** Let `*` and `**` match names that start with a dot. Default `false`. */
  dot?: boolean;
  /** Patterns (relative to `cwd`) to leave out. */
  ignore?: string | readonly string[];
  /** Deepest level below `cwd` to descend. */
  maxDepth?: number;
  /** Which kinds to yield; default all. */
  kind?: 'file' | 'directory' | 'any';
}

/** Options of {@link Filesystem.grep}. */
export interface GrepOptions {
  /** File or directory to search; default the root. */
  path?: string;
  /** Only files matching this glob (relative to `path` when it is a directory). */
  glob?: string;
  /** Stop after this many matching lines; default 1,000. */
  maxMatches?: number;
  ignoreCase?: boolean;
  /** Treat the pattern as plain text, not a regular expression. */
  literal?: boolean;
  /** Search dotfiles too. Default `false`. */
  dot?: boolean;
  /**
   * Names left out wherever they occur, as {@link WalkOptions.exclude}: a
   * file so named is not searched, a directory so named is not entered.
   * Backends apply it natively (ripgrep's globs, find's prune), so the way
   * to keep `node_modules` out of a search costs nothing.
   */
  exclude?: readonly string[];
}

/** Options of {@link Filesystem.delete}. */
export interface DeleteOptions {
  /** Remove a non-empty directory with everything in it. */
  recursive?: boolean;
  /**
   * Succeed when the path does not exist. Default `false`: deleting a missing
   * path is `ENOENT`, as `rm` without `-f` does. Like node's `fs.rm`, force
   * does not hide `ENOTDIR` (a file where a directory should be).
   */
  force?: boolean;
}

/** Options of {@link Filesystem.mkdir}. */
export interface MkdirOptions {
  /** Create missing ancestors. Default `false`. */
  parents?: boolean;
  /** Succeed if the directory already exists. Default `false`. */
  existOk?: boolean;
}

/**
 * Options of {@link Filesystem.rename}. Renaming the workspace root, or onto
 * it, is refused with `EBUSY`, as rename(2) refuses a mount point.
 */
export interface RenameOptions {
  /** Replace an existing destination, as POSIX rename does. Default `true`. */
  overwrite?: boolean;
}

/** Options of {@link Filesystem.copy}. */
export interface CopyOptions {
  /**
   * Copy directories with their contents. Default `false` (`EISDIR`).
   * Nothing in the tree is dropped in silence: a symbolic link inside it is
   * copied as a link with the same text (as `cp -R` does, not followed into
   * a copy of what it leads to); a link that leads out of the workspace, or
   * whose text would from its place in the copy, refuses the whole copy
   * with `EPATHESCAPE` under the link's path (never where it leads), and a
   * FIFO, socket or device with `EINVAL`, before anything is written. A
   * backend without `symlinks` refuses a link with `EUNSUPPORTED`.
   */
  recursive?: boolean;
  /** Replace existing destination files. Default `true`, as `cp` does. */
  overwrite?: boolean;
}

/**
 * What happened to a path, as a {@link Watcher} reports it.
 *
 * - `created`: the path now exists (it may have existed before, replaced
 *   under another name, as an atomic save does: treat it like `modified`);
 * - `modified`: the content or metadata changed — read it again;
 * - `deleted`: the path no longer exists;
 * - `renamed`: `oldPath` became `path`. Only backends that declare
 *   `capabilities.watchRenames` report it; the others report a `deleted` of
 *   the old path and a `created` of the new one.
 */
export type WatchEventType = 'created' | 'modified' | 'deleted' | 'renamed';

/** One change seen by a {@link Watcher}. */
export interface WatchEvent {
  readonly type: WatchEventType;
  /** Normalized workspace-relative path (`''` for the root), never outside the root. */
  readonly path: string;
  /** For `renamed`: where the entry was before, when known. */
  readonly oldPath?: string | undefined;
  /** What the path names, when the backend knows it without another call. */
  readonly kind?: FileKind | undefined;
}

/** Options of {@link Filesystem.watch}. */
export interface WatchOptions {
  /** Also report changes in subdirectories at any depth. Default `false`: the path and its direct children. */
  recursive?: boolean;
  /** Aborting it closes the watcher, as {@link Watcher.close} does. */
  signal?: AbortSignal;
  /**
   * Events on one path within this many milliseconds are coalesced into one
   * (a create then a write is one `created`; a create then a delete is
   * nothing). Default 20 ms, or 0 where waiting gains nothing: on the host,
   * whose platform watcher already batches (~50 ms), and in memory, whose
   * events are exact. 0 hands events over as soon as the code that caused
   * them yields (a microtask), coalescing only what happened in one run.
   */
  debounceMs?: number;
  /**
   * Most events held for a consumer that does not keep up. Past it the
   * watcher drops what it holds and delivers one `modified` of the watched
   * path instead, which means "changes were lost: rescan". Default 10,000.
   */
  maxPending?: number;
}

/**
 * Change events below a path, as an async iterable. Events are debounced and
 * coalesced per path, never name ctxfs's own temp or lock files, never name a
 * path outside the root (a symlink's target outside is not watched), and
 * when too many pile up (or the platform's queue overflows) they are replaced
 * by one `modified` of the watched path: "rescan".
 *
 * @example
 * ```ts
 * const watcher = fs.watch('src', { recursive: true });
 * await watcher.ready; // changes from now on are reported
 * for await (const event of watcher) {
 *   if (event.type === 'modified' && event.path === 'src') rescan();
 *   else console.log(event.type, event.path);
 * }
 * ```
 */
export interface Watcher extends AsyncIterable<WatchEvent> {
  /**
   * Resolves once changes are being observed (a change made after it is
   * reported). Rejects (and iteration throws) when the watch cannot start:
   * `ENOENT` for a missing path, `EUNAVAILABLE` for a backend that cannot
   * be reached.
   */
  readonly ready: Promise<void>;
  /** Stops watching and frees its resources; the iteration ends. Idempotent. */
  close(): Promise<void>;
}

/** A captured state of the whole workspace. */
export interface Snapshot {
  /** Backend-issued identifier; pass it (or the object) to `restore`. */
  readonly id: string;
  readonly createdAt: Date;
  readonly tag?: string | undefined;
  /** Backend-specific reference (a commit id, an image id...). */
  readonly ref?: string | undefined;
}

/**
 * What a backend can do. The conformance suite reads this and tests what is
 * declared; an undeclared capability's operations throw `EUNSUPPORTED`.
 */
export interface Capabilities {
  /** `snapshot`, `restore`, `listSnapshots`, `dropSnapshot`. */
  readonly snapshots: boolean;
  /** {@link Filesystem.watch} works (otherwise it throws `EUNSUPPORTED`). */
  readonly watch: boolean;
  /**
   * A watcher reports a rename as one `renamed` event with `oldPath`.
   * Without it, a rename arrives as a `deleted` and a `created`.
   */
  readonly watchRenames: boolean;
  /**
   * Set when watching polls rather than being told: changes show up within
   * about this many milliseconds (plus the debounce).
   */
  readonly watchPollIntervalMs?: number | undefined;
  /** The backend stores and follows symbolic links. */
  readonly symlinks: boolean;
  /** `grep` runs natively (ripgrep, inside the container) rather than in JS. */
  readonly nativeGrep: boolean;
  /** The instance refuses every mutation with `EROFS`. */
  readonly readOnly: boolean;
  /** POSIX permission bits are stored and reported in `stat().mode`. */
  readonly permissions: boolean;
  /** `stat().birthtime` is meaningful. */
  readonly birthtime: boolean;
  /** Empty directories survive snapshot/restore. */
  readonly snapshotsKeepEmptyDirs: boolean;
  /** Writes honour `ifMatch`, checked atomically with the commit. */
  readonly compareAndSwap: boolean;
}

/** Limits every backend enforces. */
export interface FilesystemLimits extends PathLimits {
  /** Cap of `readBytes`, `read`, `writeBytes`, `write`; default 32 MiB. */
  maxConvenienceBytes: number;
  /** Default chunk size of streaming reads; 64 KiB. */
  chunkSize: number;
  /** Default `maxMatches` of `grep`; 1,000. */
  maxGrepMatches: number;
}

/**
 * The protocol. Every method validates its paths with the shared path rules
 * and throws {@link FsError} with a Node-style or ctxfs code.
 */
export interface Filesystem extends AsyncDisposable {
  /** Human-readable location of the workspace (`memory:`, a host directory, `docker://id/work`). */
  readonly root: string;
  /**
   * Absolute paths besides `root` that name the workspace root, where a
   * program working in it sees it (a container's directory inside the
   * container, and where a link there leads); absent where there are none.
   * A caller who writes a path inside one is told the relative path to use;
   * nothing else is read from them.
   */
  readonly absoluteRoots?: readonly string[];
  readonly capabilities: Capabilities;
  readonly limits: Readonly<FilesystemLimits>;
  /** Whether every mutation is refused with `EROFS`. */
  readonly readOnly: boolean;
  /**
   * Whether a write that resolved survives a crash of the machine (the
   * backend flushed its bytes to stable storage), not only of the process.
   * Absent means durable, the safe default. `false` (the memory backend, the
   * host backend opened with `durability: 'none'`) tells a layer that keeps
   * records about the files that making those records durable protects
   * nothing: the edit journal then commits its intents without a flush of
   * its own (see `EditJournal` in `@ctxfs/context`).
   *
   * @example
   * ```ts
   * const fs = await HostFilesystem.open({ root, durability: 'none' });
   * fs.durableWrites; // false
   * ```
   */
  readonly durableWrites?: boolean;

  // Streaming layer (primary)
  openRead(path: string, options?: OpenReadOptions): Promise<ByteReader>;
  openWrite(path: string, options?: OpenWriteOptions): Promise<ByteWriter>;
  openText(path: string, options?: TextOptions): Promise<TextReader>;

  // Convenience layer (bounded)
  readBytes(path: string, options?: ReadBytesOptions): Promise<Uint8Array>;
  /**
   * The whole file and its {@link FileStat} together: what `stat` then
   * `readBytes` answer, from one open of the file where the backend can
   * (the host stats the descriptor it reads), and never the stat of one file
   * with the bytes of another that replaced it in between. Refused as
   * `readBytes` refuses: `ENOENT`, `EISDIR` for a directory, a link out of
   * the root. A file over `maxBytes` answers its stat without bytes.
   *
   * @example
   * ```ts
   * const { stat, bytes } = await fs.readWithStat('src/app.ts', { maxBytes: 1 << 20 });
   * if (bytes === undefined) throw new Error(`${stat.size} bytes is too large to load`);
   * ```
   */
  readWithStat(path: string, options?: ReadWithStatOptions): Promise<FileRead>;
  read(path: string, options?: ReadTextOptions): Promise<TextPage>;
  writeBytes(path: string, data: Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  write(path: string, text: string, options?: WriteTextOptions): Promise<WriteResult>;

  /**
   * Decodes bytes the caller already holds (read with `readBytes`, hashed,
   * taken from a version store) exactly as this backend's `openText`,
   * `read` and `write` see that file: the same detection (BOM, UTF-16,
   * ISO-2022-JP, UTF-8 with damage, the backend's legacy detector), the
   * same decoder. Layers above the protocol decode through it so a model
   * never sees text other than what `read` serves. Binary data is not an
   * error here: `binary` is set and `text` is empty.
   *
   * @example
   * ```ts
   * const bytes = await fs.readBytes('po/ru.po');
   * const { text, encoding } = fs.decodeText(bytes, { path: 'po/ru.po' }); // 'koi8-r', the real Russian text
   * ```
   */
  decodeText(bytes: Uint8Array, options?: DecodeTextOptions): DecodedText;

  // Core operations
  exists(path: string): Promise<boolean>;
  stat(path: string): Promise<FileStat>;
  /**
   * The workspace path `path` leads to once every symbolic link in it is
   * followed: what a read of it reads and a write of it writes. The part of
   * the path that does not exist yet is kept as given (a new file under a
   * linked directory is under the link's target). A link that leads out of
   * the root is `EPATHESCAPE`; links that go round in a loop are `ELOOP`
   * under `path` as given (never under the link the loop came back through,
   * which the message names). A backend without symlinks answers the
   * normalized path. The safety layer decides a call on this path as well
   * as on the one given, so a link cannot open what the policy closes.
   *
   * @example
   * ```ts
   * await fs.realpath('notes.txt'); // '.env' when notes.txt is a link to it
   * ```
   */
  realpath(path: string): Promise<string>;
  list(path?: string, options?: ListOptions): Promise<FileEntry[]>;
  /**
   * Every entry below a directory (not the directory itself), in batches,
   * parents before their children. Siblings come in no promised order (a
   * native walk streams as the disk answers): sort when order matters, or use
   * `glob`, whose order is fixed. Directories that vanish or cannot be read
   * mid-walk are passed over, as `find` does. The cheap way to enumerate a
   * large tree with sizes and times.
   */
  walk(path?: string, options?: WalkOptions): AsyncIterableIterator<readonly FileEntry[]>;
  /**
   * The SHA-256 of many files at once, in the order given, in batches. A file
   * that cannot be hashed (missing, a directory, unreadable) gets an `error`
   * instead of failing the call. Backends hash where the bytes are (worker
   * threads on the host, no content over the wire in a container), so this
   * is far cheaper than reading each file.
   *
   * @example
   * ```ts
   * for await (const batch of fs.digest(['a.ts', 'b.ts'], { headBytes: 512 })) {
   *   for (const d of batch) console.log(d.path, d.error ? d.error.code : d.sha256);
   * }
   * ```
   */
  digest(paths: readonly string[], options?: DigestOptions): AsyncIterableIterator<readonly FileDigest[]>;
  glob(pattern: string, options?: GlobOptions): AsyncIterableIterator<GlobMatch>;
  grep(pattern: string, options?: GrepOptions): AsyncIterableIterator<GrepMatch>;
  delete(path: string, options?: DeleteOptions): Promise<void>;
  mkdir(path: string, options?: MkdirOptions): Promise<void>;
  rename(from: string, to: string, options?: RenameOptions): Promise<void>;
  /**
   * Copies a file, or with `{ recursive: true }` a directory tree, as
   * `fs.cp` does: missing parents are created, an existing directory is
   * merged into. A tree is checked whole before anything is written, and
   * its links are copied as links (see {@link CopyOptions.recursive}).
   *
   * @example
   * ```ts
   * await fs.copy('lib', 'lib-copy', { recursive: true });
   * ```
   */
  copy(from: string, to: string, options?: CopyOptions): Promise<void>;

  /**
   * Watches `path` (a directory, or one file) for changes; see {@link Watcher}.
   * Throws `EUNSUPPORTED` at once when `capabilities.watch` is false.
   *
   * @example
   * ```ts
   * const controller = new AbortController();
   * const watcher = fs.watch('', { recursive: true, signal: controller.signal });
   * await watcher.ready;
   * for await (const { type, path, oldPath } of watcher) console.log(type, path, oldPath ?? '');
   * ```
   */
  watch(path: string, options?: WatchOptions): Watcher;

  // Snapshots (when capabilities.snapshots)
  snapshot(tag?: string): Promise<Snapshot>;
  restore(snapshot: Snapshot | string): Promise<void>;
  listSnapshots(): Promise<Snapshot[]>;
  dropSnapshot(snapshot: Snapshot | string): Promise<void>;

  /** Releases backend resources; later calls throw `ECLOSED`. Idempotent. */
  close(): Promise<void>;
}
