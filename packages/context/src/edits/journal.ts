/**
 * The write-ahead journal that keeps files and their version records in
 * agreement. Before any byte is written, one transaction stores the old and
 * new contents and an intent row naming every file of the change with its
 * hash before and after. The files are then written (each atomically by the
 * backend), and a second transaction appends the versions and deletes the
 * intent. A process that dies in between leaves the intent behind; on the
 * next open {@link EditJournal.recover} looks at the disk: when every file
 * holds its new content the versions are recorded, otherwise every file that
 * was already written is put back — a change is recorded completely or not
 * at all, and never half-applied.
 *
 * Several processes share one state store, so an intent names its owner:
 * the host, the process and a token of the journal that wrote it. Recovery
 * settles only the intents of owners that are gone — a process that no
 * longer exists, or a journal of this process that was closed — and leaves
 * alone a change another process (or another context of this one) is still
 * making: settling it would record that change a second time when its
 * writer records it.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Filesystem, isFsError } from '@ctxfs/core';
import type { FileVersion, VersionOp, VersionStore } from '../history/version-store.ts';
import type { StateStore } from '../state/state-store.ts';
import { diskHash } from './file-text.ts';

/** One file of a journaled change. `null` hashes mean "absent". */
export interface JournalEntry {
  readonly path: string;
  readonly before: string | null;
  readonly after: string | null;
  readonly op: VersionOp;
  readonly size: number;
  readonly relatedPath?: string | undefined;
  readonly undoOf?: number | undefined;
}

/** A content a change writes, and the content it replaces (what it is best stored as a delta against), with its bytes. */
export interface JournalBlob {
  readonly bytes: Uint8Array;
  readonly near?: { readonly sha256: string; readonly bytes: Uint8Array } | undefined;
}

/** A change announced but not yet recorded. */
export interface PendingChange {
  readonly id: number;
  readonly changeId: string;
  readonly op: string;
  readonly author: string;
  readonly message: string | undefined;
  readonly entries: readonly JournalEntry[];
  /** The session that made it, recorded on its versions. */
  readonly sessionId?: string | undefined;
  /** The audit record of the call, written with the change's versions (see {@link JournalOptions.onRecorded}). */
  readonly audit?: unknown;
  /** Who is making it: `host\tpid\ttoken` (absent on intents written before owners were recorded). */
  readonly owner?: string | undefined;
}

/** Options of {@link EditJournal}. */
export interface JournalOptions {
  /**
   * Called inside the transaction that records a change (at once, or by
   * recovery after a crash) with the audit record it carried: so a recorded
   * change always has its audit record, and a record always its change.
   */
  onRecorded?: (audit: unknown, change: PendingChange, recovered: boolean) => void | Promise<void>;
  /**
   * Whether an intent is committed durably (see {@link EditJournal.begin});
   * default `true`. Pass the filesystem's `durableWrites`: over a backend
   * that does not flush its files (the memory backend, the host backend with
   * `durability: 'none'`) a machine's crash can lose the files' new bytes
   * whatever the intent, so flushing the intent would cost without
   * protecting anything.
   */
  durable?: boolean | undefined;
}

/** What {@link EditJournal.recover} did with each pending change. */
export interface RecoveryReport {
  /** Changes found complete on disk and recorded. */
  readonly completed: readonly string[];
  /** Changes found partial or absent on disk and undone. */
  readonly rolledBack: readonly string[];
  /** Files that held neither the old nor the new content (changed by someone else since); left alone. */
  readonly untouched: readonly string[];
  /** Changes whose writer is still running (another process, or another open journal of this one); left to it. */
  readonly inFlight: readonly string[];
}

/** Tokens of the journals open in this process. */
const openJournals = new Set<string>();
const HOST = hostname();

/** Whether process `pid` of this machine exists (under any user). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the writer of an intent is gone. Another machine's intents are
 * never judged here (its processes cannot be seen); a pid reused by an
 * unrelated process only delays recovery until that process exits.
 */
function ownerGone(owner: string | undefined): boolean {
  if (owner === undefined) return true;
  const [host, pidText, token] = owner.split('\t');
  if (host !== HOST) return false;
  const pid = Number(pidText);
  if (pid === process.pid) return token === undefined || !openJournals.has(token);
  return !(Number.isInteger(pid) && pid > 0 && processExists(pid));
}

/** Test hook: called at the named points of a journaled write. */
export type CrashHook = (point: 'after-intent' | 'after-write' | 'before-record', index: number, path: string) => void | Promise<void>;

