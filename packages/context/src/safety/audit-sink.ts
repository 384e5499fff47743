/**
 * Where the safety layer's records go: the state store's `audit` table —
 * a change's record in the change's own transaction, so a crash never parts
 * the two; the records of reads a batch at a time (within 20 ms), since one
 * transaction a read cost more than the read's policy and trail together —
 * and, when a trail is configured, a tamper-evident copy in
 * the HMAC-chained log. A record written inside a transaction reaches the
 * trail when the transaction commits (and never, if it rolls back); records
 * the trail missed (the process died between the two) are appended on the
 * next open, marked `replayed` (so are those of a live process between its
 * commit and its append, which then skips its own).
 *
 * @module
 */

import type { StateStore } from '../state/state-store.ts';
import { type AuditEntry, type AuditRecord, replayKey } from './audit/audit-record.ts';
import type { AuditTrail } from './audit/audit-trail.ts';
import type { OpClass } from './policy.ts';
import type { AuditDraft, AuditSink, SessionSpend } from './safety-layer.ts';

/** Records of reads written in one transaction at most; a fuller queue is written at once. */
const AUDIT_BATCH = 64;
/**
 * How long a record of a read may wait to be written. A crash loses at most
 * this much of the reads' records — never a change's, which is written in
 * the change's own transaction.
 */
const AUDIT_FLUSH_MS = 20;

/** Who the records name besides the agent: the backend and the person running it. */
export interface AuditContext {
  readonly backend: string;
  readonly user: string;
}

/**
 * The parameters column of a table row: the call's arguments and what the
 * table has no column for, and the chain of the trail the record is bound for
 * (`trailChain`): a replay takes only its own trail's rows, never those of
 * processes on other hosts sharing the store, or of processes with no trail.
 */
function rowParams(r: AuditDraft, trailChain: string | undefined): Record<string, unknown> {
  return {
    ...r.params,
    opClass: r.opClass,
    ...(r.paths.length > 1 ? { paths: r.paths } : {}),
    ...(r.approval ? { approval: r.approval } : {}),
    ...(r.code ? { code: r.code } : {}),
    ...(r.bytes ? { bytes: r.bytes } : {}),
    ...(r.before ? { before: r.before } : {}),
    ...(r.after ? { after: r.after } : {}),
    ...(r.diff ? { diff: r.diff } : {}),
    ...(r.recovered ? { recovered: true } : {}),
    durationMs: r.durationMs,
    requestId: r.requestId,
    ...(trailChain === undefined ? {} : { trailChain }),
  };
}

/**
 * What session `sessionId` spent, as the policy's budgets count it, from the
 * audit table's records: its calls but those a spent budget refused, the
 * tokens and bytes they served, and the start times of the last minute's.
 * Records still queued in another process (at most 20 ms of reads) are not
 * counted.
 *
 * @example
 * ```ts
 * const spent = await sessionSpend(store, ctx.sessionContext.id); // { operations: 12, tokens: 5400, bytes: 21000, recent: [...] }
 * ```
 */
export async function sessionSpend(store: StateStore, sessionId: string, now = Date.now()): Promise<SessionSpend> {
  const bytes = store.dialect === 'sqlite' ? "json_extract(params, '$.bytes')" : "(params::jsonb ->> 'bytes')::bigint";
  const row = await store.get<{ n: number | string; t: number | string | null; b: number | string | null }>(
    `SELECT COUNT(*) AS n, SUM(tokens) AS t, SUM(${bytes}) AS b FROM audit WHERE session_id = ? AND (params IS NULL OR params NOT LIKE ?)`,
    [sessionId, SPENT_REFUSAL],
  );
  const recent = await store.all<{ at_ms: number }>(
    'SELECT at_ms FROM audit WHERE session_id = ? AND at_ms > ? AND (params IS NULL OR params NOT LIKE ?) ORDER BY at_ms',
    [sessionId, now - 60_000, SPENT_REFUSAL],
  );
  return {
    operations: Number(row?.n ?? 0),
    tokens: Number(row?.t ?? 0),
    bytes: Number(row?.b ?? 0),
    recent: recent.map((r) => Number(r.at_ms)),
  };
}

/** The records of calls a spent budget refused: they were not charged. */
const SPENT_REFUSAL = '%"code":"ELIMIT"%';

