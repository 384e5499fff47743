/**
 * History's content store: every version's bytes kept once by SHA-256, most
 * of them as a delta against a neighbour.
 *
 * Direction: forward, like Mercurial's revlog and unlike git's packs. A new
 * version is a delta against the one before it, so recording never rewrites
 * a stored row (a version row, once committed, stays as it is: nothing the
 * edit journal relies on moves under it) and costs one delta against bytes
 * the editor has just read, cheaper than compressing the whole file. Git
 * keeps the newest whole and re-encodes the older one on every repack, which
 * suits an offline `gc`, not a store written on every edit.
 *
 * Bounded rebuilds: a blob records its `depth`, the deltas between it and a
 * whole blob. A new version is stored whole (a snapshot) when its
 * neighbour's depth leaves no room: at most {@link MAX_CHAIN} deltas, and
 * fewer for large files, at most {@link REBUILD_BYTES} divided by the size
 * (a 1 MiB file gets a snapshot every 17 versions): a rebuild reads, unpacks
 * and composes every delta of the chain, and a large file's deltas are
 * larger. The chain is composed as lists of pieces and the version copied
 * out once ({@link Pieces}), so a step costs the delta's commands, not a
 * copy of the file. A delta larger than a quarter of its version is not
 * kept either: a version entirely unlike its neighbour is stored whole.
 *
 * Every delta is checked when made (applied and compared) and every rebuilt
 * version against its hash, so a defect here shows as an error, never as
 * wrong bytes.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { fsError } from '@ctxfs/core';
import type { StateStore } from '../state/state-store.ts';
import { type BlobCodec, decodeDelta, decodeWhole, encodeDelta, encodeWhole, isDeltaCodec, Pieces, unpackDelta } from './delta.ts';

/** Most deltas between a stored version and a whole one. */
export const MAX_CHAIN = 64;
/** A file's chain holds at most this many bytes of versions (the chain is shorter for large files). */
export const REBUILD_BYTES = 16 * 1024 * 1024;
// Larger versions are stored whole: making a delta holds both in memory twice over.
const DELTA_MAX_BYTES = 16 * 1024 * 1024;
// Rebuilt and recently stored contents kept in memory: the next version's base is usually among them.
const CACHE_BYTES = 32 * 1024 * 1024;

const HASHES = new WeakMap<Uint8Array, string>();

/**
 * Hex SHA-256 of bytes: the version id everywhere in ctxfs. Remembered per
 * buffer, since one edit asks for the hash of the same bytes several times
 * (callers never mutate a buffer after hashing it).
 */
export function sha256Hex(bytes: Uint8Array): string {
  let h = HASHES.get(bytes);
  if (h === undefined) {
    h = createHash('sha256').update(bytes).digest('hex');
    HASHES.set(bytes, h);
  }
  return h;
}

/** The deltas a version of `size` bytes may sit behind. */
export function maxDepth(size: number): number {
  return Math.min(MAX_CHAIN, Math.floor(REBUILD_BYTES / Math.max(1, size)));
}

interface Encoded {
  codec: BlobCodec;
  content: Uint8Array;
  base: string | null;
  depth: number;
}

