/**
 * The shape of one audit record: what a caller hands the trail for each
 * context-layer call ({@link AuditEntry}), the line the trail writes for it,
 * and the record it gives back ({@link AuditRecord}). Parameters are made
 * safe to keep before they are written: any string longer than
 * {@link ELIDE_OVER_CHARS} characters (file content, patches, replacement
 * text) becomes its size and SHA-256, so the log proves what was sent
 * without holding it.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { fsError } from '@ctxfs/core';
// One set of operation classes: the policy's, which the records name.
import { OP_CLASSES, type OpClass } from '../policy.ts';
import { parseLine } from './chain-line.ts';

export type { OpClass };

/** How a call ended. */
export const RESULTS = ['ok', 'refused', 'denied', 'error'] as const;
/** `ok`, `refused` (the layer declined: stale, ambiguous, over budget), `denied` (policy or user), `error`. */
export type AuditResult = (typeof RESULTS)[number];

/** Who decided that a call could go ahead. */
export interface AuditApproval {
  /** Whether the policy asked for an approval at all. */
  readonly required: boolean;
  /**
   * `policy` (a rule, the mode, or nobody to ask), `auto` (auto-approved), `user`, `denied_by_user`,
   * `timeout` (nobody answered), `error` (the approver failed before anyone answered).
   */
  readonly by: 'policy' | 'auto' | 'user' | 'denied_by_user' | 'timeout' | 'error';
  /** When the decision was made (ISO-8601). */
  readonly at?: string;
  /** Who approved, when a person did. */
  readonly approver?: string;
}

/** Lines added and removed by a change, over how many files. */
export interface AuditDiffSummary {
  readonly files: number;
  readonly added: number;
  readonly removed: number;
}

/**
 * What the caller reports, once per context-layer call.
 *
 * @example
 * ```ts
 * const entry: AuditEntry = {
 *   op: 'replace', opClass: 'write', paths: ['src/a.ts'],
 *   sessionId: 's1', agent: 'llm:claude', backend: 'host', user: 'dev',
 *   params: { old: 'retries = 3', new: 'retries = 5' }, result: 'ok',
 *   before: { 'src/a.ts': '9f…' }, after: { 'src/a.ts': '41…' },
 *   diff: { files: 1, added: 1, removed: 1 }, durationMs: 4,
 * };
 * ```
 */
export interface AuditEntry {
  /** The context-layer method: `readFile`, `replace`, `applyPatch`, `grep`, `rollback`, `overview`, … */
  readonly op: string;
  readonly opClass: OpClass;
  /** Workspace-relative paths the call touched, already normalized. */
  readonly paths: readonly string[];
  readonly sessionId: string;
  readonly agent: string;
  readonly backend: string;
  readonly user: string;
  /** Correlates the entry with the caller's request; generated when absent. */
  readonly requestId?: string | undefined;
  /** The call's parameters; long strings are elided (see {@link elideParams}). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly result: AuditResult;
  /** The error or refusal code, e.g. `ECONFLICT`. */
  readonly code?: string | undefined;
  /** Tokens returned to the model. */
  readonly tokens?: number | undefined;
  readonly approval?: AuditApproval | undefined;
  /** Path → content SHA-256 before the call (`null`: the file did not exist). */
  readonly before?: Readonly<Record<string, string | null>> | undefined;
  /** Path → content SHA-256 after the call (`null`: the file no longer exists). */
  readonly after?: Readonly<Record<string, string | null>> | undefined;
  readonly diff?: AuditDiffSummary | undefined;
  readonly durationMs: number;
}

/** Where a record is stored: its file in the log directory and 1-based line. */
export interface AuditLocation {
  readonly file: string;
  readonly line: number;
}

/**
 * One entry as written: the caller's fields (parameters elided), plus its
 * place in the chain. `seq` numbers every line of the chain, rotation
 * headers included, so entries' numbers may skip the header's.
 */
export interface AuditRecord {
  readonly seq: number;
  /** The MAC of the record before it (64 hex digits). */
  readonly prev: string;
  /** When it was written, ISO-8601 UTC with milliseconds. */
  readonly ts: string;
  readonly type: 'entry';
  readonly requestId: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly backend: string;
  readonly user: string;
  readonly op: string;
  readonly opClass: OpClass;
  readonly paths: readonly string[];
  readonly params: Readonly<Record<string, unknown>>;
  readonly result: AuditResult;
  readonly code?: string;
  readonly tokens?: number;
  readonly approval?: AuditApproval;
  readonly before?: Readonly<Record<string, string | null>>;
  readonly after?: Readonly<Record<string, string | null>>;
  readonly diff?: AuditDiffSummary;
  readonly durationMs: number;
  /** HMAC-SHA256 of the line up to this field, chained through `prev` (64 hex digits). */
  readonly mac: string;
  /** Where the line is. Not part of the line itself. */
  readonly location: AuditLocation;
  /** Whether the line's MAC matched its content when it was read back (query); always true for a fresh append. */
  readonly verified: boolean;
}

/** Strings longer than this many characters are replaced by their size and hash. */
export const ELIDE_OVER_CHARS = 256;
/** Nesting deeper than this in parameters is cut (parameters are flags and names, not documents). */
const MAX_PARAM_DEPTH = 8;

/** What an elided string or byte array becomes in `params`. */
export interface ElidedValue {
  readonly elided: true;
  /** Length in Unicode code points (strings). */
  readonly chars?: number;
  /** Length in bytes (byte arrays). */
  readonly bytes?: number;
  /** SHA-256 of the UTF-8 text, or of the bytes. */
  readonly sha256: string;
}

