/**
 * just-bash's `IFileSystem` over any ctxfs backend, through a context
 * session: bash reads and writes the workspace itself (memory, host or
 * container; nothing is copied in or out), every path is decided by the
 * session's policy, and what a script changes becomes history.
 *
 * Inside {@link CtxfsBashFs.within} (which {@link CtxfsBash} uses for each
 * `exec`) the calls belong to that command: one change for the whole
 * script, recorded with the command line. Outside (a plain
 * `new Bash({ fs })`), each changing call is a command of its own.
 *
 * While a script runs, just-bash blocks host APIs (timers, `process.cwd`,
 * `performance`…) in the script's async context. The backend and the
 * context layer are host code and need them (memfs resolves paths with
 * `process.cwd()`, the safety layer times calls), so every call runs in
 * the host's async context, captured when the command started (or when
 * this filesystem was made): the script's context never reaches them, and
 * just-bash's guard stays on, with its default options.
 *
 * A write over a file the script read is checked against what it read,
 * and merged with a change another agent made since or refused, never
 * written over it (see {@link ReadBases}).
 *
 * What the protocol does not have is refused, never faked: symbolic and
 * hard links (`EPERM`, as just-bash's own disk filesystems do by default),
 * `chmod` (`ENOTSUP`). `utimes` is accepted and leaves the times to the
 * backend (so `touch` works).
 *
 * `/dev/null` and the other device paths (`DEVICES` in devices.ts) are devices
 * of this filesystem: a write to `/dev/null` is dropped, never a file of
 * the workspace, a version or an audit record.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { posix } from 'node:path';
import type { CommandCallOptions, ContextSession, ProgramRun } from '@ctxfs/context';
import { type FileEntry, type FileStat, type Filesystem, isFsError, trailingSlashError } from '@ctxfs/core';
import type { BufferEncoding, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';
import { type ByteString, unsafeBytesFromLatin1 } from 'just-bash';
import { BashFsError, RedirectionError, toBashError } from './bash-errors.ts';
import { type Device, deviceAt, deviceOrRefuse, deviceRead, deviceStat, deviceWrite } from './devices.ts';
import { ReadBases } from './read-bases.ts';
import { opensRedirection } from './redirection-groups.ts';
import { bytesForm, LATIN1_VIEW, latin1ViewBytes, type ReadForm, scriptText, scriptTextBytes } from './script-text.ts';
import { resolveVirtual, virtualPath } from './virtual-path.ts';

/** Options of reads, as just-bash passes them. */
type ReadOptions = { encoding?: BufferEncoding | null } | BufferEncoding;
/** Options of writes, as just-bash passes them. */
type WriteOptions = { encoding?: BufferEncoding } | BufferEncoding;

/** A directory entry with its kind, as just-bash's `readdirWithFileTypes` returns it. */
export interface CtxfsDirent {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

/** A command under way: its run, the host's async context it was started in, and what its script read. */
interface Scope {
  readonly run: ProgramRun;
  readonly host: HostContext;
  readonly bases: ReadBases;
}

/** Runs a function in a captured async context (`AsyncLocalStorage.snapshot()`). */
type HostContext = <R>(fn: () => R) => R;

const scopes = new AsyncLocalStorage<Scope>();

/** Options of {@link CtxfsBashFs}. */
export interface CtxfsBashFsOptions {
  /** Largest file a script may read whole, in bytes (`EFBIG` past it); default 10 MiB, as just-bash's disk filesystems; 0 for the backend's own limit. */
  readonly maxFileReadSize?: number | undefined;
}

function encodingOf(options: ReadOptions | WriteOptions | undefined | null): BufferEncoding | undefined {
  if (options === undefined || options === null) return undefined;
  return typeof options === 'string' ? options : (options.encoding ?? undefined);
}

/** Whether just-bash asks for text as UTF-8 (its default). */
function isUtf8(encoding: BufferEncoding | undefined): boolean {
  return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8';
}

/** A character beyond ASCII (one UTF-16 unit of one). */
const BEYOND_ASCII = /[\u0080-\uffff]/;

/** Bytes of a file's head read to find the encoding text appended to it is stored in. */
const STORED_FORM_SAMPLE = 64 * 1024;

function toBytes(content: FileContent, encoding: BufferEncoding | undefined): Uint8Array {
  if (content instanceof Uint8Array) return content;
  const enc = encoding === undefined || encoding === 'utf-8' ? 'utf8' : encoding;
  return Buffer.from(content, enc);
}

function fromBytes(bytes: Uint8Array, encoding: BufferEncoding | undefined): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString(encoding === undefined || encoding === 'utf-8' ? 'utf8' : encoding);
}

