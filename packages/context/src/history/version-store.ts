/**
 * Version storage: file contents kept once by SHA-256 (as deltas against
 * their neighbours, see {@link BlobStore}), and per-file version rows that
 * point at them. A version is
 * a state of one path — its content hash, or `undefined` for "deleted" —
 * with who made it and why. Retention drops the oldest versions beyond a
 * count per file and a byte budget overall, never a file's latest version.
 *
 * @module
 */

import { LruCache } from '../content/lru.ts';
import type { SqlValue, StateStore } from '../state/state-store.ts';
import { BlobStore, sha256Hex } from './blob-store.ts';

export { sha256Hex };

/** How a version came to be. */
export type VersionOp =
  | 'initial'
  | 'external'
  | 'write'
  | 'create'
  | 'patch'
  | 'replace'
  | 'edit-lines'
  | 'delete'
  | 'rename'
  | 'rollback'
  | 'undo'
  | 'merge'
  | 'recovered';

/** One version of one file. */
export interface FileVersion {
  readonly path: string;
  /** 1-based position in the file's history. */
  readonly seq: number;
  /** Content hash; `undefined` when this version is "the file was deleted". */
  readonly sha256: string | undefined;
  readonly size: number;
  readonly op: VersionOp;
  /** `user`, `llm:<backend>`, `tool:<name>`, `external`, `initial`. */
  readonly author: string;
  readonly message: string | undefined;
  /** Versions written by one call (a multi-file patch, a rename) share it. */
  readonly changeId: string | undefined;
  /** For a rename: the other path. */
  readonly relatedPath: string | undefined;
  /** For an undo: the `seq` of the version it reverted. */
  readonly undoOf: number | undefined;
  readonly createdAt: Date;
}

/** Retention limits; the newest version of every file is always kept. */
export interface RetentionOptions {
  /** Most versions kept per file; default 1,000. */
  maxVersionsPerFile?: number;
  /** Most bytes of stored content (after compression) overall; default 512 MiB. */
  maxBytes?: number;
}

/** Blob hashes a version store remembers as stored (64 bytes of key each: about 0.5 MiB). */
const SEEN_BLOBS = 4096;

/** The limits `prune()` applies where none are given. */
export const DEFAULT_RETENTION: Readonly<Required<RetentionOptions>> = { maxVersionsPerFile: 1000, maxBytes: 512 * 1024 * 1024 };

/** What a prune removed. */
export interface PruneResult {
  readonly versionsRemoved: number;
  readonly blobsRemoved: number;
  readonly bytesFreed: number;
}

interface HistoryRow {
  path: string;
  seq: number;
  sha256: string | null;
  size: number;
  op: string;
  author: string;
  message: string | null;
  change_id: string | null;
  related_path: string | null;
  undo_of: number | null;
  created_ms: number;
}

function fromRow(r: HistoryRow): FileVersion {
  return {
    path: r.path,
    seq: Number(r.seq),
    sha256: r.sha256 ?? undefined,
    size: Number(r.size),
    op: r.op as VersionOp,
    author: r.author,
    message: r.message ?? undefined,
    changeId: r.change_id ?? undefined,
    relatedPath: r.related_path ?? undefined,
    undoOf: r.undo_of === null ? undefined : Number(r.undo_of),
    createdAt: new Date(Number(r.created_ms)),
  };
}

/** What {@link VersionStore.append} records. */
export interface AppendEntry {
  path: string;
  sha256: string | undefined;
  size: number;
  op: VersionOp;
  author: string;
  message?: string | undefined;
  changeId?: string | undefined;
  relatedPath?: string | undefined;
  undoOf?: number | undefined;
  /** The session that made the change. */
  sessionId?: string | undefined;
}

/** A `history` row's values in column order, its seq `null` (the caller's to fill). */
function historyValues(entry: AppendEntry, now: number): SqlValue[] {
  return [
    entry.path,
    null,
    entry.sha256 ?? null,
    entry.size,
    entry.op,
    entry.author,
    entry.message ?? null,
    entry.changeId ?? null,
    entry.relatedPath ?? null,
    entry.undoOf ?? null,
    now,
    entry.sessionId ?? null,
  ];
}

function versionOf(entry: AppendEntry, seq: number, now: number): FileVersion {
  return fromRow({
    path: entry.path,
    seq,
    sha256: entry.sha256 ?? null,
    size: entry.size,
    op: entry.op,
    author: entry.author,
    message: entry.message ?? null,
    change_id: entry.changeId ?? null,
    related_path: entry.relatedPath ?? null,
    undo_of: entry.undoOf ?? null,
    created_ms: now,
  });
}