/** Whether a base of `size` bytes may hold a delta of `target` bytes: one of very different size shares little. */
function similarSizes(size: number, target: number): boolean {
  return size <= DELTA_MAX_BYTES && size <= target * 4 + 1024 && target <= size * 4 + 1024;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * The `blobs` table, delta-encoded.
 *
 * @example
 * ```ts
 * const blobs = new BlobStore(store);
 * const v1 = await blobs.put(new TextEncoder().encode('a\nb\n'));
 * const v2 = await blobs.put(new TextEncoder().encode('a\nB\n'), undefined, v1); // a delta against v1
 * new TextDecoder().decode(await blobs.get(v2)); // 'a\nB\n'
 * ```
 */
export class BlobStore {
  readonly #db: StateStore;
  readonly #cache = new Map<string, Uint8Array>();
  #cached = 0;
  // The blob most recently stored or asked for: the likely base of the next one.
  #recent: string | undefined;
  // Pairs already tried and found too far apart, so a retry does not redo the work.
  readonly #tried = new Set<string>();

  constructor(db: StateStore) {
    this.#db = db;
  }

  /**
   * Stores `bytes` once (by hash) and returns the hash. `near` names a blob
   * the bytes probably resemble (the version they replace); without it the
   * blob stored or asked for last is tried, which is the version an edit
   * replaces when the edit journal stores old and new contents in turn.
   */
  async put(bytes: Uint8Array, sha256: string = sha256Hex(bytes), near?: string): Promise<string> {
    // Most puts find the blob stored (a file read again, the content an edit
    // replaces): one query, without the transaction (on PostgreSQL, the
    // workspace's writer lock) that storing a new one takes. Outside a
    // transaction, the answer holds no shorter than the transaction's would:
    // either way it ends before the caller records a version of the blob.
    if (!this.#db.inTransaction && (await this.has(sha256))) {
      this.#remember(sha256, bytes);
      return sha256;
    }
    return this.#db.transaction(async () => {
      if (await this.has(sha256)) {
        this.#remember(sha256, bytes);
        return sha256;
      }
      const base = near ?? this.#recent;
      const enc = (base !== undefined && base !== sha256 && (await this.#deltaAgainst(base, bytes, sha256))) || { ...encodeWhole(bytes), base: null, depth: 0 };
      await this.#db.write('INSERT INTO blobs (sha256, size, codec, content, stored_ms, base, depth) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
        sha256,
        bytes.byteLength,
        enc.codec,
        enc.content,
        Date.now(),
        enc.base,
        enc.depth,
      ]);
      this.#remember(sha256, bytes);
      return sha256;
    });
  }

  /**
   * Stores `bytes` inside the caller's transaction without waiting for an
   * answer (PostgreSQL, where a transaction's statements pipeline): as a
   * delta against `near`, the content it replaces, whose bytes the caller
   * has in hand, with the base's depth checked by the server in the same
   * statement; whole when no delta is worth keeping. Where the blob is
   * stored already nothing is written. Answers, once the transaction has
   * committed (`stored`), whether the blob is stored: `false` when the base was
   * missing or its chain had no room, and the caller stores it with
   * {@link put}. On a store that answers at once (SQLite) use {@link put}.
   */
  async putPiped(
    bytes: Uint8Array,
    sha256: string,
    near: { readonly sha256: string; readonly bytes: Uint8Array } | undefined,
  ): Promise<{ readonly stored: Promise<boolean> }> {
    const delta = near === undefined || near.sha256 === sha256 ? undefined : this.#encodeAgainst(near.sha256, near.bytes, bytes, sha256);
    if (near === undefined || delta === undefined) {
      const whole = encodeWhole(bytes);
      await this.#db.write('INSERT INTO blobs (sha256, size, codec, content, stored_ms, base, depth) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
        sha256,
        bytes.byteLength,
        whole.codec,
        whole.content,
        Date.now(),
        null,
        0,
      ]);
      this.#remember(sha256, bytes);
      return { stored: Promise.resolve(true) };
    }
    // Inserted when the base is stored with room in its chain; `stored` counts it, or the blob already there.
    const sent = await this.#db.writeReturning<{ stored: number }>(
      `WITH ins AS (INSERT INTO blobs (sha256, size, codec, content, stored_ms, base, depth)
         SELECT ?::text, ?::bigint, ?::text, ?::bytea, ?::double precision, sha256, depth + 1 FROM blobs WHERE sha256 = ? AND depth < ?
         ON CONFLICT DO NOTHING RETURNING 1 AS x)
       SELECT (SELECT COUNT(*) FROM ins) + (SELECT COUNT(*) FROM blobs WHERE sha256 = ?) AS stored`,
      [sha256, bytes.byteLength, delta.codec, delta.content, Date.now(), near.sha256, maxDepth(bytes.byteLength), sha256],
    );
    this.#remember(sha256, bytes);
    return {
      stored: sent.rows.then(
        (rows) => Number(rows[0]?.stored) > 0,
        () => false,
      ),
    };
  }

  async has(sha256: string): Promise<boolean> {
    const found = (await this.#db.get('SELECT 1 AS x FROM blobs WHERE sha256 = ?', [sha256])) !== undefined;
    if (found) this.#recent = sha256;
    return found;
  }

  /** The bytes of `sha256`, or `undefined` when never stored or pruned. Throws `EIO` when its chain is damaged. */
  async get(sha256: string): Promise<Uint8Array | undefined> {
    const head = await this.#db.get('SELECT 1 AS x FROM blobs WHERE sha256 = ?', [sha256]);
    if (head === undefined) return undefined;
    const hit = this.#cache.get(sha256);
    if (hit !== undefined) {
      this.#remember(sha256, hit);
      return hit;
    }
    const bytes = await this.#rebuild(sha256);
    this.#remember(sha256, bytes);
    return bytes;
  }

  /**
   * Re-stores `sha256` as a delta against `base` when it is stored whole, no
   * other blob depends on it, `base`'s chain has room, and the delta is
   * small. History calls it when it learns which version a blob follows.
   */
  async deltify(sha256: string, base: string): Promise<boolean> {
    if (sha256 === base || this.#tried.has(`${sha256}>${base}`)) return false;
    return this.#db.transaction(async () => {
      // Stored whole, and no blob a delta against it: one round trip for both.
      const row = (await this.#db.get('SELECT base, (SELECT 1 FROM blobs WHERE base = ? LIMIT 1) AS dependent FROM blobs WHERE sha256 = ?', [
        sha256,
        sha256,
      ])) as { base: string | null; dependent: number | null } | undefined;
      if (row === undefined || row.base !== null || row.dependent !== null) return false;
      const bytes = await this.get(sha256);
      if (bytes === undefined) return false;
      const enc = await this.#deltaAgainst(base, bytes, sha256);
      if (!enc) return false;
      await this.#db.write('UPDATE blobs SET codec = ?, content = ?, base = ?, depth = ? WHERE sha256 = ? AND base IS NULL', [
        enc.codec,
        enc.content,
        enc.base,
        enc.depth,
        sha256,
      ]);
      return true;
    });
  }

  /** Stores a deflated whole blob (a store from before deltas) as this store would now. */
  async recompress(sha256: string): Promise<boolean> {
    const row = (await this.#db.get("SELECT content FROM blobs WHERE sha256 = ? AND codec = 'deflate'", [sha256])) as { content: Uint8Array } | undefined;
    if (row === undefined) return false;
    const enc = encodeWhole(decodeWhole('deflate', row.content));
    await this.#db.run('UPDATE blobs SET codec = ?, content = ? WHERE sha256 = ?', [enc.codec, enc.content, sha256]);
    return true;
  }

  /** Deletes `sha256`; blobs stored as deltas against it are stored whole first. */
  remove(sha256: string): Promise<void> {
    return this.#db.transaction(async () => {
      const dependents = (await this.#db.all('SELECT sha256 FROM blobs WHERE base = ?', [sha256])) as Array<{ sha256: string }>;
      for (const d of dependents) {
        const bytes = await this.get(d.sha256);
        if (bytes === undefined) continue;
        const enc = encodeWhole(bytes);
        // Blobs further down keep their recorded depth: it can only overstate the chain now, never understate it.
        await this.#db.run('UPDATE blobs SET codec = ?, content = ?, base = NULL, depth = 0 WHERE sha256 = ?', [enc.codec, enc.content, d.sha256]);
      }
      await this.#db.run('DELETE FROM blobs WHERE sha256 = ?', [sha256]);
      this.#forget(sha256);
    });
  }

  /** Bytes of stored content (after compression and delta encoding). */
  async storedBytes(): Promise<number> {
    const row = (await this.#db.get('SELECT COALESCE(SUM(LENGTH(content)), 0) AS n FROM blobs')) as { n: number };
    return Number(row.n);
  }

  /** How `sha256` is stored: its codec, base and depth (for tests and diagnostics). */
  async encoding(sha256: string): Promise<{ codec: BlobCodec; base: string | undefined; depth: number; storedBytes: number } | undefined> {
    const row = (await this.#db.get('SELECT codec, base, depth, LENGTH(content) AS n FROM blobs WHERE sha256 = ?', [sha256])) as
      | { codec: BlobCodec; base: string | null; depth: number; n: number }
      | undefined;
    return row && { codec: row.codec, base: row.base ?? undefined, depth: Number(row.depth), storedBytes: Number(row.n) };
  }

  /** Drops the in-memory copies (the next reads rebuild from the table). */
  clearCache(): void {
    this.#cache.clear();
    this.#cached = 0;
  }

  async #deltaAgainst(base: string, bytes: Uint8Array, sha256: string): Promise<Encoded | undefined> {
    if (bytes.byteLength > DELTA_MAX_BYTES || this.#tried.has(`${sha256}>${base}`)) return undefined;
    const info = (await this.#db.get('SELECT depth, size FROM blobs WHERE sha256 = ?', [base])) as { depth: number; size: number } | undefined;
    // Its chain must have room for one more.
    if (info === undefined || Number(info.depth) + 1 > maxDepth(bytes.byteLength)) return undefined;
    if (!similarSizes(Number(info.size), bytes.byteLength)) return undefined;
    const baseBytes = await this.get(base);
    if (baseBytes === undefined) return undefined;
    const enc = this.#encodeAgainst(base, baseBytes, bytes, sha256);
    return enc && { ...enc, base, depth: Number(info.depth) + 1 };
  }

  /** `bytes` as a delta against `baseBytes` (the content of `base`), checked; `undefined` when not worth keeping. */
  #encodeAgainst(base: string, baseBytes: Uint8Array, bytes: Uint8Array, sha256: string): { codec: BlobCodec; content: Uint8Array } | undefined {
    if (bytes.byteLength > DELTA_MAX_BYTES || this.#tried.has(`${sha256}>${base}`) || !similarSizes(baseBytes.byteLength, bytes.byteLength)) return undefined;
    const enc = encodeDelta(baseBytes, bytes);
    if (enc.content.byteLength > bytes.byteLength / 4 || !same(decodeDelta(enc.codec, enc.content, baseBytes), bytes)) {
      this.#tried.add(`${sha256}>${base}`);
      return undefined;
    }
    return enc;
  }

  async #rebuild(sha256: string): Promise<Uint8Array> {
    const deltas: Uint8Array[] = [];
    let at = sha256;
    let bytes: Uint8Array | undefined;
    for (let hops = 0; bytes === undefined; hops++) {
      const row = (await this.#db.get('SELECT codec, content, base FROM blobs WHERE sha256 = ?', [at])) as
        | { codec: BlobCodec; content: Uint8Array; base: string | null }
        | undefined;
      if (row === undefined || hops > MAX_CHAIN * 4) throw this.#damaged(sha256, row === undefined ? `its base ${at} is missing` : 'its delta chain loops');
      if (!isDeltaCodec(row.codec) || row.base === null) {
        bytes = decodeWhole(row.codec, row.content);
        break;
      }
      deltas.push(unpackDelta(row.codec, row.content));
      at = row.base;
      bytes = this.#cache.get(at);
    }
    try {
      let pieces = Pieces.of(bytes);
      for (let i = deltas.length - 1; i >= 0; i--) pieces = pieces.apply(deltas[i] as Uint8Array);
      if (deltas.length > 0) bytes = pieces.toBytes();
    } catch (err) {
      throw this.#damaged(sha256, (err as Error).message);
    }
    if (deltas.length > 0 && sha256Hex(bytes) !== sha256) throw this.#damaged(sha256, 'the rebuilt bytes do not match their hash');
    return bytes;
  }

  #damaged(sha256: string, why: string): Error {
    return fsError('EIO', 'getVersion', undefined, {
      reason: `stored version ${sha256.slice(0, 12)} cannot be rebuilt: ${why}`,
      hint: 'the state store is damaged; older versions of this file may be unavailable, the file on disk is not affected',
    });
  }

  #remember(sha256: string, bytes: Uint8Array): void {
    this.#recent = sha256;
    if (bytes.byteLength > CACHE_BYTES / 4) return;
    this.#forget(sha256);
    this.#cache.set(sha256, bytes);
    this.#cached += bytes.byteLength;
    for (const [k, v] of this.#cache) {
      if (this.#cached <= CACHE_BYTES) break;
      this.#cache.delete(k);
      this.#cached -= v.byteLength;
    }
  }

  #forget(sha256: string): void {
    const had = this.#cache.get(sha256);
    if (had === undefined) return;
    this.#cache.delete(sha256);
    this.#cached -= had.byteLength;
  }
}
