/**
 * The one choke point every operation of a context session goes through:
 * its arguments checked, the session's budgets and rate limit, the policy's
 * decision for every path it touches (a person asked when the policy says
 * so — for a change, with the diff of every file, just before it would be
 * written), and one audit record of what happened, whatever happened.
 *
 * A session calls `run` once per public call and does nothing else about
 * safety: no retrieval, search or edit module checks a policy or writes an
 * audit record of its own. What they need to know — which paths a search
 * must leave out, whether a change may be committed — they ask the current
 * call (`currentCall()`), which `run` set up.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import { type FsError, fsError, isFsError } from '@ctxfs/core';
import type { FileRegistry } from '../registry/file-registry.ts';
import type { SessionContext } from '../session/session-context.ts';
import { type ApprovalOutcome, type ApprovalRequest, type Approver, askApproval, type ChangePreview, type DecidedBy } from './approval.ts';
import { withoutHostPaths } from './host-paths.ts';
import { type Decision, MUTATING, type OpClass, type Policy } from './policy.ts';
import type { Redactor } from './redaction.ts';
import { SessionBudgets, type SessionSpend } from './session-budgets.ts';

export type { SessionSpend } from './session-budgets.ts';

/** One call of a session, as the choke point sees it. */
export interface GuardedCall {
  /** The session method (`readFile`, `applyPatch`…). */
  readonly op: string;
  readonly opClass: OpClass;
  /** Workspace paths it touches, normalized; a search names its scope (`''` the root). */
  readonly paths: readonly string[];
  /** Its arguments, as recorded (content is elided and secrets redacted before they are stored). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Paths it touches in another way (a patch's deletions and moves), decided as their own class. */
  readonly extra?: ReadonlyArray<{ readonly path: string; readonly opClass: OpClass }> | undefined;
  /** Which of its paths are directories (a directory's rename or delete): a rule for `secrets/` names the directory itself. */
  readonly directories?: readonly string[] | undefined;
  /** The error its arguments already gave (a path that does not normalize): recorded, then thrown. */
  readonly invalid?: FsError | undefined;
  /**
   * The caller's spellings that lead elsewhere, each to the path in
   * {@link paths} it resolved to (through symbolic links, or to a file's
   * own Unicode normalization). When set, the session resolved the call's
   * paths itself: the layer decides each spelling too (a rule may name the
   * link) and resolves nothing again, and the call's body finds the
   * resolution with {@link CallState.resolved}.
   */
  readonly spellings?: ReadonlyMap<string, string> | undefined;
  /**
   * A decision made by rules other than the paths' (a command's, by the
   * policy's command rules), on `subject` (the command line): a denial
   * refuses the call, "ask" asks a person before it runs, as for a read.
   */
  readonly decision?: { readonly decision: Decision; readonly subject: string } | undefined;
}

/** What a finished call reports for its record and the budgets. */
export interface CallOutcome {
  readonly result: 'ok' | 'refused';
  readonly code?: string | undefined;
  /** Tokens handed to the model. */
  readonly tokens?: number | undefined;
  /** Bytes handed to the model or written. */
  readonly bytes?: number | undefined;
  readonly before?: Readonly<Record<string, string | null>> | undefined;
  readonly after?: Readonly<Record<string, string | null>> | undefined;
  readonly diff?: { readonly files: number; readonly added: number; readonly removed: number } | undefined;
}

/** Who is calling. */
export interface CallerIdentity {
  readonly agent: string;
  readonly session: SessionContext;
}

/** The state of the call under way, for the modules below the session. */
export interface CallState {
  readonly call: GuardedCall;
  readonly agent: string;
  readonly sessionId: string;
  /** Whether the policy keeps `path` out of this agent's searches and listings. */
  withheld(path: string): boolean;
  /** The path a normalized spelling of this call resolved to (see {@link GuardedCall.spellings}); the spelling itself otherwise. */
  resolved(path: string): string;
  /**
   * Asks for approval of a change when the policy said "ask"; throws
   * `EDENIED` when refused. `changes` is called only then: a diff of every
   * file costs time on each edit nobody is asked about.
   */
  approveChanges(changes: () => readonly ChangePreview[]): Promise<void>;
  /** The approval decision made for this call, if any. */
  approval: ApprovalOutcome | undefined;
  /**
   * Tokens the policy's session budget leaves this call (`Infinity` without
   * one): what is spent, and what calls running beside it have set aside.
   */
  tokensLeft(): number;
  /**
   * Sets aside up to `want` tokens of the policy's session budget for this
   * call and returns how many it got: a call serves no more, and calls run
   * together cannot overshoot the budget. Asked again, it returns what was
   * set aside (at most `want`). Released when the call ends, what it served
   * then charged. Fewer than `least` left is `ELIMIT`, as a spent budget is
   * at the call's start: even an answer saying so would cost tokens.
   */
  reserveTokens(want: number, least?: number): number;
  /**
   * The call's audit record as it stands, for a change to carry through the
   * edit journal: written with the change's versions (see
   * `SafetyLayer.recordCommitted`), so the audit and the files agree after a crash.
   */
  auditDraft(): AuditDraft;
}