/**
 * A copy of `params` that is safe and cheap to keep: strings over
 * {@link ELIDE_OVER_CHARS} characters and every byte array become
 * `{ elided: true, chars | bytes, sha256 }`; `undefined`, functions and
 * symbols are dropped, bigints become strings, dates ISO strings, cycles
 * `'[cycle]'`, nesting beyond eight levels `'[nested]'`.
 *
 * @example
 * ```ts
 * elideParams({ old: 'x', new: 'y'.repeat(300) });
 * // { old: 'x', new: { elided: true, chars: 300, sha256: '…' } }
 * ```
 */
export function elideParams(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out = elideValue(params, 0, new Set<object>());
  return typeof out === 'object' && out !== null && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
}

function elideValue(value: unknown, depth: number, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
      return value.length > ELIDE_OVER_CHARS && codePoints(value) > ELIDE_OVER_CHARS ? elidedString(value) : value;
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined; // undefined, functions, symbols: JSON has no word for them
  }
  if (value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) {
    return { elided: true, bytes: value.byteLength, sha256: createHash('sha256').update(value).digest('hex') } satisfies ElidedValue;
  }
  if (seen.has(value)) return '[cycle]';
  if (depth >= MAX_PARAM_DEPTH) return '[nested]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => elideValue(v, depth + 1, seen) ?? null);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const e = elideValue(v, depth + 1, seen);
      if (e !== undefined) out[k] = e;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function elidedString(s: string): ElidedValue {
  return { elided: true, chars: codePoints(s), sha256: createHash('sha256').update(s, 'utf8').digest('hex') };
}

/**
 * Checks what a caller passes, so a malformed entry fails loudly at the call
 * site instead of leaving a line no reader expects.
 */
export function checkEntry(entry: AuditEntry): void {
  const bad = (what: string): never => {
    throw fsError('EINVAL', 'audit', undefined, { reason: `audit entry: ${what}`, hint: 'see AuditEntry for the fields and their types' });
  };
  if (typeof entry.op !== 'string' || entry.op === '') bad('op must be a non-empty string');
  if (!(OP_CLASSES as readonly string[]).includes(entry.opClass)) bad(`opClass must be one of ${OP_CLASSES.join(', ')}`);
  if (!(RESULTS as readonly string[]).includes(entry.result)) bad(`result must be one of ${RESULTS.join(', ')}`);
  if (!Array.isArray(entry.paths) || entry.paths.some((p) => typeof p !== 'string')) bad('paths must be an array of strings');
  for (const f of ['sessionId', 'agent', 'backend', 'user'] as const) if (typeof entry[f] !== 'string') bad(`${f} must be a string`);
  if (typeof entry.durationMs !== 'number' || !Number.isFinite(entry.durationMs) || entry.durationMs < 0) bad('durationMs must be a finite number ≥ 0');
  if (entry.tokens !== undefined && (!Number.isFinite(entry.tokens) || entry.tokens < 0)) bad('tokens must be a finite number ≥ 0');
  if (typeof entry.params !== 'object' || entry.params === null || Array.isArray(entry.params)) bad('params must be an object');
}

/**
 * The fields of an entry line after `seq`, `prev`, `ts` and `type` (which the
 * writer puts first, where the verifier reads them without parsing), in the
 * order they are written.
 */
export function entryFields(entry: AuditEntry, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    requestId,
    sessionId: entry.sessionId,
    agent: entry.agent,
    backend: entry.backend,
    user: entry.user,
    op: entry.op,
    opClass: entry.opClass,
    paths: [...entry.paths],
    params: elideParams(entry.params),
    result: entry.result,
  };
  if (entry.code !== undefined) body.code = entry.code;
  if (entry.tokens !== undefined) body.tokens = entry.tokens;
  if (entry.approval !== undefined) body.approval = { ...entry.approval };
  if (entry.before !== undefined) body.before = { ...entry.before };
  if (entry.after !== undefined) body.after = { ...entry.after };
  if (entry.diff !== undefined) body.diff = { files: entry.diff.files, added: entry.diff.added, removed: entry.diff.removed };
  body.durationMs = entry.durationMs;
  return body;
}

/**
 * A record's identity where one may be appended twice (a replay, then its
 * own process's append): its request id, operation and duration together.
 * A request retried under its id takes a duration of its own.
 */
export function replayKey(requestId: unknown, op: unknown, durationMs: unknown): string {
  return `${String(requestId)}\0${String(op)}\0${String(durationMs)}`;
}

/** How a replayed record's line spells its mark (JSON escapes a quote inside a string, so only the key matches). */
const REPLAYED_MARK = '"replayed":true';
/** Replayed records noted at most; a process appends its own within milliseconds of the replay. */
const MAX_REPLAYS_NOTED = 4096;

/**
 * Takes note (in `into`, by {@link replayKey}) of the replayed records among
 * `lines`, complete lines other writers appended: the records this writer
 * must not append again.
 */
export function noteReplays(lines: Buffer, into: Set<string>): void {
  for (let at = lines.indexOf(REPLAYED_MARK); at !== -1; ) {
    const start = lines.lastIndexOf(10, at) + 1;
    const nl = lines.indexOf(10, at);
    const end = nl === -1 ? lines.length : nl;
    const rec = parseLine(lines, start, end);
    const params = rec?.params as { replayed?: unknown } | undefined;
    if (rec?.type === 'entry' && params?.replayed === true) {
      // Bounded: records replayed from processes that died are never appended again to consume theirs.
      if (into.size >= MAX_REPLAYS_NOTED) into.clear();
      into.add(replayKey(rec.requestId, rec.op, rec.durationMs));
    }
    at = lines.indexOf(REPLAYED_MARK, end);
  }
}