/** A record as the trail takes it. */
function trailEntry(r: AuditDraft, context: AuditContext, replayed = false): AuditEntry {
  const approval = r.approval && {
    required: r.approval.required,
    by: r.approval.by,
    ...(r.approval.at === undefined ? {} : { at: r.approval.at }),
    ...(r.approval.approver === undefined ? {} : { approver: r.approval.approver }),
  };
  return {
    op: r.op,
    opClass: r.opClass,
    paths: r.paths,
    sessionId: r.sessionId,
    agent: r.agent,
    backend: context.backend,
    user: context.user,
    requestId: r.requestId,
    params: {
      ...r.params,
      ...(r.changeId ? { changeId: r.changeId } : {}),
      ...(r.recovered ? { recovered: true } : {}),
      ...(replayed ? { replayed: true } : {}),
    },
    result: r.result,
    code: r.code,
    tokens: r.tokens,
    approval,
    before: r.before,
    after: r.after,
    diff: r.diff,
    durationMs: r.durationMs,
  };
}

interface AuditRow {
  id: number;
  at_ms: number;
  op: string;
  path: string | null;
  agent: string | null;
  session_id: string | null;
  params: string | null;
  result: string;
  tokens: number | null;
  change_id: string | null;
}

/** A table row's parameters column, parsed. */
function paramsOf(row: AuditRow): Record<string, unknown> {
  return (row.params === null ? {} : JSON.parse(row.params)) as Record<string, unknown>;
}

/** A table row back as a record, for the trail's replay. */
function fromRow(row: AuditRow, p = paramsOf(row)): AuditDraft {
  const { opClass, paths, approval, code, before, after, diff, recovered, durationMs, requestId, trailChain: _, ...params } = p;
  return {
    requestId: String(requestId ?? `row-${row.id}`),
    op: row.op,
    opClass: (opClass as OpClass | undefined) ?? 'read',
    paths: (paths as string[] | undefined) ?? (row.path === null ? [] : [row.path]),
    agent: row.agent ?? '',
    sessionId: row.session_id ?? '',
    params,
    result: row.result as AuditDraft['result'],
    code: code as string | undefined,
    tokens: row.tokens ?? undefined,
    approval: approval as AuditDraft['approval'],
    before: before as AuditDraft['before'],
    after: after as AuditDraft['after'],
    diff: diff as AuditDraft['diff'],
    durationMs: Number(durationMs ?? 0),
    changeId: row.change_id ?? undefined,
    recovered: recovered === true || undefined,
  };
}

/**
 * The sink that writes every record to the store's table and, when given,
 * the trail; replays into the trail what it missed before this open.
 *
 * @example
 * ```ts
 * const sink = storeAuditSink(store, AuditTrail.open({ dir, key: { keyFile }, index: store }), { backend: 'HostFilesystem', user: 'ana' });
 * ```
 */
export async function storeAuditSink(store: StateStore, trail: AuditTrail | undefined, context: AuditContext): Promise<AuditSink> {
  if (trail !== undefined) await replayMissed(store, trail, context);
  // Records of calls outside a transaction (reads, searches, refusals) wait here and are written a batch at a time.
  const queued: AuditDraft[] = [];
  // Records written inside a transaction, for the trail once it commits.
  const pending: AuditDraft[] = [];
  let timer: NodeJS.Timeout | undefined;
  // One hold of the trail's lock for a batch's lines. Their rows are committed: a process that opened since may have
  // replayed some into the trail already (appendCommitted skips those).
  const toTrail = (batch: readonly AuditDraft[]): void => {
    if (trail === undefined || batch.length === 0) return;
    trail.batch(() => {
      for (const r of batch) trail.appendCommitted(trailEntry(r, context));
    });
  };
  // One call (one statement per 64 rows) for the records of a batch.
  const insert = (batch: readonly AuditDraft[]): Promise<void> =>
    store.audit(
      batch.map((r) => ({
        op: r.op,
        // A refused call's path is recorded as asked, and may hold a NUL, which a PostgreSQL text column cannot: written as JSON writes it.
        path: r.paths[0]?.replaceAll('\0', '\\u0000'),
        agent: r.agent,
        sessionId: r.sessionId,
        params: rowParams(r, trail?.chain),
        result: r.result,
        tokens: r.tokens,
        changeId: r.changeId,
      })),
    );
  // The flush outside a transaction under way, if any: its batch is taken from the queue but not yet committed.
  let inflight: Promise<void> | undefined;
  const flushOutside = async (): Promise<void> => {
    // The batch is taken once the transaction has begun: a change's transaction
    // open meanwhile writes what is queued before its own record, in call order.
    let batch: AuditDraft[] = [];
    try {
      await store.transaction(async () => {
        batch = queued.splice(0);
        await insert(batch);
      });
    } catch (err) {
      // Kept for the next flush, which a later call, a read of the table or close makes.
      queued.unshift(...batch);
      throw err;
    }
    // Off this thread once the trail has been handed a few: what the caller of the read that flushed would pay.
    trail?.appendLater(batch.map((r) => trailEntry(r, context)));
  };
  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (store.closed) return;
    if (store.inTransaction) {
      if (queued.length === 0) return;
      // Inside a change's transaction: the earlier records go first, in its commit.
      const batch = queued.splice(0);
      await insert(batch);
      pending.unshift(...batch);
      return;
    }
    // A flush the timer started may hold records it took from the queue and has not committed:
    // a read of the table after this flush must see them, so it waits for that one first.
    while (inflight !== undefined) await inflight.catch(() => undefined);
    if (queued.length === 0) return;
    const run = flushOutside();
    const tracked: Promise<void> = run.finally(() => {
      if (inflight === tracked) inflight = undefined;
    });
    tracked.catch(() => undefined);
    inflight = tracked;
    await run;
  };
  store.beforeAuditRead(flush);
  store.onTransactionEnd((committed) => {
    const batch = pending.splice(0);
    if (committed) toTrail(batch);
  });
  return (r) => {
    if (store.inTransaction) {
      // A change's record: in the change's transaction, after whatever was queued before it.
      // One statement for both; should it fail, the queued ones stay queued for the next flush.
      clearTimeout(timer);
      timer = undefined;
      const earlier = queued.splice(0);
      return insert([...earlier, r]).then(
        () => {
          pending.push(...earlier, r);
        },
        (err: unknown) => {
          queued.unshift(...earlier);
          throw err;
        },
      );
    }
    queued.push(r);
    // Off any caller's stack: a failure leaves the batch queued for the next flush to report.
    if (queued.length >= AUDIT_BATCH) flush().catch(() => undefined);
    else timer ??= setTimeout(() => void flush().catch(() => undefined), AUDIT_FLUSH_MS);
    return undefined;
  };
}