/**
 * The journal over a state store.
 *
 * @example
 * ```ts
 * const journal = new EditJournal(store, versions);
 * const report = await journal.recover(fs); // on open
 * ```
 */
export class EditJournal {
  readonly store: StateStore;
  readonly versions: VersionStore;
  readonly #onRecorded: JournalOptions['onRecorded'];
  readonly #durable: boolean;
  readonly #token = randomUUID();
  /** Intents whose record or removal failed after their files were written (or put back): settled by {@link settleOwn}. */
  readonly #unsettled = new Set<number>();
  /**
   * Change ids whose intent may be in the store although no call of this
   * journal is making the change: a {@link begin} whose answer was lost (the
   * connection dropped between the server's COMMIT and its reply). Without
   * this, an intent naming a live owner is in flight until that process
   * exits, and a retry of its request id is refused as being applied.
   */
  readonly #orphaned = new Set<string>();
  /** Change ids whose {@link begin} is running, and the intents begun and not yet settled: never orphans. */
  readonly #beginning = new Map<string, number>();
  readonly #active = new Set<number>();
  /** What this journal's intents name as their owner. */
  readonly owner = `${HOST}\t${process.pid}\t${this.#token}`;

  constructor(store: StateStore, versions: VersionStore, options: JournalOptions = {}) {
    this.store = store;
    this.versions = versions;
    this.#onRecorded = options.onRecorded;
    this.#durable = options.durable !== false;
    openJournals.add(this.#token);
  }

  /**
   * Marks this journal closed: a change it left unfinished is then settled by
   * the next recovery, in this process or another. Idempotent.
   */
  close(): void {
    openJournals.delete(this.#token);
  }

  /**
   * Stores the contents and the intent in one durable transaction (on disk
   * before the files it announces are written, or a machine's crash could
   * keep a file's new bytes and lose the intent that explains them); returns
   * the intent. Under {@link JournalOptions.durable} `false` (files the
   * backend does not flush) the transaction is an ordinary one, which still
   * survives a killed process.
   */
  async begin(change: {
    op: string;
    author: string;
    message?: string | undefined;
    entries: readonly JournalEntry[];
    /** The contents to store: bytes, or bytes with the content they replace (their delta's base; see {@link JournalBlob}). */
    blobs: ReadonlyArray<Uint8Array | JournalBlob>;
    sessionId?: string | undefined;
    audit?: unknown;
    /** The change's id; default a new UUID (a caller's request id, so a retry finds it). */
    changeId?: string | undefined;
    /** What call a caller's request id was given for (see `requestFingerprint`); kept with the intent, so a change recovery records has it too. */
    fingerprint?: string | undefined;
  }): Promise<PendingChange> {
    const changeId = change.changeId ?? randomUUID();
    const blobs = change.blobs.map((b) => (b instanceof Uint8Array ? { bytes: b } : b));
    const { inserted, stored } = await this.#intent(changeId, () =>
      this.store.transaction(
        async () => {
          // On PostgreSQL the contents, the intent and the COMMIT go out together: one round trip.
          const stored: Array<Promise<boolean>> = [];
          for (const b of blobs) stored.push((await this.versions.putBlobPiped(b.bytes, b.near)).stored);
          if (change.fingerprint !== undefined) {
            // An id whose earlier change was refused or put back is free again: its call is the latest one.
            await this.store.write(
              'INSERT INTO request_calls (change_id, fingerprint, created_ms) VALUES (?, ?, ?) ON CONFLICT (change_id) DO UPDATE SET fingerprint = excluded.fingerprint, created_ms = excluded.created_ms',
              [changeId, change.fingerprint, Date.now()],
            );
          }
          // Its id is taken after the commit: on PostgreSQL the insert and the COMMIT share a round trip.
          const inserted = await this.store.writeReturning<{ id: number }>(
            'INSERT INTO edit_journal (change_id, op, author, message, entries, created_ms, session_id, audit, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
            [
              changeId,
              change.op,
              change.author,
              change.message ?? null,
              JSON.stringify(change.entries),
              Date.now(),
              change.sessionId ?? null,
              change.audit === undefined ? null : JSON.stringify(change.audit),
              this.owner,
            ],
          );
          return { inserted, stored };
        },
        { durable: this.#durable },
      ),
    );
    const row = (await this.#intent(changeId, () => inserted.rows))[0] as { id: number };
    // A content the server did not take as a delta (its base gone, or its chain full) is stored now, still
    // before any file is written. When that fails the intent is stored and its caller told it failed: an
    // orphan like the others, whose files were never written (recovery drops it).
    await this.#intent(changeId, async () => {
      for (const [i, ok] of (await Promise.all(stored)).entries()) {
        if (!ok) await this.versions.putBlob((blobs[i] as JournalBlob).bytes, undefined, { near: blobs[i]?.near?.sha256 });
      }
    });
    this.#active.add(Number(row.id));
    return {
      id: Number(row.id),
      changeId,
      op: change.op,
      author: change.author,
      message: change.message,
      entries: change.entries,
      sessionId: change.sessionId,
      audit: change.audit,
      owner: this.owner,
    };
  }

  /** Runs a step of writing `changeId`'s intent; when it fails, the intent may be stored all the same, and is nobody's in flight. */
  async #intent<T>(changeId: string, step: () => Promise<T>): Promise<T> {
    this.#beginning.set(changeId, (this.#beginning.get(changeId) ?? 0) + 1);
    try {
      return await step();
    } catch (err) {
      this.#orphaned.add(changeId);
      throw err;
    } finally {
      const n = (this.#beginning.get(changeId) ?? 1) - 1;
      if (n === 0) this.#beginning.delete(changeId);
      else this.#beginning.set(changeId, n);
    }
  }

  /** Appends the versions of a written change and clears its intent, atomically (with its audit record, if it carries one). */
  commit(pending: PendingChange, recovered = false): Promise<FileVersion[]> {
    return this.#settling(pending, () => this.#record(pending, recovered));
  }

  /** Runs the transaction that settles `pending`; when it fails the intent is marked this journal's to settle again. */
  async #settling<T>(pending: PendingChange, settle: () => Promise<T>): Promise<T> {
    try {
      const out = await settle();
      this.#unsettled.delete(pending.id);
      return out;
    } catch (err) {
      this.#unsettled.add(pending.id);
      throw err;
    } finally {
      this.#active.delete(pending.id);
    }
  }

