/**
 * A session's memory of what it served: recent reads, tokens spent against
 * the profile's session budget, and — per agent — which version (content
 * hash) of each file that agent has seen. The edit side uses the last record
 * to refuse edits made against a stale read.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { contextPath } from '../paths/context-path.ts';
import type { ModelProfile } from '../profiles/model-profiles.ts';
import { multiRow, multiRowStatements } from '../state/multi-row.ts';
import type { StateStore } from '../state/state-store.ts';

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

/** The insert of `rows` reads. */
const insertReads = multiRow(
  'INSERT INTO session_reads (session_id, agent, path, sha256, op, start_line, end_line, tokens, read_ms) VALUES',
  '(?, ?, ?, ?, ?, ?, ?, ?, ?)',
);

/** The upsert of `rows` rows of read_heads: each reader's last read of a file. */
const upsertHeads = multiRow(
  'INSERT INTO read_heads (path, session_id, agent, sha256, read_ms) VALUES',
  '(?, ?, ?, ?, ?)',
  'ON CONFLICT (path, session_id, agent) DO UPDATE SET sha256 = excluded.sha256, read_ms = excluded.read_ms',
);

/**
 * {@link insertReads} and {@link upsertHeads} written only when the statement's
 * `s` (the session's charge, made only while the spend is the one a call
 * started from) changed a row: PostgreSQL only. Typed, since values in a
 * `VALUES` list read as text where an `INSERT … VALUES` would take the
 * columns' types.
 */
const gatedReads = multiRow(
  'INSERT INTO session_reads (session_id, agent, path, sha256, op, start_line, end_line, tokens, read_ms) SELECT v.* FROM (VALUES',
  '(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS DOUBLE PRECISION))',
  ') AS v WHERE EXISTS (SELECT 1 FROM s)',
);
const gatedHeads = multiRow(
  'INSERT INTO read_heads (path, session_id, agent, sha256, read_ms) SELECT v.* FROM (VALUES',
  '(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS DOUBLE PRECISION))',
  ') AS v WHERE EXISTS (SELECT 1 FROM s) ON CONFLICT (path, session_id, agent) DO UPDATE SET sha256 = excluded.sha256, read_ms = excluded.read_ms',
);

/** A call run on the spend the handle last had from the store (see {@link SessionContext.speculate}). */
interface Speculation {
  /** The spend the call's budget is reckoned from. */
  expected: number;
  /** The call read its budget: its answer stands once the spend is known to have been `expected`. */
  used: boolean;
  /** A charge of the call was made on `expected` (the store checked it), or a read found it. */
  confirmed: boolean;
  /** A charge found the spend moved: the call runs again. */
  moved: boolean;
}

/** A charge refused because the session's spend is not the one the call began from; nothing was written. */
class SpendMoved extends Error {
  constructor() {
    super('the session was charged by another handle since this call began: it runs again on the spend as it is now');
  }
}

