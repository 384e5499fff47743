/**
 * The state store's schema, as an ordered list of migrations. A migration is
 * never edited once released: changes come as a new entry, so a store written
 * by any earlier version opens and upgrades in place.
 *
 * @module
 */

import { BlobStore } from '../history/blob-store.ts';
import { chainExistingRows } from './audit-chain.ts';
import type { StateStore } from './state-store.ts';

/**
 * One schema step. `version` starts at 1 and increases by one. `sql` is
 * SQLite's; a step after PostgreSQL's baseline (version 9, see
 * postgres-schema.ts) carries the same change in PostgreSQL's dialect as
 * `postgres`, and without it a PostgreSQL store refuses to open rather than
 * drift from SQLite's schema.
 *
 * @example
 * ```ts
 * const m11: Migration = {
 *   version: 11,
 *   description: 'a note per file',
 *   sql: 'ALTER TABLE files ADD COLUMN note TEXT',
 *   postgres: 'ALTER TABLE files ADD COLUMN note TEXT COLLATE "C"',
 * };
 * ```
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
  /** The change in PostgreSQL's dialect, run in the migration's transaction (steps after version 9). */
  readonly postgres?: string;
  /** Converts data the SQL alone cannot, after the SQL, in the same transaction, through the store (either dialect). */
  readonly run?: (store: StateStore) => Promise<void>;
}

/** Migration 11's fill: each (session, agent, path)'s newest read. */
const READ_HEADS_FILL = `
  INSERT INTO read_heads (path, session_id, agent, sha256, read_ms)
    SELECT path, session_id, agent, sha256, read_ms FROM session_reads
    WHERE id IN (SELECT MAX(id) FROM session_reads GROUP BY session_id, agent, path);
`;

