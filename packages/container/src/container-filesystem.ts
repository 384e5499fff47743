/**
 * The container backend: a workspace directory inside a Docker container,
 * reached only through the Docker Engine API, so a remote engine works the
 * same as a local one (no bind mount is assumed).
 *
 * - Metadata and small files go through one long-lived helper session
 *   ({@link HelperSession}): a shell loop serving framed requests, about a
 *   millisecond each instead of tens for an exec per operation.
 * - Large files stream: bounded reads from `GET /archive` (tar-stream parses
 *   the entry as it arrives), readers and writes through an exec that works
 *   only on the file or directory the helper checked.
 * - Every write lands under a temporary name in the target's directory and is
 *   renamed (or hard-linked, for `create`) into place by the helper, so an
 *   interrupted write leaves the old file.
 * - Paths follow the shared rules; on top, the helper checks every symlink
 *   component inside the container and refuses one that leaves the workspace.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import {
  assertIfMatch,
  type ByteReader,
  type ByteWriter,
  type Capabilities,
  compareWalkOrder,
  createByteReader,
  createByteWriter,
  type DigestTarget,
  errno,
  type FileDigest,
  type FileEntry,
  type FileKind,
  type FileRead,
  type FileStat,
  FilesystemBase,
  type FilesystemBaseOptions,
  FsError,
  type FsOperation,
  findPruneWords,
  fsError,
  type GrepMatch,
  type GrepMatcher,
  type GrepPlan,
  IF_ABSENT,
  isAddressableName,
  isFsError,
  type Snapshot,
  scanChunks,
  startPollingWatch,
  type WalkPlan,
  type WatchPlan,
  type WatchSink,
  type WriteMode,
  walkPicture,
} from '@ctxfs/core';
import type Docker from 'dockerode';
import { untarFiles } from './batch-read.ts';
import { type ImageProbe, parseProbe, probeCommand } from './capabilities-probe.ts';
import {
  type ContainerCondition,
  codeFromMessage,
  containerUnavailability,
  describeEngineError,
  engineRefusal,
  FULL_DISK_BYTES,
  freeKibibytes,
  helperFailure,
  unavailable,
} from './container-errors.ts';
import { SilenceError, within } from './deadline.ts';
import { closeEngine, connectEngine, describeEngine, type EngineName, type EngineOptions, engineName, engineTitle, knownEngineName } from './engine.ts';
import { type ExecStream, openExecFile, startExecStream, streamedWriteCommand } from './exec-stream.ts';
import { FALLBACK_LOCK_NAME, TEMP_PREFIX } from './helper-script.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, type HelperResponse, HelperSession, SessionTimeoutError } from './helper-session.ts';
import { shellQuote as q } from './shell-quote.ts';
import { SnapshotStore } from './snapshots.ts';
import { openArchiveFile } from './tar-read.ts';

/** Options of {@link ContainerFilesystem.open}. */
export interface ContainerFilesystemOptions extends FilesystemBaseOptions {
  /** Attach to this existing container (id or name). Exactly one of `container` and `image`. */
  container?: string;
  /** Create a container from this image; it is removed on close unless `keepContainer`. */
  image?: string;
  /** Extra create options for a created container (HostConfig.Tmpfs, Env, User...). */
  create?: Partial<Docker.ContainerCreateOptions>;
  /** Labels of a created container, e.g. to find and clean them up later. */
  labels?: Record<string, string>;
  /** Keep a container ctxfs created when the filesystem closes. */
  keepContainer?: boolean;
  /**
   * Start an attached container that is stopped. Default `false`: it is
   * attached stopped, and snapshots kept in {@link snapshotDir} can be
   * listed and dropped; every other call is `EUNAVAILABLE` naming it until
   * it is started (the image's probe then runs at the first call).
   */
  startIfStopped?: boolean;
  /** Absolute workspace root inside the container; default `/work`. */
  workdir?: string;
  /** Create the workspace root if missing. Default `true`. */
  createWorkdir?: boolean;
  /** Engine connection; default: `DOCKER_HOST` and the TLS variables, else the local socket. */
  engine?: EngineOptions;
  /** Permission bits of files ctxfs creates; default: 0o644 (an overwrite keeps the old file's). */
  fileMode?: number;
  /** Owner of files ctxfs creates; default: the container's user (an overwrite keeps the old file's). */
  owner?: { uid: number; gid: number };
  /**
   * A call whose helper session hears nothing back for this many ms (a
   * paused or wedged container) fails with `EUNAVAILABLE`, after at most 3 s
   * more to ask the engine why; the next call starts a new session, so the
   * filesystem recovers once the container answers again. Default 15,000.
   */
  requestTimeoutMs?: number;
  /**
   * How often a watcher polls, in ms (the test image's busybox has no
   * `inotifyd`, so the container is watched by diffing one stat-walk per
   * interval). Declared as `capabilities.watchPollIntervalMs`. Default 500.
   */
  watchPollIntervalMs?: number;
  /**
   * Where snapshot archives are kept: a directory, or a function of the
   * filesystem's {@link ContainerFilesystem.root} (`docker://<container><workdir>`)
   * that names one. Snapshots kept there outlast this instance: every
   * instance and process that names the directory sees them, and restores
   * them. Default: a temporary directory of this instance's, removed on
   * close. The `ctxfs` CLI and MCP server keep an attached container's
   * under the user's state directory.
   *
   * @example
   * ```ts
   * const fs = await ContainerFilesystem.open({ container: 'dev', snapshotDir: '/var/lib/agents/dev/snapshots' });
   * const s = await fs.snapshot('before the refactor'); // a later process with the same snapshotDir can restore(s.id)
   * ```
   */
  snapshotDir?: string | ((root: string) => string);
}

/** Default of {@link ContainerFilesystemOptions.watchPollIntervalMs}. */
export const DEFAULT_WATCH_POLL_INTERVAL_MS = 500;

/** The workspace root inside the container: absolute, normalized, not `/` (default `/work`). */
function checkedWorkdir(option: string | undefined): string {
  const workdir = (option ?? '/work').replace(/\/+$/, '');
  if (!workdir.startsWith('/') || workdir === '' || workdir.split('/').some((s) => s === '..' || s === '.')) {
    throw fsError('EINVAL', 'open', workdir, { reason: 'workdir must be an absolute, normalized path other than /' });
  }
  return workdir;
}

/** Files up to this size are read in one helper response; larger ones stream as tar. */
const INLINE_READ_BYTES = 1 << 20;
/** Writes up to this size travel inline on the helper's stdin. */
const INLINE_WRITE_BYTES = 256 << 10;
/** Writes up to this size are staged in memory and sent as one archive; larger ones stream through an exec. */
const STAGED_WRITE_BYTES = 8 << 20;

const TEMP_NAME = /^\.ctxfs-[0-9a-f]{24}-/;
/** Files per batch of small reads, and the largest file a batch carries (so a batch holds at most 16 MiB). */
const BATCH_FILES = 256;
const BATCH_FILE_BYTES = 64 << 10;

/** Files whose bytes grep asks for at once (each at most the inline read size). */
const GREP_WINDOW = 64;

async function* chunksOf(data: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.byteLength; at += size) yield data.subarray(at, at + size);
}

/** What a read needs first: the size, and the bytes when they came along. */
interface ReadHead {
  size: number;
  data?: Buffer;
  /** The file's path with symlinks resolved, for a stream read. */
  real?: string;
  /** Inode, size and mtime (`stat -c %i:%s:%Y`) when it was opened: a stream opened again must find the same file. */
  identity?: string;
  /** The stat of the descriptor read, from a single-file read (a batched one has none). */
  stat?: FileStat;
}