const calls = new AsyncLocalStorage<CallState>();

/**
 * `body` of a guarded call that changes files without the editor (a raw
 * byte write, a directory's delete): where the policy asks about the
 * change, the person is asked before the body runs — with the paths, since
 * no diff is made — as the editor asks before it commits. Without this, a
 * change that never reaches the editor would go unasked.
 */
export function askingFirst<T>(call: GuardedCall, body: () => Promise<T>): () => Promise<T> {
  const changes = MUTATING.has(call.opClass) || (call.extra ?? []).some((e) => MUTATING.has(e.opClass));
  if (!changes) return body;
  return async () => {
    await currentCall()?.approveChanges(() => call.paths.map((path) => ({ path, diff: '', added: 0, removed: 0 })));
    return body();
  };
}

/**
 * The code an audit record keeps for a failed call: a protocol error's, or
 * the code another error carries in Node's way (a socket's `ECONNRESET`, an
 * application's own `ENOSNAPSHOT`); `EUNKNOWN` when it has none.
 */
function errorCode(err: unknown): string {
  if (isFsError(err)) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code) ? code : 'EUNKNOWN';
}

/** The call under way in this async context (`undefined` outside a session call). */
export function currentCall(): CallState | undefined {
  return calls.getStore();
}

/** What the audit stores for each call (until the keyed audit trail replaces the table). */
/** One audit record as the sink receives it. */
export interface AuditDraft {
  requestId: string;
  op: string;
  opClass: OpClass;
  paths: readonly string[];
  agent: string;
  sessionId: string;
  params: Record<string, unknown>;
  result: 'ok' | 'refused' | 'denied' | 'error';
  code?: string | undefined;
  tokens?: number | undefined;
  /** Bytes served or written, as the session's bytes budget counts them. */
  bytes?: number | undefined;
  approval?: { required: boolean; by: DecidedBy; at?: string | undefined; approver?: string | undefined } | undefined;
  before?: Readonly<Record<string, string | null>> | undefined;
  after?: Readonly<Record<string, string | null>> | undefined;
  diff?: CallOutcome['diff'];
  durationMs: number;
  /** The change a journaled edit recorded. */
  changeId?: string | undefined;
  /** Written by recovery after a crash: the call itself never returned. */
  recovered?: boolean | undefined;
}

/** Where audit records go. */
/**
 * Where audit records go. A record made inside a change's transaction must be
 * written in it: the sink returns the promise of that write, and the caller
 * awaits it before the transaction commits.
 */
export type AuditSink = (record: AuditDraft) => void | Promise<void>;

/** Policy answers kept for repeated calls (a search judges every path it meets); the cache starts over when full. */
const DECISION_CACHE_SIZE = 50_000;

/** Strings longer than this are recorded as their size and hash, not their text. */
const MAX_RECORDED_CHARS = 256;