/**
 * How many of the trail's newest records the replay compares at least.
 * Processes append to the trail in their own order, not the table's: a
 * record written to the table before another may reach the trail after it.
 */
const REPLAY_WINDOW = 64;
/**
 * How far back the replay reads the trail, at most, for a record the table
 * holds: records appended by the library itself (not through a sink) have
 * no row, and a run of them hides where the table's rows stand in the trail.
 */
const REPLAY_REACH = 4096;
/**
 * How many of the table's newest rows the replay looks through for this
 * trail's: processes on other hosts sharing the store write theirs in
 * between. A record missed further back than this is not replayed.
 */
const REPLAY_SCAN = 16_384;

/** A row bound for a trail, parsed once. */
interface ReplayRow {
  readonly draft: AuditDraft;
  readonly chain: string | undefined;
  readonly key: string;
}

function replayRow(row: AuditRow): ReplayRow {
  const p = paramsOf(row);
  const draft = fromRow(row, p);
  return { draft, chain: typeof p.trailChain === 'string' ? p.trailChain : undefined, key: replayKey(draft.requestId, draft.op, draft.durationMs) };
}

/**
 * How many of the table's rows a new trail takes at a time: it takes the
 * table's history, which may be millions of rows, a page at a time (each
 * in one hold of the trail's lock), never all of it in memory at once.
 */
const HISTORY_PAGE = 1024;

/**
 * Appends to the trail the table's records it missed (a process died between
 * committing a record and appending it): among the table's newest rows bound
 * for this trail (other hosts sharing a PostgreSQL store keep trails of
 * their own, and a busy one must not push this trail's rows out of the
 * window), those after the oldest one the trail's newest records hold that
 * the trail lacks. The trail is read back until it reaches a record the
 * table holds, {@link REPLAY_REACH} records at most.
 * Under the trail's lock, so another process's appends cannot interleave.
 * A trail with no records yet takes the table's history instead
 * ({@link takeHistory}).
 *
 * The trail's newest records are read from the log itself, never through
 * the index: other processes write their index rows a tick after their
 * lines, and a replay that asked the index appended lines they had just
 * written again. A trail changed by someone (a line that no longer matches
 * its MAC) still opens — `verify()` must be able to run and name
 * the line — but never silently: a process warning (`CTXFS_AUDIT_DAMAGED`)
 * names the line.
 */