const CAPABILITIES: Capabilities = Object.freeze({
  snapshots: true,
  watch: true,
  symlinks: true,
  nativeGrep: false,
  readOnly: false,
  permissions: true,
  birthtime: false,
  snapshotsKeepEmptyDirs: true,
  compareAndSwap: true,
  watchRenames: false,
});

/**
 * The capabilities every container filesystem declares (read-only instances
 * flip `readOnly`; the poll interval is the `watchPollIntervalMs` option).
 */
export function containerCapabilities(readOnly = false, watchPollIntervalMs = DEFAULT_WATCH_POLL_INTERVAL_MS): Capabilities {
  return Object.freeze({ ...CAPABILITIES, readOnly, watchPollIntervalMs });
}

function kindOfMode(mode: number): FileKind {
  const type = mode & 0o170000;
  return type === 0o100000 ? 'file' : type === 0o040000 ? 'directory' : type === 0o120000 ? 'symlink' : 'other';
}

/** Parses `stat -c '%y'`: `2026-11-22 18:19:28.123456789 +0000`. */
function parseStatTime(text: string): Date {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d\d)(\d\d)$/.exec(text.trim());
  if (!m) return new Date(Number.NaN);
  const frac = (m[3] ?? '.0').slice(0, 4).padEnd(4, '0');
  return new Date(`${m[1]}T${m[2]}${frac}${m[4]}:${m[5]}`);
}

/** Parses one {@link STAT_FORMAT} line. */
function parseStat(path: string, line: string): FileStat & { uid: number; gid: number } {
  const [rawMode = '0', size = '0', mtime = '', ctime = '', uid = '0', gid = '0'] = line.trim().split('|');
  const mode = Number.parseInt(rawMode, 16);
  const kind = kindOfMode(mode);
  return {
    path,
    kind,
    size: kind === 'directory' ? 0 : Number(size),
    mtime: parseStatTime(mtime),
    ctime: parseStatTime(ctime),
    mode: mode & 0o7777,
    uid: Number(uid),
    gid: Number(gid),
  };
}

/** One entry of a `WK` answer: its path below the walked directory and its {@link STAT_FORMAT} fields. */
interface StatRecord {
  readonly rel: string;
  readonly fields: string;
}

/** Entries a native walk hands out at once. */
const WALK_BATCH = 512;
/** Deeper than any path can reach (PATH_MAX is 4096 bytes); busybox refuses larger numbers. */
const WALK_DEPTH_CAP = 4096;
/** Messages of entries that vanished or cannot be read during a walk: passed over, as the base walk does. */
const PASSABLE_COMPLAINT = /^(?:find|stat): [\s\S]*?(?:No such file or directory|Permission denied|Not a directory)$/gm;

/** The kind in a {@link STAT_FORMAT} field list (its first field is the raw mode). */
function kindOfFields(fields: string): FileKind {
  return kindOfMode(Number.parseInt(fields.slice(0, fields.indexOf('|')), 16));
}

/** A {@link STAT_FORMAT} field list as the stat ctxfs reports (owner left out, as `statPath` does). */
function statOfFields(path: string, fields: string): FileStat {
  const { uid: _u, gid: _g, ...stat } = parseStat(path, fields);
  return stat;
}

/**
 * Parses the answer of `WK`: lines `fields|./rel` in find's pre-order, and,
 * for paths holding a newline (which no line can carry), records
 * `SOH fields LF ./rel NUL`. Those are read whole, so nothing is mis-split,
 * and dropped: a newline makes a name no path can address (see
 * {@link isAddressableName}), and every entry below such a name holds one in
 * its path too. Only the path is decoded as UTF-8, straight from the bytes,
 * so a kept path does not pin its whole line in memory.
 */
function parseWalkOutput(raw: Buffer): StatRecord[] {
  const plain: StatRecord[] = [];
  let at = 0;
  while (at < raw.length) {
    if (raw[at] === 0x01) {
      const nl = raw.indexOf(0x0a, at);
      const end = nl < 0 ? -1 : raw.indexOf(0, nl + 1);
      if (end < 0) break;
      at = end + 1;
      continue;
    }
    let end = raw.indexOf(0x0a, at);
    if (end < 0) end = raw.length;
    // Six fields, then the path (which may itself hold a '|').
    let bar = at - 1;
    for (let field = 0; field < 6 && (field === 0 || bar >= 0); field++) bar = raw.indexOf(0x7c, bar + 1);
    if (bar >= 0 && bar < end) plain.push({ fields: raw.toString('latin1', at, bar), rel: raw.toString('utf8', bar + 3, end) });
    at = end + 1;
  }
  return plain;
}

/** Whether `rel` lies below one of the directories in `pruned`. */
function underPruned(rel: string, pruned: ReadonlySet<string>): boolean {
  for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) {
    if (pruned.has(rel.slice(0, i))) return true;
  }
  return false;
}

/** `-maxdepth` and the `-prune` clause of excluded names, as quoted `find` words. */
function walkFindArgs(maxDepth: number, exclude: ReadonlySet<string>): string {
  const words: string[] = [];
  if (maxDepth <= WALK_DEPTH_CAP) words.push('-maxdepth', String(maxDepth));
  // A name with a newline stays out of the command line (the helper reads a
  // request per line); the walk drops such names, and filters every excluded
  // name, anyway.
  words.push(...findPruneWords([...exclude].filter((n) => !n.includes('\n'))));
  return words.map(q).join(' ');
}

/**
 * A {@link Filesystem} over a workspace inside a Docker container.
 *
 * @example
 * ```ts
 * import { ContainerFilesystem } from '@ctxfs/container';
 * // Attach to a running container (DOCKER_HOST / TLS variables are honoured):
 * await using fs = await ContainerFilesystem.open({ container: 'agent-sandbox', workdir: '/work' });
 * await fs.write('notes.md', '# hi\n');
 * // Or create one from an image; it is removed on close:
 * await using tmp = await ContainerFilesystem.open({ image: 'busybox:latest' });
 * ```
 */
export class ContainerFilesystem extends FilesystemBase {
  readonly root: string;
  readonly capabilities: Capabilities;
  /** Absolute workspace root inside the container. */
  readonly workdir: string;

  /**
   * The workspace root as a command in the container sees it: {@link workdir}
   * (`pwd`), and where a link there leads (`pwd -P`) once the helper has
   * looked. `root` (`docker://…`) is no path a model would write.
   */
  get absoluteRoots(): readonly string[] {
    const real = this.#probe?.realRoot;
    return real === undefined || real === '' || real === this.workdir ? [this.workdir] : [this.workdir, real];
  }
  /** The engine client. */
  readonly docker: Docker;
  /** The container (id or name as given, or the id of the one created). */
  readonly containerRef: string;
  readonly #container: Docker.Container;
  readonly #created: boolean;
  /** The engine client was made here from options (not passed in), so its connections are ended on close. */
  readonly #ownsEngine: boolean;
  readonly #keep: boolean;
  readonly #createWorkdir: boolean;
  readonly #fileMode: number | undefined;
  readonly #owner: { uid: number; gid: number } | undefined;
  readonly #requestTimeoutMs: number;
  readonly #watchPollIntervalMs: number;
  readonly #snapshots: SnapshotStore;
  #session: HelperSession | undefined;
  #starting: Promise<HelperSession> | undefined;
  #probe: ImageProbe | undefined;
  /** Temporaries of failed writes that could not be removed then; swept when a session starts. */
  readonly #stale = new Set<string>();
  #writeCounter = 0;
  /** Small reads waiting for the next turn of the event loop, to be answered in one batch. */
  #readQueue: Array<{ op: FsOperation; path: string; resolve: (h: ReadHead) => void; reject: (err: unknown) => void }> = [];

