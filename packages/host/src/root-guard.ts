/**
 * The root wall. Every host operation reaches the disk through a file
 * descriptor that was opened first and verified second: the kernel resolves
 * the path (following symlinks as it always would), and only then do we ask
 * it where the descriptor actually landed (`/proc/self/fd/N`). A descriptor
 * that landed outside the root is closed and the operation refused. Because
 * the later I/O goes through that same descriptor (or through the magic link
 * `/proc/self/fd/N/name`, which the kernel resolves to the verified
 * directory), swapping a directory for a symlink between check and use
 * cannot redirect anything outside (seed 004, threat 5). A path that is not
 * there is answered without a descriptor ({@link RootGuard.absent}): its
 * nearest existing ancestor is checked as a failed open's is.
 *
 * @module
 */

import fs from 'node:fs';
import nodePath from 'node:path';
import { FsError, type FsErrorCode, linkOutsideRoot, notRegularFile } from '@ctxfs/core';

/** Linux `O_PATH`: a descriptor that only names an inode (no read permission needed, FIFOs do not block). */
export const O_PATH = 0o10000000;
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const O_CLOEXEC = 0o2000000;

/** How symlinks inside the workspace are treated. */
export type SymlinkPolicy = 'follow-inside' | 'refuse';

/**
 * Builds an error for a primitive to throw. The op is `openRead`, which the
 * base re-labels with the caller's real operation (it does so for errors of
 * delegated operations), so the reported op is always the public one.
 */
export function hostError(code: FsErrorCode, path: string, reason: string, hint?: string): FsError {
  return new FsError({ code, op: 'openRead', path: path === '' ? '.' : path, reason, hint });
}

/**
 * The refusal of a path a link takes out of the root, in core's words; where
 * it lands is told only in the cause, for the local log (the context layer
 * serves the reason and hint).
 */
export function escapeError(path: string, landed: string): FsError {
  return linkOutsideRoot('openRead', path === '' ? '.' : path, new Error(`'${path === '' ? '.' : path}' leads to '${landed}', outside the root`));
}

/** `err`, an `EPATHESCAPE` of another path, refused under `path` (its reason, hint and cause kept). */
export function escapeOf(path: string, err: FsError): FsError {
  return new FsError({ code: 'EPATHESCAPE', op: 'openRead', path: path === '' ? '.' : path, reason: err.reason, hint: err.hint, cause: err.cause });
}

/** Links followed by their text before giving up (as the kernel's own limit, 40). */
const MAX_LINK_HOPS = 40;

/** Opens paths below one root and refuses any descriptor that lands outside it. */
export class RootGuard {
  /** The root with every symlink resolved. */
  readonly rootReal: string;
  readonly policy: SymlinkPolicy;
  readonly #rootPrefix: Buffer;
  readonly #rootExact: Buffer;
  readonly #procFd: boolean;
  /** The root directory's identity when the guard was made (undefined: it could not be read then). */
  readonly #rootId: { readonly dev: number; readonly ino: number } | undefined;

  constructor(rootReal: string, policy: SymlinkPolicy) {
    this.rootReal = rootReal;
    this.policy = policy;
    this.#rootExact = Buffer.from(rootReal);
    this.#rootPrefix = Buffer.from(rootReal === '/' ? '/' : `${rootReal}/`);
    this.#procFd = hasProcFd();
    this.#rootId = identity(rootReal);
  }

  /** Absolute path of a normalized workspace path (not yet verified). */
  abs(path: string): string {
    return path === '' ? this.rootReal : this.rootReal === '/' ? `/${path}` : `${this.rootReal}/${path}`;
  }

