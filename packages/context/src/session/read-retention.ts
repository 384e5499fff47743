/**
 * Retention of the read records (`session_reads`, `read_heads`). Every read
 * a model is served adds a row, so without retention the tables grow with
 * every call for as long as the store lives. What the layer asks of them is
 * narrower:
 *
 * - the last read of a file by an agent in a session (the base of an edit
 *   that names none), and
 * - the versions of a file each agent has seen, in the order it first saw
 *   them (a stale edit's "changed by" list).
 *
 * So repeated reads of the same version keep only their first and their
 * last row: both answers stay exactly as they were. And a session idle past
 * a limit keeps only its last read of each file by each agent: the base of
 * its next edit stays exact, so a stale edit is still caught after any
 * pause, and only the older versions it saw are forgotten (a "changed by"
 * list then starts at its last read). `read_heads`, one row per file,
 * session and agent, is already that small and is left as it is.
 *
 * @module
 */

import { inLists } from '../state/multi-row.ts';
import type { StateStore } from '../state/state-store.ts';

/** Limits of {@link pruneReads}. */
export interface ReadRetentionOptions {
  /**
   * A session with no read for this long keeps only its last read of each
   * file by each agent (default 30 days). `Infinity` keeps every read of
   * every session and only folds the repeats.
   */
  maxIdleMs?: number;
}

/** Default {@link ReadRetentionOptions}. */
export const DEFAULT_READ_RETENTION: Readonly<Required<ReadRetentionOptions>> = { maxIdleMs: 30 * 24 * 60 * 60 * 1000 };

/** What {@link pruneReads} removed. */
export interface ReadPruneResult {
  /** Rows of repeated reads of a version, between its first and its last. */
  readonly repeatsRemoved: number;
  /** Sessions idle past the limit. */
  readonly idleSessions: number;
  /** Their reads older than the last of each file and agent. */
  readonly idleReadsRemoved: number;
}

/**
 * Applies read retention to `store`, in one transaction.
 *
 * @example
 * ```ts
 * const r = await pruneReads(store, { maxIdleMs: 7 * 24 * 3600 * 1000 });
 * r.repeatsRemoved; // rows folded away
 * ```
 */
export async function pruneReads(store: StateStore, options: ReadRetentionOptions = {}, now = Date.now()): Promise<ReadPruneResult> {
  const maxIdleMs = options.maxIdleMs ?? DEFAULT_READ_RETENTION.maxIdleMs;
  if (!(maxIdleMs >= 0)) throw new RangeError(`maxIdleMs must be a number of milliseconds >= 0, not ${String(options.maxIdleMs)}`);
  return store.transaction(async () => {
    let idleSessions = 0;
    let idleReadsRemoved = 0;
    if (Number.isFinite(maxIdleMs)) {
      // read_heads holds each reader's last read: a session's newest read is its newest head.
      const idle = (await store.all('SELECT session_id FROM read_heads GROUP BY session_id HAVING MAX(read_ms) < ?', [now - maxIdleMs])) as Array<{
        session_id: string;
      }>;
      idleSessions = idle.length;
      for (const { chunk: ids, marks } of inLists(idle.map((r) => r.session_id))) {
        const older = await store.run(
          `DELETE FROM session_reads WHERE id IN (
             SELECT id FROM (
               SELECT id, ROW_NUMBER() OVER (PARTITION BY session_id, agent, path ORDER BY id DESC) AS from_last
                 FROM session_reads WHERE session_id IN (${marks})
             ) ranked
             WHERE from_last > 1
           )`,
          ids,
        );
        idleReadsRemoved += older.changes;
      }
    }
    const folded = await store.run(
      `DELETE FROM session_reads WHERE id IN (
         SELECT id FROM (
           SELECT id,
                  ROW_NUMBER() OVER (PARTITION BY session_id, agent, path, sha256 ORDER BY id) AS from_first,
                  ROW_NUMBER() OVER (PARTITION BY session_id, agent, path, sha256 ORDER BY id DESC) AS from_last
             FROM session_reads
         ) ranked
         WHERE from_first > 1 AND from_last > 1
       )`,
    );
    return { repeatsRemoved: folded.changes, idleSessions, idleReadsRemoved };
  });
}
