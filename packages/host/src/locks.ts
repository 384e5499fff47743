/**
 * Per-path locks: readers share, writers exclude, with a timeout, retries,
 * stale-lock takeover and a cap on how many are held at once (seed 004,
 * threat 1).
 *
 * - In the process: a fair reader/writer lock per workspace path.
 * - Across processes: exclusive locks are also `proper-lockfile` locks
 *   (atomic `mkdir` of a lock directory, mtime refreshed while held, taken
 *   over once older than `staleMs`). Lock directories live in `/dev/shm`
 *   (or the state directory), never in the workspace. Shared locks stay in-process: a writer
 *   never changes a file in place (it renames a finished temp file over it),
 *   so a reader in another process always sees a whole old or new file.
 * - Re-entrant within one async context (AsyncLocalStorage): a `write` inside
 *   `withLock(path)` does not wait for itself.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { lazyModule } from '@ctxfs/core';
import { hostError } from './root-guard.ts';

// Loaded by the first exclusive lock: a command that only reads never needs it.
const lockfile = lazyModule<typeof import('proper-lockfile')>('proper-lockfile', import.meta.url);

/** Lock behaviour of a {@link HostFilesystem}. */
export interface LockOptions {
  /**
   * Give up after this long with `ELOCKTIMEOUT`. Default {@link staleMs} +
   * 5,000 ms: a waiter outlasts the lock a killed process left, which is
   * taken over once it is `staleMs` old, so opening a workspace right after a
   * crash waits for it instead of failing.
   */
  timeoutMs?: number;
  /** First retry delay; doubles up to {@link retryMaxMs}. Default 5 ms. */
  retryMinMs?: number;
  /** Longest delay between retries. Default 100 ms. */
  retryMaxMs?: number;
  /** A cross-process lock not refreshed for this long belongs to a dead process and is taken over. Default 10,000 ms (minimum 2,000). */
  staleMs?: number;
  /** Most locks held at once by this filesystem; more is a leak and fails with `EBUSY`. Default 256. */
  maxLocks?: number;
  /** Also exclude writers in other processes. Default `true`. */
  crossProcess?: boolean;
  /**
   * Directory of the cross-process lock files. Default: a private directory
   * in `/dev/shm` (tmpfs: taking a lock costs microseconds and never adds
   * metadata to the workspace disk's journal), else `<stateDir>/locks`.
   * Every process sharing a workspace must use the same directory.
   */
  dir?: string;
}

/**
 * The default lock directory for a workspace: `/dev/shm/ctxfs-<uid>/<id>`
 * when that is a directory of ours, else `fallback`.
 */
export function defaultLockDir(workspaceId: string, fallback: string): string {
  const uid = process.getuid?.() ?? 0;
  const base = `/dev/shm/ctxfs-${uid}`;
  try {
    fs.mkdirSync(base, { mode: 0o700 });
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') return fallback;
  }
  try {
    const st = fs.lstatSync(base);
    // Anyone can create names in /dev/shm: use it only if it is ours and private.
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return fallback;
  } catch {
    return fallback;
  }
  return path.join(base, workspaceId);
}

/** What a held lock gives back. */
export interface LockHandle {
  release(): void;
}

type Kind = 'shared' | 'exclusive';

interface Waiter {
  kind: Kind;
  grant: () => void;
}

interface Entry {
  readers: number;
  writer: boolean;
  queue: Waiter[];
}

const held = new AsyncLocalStorage<Map<string, Kind>>();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Locks for one workspace. */
export class LockManager {
  readonly #entries = new Map<string, Entry>();
  /** Lock file paths by key: a hash of each, computed once. */
  readonly #bases = new Map<string, string>();
  readonly #dir: string | undefined;
  readonly #scope: string;
  readonly #timeoutMs: number;
  readonly #retryMinMs: number;
  readonly #retryMaxMs: number;
  readonly #staleMs: number;
  readonly #maxLocks: number;
  #count = 0;

  /**
   * @param scope identifies the workspace (its real path) in lock names
   * @param dir directory for cross-process lock files; undefined disables them
   */
  constructor(scope: string, dir: string | undefined, options: LockOptions = {}) {
    this.#scope = scope;
    this.#dir = options.crossProcess === false ? undefined : (options.dir ?? dir);
    this.#retryMinMs = options.retryMinMs ?? 5;
    this.#retryMaxMs = options.retryMaxMs ?? 100;
    this.#staleMs = Math.max(2000, options.staleMs ?? 10_000);
    this.#timeoutMs = options.timeoutMs ?? this.#staleMs + 5_000;
    this.#maxLocks = options.maxLocks ?? 256;
    // The directory is created on the first cross-process lock (ENOENT path), so opening a workspace leaves nothing behind.
  }