  /** Path through which I/O reaches the inode behind a verified descriptor. */
  via(fd: number, name?: string): string {
    if (!this.#procFd) throw new Error('via() needs /proc/self/fd');
    return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
  }

  /** True when descriptors can be re-entered through `/proc/self/fd`. */
  get hasProcFd(): boolean {
    return this.#procFd;
  }

  /**
   * Opens `path` with `flags` and verifies where the descriptor landed.
   * Returns the descriptor; the caller closes it.
   */
  open(path: string, flags: number, mode?: number): number {
    const nofollow = this.policy === 'refuse' ? O_NOFOLLOW : 0;
    let fd: number;
    try {
      fd = fs.openSync(this.abs(path), flags | nofollow | O_CLOEXEC, mode);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (this.policy === 'refuse' && code === 'ELOOP') {
        throw hostError('EPATHESCAPE', path, 'the path is a symbolic link and this workspace refuses symlinks', 'open the link target by its own path');
      }
      // "Not found", "not a directory" or "denied" behind a link to outside would tell what is out there.
      this.#assertAncestorsInside(path);
      this.#assertLinkInside(path);
      throw err;
    }
    try {
      this.verify(fd, path);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
    return fd;
  }

  /**
   * The real path `path` leads to, every link followed, as the kernel
   * resolved it: an `O_PATH` open and its magic link read back, whatever
   * the depth (`realpath(3)` asks for every component in turn). Undefined
   * without procfs, when the open fails (the caller asks `realpath` for the
   * exact error), or when the file went between the two.
   */
  realPath(path: string): string | undefined {
    if (!this.#procFd) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(this.abs(path), O_PATH | O_CLOEXEC);
    } catch {
      return undefined;
    }
    try {
      const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
      // Unlinked after the open: the magic link reads "<path> (deleted)", which names nothing.
      return real.endsWith(' (deleted)') ? undefined : real;
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Whether `path` names nothing inside the root, told without an open: one
   * lstat that finds no entry (no exception built, where a failed open
   * builds one), then the check a failed open makes, that the nearest
   * existing ancestor lies inside the root (EPATHESCAPE otherwise, as the
   * open would have thrown). False when there is an entry, or when the
   * lstat fails another way: the caller's open gives the exact answer.
   */
  absent(path: string): boolean {
    if (path === '') return false;
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(this.abs(path), { throwIfNoEntry: false });
    } catch {
      return false;
    }
    if (st !== undefined) return false;
    this.#assertAncestorsInside(path);
    return true;
  }

  /** Whether the root is still a directory (removed, moved away or replaced by a file: not). */
  rootIsDirectory(): boolean {
    try {
      return fs.statSync(this.rootReal, { throwIfNoEntry: false })?.isDirectory() === true;
    } catch {
      return false;
    }
  }

  /** Throws EPATHESCAPE when the nearest existing ancestor of `path` lies outside the root. */
  #assertAncestorsInside(path: string): void {
    let p = path;
    while (p !== '') {
      const i = p.lastIndexOf('/');
      p = i < 0 ? '' : p.slice(0, i);
      // The root as the ancestor (a top-level name, as a missing `.gitignore` is at every listing): when the
      // root's path still names, itself no link, the directory the guard was made on, the open looked the name
      // up in the root, and one lstat says so (the landing check costs an open, a readlink and a close).
      // Anything else (the root swapped for a link, removed, replaced) takes the landing check.
      if (p === '' && this.policy === 'follow-inside' && sameIdentity(identity(this.rootReal), this.#rootId)) return;
      let fd: number;
      try {
        fd = fs.openSync(this.abs(p), O_PATH | O_CLOEXEC | (this.policy === 'refuse' ? O_NOFOLLOW : 0));
      } catch {
        continue;
      }
      try {
        this.verify(fd, p);
      } catch (err) {
        throw (err as FsError).code === 'EPATHESCAPE' ? escapeOf(path, err as FsError) : err;
      } finally {
        fs.closeSync(fd);
      }
      return;
    }
  }

  /**
   * Throws EPATHESCAPE when `path` itself is a symlink that leads outside the
   * root, directly or through other links, and the open failed (its target
   * is missing, is not a directory for a directory open, or is denied): it
   * must answer as a link to an existing file outside does, or the
   * difference would tell what is out there. Each link is judged by its
   * text, against its directory's real path; a link that leads back inside
   * is followed by its text to the next one.
   */
  #assertLinkInside(path: string): void {
    if (path === '' || this.policy === 'refuse') return;
    let abs = this.abs(path);
    for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
      let landed: string;
      try {
        // Most failed opens name nothing at all: an lstat that answers undefined costs no exception (a
        // throwing readlink and the directory's realpath cost three times what the open did).
        if (fs.lstatSync(abs, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return;
        landed = nodePath.resolve(fs.realpathSync.native(nodePath.dirname(abs)), fs.readlinkSync(abs));
      } catch {
        return; // not a link, or gone: the open's own error stands
      }
      if (landed !== this.rootReal && !landed.startsWith(this.rootReal === '/' ? '/' : `${this.rootReal}/`)) throw escapeError(path, landed);
      abs = landed;
    }
  }

  /** An `O_PATH` descriptor for stat and directory work (no permissions needed). */
  openPath(path: string, directory = false): number {
    return this.open(path, O_PATH | (directory ? O_DIRECTORY : 0));
  }

  /** A read descriptor; FIFOs and devices do not block the open. */
  openRead(path: string): number {
    return this.open(path, O_RDONLY | O_NONBLOCK);
  }

  /**
   * A read descriptor on a regular file, its size at open and the stat of
   * that descriptor (what the bytes read through it are the file of);
   * directories are EISDIR, FIFOs, sockets and devices EINVAL. The caller
   * closes it.
   */
  openRegular(path: string): { fd: number; size: number; stats: fs.Stats } {
    const fd = this.openRead(path);
    try {
      const st = fs.fstatSync(fd);
      if (st.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      if (!st.isFile()) {
        throw notRegularFile('openRead', path === '' ? '.' : path);
      }
      return { fd, size: st.size, stats: st };
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  /**
   * {@link openRegular} of `name` inside the directory `dirFd`, which the
   * caller opened through this guard (so it is verified), for many files of
   * one directory in a row. Only the last component is resolved, through the
   * directory's magic link and with `O_NOFOLLOW`, so the descriptor cannot
   * land anywhere but in that directory and needs no landing check: one
   * procfs lookup instead of an open and a readlink per file. Returns
   * undefined when this shortcut does not apply (a symlink, a missing or
   * special entry): the caller asks {@link openRegular} for the exact answer.
   */
  openRegularAt(dirFd: number, name: string): { fd: number; size: number } | undefined {
    if (!this.#procFd) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(`/proc/self/fd/${dirFd}/${name}`, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    } catch {
      return undefined;
    }
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      fs.closeSync(fd);
      return undefined;
    }
    return { fd, size: st.size };
  }

  /**
   * An `O_PATH` descriptor on the directory `name` inside the directory
   * `dirFd` (opened through this guard), for a walk that descends: as with
   * {@link openRegularAt}, only the last component is resolved, with
   * `O_NOFOLLOW`, so the descriptor lands in that directory and needs no
   * landing check. Undefined when it is not a directory there now (gone,
   * replaced, a symlink): the caller asks {@link openPath} for the answer.
   */
  openDirectoryAt(dirFd: number, name: string): number | undefined {
    if (!this.#procFd) return undefined;
    try {
      return fs.openSync(`/proc/self/fd/${dirFd}/${name}`, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } catch {
      return undefined;
    }
  }

  /** Throws EPATHESCAPE unless `fd` lies inside the root (and, when refusing symlinks, exactly at `path`). */
  verify(fd: number, path: string): void {
    const landed = this.#landed(fd, path);
    if (this.policy === 'refuse') {
      const expected = Buffer.from(this.abs(path));
      if (!landed.equals(expected) && !isDeletedVariant(landed, expected)) {
        throw hostError('EPATHESCAPE', path, 'the path goes through a symbolic link and this workspace refuses symlinks');
      }
      return;
    }
    const n = this.#rootPrefix.length;
    if (landed.length > n && landed.compare(this.#rootPrefix, 0, n, 0, n) === 0) return;
    if (landed.equals(this.#rootExact)) return;
    throw escapeError(path, landed.toString());
  }

  #landed(fd: number, path: string): Buffer {
    if (this.#procFd) return fs.readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
    // Without procfs: resolve the path again and insist it is the same inode.
    const real = fs.realpathSync.native(this.abs(path), { encoding: 'buffer' });
    const a = fs.fstatSync(fd);
    const b = fs.statSync(real);
    if (a.dev !== b.dev || a.ino !== b.ino) throw hostError('EPATHESCAPE', path, 'the path changed while it was being opened', 'retry the operation');
    return real;
  }
}

/** The device and inode of the entry `path` names (a link itself, not followed), or undefined when there is none. */
function identity(path: string): { dev: number; ino: number } | undefined {
  try {
    const st = fs.lstatSync(path, { throwIfNoEntry: false });
    return st === undefined ? undefined : { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

function sameIdentity(a: { dev: number; ino: number } | undefined, b: { dev: number; ino: number } | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

function isDeletedVariant(landed: Buffer, expected: Buffer): boolean {
  // A file unlinked after open reads back as "<path> (deleted)".
  return landed.length === expected.length + 10 && landed.subarray(0, expected.length).equals(expected);
}

let procFdCache: boolean | undefined;
function hasProcFd(): boolean {
  if (procFdCache !== undefined) return procFdCache;
  try {
    const fd = fs.openSync('/', O_PATH | O_DIRECTORY);
    try {
      procFdCache = fs.readlinkSync(`/proc/self/fd/${fd}`) === '/';
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    procFdCache = false;
  }
  return procFdCache;
}

/** Closes a descriptor, ignoring errors (used in cleanup paths). */
export function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing to release.
  }
}

/**
 * Opens regular files of a list that comes grouped by directory: the
 * directory of the previous file stays open (verified once, through the
 * guard) and the next file of the same directory is opened relative to it
 * ({@link RootGuard.openRegularAt}), anything else through
 * {@link RootGuard.openRegular}. Hold it only while files are opened one
 * after another (a request, a stretch of a search between two results), and
 * {@link release} it before waiting on anyone: a directory moved out of the
 * root while held would still be read through its descriptor.
 */
export class DirectoryCursor {
  readonly #guard: RootGuard;
  #current: { dir: string; fd: number } | undefined;

  constructor(guard: RootGuard) {
    this.#guard = guard;
  }

  /** A read descriptor on the regular file `path` and its size; the caller closes it. */
  open(path: string): { fd: number; size: number } {
    const slash = path.lastIndexOf('/');
    const dir = slash < 0 ? '' : path.slice(0, slash);
    if (this.#current?.dir !== dir) {
      this.release();
      try {
        this.#current = { dir, fd: this.#guard.openPath(dir, true) };
      } catch {
        // The guarded open below reports what is wrong with the path.
      }
    }
    const fast = this.#current === undefined ? undefined : this.#guard.openRegularAt(this.#current.fd, path.slice(slash + 1));
    return fast ?? this.#guard.openRegular(path);
  }

  /** Closes the held directory. */
  release(): void {
    closeQuietly(this.#current?.fd);
    this.#current = undefined;
  }
}
