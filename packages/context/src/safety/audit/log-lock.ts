/**
 * The audit log's locks, shared by every process that has the log open.
 *
 * Appends from several processes take turns: each append holds the write
 * lock only while it writes its line, so a CLI command, an MCP server and a
 * library user can record into one chain at once. The locks are SQLite's
 * (POSIX advisory locks on a small database file beside the log, which holds
 * no data): the kernel releases them when a process dies, so a killed writer
 * never leaves a lock behind and no pid file has to be judged stale — judging
 * one is racy (two processes can each decide it is stale and both take it).
 *
 * Every open trail also holds a shared lock for as long as it is open, so a
 * reset (which deletes the log) is refused while any process has it open.
 *
 * @module
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fsError } from '@ctxfs/core';
import { API_REMEDIES, type AuditRemedies } from './remedies.ts';

/** The lock file's name in the log directory. */
export const LOCK_FILE = 'audit-lock.db';

/** How long an append waits for another process's append (a process stopped mid-append holds it). */
export const APPEND_WAIT_MS = 10_000;

function busy(dir: string, what: string, cause: unknown): Error {
  return fsError('EBUSY', 'audit', undefined, {
    reason: `the audit log in ${dir} ${what}`,
    hint: 'retry; a process stopped while appending (SIGSTOP, a debugger) holds the log until it continues or exits',
    cause,
  });
}

function isBusy(err: unknown): boolean {
  const e = err as { errcode?: number; message?: string };
  // SQLITE_BUSY (5) and its extended codes; the message is the fallback for older Node builds.
  return (typeof e.errcode === 'number' && (e.errcode & 0xff) === 5) || /database is locked|SQLITE_BUSY/i.test(String(e.message));
}

/** The identity of the file at `path` (device and inode), or undefined when there is none. */
function fileIdentity(path: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st === undefined ? undefined : `${st.dev}:${st.ino}`;
}

function replaced(dir: string, remedies: AuditRemedies, cause?: unknown): Error {
  return fsError('EIO', 'audit', undefined, {
    reason: `the audit log directory ${dir} was deleted or replaced while this trail had it open: its lock no longer keeps out the processes that opened the new one, and appending would fork the chain`,
    hint: `open the trail again (restart the command or the MCP server); with an index, the new log names the chain that is gone in its start header, and ${remedies.verify} reports it`,
    cause,
  });
}

/** One process's handle on a log directory's locks. */
export class LogLock {
  readonly dir: string;
  readonly #write: DatabaseSync;
  readonly #remedies: AuditRemedies;
  readonly #open: DatabaseSync;
  /** The lock file this handle locks; another file at its path locks nothing against this one. */
  readonly #identity: string | undefined;
  #depth = 0;
  #closed = false;

  private constructor(dir: string, write: DatabaseSync, open: DatabaseSync, remedies: AuditRemedies) {
    this.dir = dir;
    this.#remedies = remedies;
    this.#write = write;
    this.#open = open;
    this.#identity = fileIdentity(join(dir, LOCK_FILE));
  }

  /** The device and inode of the lock file this handle locks: another handle on the same log has the same. */
  get identity(): string | undefined {
    return this.#identity;
  }

  /** Opens the locks of `dir` and takes the shared "open" lock. */
  static open(dir: string, remedies: AuditRemedies = API_REMEDIES): LogLock {
    const path = join(dir, LOCK_FILE);
    const write = new DatabaseSync(path, { timeout: APPEND_WAIT_MS });
    let open: DatabaseSync | undefined;
    try {
      open = new DatabaseSync(path, { timeout: APPEND_WAIT_MS });
      // A read transaction keeps a SHARED lock until it ends: that is what "open" means to reset.
      open.exec('BEGIN');
      open.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (err) {
      open?.close();
      write.close();
      if (isBusy(err)) throw busy(dir, 'is being reset', err);
      throw err;
    }
    return new LogLock(dir, write, open, remedies);
  }

  /**
   * Runs `body` holding the write lock (re-entrant: nested calls share the
   * outer hold). Waits up to {@link APPEND_WAIT_MS} for another process.
   */
  hold<T>(body: () => T): T {
    if (this.#closed) throw fsError('ECLOSED', 'audit', undefined, { reason: 'the audit trail is closed' });
    if (this.#depth > 0) {
      this.#depth++;
      try {
        return body();
      } finally {
        this.#depth--;
      }
    }
    try {
      this.#write.exec('BEGIN IMMEDIATE');
    } catch (err) {
      if (isBusy(err)) throw busy(this.dir, `has been held by another process for ${APPEND_WAIT_MS / 1000} s`, err);
      if (fileIdentity(join(this.dir, LOCK_FILE)) !== this.#identity) throw replaced(this.dir, this.#remedies, err);
      throw err;
    }
    this.#depth = 1;
    try {
      // Deleted (`rm -rf` of the log directory) or replaced under an open trail, SQLite locks the unlinked file,
      // which keeps out no process that opened the new one (or fails with a bare "disk I/O error", above).
      if (fileIdentity(join(this.dir, LOCK_FILE)) !== this.#identity) throw replaced(this.dir, this.#remedies);
      return body();
    } finally {
      this.#depth = 0;
      // Nothing is written in the transaction: rolling it back only releases the lock (a COMMIT
      // would wait for the other processes' shared locks).
      this.#write.exec('ROLLBACK');
    }
  }

  /** Releases both locks. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#open.exec('ROLLBACK');
    } finally {
      this.#open.close();
      this.#write.close();
    }
  }

  /**
   * Runs `body` with the log to itself: no process has it open. Refused with
   * `EBUSY` at once when one has.
   */
  static exclusive<T>(dir: string, body: () => T): T {
    const db = new DatabaseSync(join(dir, LOCK_FILE), { timeout: 0 });
    try {
      try {
        db.exec('BEGIN EXCLUSIVE');
      } catch (err) {
        if (!isBusy(err)) throw err;
        throw fsError('EBUSY', 'audit', undefined, {
          reason: `the audit log in ${dir} is open in a process`,
          hint: 'close every AuditTrail on this log (stop the MCP server or command using it) first',
          cause: err,
        });
      }
      try {
        return body();
      } finally {
        db.exec('ROLLBACK');
      }
    } finally {
      db.close();
    }
  }
}
