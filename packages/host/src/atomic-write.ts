/**
 * Atomic writes: bytes go to a temp file with a random name in the target's
 * own directory, are flushed (`fsync`), and replace the target with one
 * `rename` (or appear with one `link` for exclusive creates). A process
 * killed at any instant leaves the old content or the new, never a mix; an
 * aborted or failed write removes its temp file; temp files left by a dead
 * process are removed by {@link cleanOrphans}.
 *
 * Every path is reached through the verified parent-directory descriptor
 * (`/proc/self/fd/N/name`), so a parent swapped for a symlink mid-write
 * cannot move the write outside the root (seed 004, threat 2).
 *
 * @module
 */

import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { assertIfMatch, baseName, isFsError, parentPath, type WriteMode, type WriteSink } from '@ctxfs/core';
import { closeQuietly, escapeError, escapeOf, hostError, O_PATH, type RootGuard } from './root-guard.ts';

const fsyncAsync = promisify(fs.fsync);
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_APPEND, O_RDONLY, O_DIRECTORY, COPYFILE_FICLONE } = fs.constants;

/** Every temp file starts with this; list, glob, grep and snapshots never show such names. */
export const TEMP_PREFIX = '.ctxfs-tmp-';

/** True for names of ctxfs temp files. */
export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

// Read once: Node asks the kernel for the pid on every read of process.pid.
const PID = process.pid;

/**
 * `.ctxfs-tmp-<pid>-<random>`: the pid lets startup cleanup spare live
 * writers. The 16 hex digits come from randomUUID, which draws on a pool of
 * entropy it refills in bulk (a call to randomBytes per name cost a tenth of
 * a durable 1 KB write's own overhead); 60 of their 64 bits are random.
 */
export function tempName(): string {
  const id = randomUUID();
  return `${TEMP_PREFIX}${PID}-${id.slice(0, 8)}${id.slice(9, 13)}${id.slice(14, 18)}`;
}

/** How hard a commit pushes bytes to stable storage. */
export type Durability = 'full' | 'file' | 'none';

/** Where an atomic write lands, after symlinks inside the root are resolved. */
interface Target {
  readonly path: string;
  readonly dirFd: number;
  readonly name: string;
  readonly existing: fs.Stats | undefined;
}

const MAX_LINK_HOPS = 16;

let scratch: Buffer | undefined;
/**
 * One 1 MiB buffer for the synchronous copy loops below (nothing else runs
 * while one of them does). A buffer each call made every compare-and-swap
 * write allocate 1 MiB outside the heap, and that growth is what sets off
 * V8's full collections: a quarter of an MCP edit's time went to them.
 */
function scratchBuffer(): Buffer {
  scratch ??= Buffer.allocUnsafe(1 << 20);
  return scratch;
}