  /** Removes this workspace's lock directory when no lock is left in it (best effort). */
  dispose(): void {
    if (this.#dir === undefined || this.#count > 0) return;
    try {
      fs.rmdirSync(this.#dir);
    } catch {
      // Locks of other processes, or already gone.
    }
  }

  /** Directory of the cross-process lock files (undefined: in-process locks only). */
  get dir(): string | undefined {
    return this.#dir;
  }

  /** Locks currently held through this manager. */
  get heldCount(): number {
    return this.#count;
  }

  /** Runs `fn` holding a lock on `key`; the lock is released however `fn` ends. */
  async with<T>(key: string, kind: Kind, fn: () => Promise<T> | T): Promise<T> {
    const handle = await this.acquire(key, kind);
    const outer = held.getStore();
    const mine = new Map(outer);
    if (mine.get(key) !== 'exclusive') mine.set(key, kind);
    try {
      return await held.run(mine, fn);
    } finally {
      handle.release();
    }
  }

  /**
   * Acquires a lock; resolves once granted, rejects with ELOCKTIMEOUT.
   * `brief` locks (a commit's rename: microseconds) take the cross-process
   * lock with a bare `mkdir` of the same lock directory proper-lockfile uses,
   * without its refresh timer and mtime probe: they exclude and are excluded
   * by proper-lockfile holders alike, at a fraction of the cost.
   */
  async acquire(key: string, kind: Kind, options: { brief?: boolean } = {}): Promise<LockHandle> {
    const already = held.getStore()?.get(key);
    if (already === 'exclusive' || (already === 'shared' && kind === 'shared')) return { release() {} };
    if (already === 'shared') {
      throw hostError('EBUSY', key, 'cannot upgrade a shared lock to an exclusive one', 'take the exclusive lock from the start');
    }
    if (this.#count >= this.#maxLocks) {
      throw hostError(
        'EBUSY',
        key,
        `too many locks held at once (cap ${this.#maxLocks}); locks are probably leaking`,
        'close readers and writers you no longer need, or raise locks.maxLocks',
      );
    }
    const deadline = Date.now() + this.#timeoutMs;
    await this.#local(key, kind, deadline);
    let releaseFile: (() => void) | undefined;
    if (kind === 'exclusive' && this.#dir !== undefined) {
      try {
        releaseFile = options.brief ? await this.#briefFile(key, deadline) : await this.#file(key, deadline);
      } catch (err) {
        this.#unlocal(key, kind);
        throw err;
      }
    }
    this.#count++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#count--;
        try {
          releaseFile?.();
        } finally {
          this.#unlocal(key, kind);
        }
      },
    };
  }