/**
 * just-bash's stat of a ctxfs stat; `real` (the workspace path it leads to
 * once every link is followed) is its identity: the protocol has no inodes,
 * and two paths are the same file exactly when they lead to the same path.
 */
function statOf(s: FileStat, real?: string): FsStat {
  const isDirectory = s.kind === 'directory';
  return {
    isFile: s.kind === 'file',
    isDirectory,
    isSymbolicLink: s.kind === 'symlink',
    mode: s.mode ?? (isDirectory ? 0o755 : 0o644),
    size: s.size,
    mtime: s.mtime,
    ...(real === undefined ? {} : { identity: `ctxfs:/${real}` }),
  };
}

/** The calls that make a file where nothing is (`>`, `>>`, `touch`): at a name written as a directory's they would make a file named as one. */
const FILE_MAKERS: ReadonlySet<string> = new Set(['write', 'append', 'utime']);

/**
 * just-bash's filesystem over a context session.
 *
 * @example
 * ```ts
 * import { Bash } from 'just-bash';
 * const ctx = await createContext({ fs: new HostFilesystem({ root: '/repo' }) });
 * const bash = new Bash({ fs: new CtxfsBashFs(ctx), cwd: '/' });
 * (await bash.exec('grep -rl TODO src')).stdout;
 * ```
 */
export class CtxfsBashFs implements IFileSystem {
  readonly session: ContextSession;
  readonly #fs: Filesystem;
  /** The async context this filesystem was made in: where calls outside a command run. */
  readonly #host: HostContext;

  readonly #maxFileReadSize: number;
  /** What calls outside a command read: the bases of their later writes. */
  readonly #bases = new ReadBases();

  constructor(session: ContextSession, options: CtxfsBashFsOptions = {}) {
    this.session = session;
    this.#fs = session.fs;
    this.#host = AsyncLocalStorage.snapshot();
    this.#maxFileReadSize = options.maxFileReadSize ?? 10 * 1024 * 1024;
  }