/** SHA-256 of the file at `p` (not following a link), or undefined when nothing is there. */
function currentSha256(p: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(p, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const h = createHash('sha256');
    const buf = scratchBuffer();
    for (let n = fs.readSync(fd, buf); n > 0; n = fs.readSync(fd, buf)) h.update(buf.subarray(0, n));
    return h.digest('hex');
  } finally {
    fs.closeSync(fd);
  }
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Opens the target's directory and resolves a symlink at the target: within
 * the root it is followed (the link stays, its target gets the new bytes);
 * pointing outside, it is refused. Never writes through a link to outside.
 */
function locateTarget(guard: RootGuard, path: string, hops = 0): Target {
  const dirFd = guard.openPath(parentPath(path), true);
  try {
    const name = baseName(path);
    const st = lstatOrUndefined(guard.via(dirFd, name));
    if (st?.isSymbolicLink()) {
      if (guard.policy === 'refuse') throw hostError('EPATHESCAPE', path, 'the target is a symbolic link and this workspace refuses symlinks');
      if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
      const resolved = resolveLinkTarget(guard, path, fs.readlinkSync(guard.via(dirFd, name)));
      fs.closeSync(dirFd);
      return locateTarget(guard, resolved, hops + 1);
    }
    if (st?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    return { path, dirFd, name, existing: st };
  } catch (err) {
    closeQuietly(dirFd);
    throw err;
  }
}

/** Turns a link's text into a workspace path, or refuses it as an escape. */
function resolveLinkTarget(guard: RootGuard, linkPath: string, text: string): string {
  const base = text.startsWith('/') ? [] : parentPath(linkPath).split('/').filter(Boolean);
  let rest = text;
  if (text.startsWith('/')) {
    const root = guard.rootReal === '/' ? '/' : `${guard.rootReal}/`;
    if (!text.startsWith(root)) throw escapeError(linkPath, text);
    rest = text.slice(root.length);
  }
  for (const seg of rest.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (base.length === 0) throw escapeError(linkPath, text);
      base.pop();
    } else base.push(seg);
  }
  return base.join('/');
}

/** Options of {@link openAtomicSink}. */
export interface AtomicSinkOptions {
  durability: Durability;
  /** Taken for the commit only: writers exclude each other while they replace the file, never while they stage bytes. */
  lock?: () => Promise<{ release(): void }>;
  /** Called once, after commit or abort. */
  onSettled?: () => void;
  /** Mode of the result (a copy takes its source's); default: the existing file's, else 0o666 less the umask. */
  mode?: number;
  /** Compare-and-swap: the expected SHA-256 or `'absent'`, checked under the lock right before the rename. */
  ifMatch?: string | undefined;
}

/**
 * Opens a temp file next to `path` and returns a sink whose commit renames it
 * into place. Throws EISDIR for a directory target, EEXIST for `create` on an
 * existing file. An append stages the new bytes and, at commit, under the
 * lock, builds the whole new file (a clone of the current one plus the
 * staged bytes) and renames it into place, so concurrent appends never lose
 * each other's bytes and a crash never leaves half an append.
 */
export function openAtomicSink(guard: RootGuard, path: string, mode: WriteMode, options: AtomicSinkOptions): WriteSink {
  let target: Target;
  try {
    target = locateTarget(guard, path);
  } catch (err) {
    // Refused under the path written, not the directory or the link on its way that was refused.
    if (isFsError(err, 'EPATHESCAPE') && err.path !== path) throw escapeOf(path, err);
    throw err;
  }
  const { dirFd, name, existing } = target;
  let tmp: string | undefined;
  let fd: number | undefined;
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    closeQuietly(fd);
    fd = undefined;
    closeQuietly(dirFd);
    options.onSettled?.();
  };
  const keepMode = options.mode ?? (existing ? existing.mode & 0o7777 : undefined);
  try {
    if (mode === 'create' && existing !== undefined) throw Object.assign(new Error('file already exists'), { code: 'EEXIST' });
    tmp = guard.via(dirFd, tempName());
    // Created O_EXCL|O_NOFOLLOW under the verified directory: nothing planted
    // at that name can be reused or followed.
    fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, keepMode ?? 0o666);
    // The umask may have stripped bits at create; the file keeps its mode.
    if (keepMode !== undefined) fs.fchmodSync(fd, keepMode);
    if (existing) keepOwner(fd, existing);
  } catch (err) {
    if (tmp !== undefined) unlinkQuietly(tmp);
    settle();
    throw err;
  }
  const staged = tmp;
  const dest = guard.via(dirFd, name);
  return {
    write(chunk) {
      if (fd === undefined) throw Object.assign(new Error('writer is closed'), { code: 'EBADF' });
      let off = 0;
      while (off < chunk.byteLength) off += fs.writeSync(fd, chunk, off, chunk.byteLength - off);
    },
    async commit() {
      let lock: { release(): void } | undefined;
      let built: string | undefined;
      try {
        if (fd === undefined) throw Object.assign(new Error('writer is closed'), { code: 'EBADF' });
        let source = staged;
        if (mode === 'append') {
          // The whole new file is built under the lock, from the current one.
          lock = await options.lock?.();
          if (options.ifMatch !== undefined) assertIfMatch(options.ifMatch, currentSha256(dest), 'write', path);
          const now = lstatOrUndefined(dest);
          if (now?.isFile() && now.size > 0) {
            built = guard.via(dirFd, tempName());
            fs.copyFileSync(dest, built, COPYFILE_FICLONE | fs.constants.COPYFILE_EXCL);
            appendFile(built, staged, now);
            source = built;
          }
        }
        if (options.durability !== 'none') {
          if (source === staged) await fsyncAsync(fd);
          else await fsyncPath(source);
        }
        fs.closeSync(fd);
        fd = undefined;
        // Overwrites and creates take the lock only around the rename: the
        // bytes are already on disk, so writers wait for each other briefly.
        // A write without ifMatch needs it too, though its own rename is
        // atomic: the lock is what makes a compare-and-swap's check-then-rename
        // and an append's read-then-rename one step. Were this rename to land
        // between another writer's check and its rename, that writer would
        // replace bytes it never checked (a CAS would commit over content that
        // is not the one it expects) or rebuild the file from content this
        // write replaced (an append would bring the old file back): this
        // write would be lost without an error. The lock is a mkdir and an
        // rmdir on tmpfs with a stat, a time stamp and a realpath: 40–75 µs of
        // a write whose fsyncs take about 0.6 ms (a profile of MCP edits).
        if (lock === undefined) {
          lock = await options.lock?.();
          // Under the lock every ctxfs writer (in any process) waits for, so
          // nothing of theirs lands between this check and the rename.
          if (options.ifMatch !== undefined) assertIfMatch(options.ifMatch, currentSha256(dest), 'write', path);
        }
        if (mode === 'create') {
          // link() fails with EEXIST instead of replacing: an exclusive create
          // stays exclusive even against a racing writer.
          fs.linkSync(source, dest);
          fs.unlinkSync(source);
        } else {
          fs.renameSync(source, dest);
        }
        if (source !== staged) unlinkQuietly(staged);
        lock?.release();
        lock = undefined;
        if (options.durability === 'full') await fsyncDirectory(guard.via(dirFd));
      } catch (err) {
        unlinkQuietly(staged);
        if (built !== undefined) unlinkQuietly(built);
        throw err;
      } finally {
        lock?.release();
        settle();
      }
    },
    abort() {
      closeQuietly(fd);
      fd = undefined;
      unlinkQuietly(staged);
      settle();
    },
  };
}