/** A read to record: who read which version of a file, how much of it, at what cost. */
export interface ReadInput {
  readonly agent: string;
  readonly path: string;
  readonly sha256: string;
  readonly op: string;
  readonly startLine?: number | undefined;
  readonly endLine?: number | undefined;
  readonly tokens: number;
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
 * await session.recordRead({ agent: 'llm:ollama', path: 'a.ts', sha256, op: 'readFile', tokens: 120 });
 * (await session.lastRead('llm:ollama', 'a.ts'))?.sha256; // sha256
 * ```
 */
export class SessionContext {
  readonly id: string;
  readonly profile: ModelProfile;
  readonly store: StateStore;
  // The session's row, written when the handle is made; every write awaits it first (#rowWritten).
  #row: Promise<void>;
  /** Reads whose record the store failed, by agent and path, in the order they were made (see {@link recordRead}). */
  readonly #unrecorded = new Map<string, ReadRecord>();
  #served = 0;
  /** The spend as a statement of this handle last returned it (PostgreSQL): a call may start from it (see {@link speculate}). */
  #seen: number | undefined;
  readonly #speculation = new AsyncLocalStorage<Speculation>();

  private constructor(store: StateStore, id: string, profile: ModelProfile) {
    this.store = store;
    this.id = id;
    this.profile = profile;
    this.#row = this.#writeRow();
  }

  #writeRow(): Promise<void> {
    const row = this.store
      .run('INSERT INTO sessions (id, profile, created_ms, tokens_served) VALUES (?, ?, ?, 0) ON CONFLICT DO NOTHING', [this.id, this.profile.name, Date.now()])
      .then(() => undefined);
    // Reported by the first call that awaits it, not as an unhandled rejection.
    row.catch(() => undefined);
    return row;
  }

  /**
   * The session's row, written: when its first write failed (the store was
   * unreachable), it is written again, so that one failure is one call's,
   * not every later call's.
   */
  #rowWritten(): Promise<void> {
    const row = this.#row;
    return row.catch((err: unknown) => {
      if (this.#row === row) this.#row = this.#writeRow();
      throw err;
    });
  }

  /**
   * Opens session `id` (resuming its history) or a new one. Its row is
   * written in the background; the first call that needs it waits for it.
   */
  static open(store: StateStore, profile: ModelProfile, id: string = randomUUID()): SessionContext {
    return new SessionContext(store, id, profile);
  }

  /**
   * Tokens served so far in this session, as of the last {@link refresh} plus
   * what this handle served since (on PostgreSQL, as its last charge found
   * the store's count). Other handles on the session (another process,
   * another layer) add to the store's count; every call of the context layer
   * refreshes first, or confirms the count it started from
   * ({@link speculate}), so a call's budget is the session's as it began.
   */
  get tokensServed(): number {
    this.#budgetRead();
    return this.#served;
  }

  /** Tokens left in the session budget (see {@link tokensServed}). */
  get remainingTokens(): number {
    this.#budgetRead();
    return Math.max(0, this.profile.sessionTokens - this.#served);
  }

  #budgetRead(): void {
    const speculation = this.#speculation.getStore();
    if (speculation !== undefined) speculation.used = true;
  }

  /** Reads the session's spend from the store (every handle's). */
  async refresh(): Promise<number> {
    await this.#rowWritten();
    const row = await this.store.get<{ tokens_served: number }>('SELECT tokens_served FROM sessions WHERE id = ?', [this.id]);
    this.#served = row ? Number(row.tokens_served) : 0;
    if (this.store.dialect === 'postgres') this.#seen = this.#served;
    return this.#served;
  }

  /**
   * Runs `fn`, a call that writes nothing but its reads' records and
   * charges and may be run again, on the spend this handle last had from
   * the store, without reading it first ({@link refresh}: a round trip on
   * PostgreSQL, where the rest of a small read is one more). The call's
   * first charge after it read its budget is made only if the spend is
   * still that one, in the same statement; one that finds it moved (another
   * handle, process or host charged the session meanwhile) writes nothing
   * and the call is answered `undefined`: its caller refreshes and runs it
   * again, as it runs every call. A call that read its budget and charged
   * nothing reads the spend at its end instead. So an answer given is the
   * one the call would have given after a refresh at its start: the spend
   * only grows, and it was the same at the call's start and at the check.
   * SQLite, where a refresh costs microseconds, and a handle that has not
   * read the spend yet answer `undefined` at once.
   */
  async speculate<T>(fn: () => Promise<T>): Promise<{ readonly value: T } | undefined> {
    if (this.#seen === undefined || this.#seen !== this.#served || this.#speculation.getStore() !== undefined) return undefined;
    const frame: Speculation = { expected: this.#seen, used: false, confirmed: false, moved: false };
    let value: T;
    try {
      value = await this.#speculation.run(frame, fn);
    } catch (err) {
      if (frame.moved) return undefined;
      // An error may tell of the budget too (a refusal naming what is left): it stands on the same terms.
      if (frame.used && !frame.confirmed && (await this.refresh()) !== frame.expected) return undefined;
      throw err;
    }
    if (frame.moved) return undefined;
    if (frame.used && !frame.confirmed && (await this.refresh()) !== frame.expected) return undefined;
    return { value };
  }

  /** The call under way, when its next charge must find the spend it started from. */
  #gate(): Speculation | undefined {
    const frame = this.#speculation.getStore();
    return frame?.used === true && !frame.confirmed ? frame : undefined;
  }

  /** Takes the spend a charge of this handle returned (`undefined`: the gate found it moved). */
  #charged(returned: unknown, gate: Speculation | undefined, tokens: number): void {
    if (returned === undefined || returned === null) {
      if (gate === undefined) {
        this.#served += tokens;
        return;
      }
      gate.moved = true;
      throw new SpendMoved();
    }
    const now = Number(returned);
    // Answers of one handle's calls may come back out of order; the spend only grows.
    this.#served = Math.max(this.#served + tokens, now);
    this.#seen = Math.max(this.#seen ?? now, now);
    const frame = this.#speculation.getStore();
    if (frame !== undefined) {
      frame.expected = now;
      if (gate !== undefined) frame.confirmed = true;
    }
  }

  /**
   * Records a read and charges its tokens to the session. When the store
   * fails, the read is kept in this handle (the newest per agent and path)
   * and written before the next read that reaches the store: what the agent
   * saw — above all what its own edit wrote — stays its edits' base, so a
   * store that failed after an edit does not make the agent's next edit
   * meet its own change as someone else's.
   */
  async recordRead(read: ReadInput): Promise<void> {
    await this.recordReads([read]);
  }

  /**
   * Records reads made together (a search's files) as {@link recordRead}
   * does one: one statement for up to 64 of them (on PostgreSQL, with the
   * session's charge: one statement in all when they fit), not one each.
   */
  async recordReads(reads: readonly ReadInput[]): Promise<void> {
    if (reads.length === 0) return;
    const at = new Date();
    const records: ReadRecord[] = reads.map((read) => ({
      sessionId: this.id,
      agent: read.agent,
      path: contextPath(read.path, read.op),
      sha256: read.sha256,
      op: read.op,
      startLine: read.startLine,
      endLine: read.endLine,
      tokens: read.tokens,
      at,
    }));
    const keyOf = (r: ReadRecord) => `${r.agent}\0${r.path}`;
    const keys = new Set(records.map(keyOf));
    const batch = [...[...this.#unrecorded.values()].filter((r) => !keys.has(keyOf(r))), ...records];
    const tokens = batch.reduce((n, r) => n + r.tokens, 0);
    const inserts = multiRowStatements(insertReads, batch, (r) => [
      this.id,
      r.agent,
      r.path,
      r.sha256,
      r.op,
      r.startLine ?? null,
      r.endLine ?? null,
      r.tokens,
      r.at.getTime(),
    ]);
    // Each reader's last read of each file (read_heads), the newest of the batch per key: one row a key, as an upsert may touch a row once.
    const heads = [...new Map(batch.map((r) => [keyOf(r), r])).values()];
    inserts.push(...multiRowStatements(upsertHeads, heads, (r) => [r.path, this.id, r.agent, r.sha256, r.at.getTime()]));
    const [readRows, readHeads] = inserts;
    const gate = this.#gate();
    try {
      await this.#rowWritten();
      let returned: unknown;
      if (this.store.dialect === 'postgres' && readRows !== undefined && readHeads !== undefined && inserts.length === 2) {
        // One statement, atomic on its own: a round trip where a transaction takes five (begin and lock, two inserts, update, commit).
        if (gate === undefined) {
          const row = await this.store.get<{ tokens_served: number }>(
            `WITH r AS (${readRows.sql}), h AS (${readHeads.sql}) UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ? RETURNING tokens_served`,
            [...readRows.params, ...readHeads.params, tokens, this.id],
          );
          returned = row?.tokens_served;
        } else {
          // The charge only on the spend the call began from, and the records only with it.
          const row = await this.store.get<{ tokens_served: number }>(
            `WITH s AS (UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ? AND tokens_served = ? RETURNING tokens_served), r AS (${gatedReads(readRows.rows.length)}), h AS (${gatedHeads(readHeads.rows.length)}) SELECT tokens_served FROM s`,
            [tokens, this.id, gate.expected, ...readRows.params, ...readHeads.params],
          );
          returned = row?.tokens_served;
        }
      } else {
        returned = await this.store.transaction(async () => {
          // First, so that a spend that moved is found before anything is written.
          const charged = await this.#chargeStatement(tokens, gate);
          if (gate !== undefined && (charged === undefined || charged === null)) {
            gate.moved = true;
            throw new SpendMoved();
          }
          for (const st of inserts) await this.store.run(st.sql, st.params);
          return charged;
        });
      }
      this.#charged(returned, gate, tokens);
    } catch (err) {
      if (err instanceof SpendMoved) throw err;
      for (const r of records) {
        this.#unrecorded.delete(keyOf(r));
        this.#unrecorded.set(keyOf(r), r);
      }
      throw err;
    }
    this.#unrecorded.clear();
  }

  /** Charges tokens that were not a file read (overview, refusals). */
  async charge(tokens: number): Promise<void> {
    await this.#rowWritten();
    const gate = this.#gate();
    this.#charged(await this.#chargeStatement(tokens, gate), gate, tokens);
  }

  /**
   * Adds `tokens` to the session's spend: the spend after it, on PostgreSQL
   * (on SQLite `undefined`: its statements stay as they were); with `gate`,
   * only when the spend is `gate.expected` (else nothing, and `undefined`).
   */
  async #chargeStatement(tokens: number, gate: Speculation | undefined): Promise<unknown> {
    if (this.store.dialect !== 'postgres') {
      await this.store.run('UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ?', [tokens, this.id]);
      return undefined;
    }
    const row = await this.store.get<{ tokens_served: number }>(
      `UPDATE sessions SET tokens_served = tokens_served + ? WHERE id = ?${gate === undefined ? '' : ' AND tokens_served = ?'} RETURNING tokens_served`,
      gate === undefined ? [tokens, this.id] : [tokens, this.id, gate.expected],
    );
    return row?.tokens_served;
  }

  /** The last read of `path` by `agent` in this session. */
  async lastRead(agent: string, path: string): Promise<ReadRecord | undefined> {
    path = contextPath(path, 'lastRead');
    const unrecorded = this.#unrecorded.get(`${agent}\0${path}`);
    if (unrecorded !== undefined) return unrecorded;
    const row = (await this.store.get('SELECT * FROM session_reads WHERE session_id = ? AND agent = ? AND path = ? ORDER BY id DESC LIMIT 1', [
      this.id,
      agent,
      path,
    ])) as Record<string, unknown> | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Every version of `path` that `agent` has seen, oldest first. */
  async versionsSeen(agent: string, path: string): Promise<string[]> {
    path = contextPath(path, 'versionsSeen');
    const rows = (await this.store.all(
      'SELECT sha256, MIN(id) AS first FROM session_reads WHERE session_id = ? AND agent = ? AND path = ? GROUP BY sha256 ORDER BY first',
      [this.id, agent, path],
    )) as Array<{ sha256: string }>;
    const seen = rows.map((r) => r.sha256);
    const unrecorded = this.#unrecorded.get(`${agent}\0${path}`)?.sha256;
    return unrecorded === undefined || seen.includes(unrecorded) ? seen : [...seen, unrecorded];
  }

  /**
   * Whether `agent`'s last read of `path` is older than `currentSha256`:
   * `undefined` when the agent never read it.
   */
  async isStale(agent: string, path: string, currentSha256: string): Promise<boolean | undefined> {
    const last = await this.lastRead(agent, path);
    return last === undefined ? undefined : last.sha256 !== currentSha256;
  }

  /** Most recent reads first, optionally of one agent (after `pruneReads`, repeats of a version show as their first and last). */
  async recentReads(limit = 20, agent?: string): Promise<ReadRecord[]> {
    const rows = (
      agent === undefined
        ? await this.store.all('SELECT * FROM session_reads WHERE session_id = ? ORDER BY id DESC LIMIT ?', [this.id, limit])
        : await this.store.all('SELECT * FROM session_reads WHERE session_id = ? AND agent = ? ORDER BY id DESC LIMIT ?', [this.id, agent, limit])
    ) as Array<Record<string, unknown>>;
    return rows.map(toRecord);
  }

  /** Agents that have read `path` in this session, with the version each saw last. */
  async readers(path: string): Promise<Array<{ agent: string; sha256: string }>> {
    path = contextPath(path, 'readers');
    const rows = (await this.store.all('SELECT agent, sha256 FROM read_heads WHERE path = ? AND session_id = ? ORDER BY agent', [path, this.id])) as Array<{
      agent: string;
      sha256: string;
    }>;
    return rows.map((r) => ({ agent: r.agent, sha256: r.sha256 }));
  }
}