  #local(key: string, kind: Kind, deadline: number): Promise<void> {
    let e = this.#entries.get(key);
    if (e === undefined) {
      e = { readers: 0, writer: false, queue: [] };
      this.#entries.set(key, e);
    }
    const entry = e;
    const free = kind === 'shared' ? !entry.writer && entry.queue.length === 0 : !entry.writer && entry.readers === 0;
    if (free) {
      if (kind === 'shared') entry.readers++;
      else entry.writer = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        kind,
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(
        () => {
          const i = entry.queue.indexOf(waiter);
          if (i >= 0) entry.queue.splice(i, 1);
          this.#drain(key, entry);
          reject(this.#timeout(key, 'another operation of this process holds it'));
        },
        Math.max(0, deadline - Date.now()),
      );
      entry.queue.push(waiter);
    });
  }

  #unlocal(key: string, kind: Kind): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (kind === 'shared') entry.readers--;
    else entry.writer = false;
    this.#drain(key, entry);
  }

  #drain(key: string, entry: Entry): void {
    while (entry.queue.length > 0 && !entry.writer) {
      const next = entry.queue[0] as Waiter;
      if (next.kind === 'exclusive') {
        if (entry.readers > 0) break;
        entry.queue.shift();
        entry.writer = true;
        next.grant();
        break;
      }
      entry.queue.shift();
      entry.readers++;
      next.grant();
    }
    if (entry.readers === 0 && !entry.writer && entry.queue.length === 0) this.#entries.delete(key);
  }

  #lockBase(key: string): string {
    let base = this.#bases.get(key);
    if (base === undefined) {
      // Bounded: a workspace's hot files stay, a long walk of writes does not grow it for ever.
      if (this.#bases.size >= 4096) this.#bases.clear();
      base = path.join(this.#dir as string, createHash('sha256').update(this.#scope).update('\0').update(key).digest('hex').slice(0, 40));
      this.#bases.set(key, base);
    }
    return base;
  }

  async #briefFile(key: string, deadline: number): Promise<() => void> {
    const lockPath = `${this.#lockBase(key)}.lock`;
    let delay = this.#retryMinMs;
    for (;;) {
      try {
        fs.mkdirSync(lockPath);
        return () => {
          try {
            fs.rmdirSync(lockPath);
          } catch {
            // Taken over as stale meanwhile: nothing of ours to remove.
          }
        };
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'ENOENT') {
          // Another process removed the (empty) lock directory on close.
          fs.mkdirSync(this.#dir as string, { recursive: true, mode: 0o700 });
          continue;
        }
        if (code !== 'EEXIST') throw err;
      }
      try {
        // proper-lockfile's rule: a lock not refreshed within `stale` belongs to a dead process.
        if (Date.now() - fs.statSync(lockPath).mtimeMs > this.#staleMs) {
          fs.rmdirSync(lockPath);
          continue;
        }
      } catch {
        continue; // released meanwhile
      }
      const left = deadline - Date.now();
      if (left <= 0) throw this.#timeout(key, 'another process holds it');
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(this.#retryMaxMs, delay * 2);
    }
  }

  #file(key: string, deadline: number): Promise<() => void> {
    const base = this.#lockBase(key);
    return lockFileWithin(base, `${base}.lock`, {
      staleMs: this.#staleMs,
      deadline,
      retryMinMs: this.#retryMinMs,
      retryMaxMs: this.#retryMaxMs,
      timeout: () => this.#timeout(key, 'another process holds it'),
      onMissing: () => fs.mkdirSync(this.#dir as string, { recursive: true, mode: 0o700 }),
    });
  }

  #timeout(key: string, who: string): Error {
    return hostError(
      'ELOCKTIMEOUT',
      key,
      `could not lock the file within ${this.#timeoutMs} ms: ${who}`,
      'retry later, or raise locks.timeoutMs; a lock of a dead process is taken over after locks.staleMs',
    );
  }
}

/**
 * The file system calls proper-lockfile makes, and nothing else: its sync
 * API copies every property of the `fs` it is given at each lock and
 * unlock (about 40 µs a lock with the whole module, its default).
 */
const LOCK_FS = {
  mkdir: fs.mkdir,
  mkdirSync: fs.mkdirSync,
  realpath: fs.realpath,
  realpathSync: fs.realpathSync,
  stat: fs.stat,
  statSync: fs.statSync,
  rmdir: fs.rmdir,
  rmdirSync: fs.rmdirSync,
  utimes: fs.utimes,
  utimesSync: fs.utimesSync,
};

/**
 * proper-lockfile's lock on `base`, kept at `lockPath`, taken now or not at
 * all (its error, `ELOCKED` when another process holds it). Returns the
 * release function.
 */
export function tryLockFile(base: string, lockPath: string, staleMs: number): () => void {
  return lockfile().lockSync(base, {
    realpath: false,
    lockfilePath: lockPath,
    fs: LOCK_FS,
    stale: staleMs,
    // A lock we lost (e.g. the machine slept past `stale`) is reported on
    // release instead of crashing the process from a timer.
    onCompromised: () => {},
  });
}

/** How {@link lockFileWithin} waits. */
export interface LockWait {
  readonly staleMs: number;
  /** `Date.now()` after which it gives up. */
  readonly deadline: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  /** The error to throw at the deadline. */
  timeout(): Error;
  /** Called when the lock's directory is missing, before trying again; without it that is an error. */
  onMissing?(): void;
}

/**
 * {@link tryLockFile}, retried with jittered exponential backoff until the
 * deadline. Returns the release function.
 */
export async function lockFileWithin(base: string, lockPath: string, wait: LockWait): Promise<() => void> {
  let delay = wait.retryMinMs;
  for (;;) {
    try {
      return tryLockFile(base, lockPath, wait.staleMs);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENOENT' && wait.onMissing) {
        wait.onMissing();
        continue;
      }
      if (code !== 'ELOCKED') throw err;
    }
    const left = wait.deadline - Date.now();
    if (left <= 0) throw wait.timeout();
    await sleep(Math.min(left, delay * (0.5 + Math.random())));
    delay = Math.min(wait.retryMaxMs, delay * 2);
  }
}