function keepOwner(fd: number, st: fs.Stats): void {
  if ((st.uid === 0 && st.gid === 0) || process.getuid?.() !== 0) return;
  try {
    fs.fchownSync(fd, st.uid, st.gid);
  } catch {
    // Ownership is best effort; content and mode are what callers rely on.
  }
}

/** Appends the staged bytes to the clone, keeping the current file's mode. */
function appendFile(built: string, staged: string, current: fs.Stats): void {
  const out = fs.openSync(built, O_WRONLY | O_APPEND | O_NOFOLLOW);
  let input: number | undefined;
  try {
    fs.fchmodSync(out, current.mode & 0o7777);
    keepOwner(out, current);
    input = fs.openSync(staged, O_RDONLY | O_NOFOLLOW);
    const buf = scratchBuffer();
    for (;;) {
      const n = fs.readSync(input, buf, 0, buf.length, null);
      if (n === 0) break;
      let off = 0;
      while (off < n) off += fs.writeSync(out, buf, off, n - off);
    }
  } finally {
    closeQuietly(input);
    fs.closeSync(out);
  }
}

async function fsyncPath(p: string): Promise<void> {
  const f = fs.openSync(p, O_RDONLY | O_NOFOLLOW);
  try {
    await fsyncAsync(f);
  } finally {
    fs.closeSync(f);
  }
}

async function fsyncDirectory(dir: string): Promise<void> {
  let dfd: number | undefined;
  try {
    dfd = fs.openSync(dir, O_RDONLY | O_DIRECTORY);
    await fsyncAsync(dfd);
  } catch (err) {
    // Some filesystems refuse fsync on directories; the rename already happened.
    const code = (err as { code?: string }).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
  } finally {
    closeQuietly(dfd);
  }
}

function unlinkQuietly(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // Already gone.
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** Pid encoded in a temp name, or undefined for names this module did not make. */
export function tempOwner(name: string): number | undefined {
  if (!isTempName(name)) return undefined;
  const m = /^(\d+)-/.exec(name.slice(TEMP_PREFIX.length));
  return m ? Number(m[1]) : undefined;
}

/**
 * Removes temp files whose writer process is gone, everywhere below the root
 * (directories are entered through verified descriptors, symlinks never
 * followed). Returns the number removed.
 */
export function cleanOrphans(guard: RootGuard, skip: (name: string) => boolean = () => false): number {
  let removed = 0;
  const stack: string[] = [''];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let dfd: number;
    try {
      dfd = guard.open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    } catch {
      continue; // vanished, replaced by a link, or unreadable: nothing of ours to clean there
    }
    try {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(guard.via(dfd), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        const name = e.name;
        if (e.isDirectory()) {
          if (!skip(name)) stack.push(dir === '' ? name : `${dir}/${name}`);
          continue;
        }
        if (!isTempName(name)) continue;
        const owner = tempOwner(name);
        if (owner !== undefined && pidAlive(owner)) continue;
        try {
          fs.unlinkSync(guard.via(dfd, name));
          removed++;
        } catch {
          // Someone else cleaned it first.
        }
      }
    } finally {
      fs.closeSync(dfd);
    }
  }
  return removed;
}
