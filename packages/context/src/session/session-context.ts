/**
 * A session's memory of what it served: recent reads, tokens spent against
 * the profile's session budget, and — per agent — which version (content
 * hash) of each file that agent has seen. The edit side uses the last record
 * to refuse edits made against a stale read.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { contextPath } from '../paths/context-path.ts';
import type { ModelProfile } from '../profiles/model-profiles.ts';
import type { StateStore } from '../state/store.ts';

/** One read served to an agent. */
export interface ReadRecord {
  readonly sessionId: string;
  readonly agent: string;
  readonly path: string;
  /** Content hash of the file when it was served. */
  readonly sha256: string;
  readonly op: string;
  /** Line range served, when partial. */
  readonly startLine: number | undefined;
  readonly endLine: number | undefined;
  readonly tokens: number;
  readonly at: Date;
}

function toRecord(r: Record<string, unknown>): ReadRecord {
  return {
    sessionId: String(r.session_id),
    agent: String(r.agent),
    path: String(r.path),
    sha256: String(r.sha256),
    op: String(r.op),
    startLine: r.start_line === null ? undefined : Number(r.start_line),
    endLine: r.end_line === null ? undefined : Number(r.end_line),
    tokens: Number(r.tokens),
    at: new Date(Number(r.read_ms)),
  };
}

/**
 * A session, persisted in the state store so another process (or the edit
 * side) sees the same history.
 *
 * @example
 * ```ts
 * const session = SessionContext.open(store, MODEL_PROFILES.small);
 * session.recordRead({ agent: 'llm:ollama', path: 'a.ts', sha256, op: 'readFile', tokens: 120 });
 * session.lastRead('llm:ollama', 'a.ts')?.sha256; // sha256
 * ```
 */
export class SessionContext {
  readonly id: string;
  readonly profile: ModelProfile;
  readonly store: StateStore;

  private constructor(store: StateStore, id: string, profile: ModelProfile) {
    this.store = store;
    this.id = id;
    this.profile = profile;
  }

  /** Opens session `id` (resuming its history) or a new one. */
  static open(store: StateStore, profile: ModelProfile, id: string = randomUUID()): SessionContext {
    store.statement('INSERT OR IGNORE INTO sessions (id, profile, created_ms, tokens_served) VALUES (?, ?, ?, 0)').run(id, profile.name, Date.now());
    return new SessionContext(store, id, profile);
  }

  /** Tokens served so far in this session, by every handle on it (read from the store). */
  get tokensServed(): number {
    const row = this.store.statement('SELECT tokens_served FROM sessions WHERE id = ?').get(this.id) as { tokens_served: number } | undefined;
    return row ? Number(row.tokens_served) : 0;
  }

  /** Tokens left in the session budget. */
  get remainingTokens(): number {
    return Math.max(0, this.profile.sessionTokens - this.tokensServed);
  }

  /** Records a read and charges its tokens to the session. */
  recordRead(read: {
    agent: string;
    path: string;
    sha256: string;
    op: string;
    startLine?: number | undefined;
    endLine?: number | undefined;
    tokens: number;
  }): void {
    const path = contextPath(read.path, read.op);
    this.store.transaction(() => {
      this.store
        .statement('INSERT INTO session_reads (session_id, agent, path, sha256, op, start_line, end_line, tokens, read_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(this.id, read.agent, path, read.sha256, read.op, read.startLine ?? null, read.endLine ?? null, read.tokens, Date.now());
      this.store.statement('UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ?').run(read.tokens, this.id);
    });
  }

  /** Charges tokens that were not a file read (overview, refusals). */
  charge(tokens: number): void {
    this.store.statement('UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ?').run(tokens, this.id);
  }

  /** The last read of `path` by `agent` in this session. */
  lastRead(agent: string, path: string): ReadRecord | undefined {
    path = contextPath(path, 'lastRead');
    const row = this.store
      .statement('SELECT * FROM session_reads WHERE session_id = ? AND agent = ? AND path = ? ORDER BY id DESC LIMIT 1')
      .get(this.id, agent, path) as Record<string, unknown> | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Every version of `path` that `agent` has seen, oldest first. */
  versionsSeen(agent: string, path: string): string[] {
    path = contextPath(path, 'versionsSeen');
    const rows = this.store
      .statement('SELECT sha256, MIN(id) AS first FROM session_reads WHERE session_id = ? AND agent = ? AND path = ? GROUP BY sha256 ORDER BY first')
      .all(this.id, agent, path) as Array<{ sha256: string }>;
    return rows.map((r) => r.sha256);
  }

  /**
   * Whether `agent`'s last read of `path` is older than `currentSha256`:
   * `undefined` when the agent never read it.
   */
  isStale(agent: string, path: string, currentSha256: string): boolean | undefined {
    const last = this.lastRead(agent, path);
    return last === undefined ? undefined : last.sha256 !== currentSha256;
  }

  /** Most recent reads first, optionally of one agent. */
  recentReads(limit = 20, agent?: string): ReadRecord[] {
    const rows = (
      agent === undefined
        ? this.store.statement('SELECT * FROM session_reads WHERE session_id = ? ORDER BY id DESC LIMIT ?').all(this.id, limit)
        : this.store.statement('SELECT * FROM session_reads WHERE session_id = ? AND agent = ? ORDER BY id DESC LIMIT ?').all(this.id, agent, limit)
    ) as Array<Record<string, unknown>>;
    return rows.map(toRecord);
  }

  /** Agents that have read `path` in this session, with the version each saw last. */
  readers(path: string): Array<{ agent: string; sha256: string }> {
    path = contextPath(path, 'readers');
    const rows = this.store
      .statement(
        'SELECT agent, sha256 FROM session_reads r WHERE session_id = ? AND path = ? AND id = (SELECT MAX(id) FROM session_reads WHERE session_id = r.session_id AND agent = r.agent AND path = r.path) ORDER BY agent',
      )
      .all(this.id, path) as Array<{ agent: string; sha256: string }>;
    return rows.map((r) => ({ agent: r.agent, sha256: r.sha256 }));
  }
}