  async #record(pending: PendingChange, recovered: boolean): Promise<FileVersion[]> {
    const versions = await this.store.transaction(async () => {
      // An intent settled after the fact may have been settled already (by its writer's next call, by
      // recovery, by another process that found its content on disk): its row gone, it is not recorded twice.
      // Writers serialize, so the row seen here is the row at commit. Not asked on an edit's own record.
      if (recovered && (await this.store.get('SELECT 1 AS x FROM edit_journal WHERE id = ?', [pending.id])) === undefined) return [];
      // On PostgreSQL the versions (each file's next seq counted by the server), the audit record, the intent's
      // removal and the COMMIT go out together: one round trip. Each version is taken after the commit.
      const out: Array<() => Promise<FileVersion>> = [];
      for (const e of pending.entries) {
        out.push(
          await this.versions.appendPiped({
            path: e.path,
            sha256: e.after ?? undefined,
            size: e.size,
            op: e.op,
            author: pending.author,
            message: pending.message,
            changeId: pending.changeId,
            relatedPath: e.relatedPath,
            undoOf: e.undoOf,
            sessionId: pending.sessionId,
          }),
        );
      }
      if (pending.audit !== undefined) await this.#onRecorded?.(pending.audit, pending, recovered);
      await this.store.write('DELETE FROM edit_journal WHERE id = ?', [pending.id]);
      return out;
    });
    const out: FileVersion[] = [];
    for (const version of versions) out.push(await version());
    return out;
  }

  /**
   * The intent of a change, not recorded yet, that writes `path` as
   * `sha256`: in flight, or one whose writer could not record it (its store
   * call failed). Content on disk that such a change wrote is not an outside
   * edit.
   */
  async writing(path: string, sha256: string): Promise<PendingChange | undefined> {
    return (await this.pending()).find((p) => p.entries.some((e) => e.path === path && e.after === sha256));
  }

  /**
   * Records `pending`, a change its writer wrote but could not record (it is
   * alive, and will find it recorded), when every file of it holds its new
   * content: the change is its author's, not an outside edit of whoever
   * comes next. Only for a caller holding the edit locks of its files, so
   * that no writer is in the middle of it. Whether it was recorded (by this
   * call, or already).
   */
  async settleStranded(fs: Filesystem, pending: PendingChange): Promise<boolean> {
    const now = await Promise.all(pending.entries.map(async (e) => (await diskHash(fs, e.path)) ?? null));
    if (!pending.entries.every((e, i) => now[i] === e.after)) return false;
    await this.commit(pending, true);
    return true;
  }

  /**
   * Keeps `pending`, a change its writer could neither finish nor put back,
   * as this journal's to settle against the disk at the next call (see
   * {@link settleOwn}); while it names a live writer nothing else settles it.
   */
  keep(pending: PendingChange): void {
    this.#unsettled.add(pending.id);
    this.#active.delete(pending.id);
  }

  /** Drops an intent whose files were all put back (or never written). */
  async abandon(pending: PendingChange): Promise<void> {
    await this.#settling(pending, () => this.store.run('DELETE FROM edit_journal WHERE id = ?', [pending.id]));
  }

  /** Whether a change of this journal was written but not yet recorded (see {@link settleOwn}). */
  get unsettled(): boolean {
    return this.#unsettled.size > 0 || this.#orphaned.size > 0;
  }

  /**
   * Settles the changes of this journal whose record failed, against the
   * disk as {@link recover} does (with any other settleable intent); a no-op
   * when there are none. Throws what the store throws while it still fails.
   */
  async settleOwn(fs: Filesystem): Promise<RecoveryReport | undefined> {
    return this.#unsettled.size === 0 && this.#orphaned.size === 0 ? undefined : await this.recover(fs);
  }

  /** Intents not yet recorded: changes in flight, and those left by a process that stopped mid-change. */
  async pending(): Promise<PendingChange[]> {
    const rows = (await this.store.all('SELECT * FROM edit_journal ORDER BY id')) as Array<Record<string, unknown>>;
    return rows.map((r) => ({
      id: Number(r.id),
      changeId: String(r.change_id),
      op: String(r.op),
      author: String(r.author),
      message: r.message === null ? undefined : String(r.message),
      entries: JSON.parse(String(r.entries)) as JournalEntry[],
      sessionId: r.session_id === null || r.session_id === undefined ? undefined : String(r.session_id),
      audit: r.audit === null || r.audit === undefined ? undefined : (JSON.parse(String(r.audit)) as unknown),
      owner: r.owner === null || r.owner === undefined ? undefined : String(r.owner),
    }));
  }

  /** Puts `entry.path` back to its `before` state. */
  async restore(fs: Filesystem, entry: JournalEntry): Promise<void> {
    if (entry.before === null) {
      try {
        await fs.delete(entry.path);
      } catch (err) {
        if (!isFsError(err, 'ENOENT')) throw err;
      }
      return;
    }
    const bytes = await this.versions.getBlob(entry.before);
    if (bytes === undefined) throw new Error(`journal: content ${entry.before} of ${entry.path} is missing from the store`);
    await fs.writeBytes(entry.path, bytes, { createParents: true });
  }

  /**
   * Settles every pending change whose writer is gone against the disk (see
   * the module comment); changes still being made are reported `inFlight`.
   * Safe to run at any time.
   */
  async recover(fs: Filesystem): Promise<RecoveryReport> {
    const completed: string[] = [];
    const rolledBack: string[] = [];
    const untouched: string[] = [];
    const inFlight: string[] = [];
    // Taken before the intents are read: an intent whose writing failed after this is left for the next recovery.
    const orphaned = new Set(this.#orphaned);
    const pending = await this.pending();
    // A record whose answer was lost may have landed after all: its intent is gone.
    for (const id of this.#unsettled) if (!pending.some((p) => p.id === id)) this.#unsettled.delete(id);
    // An intent whose writing failed and never landed needs nothing; one that landed is settled below, unless a
    // call of this journal is making a change of the same id (a retry begun meanwhile).
    const orphans = new Set<number>();
    for (const p of pending) {
      if (p.owner === this.owner && orphaned.has(p.changeId) && !this.#active.has(p.id) && !this.#beginning.has(p.changeId)) orphans.add(p.id);
    }
    for (const id of orphaned) this.#orphaned.delete(id);
    for (const p of pending) {
      if (!ownerGone(p.owner) && !this.#unsettled.has(p.id) && !orphans.has(p.id)) {
        inFlight.push(p.changeId);
        continue;
      }
      const states = await Promise.all(p.entries.map(async (e) => ({ e, now: (await diskHash(fs, e.path)) ?? null })));
      if (states.every((s) => s.now === s.e.after)) {
        await this.commit(p, true);
        completed.push(p.changeId);
        continue;
      }
      for (const s of states) {
        if (s.now === s.e.before) continue;
        if (s.now === s.e.after) await this.restore(fs, s.e);
        else untouched.push(s.e.path);
      }
      await this.abandon(p);
      rolledBack.push(p.changeId);
    }
    return { completed, rolledBack, untouched, inFlight };
  }
}
