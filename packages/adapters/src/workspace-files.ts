/**
 * The one way every framework adapter reaches a workspace: a context-layer
 * session. Frameworks move raw bytes (a byte stream, a file's exact lines),
 * which no retrieval call serves, so byte reads, listings and searches run
 * as guarded calls of the session (policy, budgets, one audit record each),
 * while every change of a text file is a session edit: a version in the
 * history (undo brings it back), stale detection by content hash against
 * what this agent last read, a merge when the file moved on, approval when
 * the policy asks. A write of raw bytes stores exactly those bytes: as an
 * edit where the editor keeps them byte for byte (UTF-8 over UTF-8 text),
 * otherwise with a compare-and-swap against the agent's last read, then
 * recorded in the registry.
 *
 * Everything throws `FsError` with host paths removed; each adapter turns
 * that into its framework's own error form.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { CallStyle, CallValue, ContextLayer, ContextSession, EditResult, OpClass } from '@ctxfs/context';
import { API_CALL_STYLE, currentCall, sha256Hex, withCallStyle, withoutHostPaths } from '@ctxfs/context';
import {
  type ByteReader,
  encodeText,
  type FileEntry,
  type FileStat,
  type Filesystem,
  type FsError,
  type FsErrorCode,
  type FsOperation,
  fsError,
  type GrepMatch,
  isFsError,
  resolvePath,
  trailingSlashError,
  unencodableText,
} from '@ctxfs/core';

/** Options of {@link WorkspaceFiles}. */
export interface WorkspaceFilesOptions {
  /** The workspace's context layer (from `createContext`). */
  readonly context: ContextLayer;
  /** The agent's session; default the layer's own session. */
  readonly session?: ContextSession | undefined;
}

/**
 * How a framework's agent reads and deletes a file: the calls a message of
 * the session names as the next step (`Re-read lines 4-4 with …`) are
 * written so, since `readLines(…)`, the session's own call, is none the
 * agent can make.
 */
export interface FrameworkCalls {
  /** The call that reads the file at workspace path `path`: lines `start`..`end` (1-based, inclusive) when given. */
  read(path: string, start?: number, end?: number): string;
  /** The call that deletes it. */
  delete(path: string): string;
}

/**
 * The session's call style writing reads and deletes as `calls` writes
 * them; any other call the session names stays the API's.
 */
function frameworkCallStyle(name: string, calls: FrameworkCalls): CallStyle {
  const line = (v: CallValue): number | undefined => (typeof v === 'number' ? v : undefined);
  return {
    name,
    format(op, args, options) {
      const [path, start, end] = args;
      if (typeof path === 'string') {
        if (op === 'readFile') return calls.read(path);
        if (op === 'readLines') return calls.read(path, line(start) ?? 1, line(end) ?? line(start) ?? 1);
        // The framework's delete takes no version: after the re-read the message asks for first, a plain delete is based on it.
        if (op === 'deleteFile') return calls.delete(path);
      }
      return API_CALL_STYLE.format(op, args, options);
    },
  };
}

/**
 * `session` with every call of it run in `style`, so the messages it
 * composes name the framework's calls. Methods run on the session itself
 * (its private state), only inside the style.
 */