/** Every migration, in order. The store's `user_version` is the last applied. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'registry, versions, relations, summaries, sessions, audit',
    sql: `
      CREATE TABLE files (
        path TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        language TEXT,
        tags TEXT NOT NULL DEFAULT '',
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        sha256 TEXT,
        version INTEGER NOT NULL DEFAULT 0,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_accessed_ms REAL,
        is_entrypoint INTEGER NOT NULL DEFAULT 0,
        is_sensitive INTEGER NOT NULL DEFAULT 0,
        is_generated INTEGER NOT NULL DEFAULT 0,
        scanned_ms REAL NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE file_versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL,
        version INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        author TEXT NOT NULL,
        message TEXT,
        created_ms REAL NOT NULL,
        UNIQUE (path, version)
      );
      CREATE INDEX file_versions_hash ON file_versions (sha256);
      CREATE TABLE relations (
        source TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        specifier TEXT NOT NULL,
        target TEXT,
        kind TEXT NOT NULL,
        line INTEGER NOT NULL
      );
      CREATE INDEX relations_source ON relations (source);
      CREATE INDEX relations_target ON relations (target);
      CREATE TABLE summaries (
        sha256 TEXT NOT NULL,
        summarizer TEXT NOT NULL,
        summary TEXT NOT NULL,
        created_ms REAL NOT NULL,
        PRIMARY KEY (sha256, summarizer)
      ) WITHOUT ROWID;
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        profile TEXT NOT NULL,
        created_ms REAL NOT NULL,
        tokens_served INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;
      CREATE TABLE session_reads (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        op TEXT NOT NULL,
        start_line INTEGER,
        end_line INTEGER,
        tokens INTEGER NOT NULL,
        read_ms REAL NOT NULL
      );
      CREATE INDEX session_reads_agent_path ON session_reads (session_id, agent, path, id);
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at_ms REAL NOT NULL,
        op TEXT NOT NULL,
        path TEXT,
        agent TEXT,
        session_id TEXT,
        params TEXT,
        result TEXT NOT NULL,
        tokens INTEGER
      );
    `,
  },
  {
    version: 2,
    description: 'edit history: content blobs by hash, per-file versions, write-ahead edit journal',
    sql: `
      CREATE TABLE blobs (
        sha256 TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        codec TEXT NOT NULL,
        content BLOB NOT NULL,
        stored_ms REAL NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        sha256 TEXT,
        size INTEGER NOT NULL DEFAULT 0,
        op TEXT NOT NULL,
        author TEXT NOT NULL,
        message TEXT,
        change_id TEXT,
        related_path TEXT,
        undo_of INTEGER,
        created_ms REAL NOT NULL,
        UNIQUE (path, seq)
      );
      CREATE INDEX history_sha ON history (sha256);
      CREATE TABLE edit_journal (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        change_id TEXT NOT NULL,
        op TEXT NOT NULL,
        author TEXT NOT NULL,
        message TEXT,
        entries TEXT NOT NULL,
        created_ms REAL NOT NULL
      );
    `,
  },
  {
    version: 3,
    description: 'registry scans: drop the unused index of versions by hash; index reads by path for stale-read checks',
    sql: `
      DROP INDEX file_versions_hash;
      CREATE INDEX session_reads_path ON session_reads (path, id);
    `,
  },
  {
    version: 4,
    description: 'registry scans: the version row of a file first seen by a scan is written when it stops being the current version',
    sql: `
      ALTER TABLE files ADD COLUMN version_ms REAL;
    `,
  },
  {
    version: 5,
    description: 'symbol index: the definitions of each code file by path and content hash, for findSymbol',
    sql: `
      CREATE TABLE symbol_files (
        path TEXT PRIMARY KEY,
        sha256 TEXT NOT NULL,
        source TEXT NOT NULL,
        lines INTEGER NOT NULL,
        symbols INTEGER NOT NULL,
        indexed_ms REAL NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE symbols (
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        PRIMARY KEY (path, sha256, seq)
      ) WITHOUT ROWID;
      CREATE INDEX symbols_name ON symbols (name);
    `,
  },
  {
    version: 6,
    description:
      'audited edits: the audit record of a change travels with its journal intent and is written in the transaction that records the change; versions know their session',
    sql: `
      ALTER TABLE edit_journal ADD COLUMN audit TEXT;
      ALTER TABLE edit_journal ADD COLUMN session_id TEXT;
      ALTER TABLE history ADD COLUMN session_id TEXT;
      CREATE INDEX history_session ON history (session_id, created_ms);
      ALTER TABLE audit ADD COLUMN change_id TEXT;
    `,
  },
  {
    version: 7,
    description: 'audit trail index: a cache of the HMAC-chained JSONL log, by file, agent, session, operation and time',
    sql: `
      CREATE TABLE audit_index (
        seq INTEGER PRIMARY KEY,
        at_ms REAL NOT NULL,
        file_no INTEGER NOT NULL,
        line INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        length INTEGER NOT NULL,
        op TEXT NOT NULL,
        op_class TEXT NOT NULL,
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        backend TEXT NOT NULL,
        result TEXT NOT NULL,
        mac TEXT NOT NULL
      );
      CREATE INDEX audit_index_at ON audit_index (at_ms);
      CREATE INDEX audit_index_agent ON audit_index (agent, seq);
      CREATE INDEX audit_index_session ON audit_index (session_id, seq);
      CREATE INDEX audit_index_op ON audit_index (op, seq);
      CREATE TABLE audit_index_paths (
        path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (path, seq)
      ) WITHOUT ROWID;
      CREATE TABLE audit_index_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 8,
    description:
      'journal owners: an intent names the process that wrote it (host, pid, a token of its journal), so recovery settles only the changes of processes that are gone, never one another process is still making',
    sql: `
      ALTER TABLE edit_journal ADD COLUMN owner TEXT;
    `,
  },
  {
    version: 9,
    description:
      'history as deltas: a blob may be a delta against another (its base) with the number of deltas down to a whole blob (its depth); existing versions are re-stored as deltas against their predecessors',
    sql: `
      ALTER TABLE blobs ADD COLUMN base TEXT;
      ALTER TABLE blobs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX blobs_base ON blobs (base) WHERE base IS NOT NULL;
    `,
    run: deltifyHistory,
  },
  {
    version: 10,
    description:
      'the audit table as one hash chain per workspace: each row holds the hash of the row before it and its own, appended in the write transaction, so every host extends one chain the database sequences; existing rows are chained in id order',
    sql: `
      ALTER TABLE audit ADD COLUMN prev TEXT;
      ALTER TABLE audit ADD COLUMN hash TEXT;
    `,
    postgres: `
      ALTER TABLE audit ADD COLUMN prev TEXT COLLATE "C";
      ALTER TABLE audit ADD COLUMN hash TEXT COLLATE "C";
    `,
    run: chainExistingRows,
  },
  {
    version: 11,
    description:
      "each reader's last read of each file in a table of its own (read_heads), kept with every read: who holds a stale view of a file is then a lookup of its readers, where it was a scan of every read the file ever had; filled from session_reads",
    sql: `
      CREATE TABLE read_heads (
        path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        read_ms REAL NOT NULL,
        PRIMARY KEY (path, session_id, agent)
      ) WITHOUT ROWID;
      ${READ_HEADS_FILL}
    `,
    postgres: `
      CREATE TABLE read_heads (
        path TEXT COLLATE "C" NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        agent TEXT COLLATE "C" NOT NULL,
        sha256 TEXT COLLATE "C" NOT NULL,
        read_ms DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (path, session_id, agent)
      );
      ${READ_HEADS_FILL}
    `,
  },
  {
    version: 12,
    description:
      "drop the index of reads by path: it served the stale-read check's scan of a file's readers, which read_heads (version 11) answers now, and every read still paid to keep it",
    sql: `
      DROP INDEX IF EXISTS session_reads_path;
    `,
    postgres: `
      DROP INDEX IF EXISTS session_reads_path;
    `,
  },
  {
    version: 13,
    description:
      "index the audit table by session: a process that meets a session another one began counts what it spent (operations, tokens, bytes, the last minute's calls) from its records, so the policy's budgets hold for the session, not per process",
    sql: `
      CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id);
    `,
    postgres: `
      CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id);
    `,
  },
  {
    version: 14,
    description:
      "a fingerprint of the call each request id was given for (its operation, files and arguments, hashed): a retry is answered from the change it made, and the id sent again with another call is refused, where that call's change was dropped and reported already applied",
    sql: `
      CREATE TABLE request_calls (
        change_id TEXT NOT NULL PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        created_ms REAL NOT NULL
      );
    `,
    postgres: `
      CREATE TABLE request_calls (
        change_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
        fingerprint TEXT COLLATE "C" NOT NULL,
        created_ms DOUBLE PRECISION NOT NULL
      );
    `,
  },
  {
    version: 15,
    description:
      "session_reads without AUTOINCREMENT (SQLite): its counter, a row of sqlite_sequence, was a page of its own that every read's record wrote again, one of the 4.4 a read's commit wrote; ids stay as they were and a new one is the largest plus one (SQLite's rowid), which retention never deletes, as it keeps each reader's last read. PostgreSQL's identity column writes no page of the table and is left as it is",
    sql: `
      CREATE TABLE session_reads_v15 (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        op TEXT NOT NULL,
        start_line INTEGER,
        end_line INTEGER,
        tokens INTEGER NOT NULL,
        read_ms REAL NOT NULL
      );
      INSERT INTO session_reads_v15 (id, session_id, agent, path, sha256, op, start_line, end_line, tokens, read_ms)
        SELECT id, session_id, agent, path, sha256, op, start_line, end_line, tokens, read_ms FROM session_reads ORDER BY id;
      DROP TABLE session_reads;
      ALTER TABLE session_reads_v15 RENAME TO session_reads;
      CREATE INDEX session_reads_agent_path ON session_reads (session_id, agent, path, id);
    `,
    postgres: 'SELECT 1',
  },
];

/**
 * Migration 9's data step: each file's versions, oldest first, are re-stored
 * as deltas against the version before them (chains bounded as for new
 * versions); the whole blobs left, deflated before, are packed with zstd.
 * It runs inside the migration's transaction, through the store itself.
 */
async function deltifyHistory(store: StateStore): Promise<void> {
  const blobs = new BlobStore(store);
  const rows = await store.all<{ path: string; sha256: string }>('SELECT path, sha256 FROM history WHERE sha256 IS NOT NULL ORDER BY path, seq');
  let path: string | undefined;
  let prev: string | undefined;
  for (const r of rows) {
    if (r.path === path && prev !== undefined && prev !== r.sha256) await blobs.deltify(r.sha256, prev);
    path = r.path;
    prev = r.sha256;
  }
  for (const b of await store.all<{ sha256: string }>("SELECT sha256 FROM blobs WHERE codec = 'deflate'")) await blobs.recompress(b.sha256);
}