/** Characters a shell would act on: refused in paths a model sends. */
const SHELL_META = /[;|&`\n\r]|\$[({]/;

/**
 * The safety layer of one workspace.
 *
 * @example
 * ```ts
 * const served = await safety.run({ op: 'readFile', opClass: 'read', paths: ['src/a.ts'], params: {} }, caller,
 *   () => readFile(ws, caller, 'src/a.ts'), (r) => ({ result: 'ok', tokens: r.tokens }));
 * ```
 */
export class SafetyLayer {
  readonly policy: Policy;
  readonly approver: Approver | undefined;
  readonly #registry: FileRegistry;
  readonly #redactor: Redactor;
  readonly #audit: AuditSink;
  readonly #budgets: SessionBudgets;
  /** Decisions already made, by operation, agent and path. */
  readonly #decisions = new Map<string, Decision>();
  /** Calls whose record the edit journal wrote with their change. */
  readonly #journaled = new Set<string>();
  readonly #realpath: ((path: string) => Promise<string>) | undefined;
  readonly #spentBefore: ((sessionId: string) => Promise<SessionSpend>) | undefined;

  constructor(options: {
    policy: Policy;
    approver?: Approver | undefined;
    registry: FileRegistry;
    redactor: Redactor;
    audit: AuditSink;
    /** Where a path leads through symbolic links (`fs.realpath`), on a backend that has them. */
    realpath?: ((path: string) => Promise<string>) | undefined;
    /** What a session already spent, from the records of earlier processes (the audit table), when this one first meets it. */
    spentBefore?: ((sessionId: string) => Promise<SessionSpend>) | undefined;
  }) {
    this.policy = options.policy;
    this.#budgets = new SessionBudgets(options.policy.budgets);
    this.approver = options.approver;
    this.#registry = options.registry;
    this.#redactor = options.redactor;
    this.#audit = options.audit;
    this.#realpath = options.realpath;
    this.#spentBefore = options.spentBefore;
  }

  /**
   * Starts this process's count of a session it has not met from what the
   * session spent before (another process, a command before this one), so
   * a budget holds for the session, not for one process's share of it.
   */
  async #resume(sessionId: string): Promise<void> {
    if (!this.#budgets.any || this.#spentBefore === undefined || this.#budgets.has(sessionId)) return;
    const spent = await this.#spentBefore(sessionId).catch(() => undefined);
    if (spent !== undefined) this.#budgets.resume(sessionId, spent);
  }

  /**
   * The files the call's paths lead to through symbolic links, where that
   * is another path: a link to `.env` is decided as `.env` is, or the link
   * would open what the policy closes. A path that cannot be resolved is
   * left to the call itself, which meets the same failure.
   */
  async #linkTargets(call: GuardedCall): Promise<Array<{ path: string; opClass: OpClass; via?: string }>> {
    const out: Array<{ path: string; opClass: OpClass; via?: string }> = [];
    if (call.spellings !== undefined) {
      // Resolved by the session: its paths are where the spellings lead; the spellings are decided as well.
      for (const [spelled, path] of call.spellings) out.push({ path: spelled, opClass: call.extra?.find((e) => e.path === path)?.opClass ?? call.opClass });
      return out;
    }
    const resolve = this.#realpath;
    if (resolve === undefined) return [];
    const given = [...call.paths.map((path) => ({ path, opClass: call.opClass })), ...(call.extra ?? [])].filter((t) => t.path !== '');
    for (const t of given) {
      const real = await resolve(t.path).catch(() => t.path);
      if (real !== t.path) out.push({ path: real, opClass: t.opClass, via: t.path });
    }
    return out;
  }

  /** The policy's decision for one path, with the registry's sensitivity. */
  decide(op: OpClass, path: string, agent: string, directory = false): Decision {
    // The policy and the sensitivity rules are fixed for the layer's life, so an answer holds until the cache is cleared.
    const key = `${op}\0${agent}\0${directory ? '/' : ''}${path}`;
    let decision = this.#decisions.get(key);
    if (decision === undefined) {
      decision = this.policy.decide({
        op,
        path,
        agent,
        sensitive: this.#registry.get(path)?.sensitive ?? this.#registry.isSensitive(path),
        directory,
      });
      if (this.#decisions.size >= DECISION_CACHE_SIZE) this.#decisions.clear();
      this.#decisions.set(key, decision);
    }
    return decision;
  }

  /**
   * Runs one session call through the policy, the budgets and the audit.
   * Throws `EDENIED` (policy or person), `ELIMIT` (budget or rate) or
   * `EINVAL` (a hostile path) before anything runs; a call's own errors
   * pass through with host paths outside the workspace taken out.
   */
  async run<T>(call: GuardedCall, who: CallerIdentity, body: () => Promise<T>, outcome: (result: T) => CallOutcome): Promise<T> {
    const started = performance.now();
    const sessionId = who.session.id;
    let approval: ApprovalOutcome | undefined;
    let required = false;
    const requestId = randomUUID();
    const draft = (result: 'ok' | 'refused' | 'denied' | 'error', fields: Partial<CallOutcome> & { code?: string | undefined } = {}): AuditDraft => ({
      requestId,
      op: call.op,
      opClass: call.opClass,
      paths: call.paths,
      agent: who.agent,
      sessionId,
      params: this.#recorded(call.params),
      result,
      code: fields.code,
      tokens: fields.tokens,
      bytes: fields.bytes,
      approval: approval === undefined && !required ? undefined : { required, by: approval?.by ?? 'policy', at: approval?.at, approver: approval?.approver },
      before: fields.before,
      after: fields.after,
      diff: fields.diff,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    });
    const record = (result: 'ok' | 'refused' | 'denied' | 'error', fields: Partial<CallOutcome> & { code?: string | undefined } = {}): void => {
      // A change recorded through the journal already has its record.
      if (this.#journaled.delete(requestId)) return;
      // Outside a transaction a sink only queues the record.
      void this.#audit(draft(result, fields));
    };
    const refuse = (err: FsError, result: 'denied' | 'error'): never => {
      record(result, { code: err.code });
      throw err;
    };

    for (const p of call.paths) {
      if (SHELL_META.test(p)) {
        refuse(
          fsError('EINVAL', call.op, p, {
            reason: 'the path holds a shell metacharacter (; | & ` $( ${ or a line break)',
            hint: 'name the file by its workspace path alone; nothing is run through a shell',
          }),
          'error',
        );
      }
    }
    if (call.invalid) refuse(withoutHostPaths(call.invalid), 'error');
    await this.#resume(sessionId);
    const limit = this.#budgets.charge(call.op, call.paths[0], sessionId);
    if (limit) refuse(limit, 'denied');

    // The most restrictive answer over every path the call touches, and every file a link among them leads to.
    let asked: { decision: Decision; path: string } | undefined;
    // A path the session resolved through a link is named, in a refusal, as the caller spelled it.
    const linkedFrom = new Map<string, string>();
    for (const [spelled, path] of call.spellings ?? []) if (spelled.normalize('NFC') !== path.normalize('NFC')) linkedFrom.set(path, spelled);
    const touched: Array<{ path: string; opClass: OpClass; via?: string | undefined }> = [
      ...call.paths.map((path) => ({ path, opClass: call.opClass, via: linkedFrom.get(path) })),
      ...(call.extra ?? []).map((e) => ({ ...e, via: linkedFrom.get(e.path) })),
      ...(await this.#linkTargets(call)),
    ];
    const directories = new Set(call.directories);
    for (const { path, opClass, via } of touched) {
      // A whole-workspace search is asked about once when the mode asks for every one; each path it serves is then decided (see withheld).
      // A search's scope is a directory unless the registry knows it as a file: a rule for hr/ decides a search of hr.
      const directory = directories.has(path) || (opClass === 'search' && this.#registry.get(path) === undefined);
      const decision = path === '' && !MUTATING.has(opClass) ? this.policy.decideOperation(opClass) : this.decide(opClass, path, who.agent, directory);
      const reason = via === undefined ? decision.reason : `${via} is a link to ${path}: ${decision.reason}`;
      if (decision.effect === 'deny') refuse(denied(call.op, via ?? path, reason), 'denied');
      if (decision.effect === 'ask') asked ??= { decision: via === undefined ? decision : { ...decision, reason }, path: via ?? path };
    }
    if (call.decision !== undefined) {
      const { decision, subject } = call.decision;
      if (decision.effect === 'deny') refuse(denied(call.op, subject, decision.reason), 'denied');
      if (decision.effect === 'ask') asked ??= { decision, path: subject };
    }
    required = asked !== undefined;

    const request = (extra: Partial<ApprovalRequest>): ApprovalRequest => ({
      op: call.op,
      opClass: call.opClass,
      agent: who.agent,
      sessionId,
      paths: call.paths,
      reason: asked?.decision.reason ?? '',
      ...extra,
    });
    const changes = touched.some((t) => MUTATING.has(t.opClass));
    // A call made inside another that a person approved for this path (a directory's delete, file by file) is not asked again.
    const enclosing = calls.getStore();
    const covering = enclosing?.approval?.approved === true && asked !== undefined && enclosing.call.paths.includes(asked.path);
    if (covering) approval = enclosing.approval;
    if (asked && !changes && !covering) {
      // A read is asked about before anything is read; a change, when its diff is known.
      approval = await askApproval(this.approver, request({ summary: call.decision?.subject ?? this.#summary(call) }), this.policy.approvalTimeoutMs);
      if (!approval.approved) refuse(denied(call.op, asked.path, refusalReason(asked.decision, approval)), 'denied');
    }

    const tokens = this.#budgets.reservation(call.op, call.paths[0], sessionId);
    const state: CallState = {
      call,
      tokensLeft: () => tokens.tokensLeft(),
      reserveTokens: (want, least) => tokens.reserve(want, least),
      agent: who.agent,
      sessionId,
      approval,
      withheld: (path) => {
        const d = this.decide(call.opClass === 'search' ? 'search' : 'read', path, who.agent);
        if (d.effect !== 'ask') return d.effect === 'deny';
        // An "ask" path is served only under a person's yes to this call that covers it: one given for the
        // operation as a whole (the mode's), or under the same rule (a search of hr/, asked by the rule for hr/).
        const yes = state.approval?.approved === true && state.approval.by === 'user';
        return !(yes && (d.basis === 'operation' || d.reason === asked?.decision.reason));
      },
      resolved: (path) => call.spellings?.get(path) ?? path,
      auditDraft: () => draft('ok'),
      approveChanges: async (changes) => {
        if (!asked || state.approval?.approved) return;
        state.approval = approval = await askApproval(this.approver, request({ changes: changes() }), this.policy.approvalTimeoutMs);
        if (!approval.approved) throw denied(call.op, asked.path, refusalReason(asked.decision, approval));
      },
    };

    let value: T;
    try {
      value = await calls.run(state, body);
    } catch (err) {
      approval = state.approval;
      const safe = isFsError(err) ? withoutHostPaths(err) : err;
      record(isFsError(err, 'EDENIED') ? 'denied' : 'error', { code: errorCode(err) });
      throw safe;
    } finally {
      tokens.release();
    }
    approval = state.approval;
    const out = outcome(value);
    this.#budgets.spend(sessionId, out);
    record(out.code === 'EDENIED' ? 'denied' : out.result, out);
    return value;
  }

  /**
   * Writes the audit record a journaled change carried, inside the
   * transaction that records the change: with each file's hash before and
   * after, and marked `recovered` when recovery finished the change after a crash.
   */
  async recordCommitted(
    draft: AuditDraft,
    change: { changeId: string; entries: ReadonlyArray<{ path: string; before: string | null; after: string | null }> },
    recovered: boolean,
  ): Promise<void> {
    const before: Record<string, string | null> = {};
    const after: Record<string, string | null> = {};
    for (const e of change.entries) {
      before[e.path] = e.before;
      after[e.path] = e.after;
    }
    await this.#audit({ ...draft, before, after, changeId: change.changeId, recovered: recovered || undefined });
    if (!recovered) this.#journaled.add(draft.requestId);
  }

  /** A read's summary for the person asked: the file's size and lines, as the registry knows them. */
  #summary(call: GuardedCall): string {
    return call.paths
      .map((p) => {
        if (p === '') return `the whole workspace (${call.op})`;
        const r = this.#registry.get(p);
        return r ? `${p}: ${r.size.toLocaleString('en-US')} bytes` : p;
      })
      .join('; ');
  }

  /** Arguments as stored: long strings as size and hash, secrets redacted. */
  #recorded(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) continue;
      if (typeof v === 'string') {
        out[k] = v.length > MAX_RECORDED_CHARS ? { chars: v.length, sha256: createHash('sha256').update(v).digest('hex') } : this.#redactor.redact(v).text;
      } else if (v !== null && typeof v === 'object') out[k] = JSON.parse(this.#redactor.redact(JSON.stringify(v)).text) as unknown;
      else out[k] = v;
    }
    return out;
  }
}

function denied(op: string, path: string, reason: string): FsError {
  return fsError('EDENIED', op, path, { reason });
}

function refusalReason(decision: Decision, approval: ApprovalOutcome): string {
  const who: Record<ApprovalOutcome['by'], string> = {
    timeout: 'no one approved it in time',
    policy: approval.note ?? 'approval is required',
    // The approver failed before anyone answered: its note says how; no person declined.
    error: 'no one answered',
    user: 'the user declined',
    denied_by_user: 'the user declined',
    auto: 'the user declined',
  };
  return `${decision.reason}; ${who[approval.by]}${approval.note && approval.by !== 'policy' ? ` (${approval.note})` : ''}`;
}