function styledSession(session: ContextSession, style: CallStyle): ContextSession {
  return new Proxy(session, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => withCallStyle(style, () => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

/** Options of {@link WorkspaceFiles.writeBytes}. */
export interface WriteBytesOptions {
  /** Refuse (`EEXIST`) when the file exists. Default `false`: overwrite. */
  readonly create?: boolean | undefined;
  /**
   * The version (content hash) the caller checked the file against just
   * before: the write commits only over that version, by the editor's
   * compare-and-swap, and a change made since is refused (`ECONFLICT`),
   * never merged. Default this agent's last read (a text write merges a
   * change made since it).
   */
  readonly base?: string | undefined;
}

/** Options of {@link WorkspaceFiles.grep}. */
export interface FilesGrepOptions {
  readonly path?: string | undefined;
  readonly glob?: string | undefined;
  readonly literal?: boolean | undefined;
  readonly ignoreCase?: boolean | undefined;
  readonly dot?: boolean | undefined;
  readonly maxMatches?: number | undefined;
}

/** Writes of at most this many bytes go through the session's editor (history, stale detection); a longer stream is written as a stream. */
export const EDITABLE_WRITE_BYTES = 8 * 1024 * 1024;

/** A read's content up to this size is kept as a merge base for the agent's next edit; a larger one is only hashed. */
const MERGE_BASE_BYTES = 1024 * 1024;
/**
 * A line range of a file up to this size is recorded as the agent's read (by
 * two hashes of the file, about 10 ms each at this size); a range of a
 * larger file is streamed and not recorded.
 */
const RECORDED_RANGE_BYTES = 16 * 1024 * 1024;

/**
 * Lines `start`..`end` (1-based, inclusive) of a text given in chunks,
 * joined by its own line ending; the chunks are left as soon as the range
 * is read.
 */
async function pickLines(chunks: AsyncIterable<string> | Iterable<string>, start: number, end: number): Promise<string> {
  const parts: string[] = [];
  let line = 1;
  let crlf: boolean | undefined;
  const done = (): string => {
    const out = parts.join('');
    return crlf === true && out.endsWith('\r') && line > end ? out.slice(0, -1) : out;
  };
  for await (const chunk of chunks) {
    let i = 0;
    while (i <= chunk.length) {
      const nl = chunk.indexOf('\n', i);
      const stop = nl === -1 ? chunk.length : nl;
      if (line >= start && line <= end) parts.push(chunk.slice(i, stop));
      if (nl === -1) break;
      crlf ??= nl > 0 ? chunk[nl - 1] === '\r' : (parts.at(-1)?.endsWith('\r') ?? false);
      if (line >= start && line < end) parts.push('\n');
      line++;
      i = nl + 1;
      if (line > end) return done();
    }
  }
  return done();
}

/** Calls that make a file where none is: a name ending in `/` names a directory, which they cannot make. */
const CREATING: ReadonlySet<string> = new Set(['write', 'writeBytes', 'openWrite']);

/** A byte stream of one file that can be left early. */
export interface FileStream extends AsyncIterable<Uint8Array> {
  /** Releases the stream (idempotent). */
  close(): Promise<void>;
}

/** What a write on the byte path stored: its size, its hash, and the bytes when it had them whole. */
interface RawWritten {
  readonly size: number;
  readonly sha256: string;
  readonly bytes: Uint8Array | undefined;
}

/** Options of {@link WorkspaceFiles.list}. */
export interface ListOptions {
  /** Each entry with its metadata (symlinks followed). Default `true`; without, entries carry their own kind only (a link is `symlink`). */
  readonly stat?: boolean | undefined;
  /** With `stat`, keep links whose target cannot be reached (dangling, a loop) without metadata, instead of leaving them out. */
  readonly unresolvedLinks?: boolean | undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of `bytes` when they are UTF-8 text without NUL or BOM (what the editor writes back byte for byte as UTF-8), else `undefined`. */
function asUtf8Text(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  // A BOM is content the editor would treat as an encoding marker: keep such bytes on the byte path.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether an encoding label names UTF-8 (text in it is what the editor writes for a new file). */
export const isUtf8Label = (encoding: string | undefined): boolean => encoding === undefined || /^(utf-?8|unicode-1-1-utf-8)$/i.test(encoding.trim());

/**
 * The workspace path an adapter's absolute path names, where the adapter
 * shows the root at `mount` (an absolute path without its trailing slash;
 * `''` when the root is `/`). A relative path is passed on as it is. Below
 * a mount, a path is read as a shell reads it (`/workspace//a` and
 * `/workspace/../workspace/a` are `/workspace/a`): where it ends up decides,
 * not the names it passes on the way. One that ends up outside is passed on
 * as given, so the workspace refuses it (`EPATHESCAPE`) and the audit
 * records the attempt as made. With the root at `/` nothing is above it to
 * come back from: a `..` above it stays in the path and is refused.
 *
 * @example
 * ```ts
 * mountedPath('/workspace/../workspace/a.txt', '/workspace'); // 'a.txt'
 * mountedPath('/workspace/../etc/passwd', '/workspace');      // '/workspace/../etc/passwd', refused
 * mountedPath('/src/a.ts', '');                               // 'src/a.ts'
 * ```
 */
export function mountedPath(path: string, mount: string): string {
  if (typeof path !== 'string' || !path.startsWith('/')) return path;
  if (mount === '') return path.replace(/^\/+/, '');
  const resolved = posix.normalize(path);
  if (resolved === mount || resolved === `${mount}/`) return '';
  return resolved.startsWith(`${mount}/`) ? resolved.slice(mount.length + 1) : path;
}

/**
 * A backend call made before any guarded call (to decide which to make),
 * its error without host paths as a guarded call's is: a link's target out
 * of the root would otherwise reach the caller in the message.
 */
export function scrubbed<T>(call: Promise<T>): Promise<T> {
  return call.catch((err: unknown) => Promise.reject(isFsError(err) ? withoutHostPaths(err) : err));
}

/** An edit's refusal as the error it stands for. */
function editError(op: FsOperation, path: string, r: EditResult): never {
  throw fsError((r.code ?? 'EINVAL') as FsErrorCode, op, path, { reason: r.message });
}

/**
 * A workspace as the framework adapters use it: every call through one
 * context session.
 *
 * @example
 * ```ts
 * const context = await createContext({ fs: new MemoryFilesystem(), safety: { policyFiles: false } });
 * const files = new WorkspaceFiles({ context });
 * await files.writeBytes('a.txt', new TextEncoder().encode('hi\n')); // a version in the history
 * await files.readBytes('a.txt');                                     // recorded as read: a later stale write is caught
 * ```
 */
export class WorkspaceFiles {
  readonly context: ContextLayer;
  readonly session: ContextSession;
  readonly fs: Filesystem;

  /**
   * `calls` names the framework's own calls (`framework` its name): a
   * message of the session (an edit refused as a conflict, a delete of a
   * file changed since it was read) tells the agent to re-read with the
   * call it can make, not with the session's `readLines(…)`.
   */
  constructor(options: WorkspaceFilesOptions, framework?: { readonly name: string; readonly calls: FrameworkCalls }) {
    this.context = options.context;
    const session = options.session ?? options.context;
    this.session = framework === undefined ? session : styledSession(session, frameworkCallStyle(framework.name, framework.calls));
    this.fs = options.context.fs;
  }

  /** A caller's workspace path, normalized (throws `EPATHESCAPE`/`EINVAL` before any I/O). */
  normalize(path: string, op: FsOperation): string {
    return resolvePath(path, op).path;
  }

  /**
   * Normalizes a path a change names; one that does not normalize is
   * refused through the safety layer, so the attempt is in the audit.
   */
  async #changeTarget(path: string, op: FsOperation, opClass: OpClass): Promise<string> {
    const { paths, invalid, dirOnly } = this.#target(path, op);
    if (invalid !== undefined) return await this.#refuse(op, opClass, [], invalid);
    const p = paths[0] as string;
    const wrong = dirOnly ? await this.#notADirectory(p, op, CREATING.has(op)) : undefined;
    return wrong === undefined ? p : await this.#refuse(op, opClass, [p], wrong);
  }

  /**
   * What a name ending in `/` is wrong for, by core's rule (the backends'):
   * normalizing drops the slash, so the backend never sees it; without this,
   * `writeTextFile('notes/')` made a file called notes and
   * `deleteFile('a.txt/')` removed the file.
   */
  async #notADirectory(p: string, op: FsOperation, creating: boolean): Promise<FsError | undefined> {
    if (p === '') return undefined;
    const stat = await scrubbed(this.fs.stat(p)).catch((err: unknown) => (isFsError(err, 'ENOENT') ? undefined : Promise.reject(err)));
    return trailingSlashError(op, p, stat?.kind, creating);
  }

  /** Refuses a change through the safety layer, so the attempt is in the audit, then throws `invalid`. */
  #refuse(op: FsOperation, opClass: OpClass, paths: string[], invalid: FsError): Promise<never> {
    return this.session.guarded<never>(
      { op, opClass, paths, params: {}, invalid },
      () => Promise.reject(invalid),
      () => ({ result: 'refused' }),
    );
  }

  /** The call's path normalized, or the error normalizing gave: the safety layer records a refused path like any call, then throws it. */
  #target(path: string, op: FsOperation): { paths: string[]; invalid: FsError | undefined; dirOnly: boolean } {
    try {
      const resolved = resolvePath(path, op);
      return { paths: [resolved.path], invalid: undefined, dirOnly: resolved.dirOnly };
    } catch (err) {
      if (!isFsError(err)) throw err;
      return { paths: [], invalid: err, dirOnly: false };
    }
  }

  #guarded<T>(
    op: string,
    opClass: OpClass,
    path: string,
    params: Record<string, unknown>,
    body: (p: string) => Promise<T>,
    bytes: (r: T) => number,
  ): Promise<T> {
    const { paths, invalid, dirOnly } = this.#target(path, op as FsOperation);
    const p = paths[0] as string;
    return this.session.guarded(
      { op, opClass, paths, params, invalid },
      async () => {
        const wrong = dirOnly ? await this.#notADirectory(p, op as FsOperation, false) : undefined;
        if (wrong !== undefined) throw wrong;
        return await body(p);
      },
      (r) => ({ result: 'ok', bytes: bytes(r) }),
    );
  }

  #read<T>(op: string, path: string, params: Record<string, unknown>, body: (p: string) => Promise<T>, bytes: (r: T) => number = () => 0): Promise<T> {
    return this.#guarded(op, 'read', path, params, body, bytes);
  }

  /** Metadata of a path (symlinks inside the root followed). */
  stat(path: string): Promise<FileStat> {
    return this.#read('stat', path, {}, (p) => this.fs.stat(p));
  }

  /** Metadata of a path, or `undefined` when nothing is there. */
  async statOrUndefined(path: string): Promise<FileStat | undefined> {
    try {
      return await this.stat(path);
    } catch (err) {
      if (isFsError(err, 'ENOENT')) return undefined;
      throw err;
    }
  }

  /**
   * A directory's entries (with their metadata unless `stat: false`),
   * sorted; paths the policy withholds left out. An entry the backend cannot
   * stat — a link to itself, a dangling link — never fails the listing: it
   * is left out, or kept without metadata with `unresolvedLinks`.
   */
  list(path: string, options: ListOptions = {}): Promise<FileEntry[]> {
    return this.#guarded(
      'list',
      'search',
      path,
      {},
      async (p) => {
        const entries = options.stat === false ? await this.fs.list(p) : await this.#listWithStats(p, options.unresolvedLinks === true);
        const call = currentCall();
        return call ? entries.filter((e) => !call.withheld(e.path)) : entries;
      },
      (r) => r.length,
    );
  }

  async #listWithStats(p: string, unresolvedLinks: boolean): Promise<FileEntry[]> {
    let stated: FileEntry[] | undefined;
    try {
      stated = await this.fs.list(p, { stat: true });
      if (!unresolvedLinks) return stated;
    } catch {
      // One entry that cannot be stat'ed (ELOOP) fails a backend's stat listing; each entry is stat'ed on its own below.
      // A directory that cannot be listed at all fails the plain listing below with its own error.
    }
    const plain = await this.fs.list(p);
    const known = new Map((stated ?? []).map((e) => [e.path, e]));
    const out: FileEntry[] = [];
    for (const entry of plain) {
      const found = known.get(entry.path);
      if (found !== undefined) {
        out.push(found);
        continue;
      }
      const stat = stated === undefined ? await this.fs.stat(entry.path).catch(() => undefined) : undefined;
      if (stat !== undefined) out.push({ ...entry, stat });
      else if (unresolvedLinks && entry.kind === 'symlink') out.push(entry);
    }
    return out;
  }

  /** The whole file, recorded as this agent's read of that version (so a later write of a changed file is caught). */
  readBytes(path: string): Promise<Uint8Array> {
    return this.#read(
      'readBytes',
      path,
      {},
      async (p) => {
        const bytes = await this.fs.readBytes(p);
        await this.#remember(p, sha256Hex(bytes), bytes);
        return bytes;
      },
      (b) => b.byteLength,
    );
  }

  /**
   * A path's metadata and, when `wanted(stat)`, its bytes (recorded as
   * {@link readBytes} records them), in one call of the session: one policy
   * decision, link check, budget charge and audit record where `stat` then
   * `readBytes` made two. `bytes` is `undefined` when not wanted; `sha256`
   * is their hash (the version read), taken once for every use of it.
   */
  async readWithStat(
    path: string,
    wanted: (stat: FileStat) => boolean,
  ): Promise<{ stat: FileStat; bytes: Uint8Array; sha256: string } | { stat: FileStat; bytes: undefined; sha256?: undefined }> {
    // What was there when it was not read: the call fails inside, so the audit records a read that served
    // nothing as the error it is (EISDIR for a directory), not as a read that succeeded.
    let passed: FileStat | undefined;
    try {
      return await this.#read(
        'readBytes',
        path,
        {},
        async (p) => {
          const stat = await this.fs.stat(p);
          if (!wanted(stat)) {
            passed = stat;
            throw stat.kind === 'directory'
              ? fsError('EISDIR', 'readBytes', p)
              : fsError('EINVAL', 'readBytes', p, { reason: `not a file the caller reads (${stat.kind})` });
          }
          const bytes = await this.fs.readBytes(p);
          const sha256 = sha256Hex(bytes);
          await this.#remember(p, sha256, bytes);
          return { stat, bytes, sha256 };
        },
        (r) => r.bytes.byteLength,
      );
    } catch (err) {
      if (passed !== undefined) return { stat: passed, bytes: undefined };
      throw err;
    }
  }

  /** Records a served version as read by this agent, and keeps its content (when given and small) for a later merge. */
  async #remember(path: string, sha256: string, bytes: Uint8Array | undefined): Promise<void> {
    // A read of the version this agent last read changes nothing the stale check uses: skip the write to the store.
    if ((await this.session.sessionContext.lastRead(this.session.agent, path))?.sha256 === sha256) return;
    await this.session.sessionContext.recordRead({ agent: this.session.agent, path, sha256, op: 'readBytes', tokens: 0 });
    if (bytes !== undefined && bytes.byteLength <= MERGE_BASE_BYTES && !(await this.context.versions.hasBlob(sha256)))
      await this.context.versions.putBlob(bytes, sha256);
  }

  /**
   * A byte stream of the file (bounded memory; not recorded as a read: see
   * {@link readStream}). Its size is charged to the session's byte budget
   * when it opens, as a whole read's bytes are: the call ends before a byte
   * is served, so only the size can be counted, and a stream past the
   * budget is refused (`ELIMIT`) before it serves any.
   */
  openRead(path: string): Promise<ByteReader> {
    return this.#read(
      'openRead',
      path,
      {},
      (p) => this.fs.openRead(p),
      (r) => r.size,
    );
  }

  /**
   * A byte stream of the whole file at bounded memory; read to its end, it
   * is recorded as this agent's read of the version it served (hashed as it
   * passes), as {@link readBytes} is. A stream left early is no read of the
   * file.
   */
  async readStream(path: string): Promise<FileStream> {
    const reader = await this.openRead(path);
    const hash = createHash('sha256');
    let kept: Uint8Array[] | undefined = [];
    let size = 0;
    const chunks = async function* (this: WorkspaceFiles): AsyncGenerator<Uint8Array> {
      for await (const chunk of reader) {
        hash.update(chunk);
        size += chunk.byteLength;
        // A chunk is lent until the next is asked for: a merge base keeps its own copy.
        if (kept !== undefined && size <= MERGE_BASE_BYTES) kept.push(chunk.slice());
        else kept = undefined;
        yield chunk;
      }
      await this.#remember(reader.path, hash.digest('hex'), kept === undefined ? undefined : Buffer.concat(kept, size));
    }.call(this);
    return { [Symbol.asyncIterator]: () => chunks, close: () => reader.close() };
  }

  /**
   * Lines `startLine`..`endLine` of a text file (1-based, inclusive; an end
   * past the last line reads to the end without error), joined by the
   * file's own line ending — with neither, the whole text. Decoded as the
   * backend decodes the file (or with `encoding`). Every read, a range too,
   * is recorded as this agent's read of that version, so a later write of
   * the whole file is merged with a change made since (or refused), never
   * written over it: the whole file, or a file up to 1 MiB
   * (kept as the merge base), is read at once; a larger range is streamed
   * and left as soon as it is read, so a range near the top of a huge file
   * costs the bytes up to it and memory holds only the range. A file up to
   * 16 MiB is also hashed by the backend before and after (as the context
   * layer's `readLines` takes its version) and the read recorded; a range
   * of a larger file is not recorded, so a later whole-file write of it is
   * not checked against a change made since (read it whole first). `EBINARY` for binary content without an explicit
   * encoding; `EINVAL` for a line number that is not a whole number from 1.
   */
  readLineRange(path: string, startLine?: number, endLine?: number, encoding?: string): Promise<string> {
    return this.#read(
      'readLines',
      path,
      { startLine, endLine },
      async (p) => {
        for (const [name, n] of [
          ['startLine', startLine],
          ['endLine', endLine],
        ] as const) {
          if (n !== undefined && !(Number.isInteger(n) && n >= 1))
            throw fsError('EINVAL', 'readLines', p, { reason: `${name} ${n} is not a line number`, hint: 'give lines as whole numbers from 1' });
        }
        const start = startLine ?? 1;
        const end = endLine ?? Number.POSITIVE_INFINITY;
        const whole = start === 1 && endLine === undefined;
        const text = await this.#readWholeText(p, encoding, whole ? this.fs.limits.maxConvenienceBytes : MERGE_BASE_BYTES);
        if (text !== undefined) return whole ? text : await pickLines([text], start, end);
        // Streamed between two hashes of the backend: the read is recorded only when both name the version the lines came
        // from. Past RECORDED_RANGE_BYTES the two hashes would cost far more than the range (two passes over 100 MB for a
        // hundred lines near its top): such a range is streamed unrecorded, as a range of a huge file always was.
        const recorded = (await this.fs.stat(p)).size <= RECORDED_RANGE_BYTES;
        const before = recorded ? await this.#digest(p) : undefined;
        let lines: string;
        {
          await using reader = await this.fs.openText(p, encoding === undefined ? {} : { encoding });
          lines = await pickLines(reader, start, end);
        }
        if (before !== undefined && before === (await this.#digest(p))) await this.#remember(p, before, undefined);
        return lines;
      },
      (r) => r.length,
    );
  }

  /** The backend's SHA-256 of a file (hashed where its bytes are), or `undefined` when it has none. */
  async #digest(p: string): Promise<string | undefined> {
    for await (const batch of this.fs.digest([p])) for (const d of batch) return d.error === undefined ? d.sha256 : undefined;
    return undefined;
  }

  /**
   * A whole text file of at most `limit` bytes decoded as the backend's
   * text reads decode it, and recorded as this agent's read; `undefined`
   * for what is no file, or a larger file (streamed instead).
   */
  async #readWholeText(p: string, encoding: string | undefined, limit: number): Promise<string | undefined> {
    const stat = await this.fs.stat(p);
    if (stat.kind !== 'file' || stat.size > limit) return undefined;
    const bytes = await this.fs.readBytes(p);
    const decoded = this.fs.decodeText(bytes, encoding === undefined ? { path: p } : { path: p, encoding });
    if (decoded.binary)
      throw fsError('EBINARY', 'readLines', p, {
        reason: 'file looks binary (NUL or control bytes)',
        hint: 'read it with readBinaryFile, or pass an encoding to decode it as text anyway',
      });
    await this.#remember(p, sha256Hex(bytes), bytes);
    return decoded.text;
  }

  /**
   * Writes a whole file of exactly `bytes`, creating parents. Where the
   * editor would store them byte for byte — UTF-8 text over nothing or over
   * UTF-8 text without a BOM — the write is a session edit (a version undo
   * restores); otherwise it is written with compare-and-swap. Either way a
   * file changed since this agent last read it is refused (`ECONFLICT`),
   * not merged: a merge would store other bytes than those given.
   */
  async writeBytes(path: string, bytes: Uint8Array, options: WriteBytesOptions = {}): Promise<void> {
    const p = await this.#changeTarget(path, 'writeBytes', 'write');
    if (await this.#writeBytesAsEdit(p, bytes, options.create === true, options.base)) return;
    await this.#writeRaw('writeBytes', p, options.create === true, bytes, options.base);
  }

  /**
   * {@link writeBytes} as a session edit, when the editor keeps the bytes
   * as they are; `false` when the byte path must write them (no UTF-8
   * text, a file in another encoding or with a BOM, binary, large, or one
   * the byte path refuses with its own error).
   */
  async #writeBytesAsEdit(p: string, bytes: Uint8Array, create: boolean, base: string | undefined): Promise<boolean> {
    const text = asUtf8Text(bytes);
    if (text === undefined) return false;
    const current = await this.#currentUtf8(p);
    if (current === undefined) return false;
    if (current !== null) {
      if (create) return false;
      // Changed since the agent's read: the byte path refuses it (ECONFLICT) as it refuses any stale byte write.
      const seen = base ?? (await this.session.sessionContext.lastRead(this.session.agent, p))?.sha256;
      if (seen !== undefined && seen !== current) return false;
    }
    const r =
      current === null
        ? create
          ? await this.session.createFile(p, text)
          : // Over a version the caller checked, a file deleted since is refused, not written back (the editor's rule).
            await this.session.writeFile(p, text, base === undefined ? undefined : { baseVersion: base, strategy: 'refuse' })
        : // Based on the content just checked, and refused rather than merged if it moved since.
          await this.session.writeFile(p, text, { baseVersion: current, strategy: 'refuse' });
    if (!r.success) {
      if (r.code === 'EBINARY') return false;
      editError('writeBytes', p, r);
    }
    // The editor wrote other bytes than given (it never should for UTF-8 over UTF-8): the given ones replace them.
    if (r.version !== undefined && r.version !== sha256Hex(bytes)) await this.#writeRaw('writeBytes', p, false, bytes);
    return true;
  }

  /** The hash of the file at `p` when it is UTF-8 text the editor writes back as UTF-8; `null` when absent; `undefined` otherwise. */
  async #currentUtf8(p: string): Promise<string | null | undefined> {
    let stat: FileStat;
    try {
      stat = await this.fs.stat(p);
    } catch (err) {
      return isFsError(err, 'ENOENT') ? null : undefined;
    }
    if (stat.kind !== 'file' || stat.size > EDITABLE_WRITE_BYTES) return undefined;
    // Read to decide how to write, never served: the write's own call decides the path.
    const bytes = await this.fs.readBytes(p).catch(() => undefined);
    return bytes === undefined || asUtf8Text(bytes) === undefined ? undefined : sha256Hex(bytes);
  }

  /**
   * Writes `text` as a session edit: a version undo restores, checked
   * against this agent's last read, merged with a change made since (or
   * refused with the conflict). An existing file keeps its encoding, as
   * every ctxfs edit does. Text the editor does not take (NUL, a leading
   * BOM, over a binary file) is written as its UTF-8 bytes by
   * {@link writeBytes}'s byte path.
   */
  async writeText(path: string, text: string, options: WriteBytesOptions = {}): Promise<void> {
    const p = await this.#changeTarget(path, 'write', 'write');
    const bytes = await this.utf8(p, text);
    if (asUtf8Text(bytes) !== undefined) {
      // Over a version the caller checked, the editor's compare-and-swap refuses a change made since the check instead of merging it.
      const edit = options.base === undefined ? undefined : { baseVersion: options.base, strategy: 'refuse' as const };
      const r = options.create ? await this.session.createFile(p, text, edit) : await this.session.writeFile(p, text, edit);
      if (r.success) return;
      if (r.code !== 'EBINARY') editError('write', p, r);
    }
    await this.#writeRaw('write', p, options.create === true, bytes, options.base);
  }

  /**
   * `text` as UTF-8, refused (`EINVAL`, in the audit) when it holds a lone
   * surrogate, half of a UTF-16 pair: no Unicode encoding holds one, so it
   * would be stored as U+FFFD while the write reported success, as
   * {@link writeEncodedText} refuses a character its encoding lacks.
   */
  async utf8(path: string, text: string): Promise<Uint8Array> {
    // In UTF-8 the only character that cannot be held is a lone surrogate.
    const reason = unencodableText(path, text, 'utf-8', 'chose');
    if (reason !== undefined) await this.#refuse('write', 'write', [path], fsError('EINVAL', 'write', path, { reason }));
    return new TextEncoder().encode(text);
  }

  /**
   * `text` as the bytes a file whose content is `current` holds text in:
   * the file's own encoding when it is text in another than UTF-8 (a
   * Shift_JIS file, UTF-16 after its byte-order mark), else UTF-8 (nothing
   * yet, UTF-8 text, binary). What appending `text` to that file must add,
   * so the file stays in one encoding. Text the encoding cannot hold is
   * refused (`EINVAL`, in the audit), as the editor refuses it for a file
   * stored in that encoding.
   */
  async textBytesFor(path: string, text: string, current: Uint8Array): Promise<Uint8Array> {
    const decoded = this.fs.decodeText(current, { path });
    if (current.byteLength === 0 || decoded.binary || decoded.encoding === 'utf-8') return await this.utf8(path, text);
    const reason = unencodableText(path, text, decoded.encoding, 'stored');
    if (reason !== undefined) await this.#refuse('write', 'write', [path], fsError('EINVAL', 'write', path, { reason }));
    return encodeText(text, decoded.encoding);
  }

  /**
   * Writes `text` in `encoding` (one other than UTF-8) as exactly those
   * bytes ({@link writeBytes}). Text the encoding cannot hold is refused
   * (`EINVAL`, nothing written), as the editor refuses it for a file stored
   * in that encoding: encoded, each such character would become a `?` or
   * another character while the write reported success.
   */
  async writeEncodedText(path: string, text: string, encoding: string): Promise<void> {
    const p = await this.#changeTarget(path, 'write', 'write');
    const bytes = encodeText(text, encoding);
    const reason = unencodableText(p, text, encoding, 'chose');
    if (reason !== undefined) await this.#refuse('write', 'write', [p], fsError('EINVAL', 'write', p, { reason }));
    await this.writeBytes(p, bytes);
  }

  /**
   * Writes a file from a stream: up to {@link EDITABLE_WRITE_BYTES} it is
   * gathered and written as {@link writeBytes} does; past that it streams
   * to the backend (constant memory), committed only when the stream ends.
   */
  async writeStream(path: string, chunks: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
    const p = await this.#changeTarget(path, 'openWrite', 'write');
    const held: Uint8Array[] = [];
    let size = 0;
    const iterator = chunks[Symbol.asyncIterator]();
    for (;;) {
      signal?.throwIfAborted();
      const next = await iterator.next();
      if (next.done) return await this.writeBytes(p, Buffer.concat(held, size));
      held.push(next.value);
      size += next.value.byteLength;
      if (size > EDITABLE_WRITE_BYTES) break;
    }
    await this.#writeRawWith('openWrite', p, false, async (ifMatch) => {
      const writer = await this.fs.openWrite(p, { createParents: true, ...(ifMatch === undefined ? {} : { ifMatch }) });
      const hash = createHash('sha256');
      const put = async (chunk: Uint8Array): Promise<void> => {
        hash.update(chunk);
        await writer.write(chunk);
      };
      try {
        for (const chunk of held.splice(0)) await put(chunk);
        for (;;) {
          signal?.throwIfAborted();
          const next = await iterator.next();
          if (next.done) break;
          await put(next.value);
        }
        await writer.close();
        return { size: writer.bytesWritten, sha256: hash.digest('hex'), bytes: undefined };
      } catch (err) {
        await writer.abort();
        throw err;
      }
    });
  }

  /** Writes exactly `bytes` on the byte path (see {@link #writeRawWith}). */
  #writeRaw(op: string, p: string, create: boolean, bytes: Uint8Array, base?: string): Promise<void> {
    return this.#writeRawWith(
      op,
      p,
      create,
      async (ifMatch) => {
        await this.fs.writeBytes(p, bytes, { createParents: true, ...(ifMatch === undefined ? {} : { ifMatch }) });
        return { size: bytes.byteLength, sha256: sha256Hex(bytes), bytes };
      },
      base,
    );
  }

  /**
   * A write the editor does not take, guarded, checked against `base`
   * (default the agent's last read), then recorded in the registry and as
   * this agent's read of what it wrote: the agent knows that version, so
   * its next change of the file is based on it (not refused as another's
   * change), and a change someone makes after it is caught.
   */
  async #writeRawWith(op: string, p: string, create: boolean, write: (ifMatch: string | undefined) => Promise<RawWritten>, base?: string): Promise<void> {
    await this.session.guarded(
      { op, opClass: 'write', paths: [p], params: {} },
      async () => {
        const existing = await this.fs.stat(p).catch((err: unknown) => (isFsError(err, 'ENOENT') ? undefined : Promise.reject(err)));
        if (existing?.kind === 'directory') throw fsError('EISDIR', 'writeBytes', p, { hint: 'name a file, not a directory' });
        if (create && existing !== undefined) throw fsError('EEXIST', 'writeBytes', p, { hint: 'choose another name, or overwrite it' });
        if (!create && existing === undefined && base !== undefined) {
          throw fsError('ECONFLICT', 'writeBytes', p, {
            reason: 'the file was deleted since the version this write is based on',
            hint: 'write it without a base version (or create it) if it should exist again',
          });
        }
        const seen = base ?? (await this.session.sessionContext.lastRead(this.session.agent, p))?.sha256;
        const cas = this.fs.capabilities.compareAndSwap;
        const ifMatch = !cas ? undefined : create ? 'absent' : existing === undefined ? undefined : seen;
        const written = await write(ifMatch);
        await this.context.afterWrite(p, { author: this.session.agent });
        await this.#remember(p, written.sha256, written.bytes);
        return written;
      },
      (written) => ({ result: 'ok', bytes: written.size }),
    );
  }

  /**
   * Deletes a file (a version: undo brings it back); with `recursive`, a
   * directory and all below it. A directory's files are each decided by the
   * policy before anything is removed — one it refuses (a sensitive file)
   * refuses the whole delete — then each is deleted as a session edit, so
   * undo brings any back. Binary files, which the editor does not take, are
   * removed without a version. A symbolic link is removed itself, never
   * what it leads to (as `rm` removes one), without a version. With
   * `fileOnly`, a directory is refused (`EISDIR`) and a link to one removed.
   */
  async delete(path: string, options: { recursive?: boolean; force?: boolean; fileOnly?: boolean } = {}): Promise<void> {
    const p = await this.#changeTarget(path, 'delete', 'delete');
    // The stat below, the session's deleteFile and the walk of a directory follow a link: a link must be told apart
    // first, or what it leads to goes. The filesystem's own delete removes a link itself, but only that call does.
    if (await this.#isLink(p)) return await this.#removeUnversioned(p);
    const stat = await scrubbed(this.fs.stat(p)).catch((err: unknown) => (isFsError(err, 'ENOENT') ? undefined : Promise.reject(err)));
    if (stat?.kind === 'file') return await this.#deleteFile(p);
    if (stat?.kind === 'directory' && options.fileOnly === true) throw fsError('EISDIR', 'delete', p, { hint: 'this call removes files only' });
    const files = stat?.kind === 'directory' && options.recursive === true ? await this.#filesBelow(p) : [];
    await this.session.guarded(
      // Every file below is a path of the call: the policy decides each before anything is removed.
      {
        op: 'delete',
        opClass: 'delete',
        paths: [p, ...files],
        directories: stat?.kind === 'directory' ? [p] : undefined,
        params: { recursive: options.recursive === true },
      },
      async () => {
        for (const file of files) await this.#deleteFile(file);
        await this.fs.delete(p, { recursive: options.recursive === true, force: options.force === true });
        if (stat !== undefined) await this.context.afterWrite(p);
      },
      () => ({ result: 'ok' }),
    );
  }

  /**
   * Whether `p` is itself a symbolic link, not a path through one. The
   * protocol's `stat` follows links and has no lstat, so a link is told by
   * where it leads: a last name that is no link resolves to its parent's
   * resolution and that name. Only a path that does not (a link, or a name
   * spelled otherwise on disk) costs a listing of its parent, whose entry
   * names its own kind.
   */
  async #isLink(p: string): Promise<boolean> {
    if (p === '' || !this.fs.capabilities.symlinks) return false;
    const slash = p.lastIndexOf('/');
    const parent = slash < 0 ? '' : p.slice(0, slash);
    const name = p.slice(slash + 1);
    // A parent that cannot be resolved fails the delete by itself.
    const dir = parent === '' ? '' : await this.fs.realpath(parent).catch(() => undefined);
    if (dir === undefined) return false;
    // A link out of the root, to itself or in a loop cannot be resolved: its parent's listing decides.
    if ((await this.fs.realpath(p).catch(() => undefined)) === (dir === '' ? name : `${dir}/${name}`)) return false;
    return (await this.fs.list(parent).catch(() => [])).some((e) => e.name === name && e.kind === 'symlink');
  }

  /** Deletes one file as a session edit; one the editor does not take (binary, too large) is removed guarded, without a version. */
  async #deleteFile(p: string): Promise<void> {
    const r = await this.session.deleteFile(p);
    if (r.success) return;
    if (r.code !== 'EBINARY' && r.code !== 'ETOOLARGE') editError('delete', p, r);
    await this.#removeUnversioned(p);
  }

  /** Removes one entry (a file the editor does not take, a link) as a guarded call, without a version. */
  async #removeUnversioned(p: string): Promise<void> {
    await this.session.guarded(
      { op: 'delete', opClass: 'delete', paths: [p], params: {} },
      async () => {
        await this.fs.delete(p);
        await this.context.afterWrite(p);
      },
      () => ({ result: 'ok' }),
    );
  }

  /** Every regular file below a directory, those the policy withholds included (the policy must see them to decide). */
  async #filesBelow(dir: string): Promise<string[]> {
    const out: string[] = [];
    for await (const batch of this.fs.walk(dir)) for (const e of batch) if (e.kind === 'file') out.push(e.path);
    return out;
  }

  /**
   * Replaces `search` in a text file, every occurrence or exactly one (a
   * second one is `EINVAL`, none `ENOENT`): a session edit, so stale
   * detection, merge and history apply. `baseVersion` is the hash of the
   * content the caller read and counted in (default: read it now). Returns
   * the number replaced.
   */
  async replace(path: string, search: string, replacement: string, all: boolean, baseVersion?: string): Promise<number> {
    const p = await this.#changeTarget(path, 'write', 'write');
    await this.utf8(p, replacement);
    let base = baseVersion;
    let count = 1;
    if (base === undefined) {
      const bytes = await this.readBytes(p);
      const decoded = this.fs.decodeText(bytes, { path: p });
      if (decoded.binary) throw fsError('EBINARY', 'write', p, { reason: 'the file looks binary, so it cannot be edited as text' });
      count = search === '' ? 0 : decoded.text.split(search).length - 1;
      base = sha256Hex(bytes);
    }
    const r = await this.session.replace(p, search, replacement, { occurrence: all ? 'all' : 'unique', baseVersion: base });
    if (!r.success) editError('write', p, r);
    return all ? count : 1;
  }

  /**
   * Renames a file (a version on both paths) or, guarded, a directory: every
   * file below it is decided under its old name and its new one, so a
   * directory's rename cannot take a file where the policy keeps it
   * (`secrets/` renamed to `open/`) or out of a read-only one.
   */
  async rename(from: string, to: string, overwrite: boolean): Promise<void> {
    const a = await this.#changeTarget(from, 'rename', 'rename');
    const b = await this.#changeTarget(to, 'rename', 'rename');
    const stat = await scrubbed(this.fs.stat(a));
    if (stat.kind === 'file') {
      const r = await this.session.renameFile(a, b, { overwrite });
      if (!r.success) editError('rename', a, r);
      return;
    }
    const below = stat.kind === 'directory' ? await this.#filesBelow(a) : [];
    const moved = below.map((f) => `${b}${f.slice(a.length)}`);
    await this.session.guarded(
      {
        op: 'rename',
        opClass: 'rename',
        paths: [a, b, ...below, ...moved],
        directories: stat.kind === 'directory' ? [a, b] : undefined,
        params: { overwrite },
      },
      () => this.fs.rename(a, b, { overwrite }),
      () => ({ result: 'ok' }),
    );
  }

  /** Creates a directory. */
  async mkdir(path: string, parents: boolean, existOk: boolean): Promise<void> {
    const p = await this.#changeTarget(path, 'mkdir', 'write');
    return this.session.guarded(
      { op: 'mkdir', opClass: 'write', paths: [p], params: { parents } },
      () => this.fs.mkdir(p, { parents, existOk }),
      () => ({ result: 'ok' }),
    );
  }

  /** Files (and directories) matching a glob below `cwd`, as the policy lets this agent see them. */
  glob(pattern: string, cwd: string, options: { dot?: boolean; kind?: 'file' | 'directory' | 'any' } = {}): Promise<FileEntry[]> {
    return this.#guarded(
      'glob',
      'search',
      cwd,
      { pattern },
      async (c) => {
        const call = currentCall();
        const out: FileEntry[] = [];
        for await (const m of this.fs.glob(pattern, { cwd: c, dot: options.dot ?? true, kind: options.kind ?? 'any' })) {
          if (call?.withheld(m.path)) continue;
          out.push({ name: m.path.slice(m.path.lastIndexOf('/') + 1), path: m.path, kind: m.kind });
        }
        return out;
      },
      (r) => r.length,
    );
  }

  /**
   * Every entry below `dir` (with its metadata when `stat`, which costs a
   * stat an entry), in one bulk walk (the backend's fastest), paths the
   * policy withholds left out; without `hidden`, dot-names are neither
   * listed nor entered.
   */
  walk(dir: string, options: { maxDepth?: number | undefined; hidden?: boolean | undefined; stat?: boolean | undefined } = {}): Promise<FileEntry[]> {
    return this.#guarded(
      'walk',
      'search',
      dir,
      { maxDepth: options.maxDepth },
      async (d) => {
        const call = currentCall();
        const out: FileEntry[] = [];
        const visible = (e: FileEntry): boolean => (options.hidden === true || !e.name.startsWith('.')) && !call?.withheld(e.path);
        for await (const batch of this.fs.walk(d, {
          stat: options.stat === true,
          ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
          enter: visible,
        })) {
          for (const e of batch) if (visible(e)) out.push(e);
        }
        return out;
      },
      (r) => r.length,
    );
  }

  /** Matching lines (raw text, as the file reads), paths the policy withholds left out. */
  grep(pattern: string, options: FilesGrepOptions = {}): Promise<GrepMatch[]> {
    return this.#guarded(
      'grep',
      'search',
      options.path ?? '',
      { pattern, literal: options.literal === true },
      async (scope) => {
        const call = currentCall();
        const out: GrepMatch[] = [];
        for await (const m of this.fs.grep(pattern, {
          path: scope,
          ...(options.glob === undefined ? {} : { glob: options.glob }),
          literal: options.literal === true,
          ignoreCase: options.ignoreCase === true,
          dot: options.dot ?? true,
          maxMatches: options.maxMatches ?? 100_000,
        })) {
          if (!call?.withheld(m.path)) out.push(m);
        }
        return out;
      },
      (r) => r.reduce((s, m) => s + m.text.length, 0),
    );
  }
}