  /**
   * The metadata of what `path` leads to. The backend follows a link only
   * inside the root (and only where its policy allows links); a link it
   * did not follow — outside the root, refused, a loop — is not followed
   * here either (`EACCES`, as just-bash's disk filesystems say).
   */
  async #target(syscall: string, path: string): Promise<FileStat> {
    const st = await this.#fs.stat(path);
    if (st.kind === 'symlink') throw new BashFsError('EACCES', syscall, `/${path}`, 'a link that leads outside the workspace, or that it refuses');
    return st;
  }

  /**
   * Runs `body` with every call of this filesystem inside it belonging to
   * `run` (one command: its changes one change of history). Call it from
   * the host's code, not from a script.
   */
  within<T>(run: ProgramRun, body: () => Promise<T>): Promise<T> {
    return scopes.run({ run, host: AsyncLocalStorage.snapshot(), bases: new ReadBases() }, body);
  }

  /** Runs a changing call: in the command under way, or as a command of its own. */
  async #change<T>(run: ProgramRun | undefined, label: string, body: (run: ProgramRun) => Promise<T>, options?: CommandCallOptions<T>): Promise<T> {
    if (run !== undefined) return body(run);
    return (await this.session.command(label, body, options)).value;
  }

  /** Refuses any change on a read-only backend (`EROFS`), before the policy or the protocol is asked. */
  #writable(syscall: string, path: string): void {
    if (this.#fs.readOnly) throw new BashFsError('EROFS', syscall, `/${path}`);
  }

  /**
   * Refuses a path the policy keeps from this agent (`EACCES`), and a path
   * that is a link to one: `cat notes.txt` of a link to `.env` is refused as
   * `cat .env` is.
   */
  async #check(run: ProgramRun | undefined, opClass: 'read' | 'search' | 'write' | 'delete' | 'rename', path: string): Promise<void> {
    this.#checkName(run, opClass, path);
    const real = await this.#fs.realpath(path).catch(() => path);
    if (real !== path) this.#checkName(run, opClass, real);
  }

  /** {@link #check} of `path` as named, without following a link (what a listing shows). */
  #checkName(run: ProgramRun | undefined, opClass: 'read' | 'search' | 'write' | 'delete' | 'rename', path: string): void {
    if (run !== undefined) {
      run.check(opClass, path);
      return;
    }
    const d = this.session.policyFor(opClass, path);
    if (d.effect !== 'allow') throw new BashFsError('EACCES', opClass, `/${path}`, `policy: ${d.reason}`);
  }

  /**
   * Runs one call in the host's context, with its errors in just-bash's
   * form naming `vpath`; `body` gets the workspace path, the command under
   * way and what its script read.
   */
  async #call<T>(syscall: string, vpath: string, body: (path: string, run: ProgramRun | undefined, bases: ReadBases) => Promise<T>): Promise<T> {
    const v = virtualPath(vpath, syscall);
    const scope = scopes.getStore();
    const host = scope?.host ?? this.#host;
    try {
      return await host(async () => {
        // Normalizing drops a trailing slash (`a.txt/`, `new/.`): the name still asks for a directory.
        if (v !== '/' && /\/\.?$/.test(vpath)) await this.#directoryNamed(syscall, v.slice(1), scope?.run);
        return await body(v.slice(1), scope?.run, scope?.bases ?? this.#bases);
      });
    } catch (err) {
      throw toBashError(err, syscall, v);
    }
  }

  /**
   * A call on a device path (`/dev/null`, see {@link deviceAt}): `body`
   * with the device, which never reaches the workspace, its history or its
   * audit; `undefined` for a workspace path. A path under a device is
   * `ENOTDIR`; one in just-bash's `/dev/fd` is not here (`fdCode`), so
   * just-bash mounts its own.
   */
  #device<T>(syscall: string, path: string, body: (device: Device) => T | Promise<T>, fdCode?: 'ENOENT' | 'EROFS'): Promise<T> | undefined {
    const at = deviceAt(path, syscall);
    if (at === undefined) return undefined;
    return (async () => body(deviceOrRefuse(at, syscall, path, fdCode)))();
  }

  /**
   * Refuses a name written as a directory's for what is not one, by core's
   * rule: a file there is `ENOTDIR` (`cat a.txt/`, `rm a.txt/`), a file
   * made where nothing is `EISDIR` (`echo x > new/`). What the policy hides
   * from this agent's listings is nothing here, so the answer tells no more
   * than a listing would; the call's own check decides it after.
   */
  async #directoryNamed(syscall: string, p: string, run: ProgramRun | undefined): Promise<void> {
    let kind: FileStat['kind'] | undefined;
    try {
      await this.#check(run, 'search', p);
      kind = (await this.#fs.stat(p)).kind;
    } catch {
      kind = undefined;
    }
    const wrong = trailingSlashError('open', p, kind, FILE_MAKERS.has(syscall));
    if (wrong !== undefined) throw wrong;
  }

  /**
   * A file as text. Asked for as UTF-8 (what just-bash's text commands ask
   * for: `sed`, `awk`, `grep`), a file that is not valid UTF-8 is its text
   * in its own encoding, as every ctxfs read decodes it, and a string the
   * script writes back over it goes back in that encoding (script-text.ts).
   */
  readFile(path: string, options?: ReadOptions): Promise<string> {
    const encoding = encodingOf(options);
    if (!isUtf8(encoding)) return this.readFileBuffer(path).then((bytes) => fromBytes(bytes, encoding));
    return this.#read(path, (p, bytes) => {
      const { text, form } = scriptText(this.#fs, p, bytes);
      return { value: text, form };
    });
  }

  readFileBytes(path: string): Promise<ByteString> {
    return this.readFileBuffer(path).then((bytes) => unsafeBytesFromLatin1(fromBytes(bytes, 'latin1')));
  }

  readFileBuffer(path: string): Promise<Uint8Array> {
    return this.#read(path, (_p, bytes) => ({ value: bytes, form: bytesForm(bytes) }));
  }

  /** Reads a whole file as `as` gives it to the script, remembering what was read and in what form (the base of a later write). */
  #read<T>(path: string, as: (p: string, bytes: Uint8Array) => { value: T; form: ReadForm | undefined }): Promise<T> {
    const device = this.#device('open', path, (d) => as(d.path, deviceRead(d, 'read')).value);
    if (device !== undefined) return device;
    return this.#call('open', path, async (p, run, bases) => {
      await this.#check(run, 'read', p);
      const st = await this.#target('open', p);
      if (st.kind === 'directory') throw new BashFsError('EISDIR', 'read', `/${p}`);
      if (this.#maxFileReadSize > 0 && st.size > this.#maxFileReadSize)
        throw new BashFsError('EFBIG', 'read', `/${p}`, `${st.size} bytes, over the limit of ${this.#maxFileReadSize}`);
      const bytes = await this.#fs.readBytes(p);
      const { value, form } = as(p, bytes);
      // The base of the script's later write of this file: a change made meanwhile is merged, never overwritten.
      bases.remember(p, bytes, form);
      return value;
    });
  }

  /** Writes a whole file; over one the script read, merged with a change made since or refused (see {@link ReadBases}). */
  writeFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    return this.#writeCall('write', path, content, options, (p, bytes, bases) => bases.write(this.#fs, p, bytes));
  }

  appendFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    return this.#writeCall('append', path, content, options, async (p, bytes, bases) => {
      // An append keeps what others wrote; the script no longer knows the whole file.
      bases.forget(p);
      await this.#fs.writeBytes(p, bytes, { mode: 'append', createParents: true });
    });
  }

  /**
   * What a write and an append share around their own `write`: the device
   * paths, the redirection's wording, the read-only refusal, the policy,
   * bash's refusal to open a file in a missing directory, and the change's
   * record, in that order.
   */
  #writeCall(
    op: 'write' | 'append',
    path: string,
    content: FileContent,
    options: WriteOptions | undefined,
    write: (p: string, bytes: Uint8Array, bases: ReadBases) => Promise<void>,
  ): Promise<void> {
    const device = this.#device(op, path, (d) => deviceWrite(d, op), 'EROFS');
    if (device !== undefined) return device;
    const opening = opensRedirection(content, options);
    return this.#opens(
      opening,
      path,
      this.#call(op, path, (p, scope, bases) =>
        this.#change(scope, `${op} /${p}`, async (run) => {
          this.#writable(op, p);
          await this.#check(run, 'write', p);
          if (opening && scope !== undefined) await this.#inDirectory(p);
          const bytes = await this.#bytesOf(op, p, content, options, bases);
          await run.willChange(p);
          await write(p, bytes, bases);
        }),
      ),
    );
  }

  /**
   * The bytes a write or an append of `content` puts in `p`. A string
   * just-bash writes as UTF-8 over a file the script read as text in
   * another form goes back in that form, its unchanged bytes as they were
   * (`sed -i`); over a file it read as bytes that are not UTF-8, a string
   * of latin-1 characters goes back as the bytes just-bash took them from
   * (`sort -o f f`); one appended with characters beyond ASCII to a file stored
   * in another encoding is added in that encoding (ASCII is the same bytes
   * in every encoding but UTF-16's, where bash appends it as bytes too).
   * Text the encoding cannot hold is refused (`EINVAL`), before anything is
   * written or recorded. Everything else goes as given.
   */
  async #bytesOf(op: 'write' | 'append', p: string, content: FileContent, options: WriteOptions | undefined, bases: ReadBases): Promise<Uint8Array> {
    const encoding = encodingOf(options);
    if (typeof content !== 'string' || !isUtf8(encoding)) return toBytes(content, encoding);
    const read = bases.readForm(p);
    if (read?.form === LATIN1_VIEW) {
      // Read as bytes, written whole: what just-bash made of those bytes as latin-1 characters goes back as them.
      const view = op === 'write' ? latin1ViewBytes(content) : undefined;
      if (view !== undefined) return view;
    } else if (read !== undefined) return scriptTextBytes(`/${p}`, content, read.form, op === 'write' ? read.bytes : undefined, op === 'write');
    if (op === 'write' || !BEYOND_ASCII.test(content)) return toBytes(content, encoding);
    // Appended without a read of it: the form of the text the file holds, from its head (the detector's sample).
    const head = await this.#fs.readBytes(p, { limit: STORED_FORM_SAMPLE }).catch(() => undefined);
    const form = head === undefined ? undefined : scriptText(this.#fs, p, head).form;
    return form === undefined ? toBytes(content, encoding) : scriptTextBytes(`/${p}`, content, form, undefined, false);
  }

  /**
   * A write that opens a redirection's target fails with bash's line as its
   * message ({@link RedirectionError}), which just-bash prints for the
   * group the command runs in (see redirection-groups.ts). A file named
   * with a trailing slash is `EISDIR` there, as `open(2)` with `O_CREAT`
   * answers it and bash says (`echo x > a.txt/`: `Is a directory`), where
   * the other calls say `ENOTDIR`.
   */
  #opens(opening: boolean, path: string, write: Promise<void>): Promise<void> {
    if (!opening) return write;
    return write.catch((err: unknown) => {
      if (!(err instanceof BashFsError)) throw err;
      const slashedFile = err.code === 'ENOTDIR' && path.endsWith('/') && err.path === path.slice(0, -1);
      throw new RedirectionError(slashedFile ? new BashFsError('EISDIR', 'open', err.path, err.detail, err) : err);
    });
  }

  /**
   * Refuses to open a file in a directory that is not there, as bash does
   * (`echo x > nodir/a.txt`: `ENOENT`; under a file: `ENOTDIR`), where
   * every other write makes the missing directories, as just-bash's own
   * filesystems do. Only within a command of {@link CtxfsBash}, whose
   * script goes on after the refusal; a plain `Bash` would end the script.
   */
  async #inDirectory(p: string): Promise<void> {
    const parent = posix.dirname(p);
    if (parent === '.') return;
    let kind: FileStat['kind'];
    try {
      kind = (await this.#fs.stat(parent)).kind;
    } catch (err) {
      if (isFsError(err, 'ENOENT')) throw new BashFsError('ENOENT', 'open', `/${p}`);
      if (isFsError(err, 'ENOTDIR')) throw new BashFsError('ENOTDIR', 'open', `/${p}`);
      throw err;
    }
    if (kind === 'file') throw new BashFsError('ENOTDIR', 'open', `/${p}`);
  }

  /** Whether `path` exists; a path the policy keeps out of this agent's listings does not, as in them. */
  async exists(path: string): Promise<boolean> {
    const at = deviceAt(path, 'access');
    if (at !== undefined) return at.at === 'device' && !at.slashed;
    try {
      return await this.#call('access', path, async (p, run) => {
        if (p !== '') await this.#check(run, 'search', p);
        return await this.#fs.exists(p);
      });
    } catch {
      return false;
    }
  }

  /** A path the policy keeps out of this agent's listings does not exist for its metadata either, as for {@link exists}. */
  async #visible(run: ProgramRun | undefined, syscall: string, p: string, followLink = true): Promise<void> {
    if (p === '') return;
    try {
      if (followLink) await this.#check(run, 'search', p);
      else this.#checkName(run, 'search', p);
    } catch {
      throw new BashFsError('ENOENT', syscall, `/${p}`);
    }
  }

  /**
   * The metadata of what `path` leads to, with its identity (the path it
   * leads to), so just-bash's same-file check of `mv`, `cp` and `split`
   * tells two files apart as it does on its own disk filesystems.
   */
  stat(path: string): Promise<FsStat> {
    const device = this.#device('stat', path, deviceStat);
    if (device !== undefined) return device;
    return this.#call('stat', path, async (p, run) => {
      await this.#visible(run, 'stat', p);
      const st = await this.#target('stat', p);
      return statOf(st, await this.#fs.realpath(p));
    });
  }

  lstat(path: string): Promise<FsStat> {
    const device = this.#device('lstat', path, deviceStat);
    if (device !== undefined) return device;
    return this.#call('lstat', path, async (p, run) => {
      // The link itself, as a listing shows it: what it leads to is the concern of a read.
      await this.#visible(run, 'lstat', p, false);
      if (p === '') return statOf(await this.#fs.stat(p));
      const entry = await this.#entry(p);
      if (entry?.kind !== 'symlink') return statOf(await this.#fs.stat(p));
      return { isFile: false, isDirectory: false, isSymbolicLink: true, mode: 0o777, size: 0, mtime: new Date(0) };
    });
  }

  /** The entry of `p` in its parent's listing, which names its own kind: the protocol's stat follows a link. */
  async #entry(p: string): Promise<FileEntry | undefined> {
    const slash = p.lastIndexOf('/');
    return (await this.#fs.list(slash < 0 ? '' : p.slice(0, slash))).find((e) => e.path === p);
  }

  /**
   * Whether `p` is itself a symbolic link. A link the backend does not
   * follow (out of the root, a loop) stats as one; a file that resolves to
   * its own path has no link in it and costs no listing; anything else (a
   * link inside the root, one leading nowhere) is told by the listing.
   */
  async #isLink(p: string): Promise<boolean> {
    if (p === '') return false;
    const st = await this.#fs.stat(p).catch(() => undefined);
    if (st?.kind === 'symlink') return true;
    if (st !== undefined && (await this.#fs.realpath(p).catch(() => undefined)) === p) return false;
    return (await this.#entry(p).catch(() => undefined))?.kind === 'symlink';
  }

  mkdir(path: string, options?: MkdirOptions): Promise<void> {
    const device = this.#device(
      'mkdir',
      path,
      (d) => {
        throw new BashFsError('EEXIST', 'mkdir', d.path);
      },
      'EROFS',
    );
    if (device !== undefined) return device;
    return this.#call('mkdir', path, async (p, run) => {
      this.#writable('mkdir', p);
      await this.#check(run, 'write', p);
      const recursive = options?.recursive ?? false;
      await this.#fs.mkdir(p, { parents: recursive, existOk: recursive });
    });
  }

  async #list(syscall: string, path: string): Promise<FileEntry[]> {
    const device = this.#device(syscall, path, (d): FileEntry[] => {
      throw new BashFsError('ENOTDIR', syscall, d.path);
    });
    if (device !== undefined) return device;
    return this.#call(syscall, path, async (p, run) => {
      const entries = await this.#fs.list(p);
      // What the policy keeps from this agent is not listed, as in the listing tools.
      return entries.filter((e) => {
        try {
          this.#checkName(run, 'search', e.path);
          return true;
        } catch {
          return false;
        }
      });
    });
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.#list('scandir', path)).map((e) => e.name);
  }

  async readdirWithFileTypes(path: string): Promise<CtxfsDirent[]> {
    return (await this.#list('scandir', path)).map((e) => ({
      name: e.name,
      isFile: e.kind === 'file',
      isDirectory: e.kind === 'directory',
      isSymbolicLink: e.kind === 'symlink',
    }));
  }

  /** Every file below `path` (itself when it is a file), checked for `opClass` and kept for history. */
  async #willChangeTree(run: ProgramRun, opClass: 'write' | 'delete' | 'rename', path: string, map: (p: string) => string = (p) => p): Promise<void> {
    const st = await this.#fs.stat(path).catch((err: unknown) => {
      if (isFsError(err, 'ENOENT')) return undefined;
      throw err;
    });
    if (st?.kind !== 'directory') {
      await this.#check(run, opClass, map(path));
      await run.willChange(map(path));
      return;
    }
    for await (const batch of this.#fs.walk(path)) {
      for (const e of batch) {
        if (e.kind !== 'file') continue;
        await this.#check(run, opClass, map(e.path));
        await run.willChange(map(e.path));
      }
    }
  }

  rm(path: string, options?: RmOptions): Promise<void> {
    // A device is not removed, as rm(1) of /dev/null is refused to anyone but root.
    const device = this.#device('rm', path, (d) => {
      throw new BashFsError('EACCES', 'rm', d.path, 'a device');
    });
    if (device !== undefined) return device;
    return this.#call('rm', path, (p, scope, bases) =>
      this.#change(scope, `rm /${p}`, async (run) => {
        bases.forget(p);
        this.#writable('rm', p);
        // A link is removed itself, as rm(1) and fs.rm do, never followed: what it leads to (out of the root, a loop,
        // nothing) is neither read for history nor removed, and the link has no content of its own to keep.
        if (await this.#isLink(p)) {
          this.#checkName(run, 'delete', p);
          return await this.#fs.delete(p);
        }
        await this.#check(run, 'delete', p);
        if (options?.recursive) await this.#willChangeTree(run, 'delete', p);
        else await run.willChange(p);
        await this.#fs.delete(p, { recursive: options?.recursive ?? false, force: options?.force ?? false });
      }),
    );
  }

  cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const devices = this.#deviceCopy(src, dest);
    if (devices !== undefined) return devices;
    const to = virtualPath(dest, 'cp');
    return this.#call('cp', src, (from, scope, bases) => {
      const d = to.slice(1);
      if (d === from || d.startsWith(`${from}/`) || from === '')
        throw new BashFsError('EINVAL', 'cp', virtualPath(src, 'cp'), `cannot copy '${virtualPath(src, 'cp')}' into itself, '${to}'`);
      return this.#change(scope, `cp /${from} ${to}`, async (run) => {
        this.#writable('cp', d);
        await this.#check(run, 'read', from);
        await this.#walkChecked(run, from);
        const into = (p: string): string => d + p.slice(from.length);
        await this.#willChangeTree(run, 'write', from, into);
        bases.forget(d);
        try {
          await this.#fs.copy(from, d, { recursive: options?.recursive ?? false, overwrite: true });
        } catch (err) {
          throw toBashError(err, 'cp', to);
        }
      });
    });
  }

  mv(src: string, dest: string): Promise<void> {
    // A device is neither moved nor replaced (its directory is root's).
    for (const [path, fdCode] of [
      [src, 'ENOENT'],
      [dest, 'EROFS'],
    ] as const) {
      const device = this.#device(
        'mv',
        path,
        (d) => {
          throw new BashFsError('EACCES', 'mv', d.path, 'a device');
        },
        fdCode,
      );
      if (device !== undefined) return device;
    }
    const to = virtualPath(dest, 'mv');
    return this.#call('mv', src, (from, scope, bases) => {
      const d = to.slice(1);
      if (d.startsWith(`${from}/`) || from === '')
        throw new BashFsError('EINVAL', 'mv', virtualPath(src, 'mv'), `cannot move '${virtualPath(src, 'mv')}' into itself, '${to}'`);
      if (d === from) return Promise.resolve();
      return this.#change(scope, `mv /${from} ${to}`, async (run) => {
        this.#writable('mv', from);
        await this.#check(run, 'rename', from);
        await this.#check(run, 'rename', d);
        await this.#willChangeTree(run, 'rename', from);
        await this.#willChangeTree(run, 'rename', from, (p) => d + p.slice(from.length));
        bases.forget(from);
        bases.forget(d);
        try {
          await this.#fs.rename(from, d, { overwrite: true });
        } catch (err) {
          throw toBashError(err, 'mv', to);
        }
      });
    });
  }

  /**
   * A copy from or to a device, as cp(1) does it: from `/dev/null` an empty
   * file (a change of the workspace like any write), to `/dev/null` the
   * source read (so it must exist and be readable) and dropped; `undefined`
   * when neither path is a device.
   */
  #deviceCopy(src: string, dest: string): Promise<void> | undefined {
    const from = deviceAt(src, 'cp');
    const to = deviceAt(dest, 'cp');
    if (from === undefined && to === undefined) return undefined;
    return (async () => {
      const bytes = from === undefined ? await this.readFileBuffer(src) : deviceRead(deviceOrRefuse(from, 'cp', src), 'read');
      if (to === undefined) await this.writeFile(dest, bytes);
      else deviceWrite(deviceOrRefuse(to, 'cp', dest, 'EROFS'), 'write');
    })();
  }

  /** Checks every file below `path` for reading (a copy reads them all). */
  async #walkChecked(run: ProgramRun, path: string): Promise<void> {
    const st = await this.#fs.stat(path);
    if (st.kind !== 'directory') return;
    for await (const batch of this.#fs.walk(path)) for (const e of batch) if (e.kind === 'file') await this.#check(run, 'read', e.path);
  }

  resolvePath(base: string, path: string): string {
    return resolveVirtual(base, path);
  }

  /** Not kept: listing every path of a backend would read the whole tree (just-bash allows an empty answer). */
  getAllPaths(): string[] {
    return [];
  }

  chmod(path: string, _mode: number): Promise<void> {
    const device = this.#device('chmod', path, (d) => {
      throw new BashFsError('EPERM', 'chmod', d.path, 'a device');
    });
    if (device !== undefined) return device;
    return this.#call('chmod', path, async (p, run) => {
      this.#writable('chmod', p);
      await this.#check(run, 'write', p);
      await this.#fs.stat(p);
      throw new BashFsError('ENOTSUP', 'chmod', `/${p}`, 'ctxfs keeps no permission bits through this filesystem');
    });
  }

  symlink(_target: string, linkPath: string): Promise<void> {
    return this.#call('symlink', linkPath, async (p) => {
      this.#writable('symlink', p);
      throw new BashFsError('EPERM', 'symlink', `/${p}`, 'links are not created through ctxfs');
    });
  }

  link(existingPath: string, newPath: string): Promise<void> {
    virtualPath(newPath, 'link');
    return this.#call('link', existingPath, async (p) => {
      this.#writable('link', p);
      throw new BashFsError('EPERM', 'link', `/${p}`, 'links are not created through ctxfs');
    });
  }

  /**
   * Where the link `path` leads, relative to the directory it is named in
   * (`lic` → `LICENSE`, `lib/up` → `../LICENSE`), so just-bash's
   * `readlink -f`, which follows these answers, ends on the file as bash's
   * does. The protocol has the path a link leads to, not the text it holds:
   * a chain of links answers its end, and a link out of the workspace is
   * refused as a read through it is (`EACCES`), its target never shown.
   * What is not a link is `EINVAL`, as readlink(2) answers.
   */
  readlink(path: string): Promise<string> {
    const device = this.#device('readlink', path, (d): string => {
      throw new BashFsError('EINVAL', 'readlink', d.path);
    });
    if (device !== undefined) return device;
    return this.#call('readlink', path, async (p, run) => {
      await this.#visible(run, 'readlink', p, false);
      if (!(await this.#isLink(p))) {
        await this.#fs.stat(p);
        throw new BashFsError('EINVAL', 'readlink', `/${p}`, 'not a symbolic link');
      }
      // Where it leads is shown only as far as the policy would list it, as for realpath.
      await this.#visible(run, 'readlink', p);
      return posix.relative(posix.dirname(`/${p}`), `/${await this.#fs.realpath(p)}`) || '.';
    });
  }

  /**
   * The path `path` leads to once every link in it is followed (inside the
   * workspace: a link out of it is `EACCES`); one the policy keeps from
   * this agent's listings is `ENOENT`, as for {@link stat}.
   */
  realpath(path: string): Promise<string> {
    const device = this.#device('realpath', path, (d) => d.path);
    if (device !== undefined) return device;
    return this.#call('realpath', path, async (p, run) => {
      // A path the policy keeps from listings, or a link to one, is not there to resolve, as for stat.
      await this.#visible(run, 'realpath', p);
      await this.#target('realpath', p);
      return `/${await this.#fs.realpath(p)}`;
    });
  }

  utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    // touch /dev/null is allowed to anyone, and changes nothing here.
    const device = this.#device('utime', path, () => undefined);
    if (device !== undefined) return device;
    return this.#call('utime', path, async (p, run) => {
      this.#writable('utime', p);
      await this.#check(run, 'write', p);
      // The backend keeps its own times; the file must exist, as for utimes(2).
      await this.#target('utime', p);
    });
  }
}