/** Whether a new version's blob, stored whole with nothing based on it, is to become a delta against the file's previous content. */
function deltaWanted(sha256: string | undefined, last: { prev: string | null; whole: number | null; dependent: number | null }): boolean {
  return sha256 !== undefined && last.prev !== null && last.prev !== sha256 && Number(last.whole) === 1 && last.dependent === null;
}

/**
 * The content-addressed store and the version table.
 *
 * @example
 * ```ts
 * const versions = new VersionStore(store);
 * const sha = await versions.putBlob(new TextEncoder().encode('hello\n'));
 * await versions.append({ path: 'a.txt', sha256: sha, size: 6, op: 'write', author: 'user' });
 * (await versions.latest('a.txt'))?.seq; // 1
 * ```
 */
export class VersionStore {
  readonly store: StateStore;
  /** The contents, delta-encoded. */
  readonly blobs: BlobStore;

  /**
   * Blobs this store stored or found stored, newest last: {@link seenStored}
   * answers from it. Emptied by this store's {@link prune}.
   */
  readonly #seen = new LruCache<string, true>(SEEN_BLOBS);

  constructor(store: StateStore) {
    this.store = store;
    this.blobs = new BlobStore(store);
  }

  /**
   * Whether `sha256` is stored, from memory when this store stored or found
   * it before. For best-effort callers only (the content a model was served,
   * kept as a later merge's base): a re-read of a version asks the store
   * once, not on every read. Another process's prune can make a remembered
   * answer stale, and the caller then goes without what it wanted (a stale
   * edit of that version is refused instead of merged); anything that must
   * be stored uses {@link putBlob}, which always asks.
   */
  async seenStored(sha256: string): Promise<boolean> {
    if (this.#seen.get(sha256) === true) return true;
    const found = await this.blobs.has(sha256);
    if (found) this.#seen.set(sha256, true);
    return found;
  }

  /**
   * Stores `bytes` once (by hash) and returns the hash. `options.near` names
   * the stored version the bytes most likely resemble (the one they
   * replace), so they are kept as a delta against it; without it the blob
   * stored or read last is tried, and {@link append} retries against the
   * file's previous version.
   */
  async putBlob(bytes: Uint8Array, sha256: string = sha256Hex(bytes), options: { near?: string | undefined } = {}): Promise<string> {
    const stored = await this.blobs.put(bytes, sha256, options.near);
    // Not remembered inside a transaction: a rollback would undo the store but not the memory.
    if (!this.store.inTransaction) this.#seen.set(stored, true);
    return stored;
  }

  /**
   * {@link putBlob} inside a transaction without waiting for it where the
   * store pipelines (PostgreSQL; see {@link BlobStore.putPiped}): `near` is
   * the content the bytes replace, with its bytes, the delta's base. The
   * answer, once the transaction has committed (`stored`), is whether the blob is
   * stored; `false` asks the caller to {@link putBlob} it (a base the server
   * found without room). Elsewhere it is {@link putBlob}, answered `true`.
   */
  async putBlobPiped(bytes: Uint8Array, near?: { readonly sha256: string; readonly bytes: Uint8Array }): Promise<{ readonly stored: Promise<boolean> }> {
    const sha256 = sha256Hex(bytes);
    if (this.store.dialect !== 'postgres' || !this.store.inTransaction) {
      await this.putBlob(bytes, sha256);
      return { stored: Promise.resolve(true) };
    }
    return this.blobs.putPiped(bytes, sha256, near);
  }

  hasBlob(sha256: string): Promise<boolean> {
    return this.blobs.has(sha256);
  }

  /** The stored bytes of `sha256`, or `undefined` when never stored or pruned. */
  getBlob(sha256: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(sha256);
  }

  /** Appends a version of `entry.path` and returns it. */
  async append(entry: AppendEntry): Promise<FileVersion> {
    // The file's last seq and last content, and whether the new content is stored whole with
    // no blob a delta against it (what deltify asks), in one round trip.
    const last = (await this.store.get(
      'SELECT (SELECT MAX(seq) FROM history WHERE path = ?) AS seq, (SELECT sha256 FROM history WHERE path = ? AND sha256 IS NOT NULL ORDER BY seq DESC LIMIT 1) AS prev, (SELECT CASE WHEN base IS NULL THEN 1 ELSE 0 END FROM blobs WHERE sha256 = ?) AS whole, (SELECT 1 FROM blobs WHERE base = ? LIMIT 1) AS dependent',
      [entry.path, entry.path, entry.sha256 ?? null, entry.sha256 ?? null],
    )) as { seq: number | null; prev: string | null; whole: number | null; dependent: number | null };
    const seq = Number(last.seq ?? 0) + 1;
    const now = Date.now();
    // Now that the blob's predecessor is known, keep it as a delta against it if it was stored whole.
    if (deltaWanted(entry.sha256, last)) await this.blobs.deltify(entry.sha256 as string, last.prev as string);
    const values = historyValues(entry, now);
    values[1] = seq;
    await this.store.write(
      'INSERT INTO history (path, seq, sha256, size, op, author, message, change_id, related_path, undo_of, created_ms, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      values,
    );
    return versionOf(entry, seq, now);
  }

  /**
   * {@link append} without waiting inside a transaction where the store
   * pipelines (PostgreSQL): the version's `seq` is the file's next, counted
   * by the server in the statement that inserts it (under the transaction's
   * writer lock, so no other writer takes it), answered with the commit.
   * Call what it returns once the transaction has committed: it gives the
   * version, and keeps its blob as a delta against the file's previous
   * content as {@link append} does (the insert returns what that needs).
   * Elsewhere it is {@link append}.
   */
  async appendPiped(entry: AppendEntry): Promise<() => Promise<FileVersion>> {
    if (this.store.dialect !== 'postgres' || !this.store.inTransaction) {
      const version = await this.append(entry);
      return () => Promise.resolve(version);
    }
    const now = Date.now();
    const v = historyValues(entry, now);
    const sent = await this.store.writeReturning<{ seq: number; prev: string | null; whole: number | null; dependent: number | null }>(
      `INSERT INTO history (path, seq, sha256, size, op, author, message, change_id, related_path, undo_of, created_ms, session_id)
       SELECT ?::text, COALESCE(MAX(seq), 0) + 1, ?::text, ?::bigint, ?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint, ?::double precision, ?::text FROM history WHERE path = ?
       RETURNING seq, (SELECT h.sha256 FROM history h WHERE h.path = ? AND h.sha256 IS NOT NULL ORDER BY h.seq DESC LIMIT 1) AS prev,
         (SELECT CASE WHEN base IS NULL THEN 1 ELSE 0 END FROM blobs WHERE sha256 = ?) AS whole, (SELECT 1 FROM blobs WHERE base = ? LIMIT 1) AS dependent`,
      [v[0] as SqlValue, ...v.slice(2), entry.path, entry.path, entry.sha256 ?? null, entry.sha256 ?? null],
    );
    return async () => {
      const row = (await sent.rows)[0] as { seq: number; prev: string | null; whole: number | null; dependent: number | null };
      // Storage only, in a transaction of its own: the version stands whether or not its blob becomes a delta.
      if (deltaWanted(entry.sha256, row)) await this.blobs.deltify(entry.sha256 as string, row.prev as string).catch(() => false);
      return versionOf(entry, Number(row.seq), now);
    };
  }

  /** The newest version of `path`. */
  async latest(path: string): Promise<FileVersion | undefined> {
    const row = (await this.store.get('SELECT * FROM history WHERE path = ? ORDER BY seq DESC LIMIT 1', [path])) as HistoryRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Versions of `path`, newest first. */
  async list(path: string, limit = 50, beforeSeq?: number): Promise<FileVersion[]> {
    const params: SqlValue[] = [path];
    let sql = 'SELECT * FROM history WHERE path = ?';
    if (beforeSeq !== undefined) {
      sql += ' AND seq < ?';
      params.push(beforeSeq);
    }
    sql += ' ORDER BY seq DESC LIMIT ?';
    params.push(limit);
    return ((await this.store.all(sql, params)) as unknown as HistoryRow[]).map(fromRow);
  }

  /** Version `seq` of `path`. */
  async bySeq(path: string, seq: number): Promise<FileVersion | undefined> {
    const row = (await this.store.get('SELECT * FROM history WHERE path = ? AND seq = ?', [path, seq])) as HistoryRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The newest version of `path` whose hash starts with `prefix`; `ambiguous` when prefixes of different hashes match. */
  async byHash(path: string, prefix: string): Promise<FileVersion | 'ambiguous' | undefined> {
    // Hashes are stored in lower case; PostgreSQL's LIKE, unlike SQLite's, minds case.
    prefix = prefix.toLowerCase();
    const rows = (await this.store.all("SELECT * FROM history WHERE path = ? AND sha256 LIKE ? || '%' ORDER BY seq DESC", [
      path,
      prefix,
    ])) as unknown as HistoryRow[];
    if (rows.length === 0) return undefined;
    const distinct = new Set(rows.map((r) => r.sha256));
    if (distinct.size > 1) return 'ambiguous';
    return fromRow(rows[0] as HistoryRow);
  }

  /** Number of versions of `path`. */
  async count(path: string): Promise<number> {
    const row = (await this.store.get('SELECT COUNT(*) AS n FROM history WHERE path = ?', [path])) as { n: number };
    return Number(row.n);
  }

  /** Bytes of stored content (compressed and delta-encoded size). */
  storedBytes(): Promise<number> {
    return this.blobs.storedBytes();
  }

  /**
   * Applies the retention limits: per file, versions beyond the count are
   * dropped oldest first; then, while stored content exceeds the byte
   * budget, the oldest non-latest versions anywhere are dropped. Content no
   * version (and no pending journal entry) refers to is deleted.
   */
  prune(options: RetentionOptions = {}): Promise<PruneResult> {
    const maxVersions = Math.max(1, options.maxVersionsPerFile ?? DEFAULT_RETENTION.maxVersionsPerFile);
    const maxBytes = options.maxBytes ?? DEFAULT_RETENTION.maxBytes;
    // Forgotten before and after: a read that finds a blob while the prune runs must not keep it remembered.
    this.#seen.clear();
    return this.#prune(maxVersions, maxBytes).finally(() => this.#seen.clear());
  }

  #prune(maxVersions: number, maxBytes: number): Promise<PruneResult> {
    return this.store.transaction(async () => {
      let versionsRemoved = 0;
      const over = (await this.store.all('SELECT path, MAX(seq) AS top, COUNT(*) AS n FROM history GROUP BY path HAVING COUNT(*) > ?', [
        maxVersions,
      ])) as Array<{
        path: string;
        top: number;
        n: number;
      }>;
      for (const o of over) {
        const r = await this.store.run('DELETE FROM history WHERE path = ? AND seq <= ?', [o.path, Number(o.top) - maxVersions]);
        versionsRemoved += Number(r.changes);
      }
      let { blobsRemoved, bytesFreed } = await this.#collect();
      while ((await this.storedBytes()) > maxBytes) {
        // The oldest 64 versions that are not their file's latest.
        const victims = (await this.store.all(
          'SELECT h.id FROM history h WHERE h.seq < (SELECT MAX(seq) FROM history WHERE path = h.path) ORDER BY h.created_ms, h.id LIMIT 64',
        )) as Array<{ id: number }>;
        if (victims.length === 0) break;
        for (const v of victims) await this.store.run('DELETE FROM history WHERE id = ?', [v.id]);
        versionsRemoved += victims.length;
        const c = await this.#collect();
        blobsRemoved += c.blobsRemoved;
        bytesFreed += c.bytesFreed;
      }
      // A request id whose change left history answers no retry any more; an id still in the journal may yet.
      await this.store.run(
        'DELETE FROM request_calls WHERE change_id NOT IN (SELECT change_id FROM history WHERE change_id IS NOT NULL) AND change_id NOT IN (SELECT change_id FROM edit_journal)',
      );
      return { versionsRemoved, blobsRemoved, bytesFreed };
    });
  }

  async #collect(): Promise<{ blobsRemoved: number; bytesFreed: number }> {
    const journal = (await this.store.all('SELECT entries FROM edit_journal')) as Array<{ entries: string }>;
    const pinned = new Set<string>();
    for (const j of journal) {
      for (const e of JSON.parse(j.entries) as Array<{ before?: string | null; after?: string | null }>) {
        if (e.before) pinned.add(e.before);
        if (e.after) pinned.add(e.after);
      }
    }
    // A blob no version refers to may still be what an agent read (the base a stale edit is merged
    // against; reads have a retention of their own) or a file's first content, which has no version
    // row until it is replaced: neither is garbage.
    // Deepest first: a delta goes before its base, so dropping the old part of a chain stores one version whole, not each in turn.
    const orphans = (await this.store.all(
      `SELECT sha256 FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM history WHERE sha256 IS NOT NULL)
         AND sha256 NOT IN (SELECT sha256 FROM session_reads) AND sha256 NOT IN (SELECT sha256 FROM files WHERE sha256 IS NOT NULL)
       ORDER BY depth DESC`,
    )) as Array<{
      sha256: string;
    }>;
    let blobsRemoved = 0;
    const before = await this.storedBytes();
    for (const o of orphans) {
      if (pinned.has(o.sha256)) continue;
      // Versions stored as deltas against it are stored whole first, so freed bytes are counted net.
      await this.blobs.remove(o.sha256);
      blobsRemoved++;
    }
    return { blobsRemoved, bytesFreed: blobsRemoved === 0 ? 0 : Math.max(0, before - (await this.storedBytes())) };
  }
}