async function replayMissed(store: StateStore, trail: AuditTrail, context: AuditContext): Promise<number> {
  // Read before the trail's lock is taken (the lock is held synchronously); a
  // row committed in between by a live process is appended by that process. A
  // row committed before, whose live process has not appended it yet, is
  // replayed here, and that process's append then skips it (appendCommitted).
  // Within the table's newest REPLAY_SCAN rows (the primary key bounds the scan); a chain id is a UUID: nothing
  // in it is special to LIKE.
  const chain = trail.tip.chain;
  const mine = (
    await store.all<AuditRow>('SELECT * FROM audit WHERE id > (SELECT MAX(id) FROM audit) - ? AND params LIKE ? ORDER BY id DESC LIMIT ?', [
      REPLAY_SCAN,
      `%"trailChain":"${chain}"%`,
      REPLAY_WINDOW * 2,
    ])
  )
    .reverse()
    .map(replayRow)
    .filter((r) => r.chain === chain);
  let unverified: AuditRecord | undefined;
  // Under the trail's lock: the records of `mine` it lacks, appended; `undefined` for a trail with no records.
  const catchUp = (): number | undefined => {
    // From the log itself: the index lacks the lines other processes appended a moment ago.
    let reach = REPLAY_WINDOW;
    let recent = trail.newest(reach);
    if (recent.length === 0) return undefined;
    const tableKeys = new Set(mine.map((r) => r.key));
    // Records the library appended (no row) may hide where the table's rows stand in the trail: read further back.
    while (tableKeys.size > 0 && recent.length === reach && reach < REPLAY_REACH && !recent.some((r) => tableKeys.has(keyOf(r)))) {
      reach = Math.min(reach * 8, REPLAY_REACH);
      recent = trail.newest(reach);
    }
    unverified = recent.find((r) => !r.verified);
    const held = new Set(recent.map(keyOf));
    const first = mine.findIndex((r) => held.has(r.key));
    // None of the table's rows in reach: the trail was started over elsewhere, or is older than the table's window.
    const rows = first === -1 ? [] : mine.slice(first).filter((r) => !held.has(r.key));
    for (const r of rows) trail.append(trailEntry(r.draft, context, true));
    return rows.length;
  };
  const replayed = trail.batch(catchUp) ?? (await takeHistory(store, trail, context, catchUp));
  const found =
    unverified &&
    `the audit trail was changed: ${unverified.location.file} line ${unverified.location.line} (seq ${unverified.seq}) does not match its MAC; ${trail.dir}`;
  if (found !== undefined) {
    process.emitWarning(found, {
      code: 'CTXFS_AUDIT_DAMAGED',
      detail: `run ${trail.remedies.verify} for the first line that does not verify; the log keeps the change as evidence, and new records are still appended to it`,
    });
    // A warning is printed on a later tick: a command whose work is all synchronous would exit before it.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return replayed;
}

/**
 * A new trail takes the table's history: its rows up to the newest one now
 * (those committed later are their processes' to append), in order, but for
 * the rows bound for other hosts' trails (its own chain's are taken: a
 * process killed between its commit and its append on the trail's first
 * record). A page of {@link HISTORY_PAGE} rows at a time, each appended in
 * one hold of the trail's lock: the pages are read between holds (the lock
 * is held synchronously), when other processes may append. Each hold checks
 * what they did: before this replay's first line, a record appended by
 * another means the trail is no longer new — it started without this
 * history (as when another process appended first), and this replay catches
 * up as on any trail; after it, the records others appended since this
 * replay's last line (a live process's own record, or a replay of another
 * process that opened meanwhile) are not appended again. A process killed
 * midway leaves the history taken so far: the next open finds a trail with
 * records and does not take the rest.
 */
async function takeHistory(store: StateStore, trail: AuditTrail, context: AuditContext, catchUp: () => number | undefined): Promise<number> {
  const top = Number((await store.get<{ top: number | string | null }>('SELECT MAX(id) AS top FROM audit'))?.top ?? 0);
  let taken = 0;
  // The seq of this replay's newest line in the trail.
  let last: number | undefined;
  // The records others appended since this replay's first line, not yet met in its pages: their rows may be in any later page.
  const theirs = new Set<string>();
  for (let after = 0; after < top; ) {
    const page = await store.all<AuditRow>('SELECT * FROM audit WHERE id > ? AND id <= ? ORDER BY id LIMIT ?', [after, top, HISTORY_PAGE]);
    if (page.length === 0) break;
    after = Number((page.at(-1) as AuditRow).id);
    const taking = trail.batch(() => {
      if (last !== undefined) for (const key of appendedSince(trail, last)) theirs.add(key);
      // The lock was let go while the page was read: another process may have started the trail meanwhile.
      else if (trail.newest(1).length > 0) return false;
      const now = trail.tip.chain;
      for (const row of page) {
        const r = replayRow(row);
        if ((r.chain !== undefined && r.chain !== now) || theirs.delete(r.key)) continue;
        last = trail.append(trailEntry(r.draft, context, true)).seq;
        taken++;
      }
      return true;
    });
    if (!taking) return trail.batch(catchUp) ?? 0;
  }
  return taken;
}

/** Under the trail's lock: the records appended after seq `since` (by others: it is this process's last line), by replay key. */
function appendedSince(trail: AuditTrail, since: number): Set<string> {
  // Most often nobody did: a few records, this replay's last among them, tell.
  for (let reach = 8; ; reach *= 8) {
    const recent = trail.newest(reach);
    const after = recent.filter((r) => r.seq > since);
    if (after.length < recent.length || recent.length < reach) return new Set(after.map(keyOf));
  }
}

function keyOf(r: AuditRecord): string {
  return replayKey(r.requestId, r.op, r.durationMs);
}