  private constructor(options: ContainerFilesystemOptions, docker: Docker, container: Docker.Container, ref: string, created: boolean) {
    super(options);
    const workdir = checkedWorkdir(options.workdir);
    this.workdir = workdir;
    this.docker = docker;
    this.#container = container;
    this.containerRef = ref;
    this.#created = created;
    this.#ownsEngine = options.engine?.docker === undefined;
    this.#keep = options.keepContainer ?? false;
    this.#createWorkdir = options.createWorkdir ?? true;
    this.#fileMode = options.fileMode;
    this.#owner = options.owner;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.root = `docker://${ref}${workdir}`;
    this.#watchPollIntervalMs = options.watchPollIntervalMs ?? DEFAULT_WATCH_POLL_INTERVAL_MS;
    this.capabilities = containerCapabilities(this.readOnly, this.#watchPollIntervalMs);
    const snapshotDir = typeof options.snapshotDir === 'function' ? options.snapshotDir(this.root) : options.snapshotDir;
    this.#snapshots = new SnapshotStore(
      `ctr-${ref
        .slice(0, 12)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '-')}`,
      this.root,
      snapshotDir,
    );
  }

  /**
   * Attaches to a container or creates one, starts the helper session and
   * checks that the image offers what it needs.
   */
  static async open(options: ContainerFilesystemOptions): Promise<ContainerFilesystem> {
    // Checked before anything is created: a refused workdir must not leave a container behind.
    checkedWorkdir(options.workdir);
    for (const [name, value] of [
      ['requestTimeoutMs', options.requestTimeoutMs],
      ['watchPollIntervalMs', options.watchPollIntervalMs],
    ] as const) {
      if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
        throw fsError('EINVAL', 'open', undefined, { reason: `${name} must be a positive whole number of ms, got ${String(value)}` });
      }
    }
    if ((options.container === undefined) === (options.image === undefined)) {
      throw fsError('EINVAL', 'open', undefined, { reason: 'pass exactly one of { container } or { image }' });
    }
    const docker = connectEngine(options.engine);
    // Learnt while the engine answers (beside the open's own requests), so that a message about it once it stops
    // answering names Podman as Podman.
    void engineName(docker);
    try {
      return await ContainerFilesystem.#attachOrCreate(options, docker);
    } catch (err) {
      // An SSH engine's connection would otherwise linger until its idle timeout.
      if (options.engine?.docker === undefined) closeEngine(docker);
      throw err;
    }
  }

  static async #attachOrCreate(options: ContainerFilesystemOptions, docker: Docker): Promise<ContainerFilesystem> {
    let container: Docker.Container | undefined;
    let ref: string;
    let created = false;
    let stopped = false;
    if (options.container !== undefined) {
      ref = options.container;
      container = docker.getContainer(ref);
      let info: Docker.ContainerInspectInfo;
      try {
        info = await container.inspect();
      } catch (err) {
        throw await ContainerFilesystem.#engineFailure('open', ref, docker, err);
      }
      if (!info.State.Running) {
        // Left stopped, it is attached all the same: its snapshots are on this side, and every call that needs the
        // container says it is not running, as when it stops after the open.
        if (options.startIfStopped) await container.start();
        else stopped = true;
      }
    } else {
      const image = options.image as string;
      try {
        container = await docker.createContainer({
          Image: image,
          // PID 1 only has to stay alive; the helper runs as an exec beside it.
          Cmd: ['sh', '-c', 'while :; do sleep 3600; done'],
          ...options.create,
          Labels: { 'ctxfs.managed': '1', ...options.create?.Labels, ...options.labels },
        });
        created = true;
        await container.start();
      } catch (err) {
        if (created) await container?.remove({ force: true }).catch(() => {});
        throw await ContainerFilesystem.#creationFailure(image, docker, err);
      }
      ref = container.id;
    }
    const fs = new ContainerFilesystem(options, docker, container, ref, created);
    if (stopped) return fs;
    try {
      await fs.#ensureSession('open', undefined);
    } catch (err) {
      await fs.close().catch(() => {});
      throw err;
    }
    return fs;
  }

  /**
   * Why no container could be made from `image`: the engine refused us or we
   * refused it, it does not answer, it has no such image, or it said why.
   * Named as the image it was to be made from: there is no container to name
   * (a container's unavailability, {@link containerUnavailability}, is not
   * said of one).
   */
  static async #creationFailure(image: string, docker: Docker, err: unknown): Promise<FsError> {
    const refused = engineRefusal('open', docker, err);
    if (refused !== undefined) return refused;
    const d = describeEngineError(err);
    const reason = `cannot create a container from image '${image}'`;
    if (d.unreachable) {
      return new FsError({
        code: 'EUNAVAILABLE',
        op: 'open',
        reason: `${reason}: ${describeEngine(docker)} does not answer (${d.message})`,
        hint: `start the ${engineTitle(knownEngineName(docker))} engine (or name one that runs in the engine option) and open the workspace again; no container was created`,
        cause: err,
      });
    }
    if ((err as { statusCode?: unknown } | null)?.statusCode === 404 && /no such image/i.test(d.message)) {
      // The engine answered, so it answers what it is: the hint is in its own CLI.
      const cli = (await engineName(docker)) ?? 'docker';
      return new FsError({
        code: 'EUNAVAILABLE',
        op: 'open',
        reason: `${reason}: ${d.message}`,
        hint: `pull it first (${cli} pull ${image}), or name an image the engine has (${cli} images lists them); no container was created`,
        cause: err,
      });
    }
    return new FsError({ code: 'EUNAVAILABLE', op: 'open', reason: `${reason}: ${d.message}`, cause: err });
  }

  static async #engineFailure(op: FsOperation, ref: string, docker: Docker, err: unknown): Promise<FsError> {
    const refused = engineRefusal(op, docker, err);
    if (refused !== undefined) return refused;
    const d = describeEngineError(err);
    // The engine answered that much, so it answers what it is too.
    if (d.notFound) return unavailable(op, undefined, { container: ref, condition: 'removed', state: 'does not exist', engine: await engineName(docker) }, err);
    const engine = knownEngineName(docker);
    if (d.unreachable)
      return unavailable(
        op,
        undefined,
        {
          container: ref,
          condition: 'unreachable',
          state: `is unreachable: ${describeEngine(docker)} does not answer (${d.message})`,
          engine,
        },
        err,
      );
    return unavailable(op, undefined, { container: ref, condition: 'unreachable', state: `cannot be reached: ${d.message}`, engine }, err);
  }

  /** The container object (dockerode), e.g. for tests and tooling. */
  get container(): Docker.Container {
    return this.#container;
  }

  /** uid and gid the helper runs as (the container's user). */
  get user(): { uid: number; gid: number } {
    return { uid: this.#probe?.uid ?? 0, gid: this.#probe?.gid ?? 0 };
  }

  // ------------------------------------------------------------ session

  async #ensureSession(op: FsOperation, path: string | undefined): Promise<HelperSession> {
    const current = this.#session;
    if (current !== undefined && !current.lost) return current;
    this.#starting ??= this.#startSession().finally(() => {
      this.#starting = undefined;
    });
    try {
      return await this.#starting;
    } catch (err) {
      if (err instanceof FsError) throw err.code === 'EUNAVAILABLE' ? err.withOperation(op) : err;
      throw await this.#unavailable(op, path, err);
    }
  }

  async #startSession(): Promise<HelperSession> {
    const session = await HelperSession.start(this.#container, this.workdir, { timeoutMs: this.#requestTimeoutMs });
    let probeRes: HelperResponse;
    try {
      probeRes = await session.request(probeCommand(this.workdir, this.#createWorkdir && !this.readOnly));
    } catch (err) {
      // A session that ends before its first answer, in a running container: an image without sh ends it at once.
      if (!(await this.#runsShell())) {
        throw new FsError({
          code: 'EUNSUPPORTED',
          op: 'open',
          reason: `the image of container '${this.containerRef}' lacks sh (the helper cannot start)`,
          hint: 'use an image with a POSIX sh and busybox or coreutils',
          cause: err,
        });
      }
      throw err;
    }
    const probe = parseProbe(probeRes.stdout.toString('utf8'));
    if (probe.missing.length > 0) {
      session.close();
      throw new FsError({
        code: 'EUNSUPPORTED',
        op: 'open',
        reason: `the image of container '${this.containerRef}' lacks ${probe.missing.join(', ')}`,
        hint: 'use an image with a POSIX sh and busybox or coreutils',
      });
    }
    if (!probe.rootExists) {
      session.close();
      throw new FsError({
        code: 'ENOENT',
        op: 'open',
        path: this.workdir,
        reason: `workspace root '${this.workdir}' does not exist in container '${this.containerRef}'`,
      });
    }
    this.#probe = probe;
    this.#session = session;
    if (this.#stale.size > 0) {
      const stale = [...this.#stale];
      this.#stale.clear();
      await session.request(`RMT ${stale.map(q).join(' ')}`).catch(() => {});
    }
    return session;
  }

  /** Whether `sh -c true` runs in the container (false when the image has no sh; true when that cannot be told). */
  async #runsShell(): Promise<boolean> {
    try {
      const exec = await this.#container.exec({ Cmd: ['sh', '-c', 'true'], AttachStdout: true, AttachStderr: true });
      const stream = (await exec.start({ hijack: true, stdin: false })) as unknown as NodeJS.ReadableStream;
      stream.resume();
      await new Promise((resolve) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', resolve);
      });
      const info = await exec.inspect();
      return info.Running || info.ExitCode === 0;
    } catch {
      return true;
    }
  }

  /** Builds EUNAVAILABLE for `op`, asking the engine what happened to the container. */
  async #unavailable(op: FsOperation, path: string | undefined, cause: unknown): Promise<FsError> {
    const d = describeEngineError(cause);
    let state: string;
    let condition: ContainerCondition;
    let engine: EngineName | undefined;
    try {
      const info = await Promise.race([
        this.#container.inspect(),
        new Promise<never>((_, reject) => setTimeout(() => reject(Object.assign(new Error('inspect timed out'), { code: 'ETIMEDOUT' })), 3000).unref()),
      ]);
      const waited = cause instanceof SessionTimeoutError || cause instanceof SilenceError ? ` (no answer within ${this.#requestTimeoutMs} ms)` : '';
      if (info.State.Paused) {
        condition = 'paused';
        state = `is paused${waited}`;
      } else if (!info.State.Running) {
        condition = 'stopped';
        state = `is not running (${info.State.Status}, exit code ${info.State.ExitCode})`;
      } else if (waited !== '') {
        condition = 'unanswered';
        state = `does not answer: the helper session gave no answer within ${this.#requestTimeoutMs} ms and was ended; the call may or may not have taken effect, and the next call starts a new session`;
      } else {
        condition = 'lost';
        state = `lost the helper session (${d.message})`;
      }
      // The way out is a command of the engine's, and Podman's is named differently from Docker's.
      engine = await engineName(this.docker);
    } catch (err) {
      const refused = engineRefusal(op, this.docker, err);
      if (refused !== undefined) return refused;
      const e = describeEngineError(err);
      engine = knownEngineName(this.docker);
      if (e.notFound) {
        condition = 'removed';
        state = 'no longer exists (it was removed)';
        engine ??= await engineName(this.docker);
      } else if (e.unreachable) {
        condition = 'unreachable';
        state = `is unreachable: ${describeEngine(this.docker)} does not answer (${e.message})`;
      } else {
        condition = 'unreachable';
        state = `cannot be inspected: ${e.message}`;
      }
    }
    return unavailable(op, path, { container: this.containerRef, condition, state, engine }, cause);
  }

  /**
   * The error to report for `op` when the engine failed it outside the file
   * calls (a command's exec): `EUNAVAILABLE` naming the container and what
   * became of it (stopped, paused, removed, an engine that does not
   * answer), found out as for a file call; `cause` itself when the container
   * runs and the engine answers, where the failure is the call's own.
   *
   * @example
   * ```ts
   * try {
   *   await fs.container.exec({ Cmd: ['true'] });
   * } catch (err) {
   *   throw await fs.engineFailure('exec', err); // EUNAVAILABLE: container 'dev' is not running (exited, exit code 137)
   * }
   * ```
   */
  async engineFailure(op: FsOperation, cause: unknown): Promise<Error> {
    if (cause instanceof FsError) return cause;
    const err = await this.#unavailable(op, undefined, cause);
    const condition = containerUnavailability(err)?.condition;
    if (condition === 'lost' || condition === 'unanswered') return cause instanceof Error ? cause : new Error(String(cause));
    return err;
  }

  /** Runs one helper request; transport failures become EUNAVAILABLE naming the container and `op`. */
  async #run(op: FsOperation, path: string | undefined, code: string, input?: Uint8Array): Promise<HelperResponse> {
    const session = await this.#ensureSession(op, path);
    try {
      return await session.request(code, input);
    } catch (err) {
      throw await this.#unavailable(op, path, err);
    }
  }

  /** Like {@link #run} but throws the mapped error for a non-zero status. */
  async #ok(op: FsOperation, path: string | undefined, code: string, input?: Uint8Array): Promise<HelperResponse> {
    const res = await this.#run(op, path, code, input);
    if (res.status !== 0) throw helperFailure(res.status, res.stderr, op, path);
    return res;
  }

  /** Maps a transfer (archive or exec stream) failure: a missing container is EUNAVAILABLE, never ENOENT. */
  #transferError(op: FsOperation, path: string): (err: unknown) => Error {
    return (err: unknown) => {
      if (err instanceof FsError) return err;
      const d = describeEngineError(err);
      const code = (err as { code?: unknown }).code;
      if (code === 'EINVAL' || code === 'ENOENT' || code === 'EIO') {
        if (code !== 'ENOENT' || !d.notFound) return err as Error;
      }
      if (code === 'ESTREAMEND' || d.notFound || d.unreachable || d.notRunning || /aborted|socket|ECONNRESET|EPIPE|premature|terminated/i.test(d.message)) {
        return unavailable(op, path, { container: this.containerRef, condition: 'lost', state: `stopped answering during the transfer (${d.message})` }, err);
      }
      const named = codeFromMessage(d.message);
      if (named !== undefined) return errno(named, d.message);
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 404) return errno('ENOENT', d.message);
      return new FsError({ code: 'EIO', op, path, reason: d.message, cause: err });
    };
  }

  /**
   * ENOSPC when the filesystem holding `dirAbs` has less than {@link FULL_DISK_BYTES} free, per `df -P`;
   * undefined when it has room or cannot be asked (the caller keeps its own error).
   */
  async #fullDisk(dirAbs: string, path: string): Promise<FsError | undefined> {
    try {
      const res = await this.#run('write', path, `df -Pk ${q(dirAbs)}`);
      const available = freeKibibytes(res.stdout.toString('utf8'));
      if (res.status !== 0 || available === undefined || available * 1024 >= FULL_DISK_BYTES) return undefined;
      return new FsError({
        code: 'ENOSPC',
        op: 'write',
        path,
        reason: `the container's filesystem at ${dirAbs} is full (${available} KiB free); the write was not applied`,
        hint: 'free space in the container (delete files or enlarge the volume) and write again',
      });
    } catch {
      return undefined;
    }
  }

  #abs(path: string): string {
    return path === '' ? this.workdir : `${this.workdir}/${path}`;
  }

  // ------------------------------------------------------------ primitives

  protected override async followLinks(path: string): Promise<string> {
    const res = await this.#ok('realpath', path, `RP ${q(path)}`);
    // The helper prints the path below the root's real path, with a leading slash ('' for the root).
    return res.stdout.toString('utf8').replace(/\n$/, '').replace(/^\/+/, '');
  }

  protected override async readLink(path: string): Promise<string | undefined> {
    if (path === '') return undefined;
    const res = await this.#run('realpath', path, `RL ${q(path)}`);
    return res.status === 0 ? res.stdout.toString('utf8').replace(/\n$/, '') : undefined;
  }

  protected async statPath(path: string): Promise<FileStat> {
    const res = await this.#ok('stat', path, `ST ${q(path)}`);
    const { uid: _u, gid: _g, ...st } = parseStat(path, res.stdout.toString('utf8'));
    return st;
  }

  protected async readDirectory(path: string): Promise<FileEntry[]> {
    const res = await this.#ok('list', path, `LS ${q(path)}`);
    const out: FileEntry[] = [];
    const prefix = path === '' ? '' : `${path}/`;
    const raw = res.stdout;
    let start = 0;
    for (;;) {
      const end = raw.indexOf(0, start);
      if (end < 0) break;
      const rec = raw.subarray(start, end).toString('utf8');
      start = end + 1;
      const k = rec[0];
      const name = rec.slice(1);
      // Names no path can address are left out, as every backend leaves them out.
      if (!isAddressableName(name) || (name.startsWith(TEMP_PREFIX) && TEMP_NAME.test(name))) continue;
      const kind: FileKind = k === 'd' ? 'directory' : k === 'f' ? 'file' : k === 'l' ? 'symlink' : 'other';
      out.push({ name, path: prefix + name, kind });
    }
    return out;
  }

  /**
   * One helper request stats a whole directory (the walk's `find` with depth
   * 1: one `stat` over all entries) instead of a request per entry. Symlinks
   * take the guarded per-entry stat ({@link #entryStat}); an entry the answer
   * lacks (created since the listing) the per-entry path.
   */
  protected override async statEntries(dir: string, entries: FileEntry[]): Promise<FileEntry[]> {
    if (entries.length === 0) return [];
    let records: StatRecord[];
    try {
      records = await this.#statTree('list', dir, 1, new Set());
    } catch (err) {
      if (err instanceof FsError && err.code === 'EUNAVAILABLE') throw err;
      return super.statEntries(dir, entries);
    }
    const fields = new Map<string, string>();
    for (const r of records) fields.set(r.rel, r.fields);
    const stats = await Promise.all(
      entries.map((entry) => {
        const f = fields.get(entry.name);
        if (f !== undefined) return this.#entryStat(entry.path, f);
        // Vanished (the stat will say so) or new since the listing.
        return this.tryStat(entry.path);
      }),
    );
    const out: FileEntry[] = [];
    entries.forEach((entry, i) => {
      const stat = stats[i];
      if (stat !== undefined) out.push({ ...entry, stat });
    });
    return out;
  }

  /**
   * The stat of an entry from its {@link STAT_FORMAT} fields (taken without
   * following links). A symlink gets its target's stat when the target stays
   * inside the workspace (the helper's guarded stat decides); one that leads
   * outside or dangles gets the link's own stat, so nothing about the outside
   * shows. `undefined`: it vanished.
   */
  async #entryStat(path: string, fields: string): Promise<FileStat | undefined> {
    if (kindOfFields(fields) !== 'symlink') return statOfFields(path, fields);
    try {
      return await this.statPath(path);
    } catch (err) {
      // Out of the workspace, dangling, or a loop: the link itself, which the walk just found there.
      const code = (err as { code?: unknown }).code;
      if (code !== 'EPATHESCAPE' && code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
    }
    return statOfFields(path, fields);
  }

  /**
   * Every entry below `dir` (down to `maxDepth`, excluded names pruned) with
   * its metadata, from one `find` in the container (`WK`). Entries that vanish
   * or cannot be read meanwhile are passed over; anything else find or stat
   * complain about fails the request.
   */
  async #statTree(op: FsOperation, dir: string, maxDepth: number, exclude: ReadonlySet<string>): Promise<StatRecord[]> {
    const args = walkFindArgs(maxDepth, exclude);
    const res = await this.#run(op, dir, `WK ${q(dir)}${args === '' ? '' : ` ${args}`}`);
    if (res.status !== 0) {
      if (res.status !== 1) throw helperFailure(res.status, res.stderr, op, dir);
      const complaints = res.stderr.replace(PASSABLE_COMPLAINT, '').trim();
      if (complaints !== '') throw new FsError({ code: 'EIO', op, path: dir, reason: `the walk in the container failed: ${complaints}` });
    }
    return parseWalkOutput(res.stdout);
  }

  /**
   * The whole walk in one helper request: one busybox `find` lists and stats
   * the tree, where the base walk costs a request per directory (38,600
   * entries: 0.56 s against 5.9 s with stats, 0.5 s against 1.6 s without,
   * so walks without stats take this path too). The
   * answer is parsed into batches here; `enter` prunes by path, temporary
   * names and names no path can address are left out with what is below
   * them, and symlinks get the guarded stat ({@link #entryStat}).
   */
  protected override nativeWalk(plan: WalkPlan): AsyncIterable<readonly FileEntry[]> {
    return this.#findWalk(plan);
  }

  async *#findWalk(plan: WalkPlan): AsyncGenerator<readonly FileEntry[]> {
    const { exclude, enter, maxDepth } = plan;
    const records = await this.#statTree('walk', plan.start, maxDepth, exclude);
    const prefix = plan.start === '' ? '' : `${plan.start}/`;
    const pruned = new Set<string>();
    let batch: Array<FileEntry | undefined> = [];
    let links: Array<{ at: number; fields: string }> = [];
    const settle = async (): Promise<FileEntry[]> => {
      const out = batch;
      const pending = links;
      batch = [];
      links = [];
      if (pending.length === 0) return out as FileEntry[];
      // A guarded stat per symlink; they go out together.
      const stats = await Promise.all(pending.map(({ at, fields }) => this.#entryStat((out[at] as FileEntry).path, fields)));
      pending.forEach(({ at }, k) => {
        const stat = stats[k];
        out[at] = stat === undefined ? undefined : { ...(out[at] as FileEntry), stat };
      });
      return out.filter((e): e is FileEntry => e !== undefined);
    };
    for (const { rel, fields } of records) {
      if (pruned.size > 0 && underPruned(rel, pruned)) continue;
      const slash = rel.lastIndexOf('/');
      const name = slash < 0 ? rel : rel.slice(slash + 1);
      const kind = kindOfFields(fields);
      if (!isAddressableName(name) || (name.startsWith(TEMP_PREFIX) && TEMP_NAME.test(name)) || exclude.has(name)) {
        if (kind === 'directory') pruned.add(rel);
        continue;
      }
      const path = prefix + rel;
      let entry: FileEntry;
      if (!plan.stat) entry = { name, path, kind };
      else if (kind === 'symlink') {
        links.push({ at: batch.length, fields });
        entry = { name, path, kind };
      } else entry = { name, path, kind, stat: statOfFields(path, fields) };
      batch.push(entry);
      if (kind === 'directory' && enter !== undefined) {
        // The base asks only about directories it could descend into.
        const depth = maxDepth === Number.POSITIVE_INFINITY ? 0 : rel.split('/').length;
        if (depth < maxDepth && !enter(entry)) pruned.add(rel);
      }
      if (batch.length >= WALK_BATCH) {
        const out = await settle();
        if (out.length > 0) yield out;
      }
    }
    const out = await settle();
    if (out.length > 0) yield out;
  }

  /**
   * Hashes a slice of files at a time, their reads issued together so that
   * small files arrive as one tar per slice (see batch-read.ts) instead of a
   * helper request each; the bytes are hashed here.
   */
  protected override async *digestFiles(targets: readonly DigestTarget[], headBytes: number): AsyncGenerator<Array<{ index: number; digest: FileDigest }>> {
    for (let i = 0; i < targets.length; i += BATCH_FILES) {
      const slice = targets.slice(i, i + BATCH_FILES);
      const digests = await Promise.all(slice.map((t) => this.digestOne(t, headBytes)));
      yield slice.map((t, k) => ({ index: t.index, digest: digests[k] as FileDigest }));
    }
  }

  /** One helper request: stat, then the content if small, else the resolved path for a stream read. */
  async #readHeadOne(op: FsOperation, path: string): Promise<ReadHead & { stat: FileStat }> {
    const res = await this.#ok(op, path, `RD ${q(path)} ${INLINE_READ_BYTES}`);
    const nl = res.stdout.indexOf(0x0a);
    const { uid: _u, gid: _g, ...stat } = parseStat(path, res.stdout.subarray(0, nl).toString('utf8'));
    const rest = res.stdout.subarray(nl + 1);
    if (stat.size <= INLINE_READ_BYTES) return { size: rest.length, data: rest, stat: { ...stat, size: rest.length } };
    const [real, identity] = rest.toString('utf8').split('\n');
    return { size: stat.size, real, identity: identity || undefined, stat };
  }

  /** Queues a read head; reads made in the same turn are batched (see batch-read.ts). */
  #readHead(op: FsOperation, path: string): Promise<ReadHead> {
    return new Promise<ReadHead>((resolve, reject) => {
      this.#readQueue.push({ op, path, resolve, reject });
      if (this.#readQueue.length === 1) setImmediate(() => void this.#flushReads());
    });
  }

  async #flushReads(): Promise<void> {
    const queue = this.#readQueue;
    this.#readQueue = [];
    if (queue.length < 4) {
      for (const item of queue) this.#readHeadOne(item.op, item.path).then(item.resolve, item.reject);
      return;
    }
    const unique = [...new Set(queue.map((item) => item.path))];
    const answered = new Map<string, Buffer>();
    // Batches are pipelined: all requests go out at once, each holds at most
    // BATCH_FILES files of BATCH_FILE_BYTES.
    await Promise.all(
      Array.from({ length: Math.ceil(unique.length / BATCH_FILES) }, async (_, b) => {
        const paths = unique.slice(b * BATCH_FILES, (b + 1) * BATCH_FILES);
        // The path list travels as a payload: one read, not a byte-at-a-time command line.
        const list = Buffer.from(`${paths.join('\n')}\n`);
        try {
          const res = await this.#run('readBytes', undefined, `RB ${BATCH_FILE_BYTES} ${list.length}`, list);
          for (const [name, data] of await untarFiles(res.stdout)) answered.set(name, data);
        } catch {
          // Whatever went wrong, the single-file path reports it precisely.
        }
      }),
    );
    for (const item of queue) {
      const data = answered.get(this.#abs(item.path).slice(1));
      if (data !== undefined) item.resolve({ size: data.length, data });
      else this.#readHeadOne(item.op, item.path).then(item.resolve, item.reject);
    }
  }

  protected async openFileReader(path: string, chunkSize: number, offset: number): Promise<ByteReader> {
    const head = await this.#readHead('openRead', path);
    if (head.data) {
      const data = head.data;
      return createByteReader({ size: data.length, readAt: (pos, len) => new Uint8Array(data.subarray(pos, pos + len)) }, { path, chunkSize, offset });
    }
    // An exec stream, not the archive endpoint: a reader may stay open, and
    // an open archive request holds the engine's lock on the container.
    const file = await openExecFile(
      this.#container,
      head.real ?? this.#abs(path),
      head.size,
      this.#transferError('openRead', path),
      this.#requestTimeoutMs,
      head.identity,
    );
    return createByteReader({ size: file.size, readAt: (pos, len) => file.readAt(pos, len), close: () => file.close() }, { path, chunkSize, offset });
  }

  /** Whether the engine's archive endpoints see the workspace (they miss tmpfs mounts). */
  get #archiveUsable(): boolean {
    return this.#probe?.fstype !== 'tmpfs';
  }

  protected override async readRange(path: string, offset: number, limit: number | undefined, cap: number): Promise<Uint8Array> {
    const head = await this.#readHead('readBytes', path);
    const remaining = Math.max(0, head.size - offset);
    if (limit === undefined && remaining > cap) {
      throw fsError('ETOOLARGE', 'readBytes', path, { reason: `${remaining} bytes exceed the convenience limit of ${cap} bytes` });
    }
    return this.#readFromHead('readBytes', path, head, offset, Math.min(limit ?? remaining, remaining));
  }

  /**
   * One `RD` exec: the helper opens the file, stats that descriptor and
   * sends a small file's bytes after the stat line, so a small file is
   * answered in one round trip where `stat` then `readBytes` made two. A
   * larger one streams as `readBytes` streams it, from a stream that checks
   * it still reads the file stated (inode, size, mtime).
   */
  protected override async readFileWithStat(path: string, maxBytes: number): Promise<FileRead> {
    const head = await this.#readHeadOne('readWithStat', path);
    const stat = head.stat;
    if (stat.size > maxBytes) return { stat, bytes: undefined };
    return { stat, bytes: await this.#readFromHead('readWithStat', path, head, 0, stat.size) };
  }

  /** `want` bytes from `offset` of the file `head` answered for: its inline bytes, or a stream of it. */
  async #readFromHead(op: FsOperation, path: string, head: ReadHead, offset: number, want: number): Promise<Uint8Array> {
    if (head.data) return new Uint8Array(head.data.subarray(offset, offset + want));
    const real = head.real ?? this.#abs(path);
    const onError = this.#transferError(op, path);
    const file = this.#archiveUsable
      ? await openArchiveFile(this.#container, real, onError, head.identity)
      : await openExecFile(this.#container, real, head.size, onError, this.#requestTimeoutMs, head.identity);
    try {
      const out = new Uint8Array(Math.min(want, file.size));
      let filled = 0;
      while (filled < out.length) {
        const chunk = await file.readAt(offset + filled, out.length - filled);
        if (chunk.byteLength === 0) break;
        out.set(chunk, filled);
        filled += chunk.byteLength;
      }
      return filled === out.length ? out : out.slice(0, filled);
    } finally {
      file.close();
    }
  }

  protected async openFileWriter(path: string, mode: WriteMode, ifMatch?: string): Promise<ByteWriter> {
    const prep = await this.#ok('openWrite', path, `PW ${mode} ${q(path)}`);
    const [dirAbs = this.workdir, existing] = prep.stdout.toString('utf8').split('\n');
    // An overwrite keeps the replaced file's mode and owner; only what differs
    // from how the helper creates files (0644, its own user) costs a chmod/chown.
    let keepMode: number | undefined;
    let keepOwner: { uid: number; gid: number } | undefined;
    if (existing && mode === 'overwrite') {
      const [m = '644', u = '0', g = '0'] = existing.split(':');
      keepMode = Number.parseInt(m, 8);
      keepOwner = { uid: Number(u), gid: Number(g) };
    }
    const fileMode = this.#fileMode ?? keepMode;
    const fileOwner = this.#owner ?? keepOwner;
    const perm = fileMode === undefined || fileMode === 0o644 ? '-' : fileMode.toString(8);
    const ownerArg =
      fileOwner === undefined || (fileOwner.uid === this.user.uid && fileOwner.gid === this.user.gid) ? '-' : `${fileOwner.uid}:${fileOwner.gid}`;
    /** Runs a commit request: the helper checks `ifMatch` under its commit lock and answers 113 with the current hash. */
    const commitRequest = async (code: string, input?: Uint8Array) => {
      const res = await this.#run('write', path, `${code} ${ifMatch ?? '-'}`, input);
      if (res.status === 113) {
        const current = res.stdout.toString('utf8').trim();
        assertIfMatch(ifMatch, current === IF_ABSENT ? undefined : current, 'write', path);
      }
      if (res.status !== 0) throw helperFailure(res.status, res.stderr, 'write', path);
    };
    let staged: Buffer[] = [];
    let stagedBytes = 0;
    let stream: ExecStream | undefined;
    let tempAbs: string | undefined;
    const newTemp = () => {
      const name = `${TEMP_PREFIX}${this.#session?.nonce ?? '0'.repeat(24)}-w${++this.#writeCounter}.tmp`;
      tempAbs = `${dirAbs}/${name}`;
      return name;
    };
    const takeStaged = (): Buffer => {
      const all = staged.length === 1 ? (staged[0] as Buffer) : Buffer.concat(staged, stagedBytes);
      staged = [];
      stagedBytes = 0;
      return all;
    };
    const cleanupTemp = async () => {
      if (tempAbs === undefined) return;
      const t = tempAbs;
      try {
        const res = await this.#run('write', path, `RMT ${q(t)}`);
        if (res.status !== 0) this.#stale.add(t);
      } catch {
        this.#stale.add(t);
      }
    };
    /** Why an exec stream failed: the container's state first, then the tool's message. */
    const streamFailure = async (s: ExecStream, err?: unknown): Promise<Error> => {
      const info = await within(this.#container.inspect(), 3_000, () => new SilenceError('inspect timed out')).catch(() => undefined);
      if (info === undefined || !info.State.Running || info.State.Paused || err instanceof SilenceError) {
        return this.#unavailable('write', path, err ?? new Error('the write stream ended'));
      }
      // The tool's message (disk full) reaches stderr before the output ends, but can arrive after our
      // write failed: read it once the output has ended (bounded), or a loaded engine leaves it unread (EIO).
      await within(s.ended, this.#requestTimeoutMs, () => new SilenceError('the write stream did not end')).catch(() => undefined);
      const code = await Promise.race([s.exitCode(), new Promise<number>((r) => setTimeout(() => r(-1), 2000).unref())]);
      const failure = helperFailure(code === 0 ? 1 : code, s.stderr(), 'write', path);
      if (!(failure instanceof FsError) || failure.code !== 'EIO') return failure;
      // Podman can close the connection before the tool's message is read (the socket dies on EPIPE
      // with the stderr frame unread): ask the filesystem itself whether it is full.
      return (await this.#fullDisk(dirAbs, path)) ?? failure;
    };
    const send = async (s: ExecStream, data: Uint8Array) => {
      try {
        // A process that exits early (disk full) stops reading: the write
        // would never drain, so the end of its output ends the wait.
        // A paused container stops taking bytes: the write then never drains either.
        const timeoutMs = this.#requestTimeoutMs;
        await within(
          Promise.race([
            new Promise<void>((resolve, reject) => {
              s.socket.write(data, (err) => (err ? reject(err) : resolve()));
            }),
            s.ended.then(() => {
              throw new Error('the write stream ended');
            }),
          ]),
          timeoutMs,
          () => new SilenceError(`the write stream took nothing for ${timeoutMs} ms`),
        );
      } catch (err) {
        throw await streamFailure(s, err);
      }
    };
    return createByteWriter(
      {
        write: async (chunk) => {
          if (stream !== undefined) {
            await send(stream, chunk);
            return;
          }
          // Copy: the caller may reuse its buffer once write resolves.
          staged.push(Buffer.from(chunk));
          stagedBytes += chunk.byteLength;
          if (stagedBytes <= STAGED_WRITE_BYTES) return;
          try {
            stream = await startExecStream(this.#container, streamedWriteCommand(dirAbs, newTemp()), true, this.#requestTimeoutMs);
          } catch (err) {
            throw await this.#unavailable('write', path, err);
          }
          stream.stdout.resume();
          await send(stream, takeStaged());
        },
        commit: async () => {
          if (stream === undefined && stagedBytes <= INLINE_WRITE_BYTES) {
            const data = takeStaged();
            await commitRequest(`WR ${mode} ${q(path)} ${data.length} ${perm} ${ownerArg}`, data);
            return;
          }
          if (stream === undefined) {
            const data = takeStaged();
            stream = await startExecStream(this.#container, streamedWriteCommand(dirAbs, newTemp()), true, this.#requestTimeoutMs).catch(
              async (err: unknown) => {
                throw await this.#unavailable('write', path, err);
              },
            );
            stream.stdout.resume();
            await send(stream, data);
          }
          if (stream !== undefined) {
            const s = stream;
            s.socket.end();
            const code = await s.exitCode();
            if (code !== 0) throw await streamFailure(s);
          }
          await commitRequest(`JN ${mode} ${q(path)} ${q(tempAbs as string)} 0 ${perm} ${ownerArg}`);
        },
        abort: async () => {
          staged = [];
          stagedBytes = 0;
          stream?.destroy();
          await cleanupTemp();
        },
      },
      path,
      mode,
    );
  }

  protected async removeFile(path: string): Promise<void> {
    await this.#ok('delete', path, `RMF ${q(path)}`);
  }

  protected async removeDirectory(path: string, recursive: boolean): Promise<void> {
    await this.#ok('delete', path, `RMD ${q(path)} ${recursive ? 1 : 0}`);
  }

  protected async createDirectory(path: string): Promise<void> {
    await this.#ok('mkdir', path, `MK ${q(path)}`);
  }

  protected async renamePath(from: string, to: string): Promise<void> {
    await this.#ok('rename', from, `MV ${q(from)} ${q(to)}`);
  }

  protected async copyFile(from: string, to: string): Promise<void> {
    await this.#ok('copy', from, `CP ${q(from)} ${q(to)}`);
  }

  protected override async createLink(path: string, text: string): Promise<void> {
    await this.#ok('copy', path, `LN ${q(text)} ${q(path)}`);
  }

  protected override async copyTree(from: string, to: string, overwrite: boolean): Promise<void> {
    // A fresh destination is one `cp -R` in the container; merging into an
    // existing tree needs the per-entry rules of the base. `cp -R` keeps
    // links as links, as the base does, and would copy a link out of the
    // root or a FIFO too: the base's plan refuses those first.
    if ((await this.tryStat(to)) === undefined) {
      await this.copyTreePlan(from, to);
      const res = await this.#run('copy', from, `CPR ${q(from)} ${q(to)}`);
      if (res.status === 0) return;
      if (res.status !== 103) throw helperFailure(res.status, res.stderr, 'copy', from);
    }
    await super.copyTree(from, to, overwrite);
  }

  // ------------------------------------------------------------ grep

  /**
   * Grep with the work pushed to the container where it keeps results
   * identical: one `find` lists the files (instead of a request per
   * directory), their bytes come back in batches (one `tar` per batch), and
   * the shared scanner matches them, so regex dialect, binary detection,
   * encodings and code-point spans are exactly the other backends'. busybox
   * grep is not used for matching: its POSIX regex, byte-oriented `-i` and
   * binary rules differ from the protocol's (hence `nativeGrep: false`).
   */
  protected override async *nativeGrep(matcher: GrepMatcher, plan: GrepPlan): AsyncGenerator<GrepMatch> {
    const st = await this.statPath(plan.scope);
    if (st.kind !== 'directory') {
      if (st.kind === 'file') yield* this.scanFiles(matcher, plan);
      return;
    }
    // Excluded names are pruned by find itself (never entered), and dropped again below with everything under them.
    const prune = findPruneWords([...plan.exclude].filter((n) => !n.includes('\n')));
    const res = await this.#ok('grep', plan.scope, `FL ${q(plan.scope)}${prune.length === 0 ? '' : ` ${prune.map(q).join(' ')}`}`);
    const prefix = plan.scope === '' ? '' : `${plan.scope}/`;
    const files = res.stdout
      .toString('utf8')
      .split('\0')
      .filter((p) => p.length > 0)
      .map((p) => p.replace(/^\.\//, ''))
      .filter((rel) => {
        const segs = rel.split('/');
        if (segs.some((seg) => TEMP_NAME.test(seg) || !isAddressableName(seg))) return false;
        if (!plan.dot && segs.some((seg) => seg.startsWith('.'))) return false;
        if (plan.exclude.size > 0 && segs.some((seg) => plan.exclude.has(seg))) return false;
        return plan.filter === undefined || plan.filter(rel);
      })
      .sort(compareWalkOrder)
      .map((rel) => prefix + rel);
    let remaining = plan.maxMatches;
    const chunkSize = this.limits.chunkSize;
    for (let i = 0; i < files.length; i += GREP_WINDOW) {
      const window = files.slice(i, i + GREP_WINDOW);
      const heads = await Promise.all(window.map((p) => this.#readHead('grep', p).catch((err: unknown) => err as Error)));
      for (const [k, path] of window.entries()) {
        const head = heads[k] as ReadHead | Error;
        let reader: ByteReader | undefined;
        let source: AsyncIterable<Uint8Array>;
        try {
          if (head instanceof Error) throw head;
          if (head.data) source = chunksOf(head.data, chunkSize);
          else {
            reader = await this.openFileReader(path, chunkSize, 0);
            source = reader;
          }
        } catch (err) {
          // Files that vanish or cannot be read mid-walk are skipped, as the shared walk does.
          const code = (err as { code?: unknown }).code;
          if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'EPERM' || code === 'ENOTDIR') continue;
          throw err;
        }
        try {
          for await (const m of scanChunks(path, source, matcher, remaining, this.grepDetection())) {
            yield m;
            if (--remaining <= 0) return;
          }
        } finally {
          await reader?.close();
        }
      }
    }
  }

  // ------------------------------------------------------------ snapshots

  protected override async createSnapshot(tag: string | undefined): Promise<Snapshot> {
    const real = await this.#snapshotRoot('snapshot');
    try {
      // The real directory: a workdir that is a link is archived as what it leads to, not as the link.
      return await this.#snapshots.capture(this.#container, real, tag, !this.#archiveUsable);
    } catch (err) {
      throw this.#transferError('snapshot', '')(err);
    }
  }

  /**
   * Restores in three steps, so that a failure never leaves the workspace
   * between two states: the archive is held and checked (a damaged, missing
   * or concurrently dropped one is `ENOSNAPSHOT` before anything changes);
   * it is unpacked into a hidden directory in the root; then one helper
   * request moves the current entries aside, the restored ones in, and
   * deletes the old (moving them back if a move fails).
   */
  protected override async restoreSnapshot(id: string): Promise<void> {
    const archive = await this.#snapshots.hold(id);
    // One token names the restore's registration and its two directories, so a sweep can tell whose they are.
    const token = randomBytes(12).toString('hex');
    const staging = `${TEMP_PREFIX}${token}-restore`;
    let registered = false;
    try {
      const real = await this.#snapshotRoot('restore');
      registered = true;
      await this.#ok('restore', '', `RGS ${token} && MK ${q(staging)}`);
      const into = `${real}/${staging}`;
      try {
        await this.#snapshots.upload(this.#container, archive, into, !this.#archiveUsable);
      } catch (err) {
        const mapped = this.#transferError('restore', '')(err);
        // The engine refuses some archives it made itself (a relative link that climbs above the directory it
        // unpacks into): the image's own tar takes them, into a clean staging directory.
        if (!this.#archiveUsable || isFsError(mapped, 'EUNAVAILABLE')) throw mapped;
        await this.#ok('restore', '', `RMD ${q(staging)} 1 && MK ${q(staging)}`);
        await this.#snapshots.upload(this.#container, archive, into, true).catch((e: unknown) => {
          throw this.#transferError('restore', '')(e);
        });
      }
      await this.#ok('restore', '', `SWP ${token} ${q(archive.base)}`);
      registered = false;
    } finally {
      await archive.close();
      if (registered) await this.#run('restore', '', `RGX ${token}`).catch(() => undefined);
    }
  }

  /**
   * The workspace's real directory in the container, for a snapshot or a
   * restore; refused (`EUNSUPPORTED`) when something is mounted below it: a
   * snapshot would miss what a tmpfs holds, and a restore would delete
   * through the mount (a bind mount's files are the host's) and then fail.
   */
  async #snapshotRoot(op: 'snapshot' | 'restore'): Promise<string> {
    await this.#ensureSession(op, undefined);
    const mounts = (await this.#ok(op, '', 'MNT')).stdout.toString('utf8').split('\n').filter(Boolean);
    if (mounts.length > 0) {
      throw fsError('EUNSUPPORTED', op, undefined, {
        reason: `something is mounted below the workspace root (${mounts.slice(0, 3).join(', ')}${mounts.length > 3 ? ', …' : ''}): a snapshot would miss it, a restore could not replace it`,
        hint: 'open the workspace at a directory without mounts below it to use snapshots, or keep the mounted data out of the workspace; nothing was changed',
      });
    }
    // Leftovers of earlier restores go now: they would stay in the root for good, and a snapshot would archive them.
    await this.#ok(op, '', 'SWE');
    return this.#probe?.realRoot ?? this.workdir;
  }

  protected override async snapshotList(): Promise<Snapshot[]> {
    return this.#snapshots.list();
  }

  protected override async removeSnapshot(id: string): Promise<void> {
    if (!(await this.#snapshots.drop(id))) throw fsError('ENOSNAPSHOT', 'dropSnapshot', undefined, { reason: `unknown snapshot '${id}'` });
  }

  // ------------------------------------------------------------ lifecycle

  /**
   * By polling (see {@link ContainerFilesystemOptions.watchPollIntervalMs}):
   * a container out of reach for a while skips rounds, and what changed
   * meanwhile is reported when it answers again.
   */
  protected override startWatch(plan: WatchPlan, sink: WatchSink): Promise<() => Promise<void>> {
    return startPollingWatch(plan, sink, {
      intervalMs: this.#watchPollIntervalMs,
      picture: (p) => walkPicture(this, p),
      // Stopped or paused, a container may answer again; removed, it never will, and the watch ends with the error.
      transient: (err) => isFsError(err, 'EUNAVAILABLE') && containerUnavailability(err)?.condition !== 'removed',
    });
  }

  /** The helper's temporaries (listings already hide them) and its fallback commit lock are never reported. */
  protected override watchIgnores(path: string): boolean {
    return path === FALLBACK_LOCK_NAME || path.split('/').some((segment) => TEMP_NAME.test(segment));
  }

  protected override async closeBackend(): Promise<void> {
    this.#session?.close();
    this.#session = undefined;
    try {
      await this.#snapshots.clear();
      if (this.#created && !this.#keep) {
        await this.#container.remove({ force: true }).catch((err: unknown) => {
          if (!describeEngineError(err).notFound) throw err;
        });
      }
    } finally {
      if (this.#ownsEngine) closeEngine(this.docker);
    }
  }
}
