/**
 * A session that only guards: the policy decides each call, the session's
 * budgets and rate limit apply, and the audit records it, while the caller
 * does the I/O on the backend itself. For what no retrieval call serves —
 * `ctxfs cat --raw`'s byte stream — in a process that should not pay for
 * the whole context layer: opening one loads the registry, the policy, the
 * audit and the journal, not retrieval, search, edits or the tokenizer.
 *
 * A call made here is decided and recorded exactly as the same call made
 * through `ContextSession.guarded`: both go through the workspace guard.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { type ProfileInput, resolveProfile } from '../profiles/model-profiles.ts';
import { FileRegistry, type FileRegistryOptions } from '../registry/file-registry.ts';
import type { AuditTrail } from '../safety/audit/audit-trail.ts';
import { type RedactionOptions, Redactor } from '../safety/redaction.ts';
import { askingFirst, type CallOutcome, type GuardedCall } from '../safety/safety-layer.ts';
import type { StateStore } from '../state/state-store.ts';
import { SessionContext } from './session-context.ts';
import { openWorkspaceGuard, type SafetyOptions, type WorkspaceGuard } from './workspace-guard.ts';

/** Options of {@link openGuardedSession}. */
export interface GuardedSessionOptions {
  fs: Filesystem;
  /** The workspace's store, open; the caller closes it. */
  store: StateStore;
  /** Profile of the session (its budgets); default `large`. */
  profile?: ProfileInput;
  /** Agent name; default `default`. */
  agent?: string;
  /** Resume this session id. */
  sessionId?: string;
  /** As the context layer's: the sensitive patterns must be the same for a decision to be. */
  registry?: FileRegistryOptions;
  redaction?: RedactionOptions | Redactor;
  safety?: SafetyOptions;
}

/** An open guarded session: see {@link openGuardedSession}. */
export class GuardedSession {
  readonly agent: string;
  readonly session: SessionContext;
  readonly #guard: WorkspaceGuard;
  readonly #store: StateStore;
  #closed = false;

  /** @internal use {@link openGuardedSession} */
  constructor(store: StateStore, guard: WorkspaceGuard, agent: string, session: SessionContext) {
    this.#store = store;
    this.#guard = guard;
    this.agent = agent;
    this.session = session;
  }

  /** The tamper-evident trail records are copied to, when one is configured. */
  get auditTrail(): AuditTrail | undefined {
    return this.#guard.trail;
  }

  /**
   * Runs `body` as one call of this session: refused (and recorded) when
   * the policy or a budget says no, asking the approver where the policy
   * says to, recorded with `outcome`'s fields when it runs.
   */
  guarded<T>(call: GuardedCall, body: () => Promise<T>, outcome: (result: T) => CallOutcome): Promise<T> {
    return this.#guard.safety.run(
      call,
      { agent: this.agent, session: this.session },
      async () => {
        // The call's budget is the session's as the call begins, whoever else spent from it.
        await this.session.refresh();
        return askingFirst(call, body)();
      },
      outcome,
    );
  }

  /** Writes the audit records still queued; closes a trail opened from options. The store and the filesystem are the caller's. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#guard.journal.close();
    if (!this.#store.closed) await this.#store.flushAudit();
    if (this.#guard.ownsTrail) this.#guard.trail?.close();
  }
}

/**
 * Opens a session that guards calls without the context layer: the same
 * policy, budgets and audit as `createContext` would apply on the same
 * workspace and store.
 *
 * @example
 * ```ts
 * const store = await openStateStore(defaultStatePath(fs.root));
 * const guarded = await openGuardedSession({ fs, store, agent: 'cli' });
 * const bytes = await guarded.guarded({ op: 'readBytes', opClass: 'read', paths: ['logo.png'], params: {} },
 *   () => fs.readBytes('logo.png'), (b) => ({ result: 'ok', bytes: b.byteLength }));
 * await guarded.close();
 * ```
 */
export async function openGuardedSession(options: GuardedSessionOptions): Promise<GuardedSession> {
  const { fs, store } = options;
  const registry = new FileRegistry(fs, store, options.registry);
  // The safety layer's sensitivity lookups answer from what the registry loaded.
  await registry.load();
  const redactor = options.redaction instanceof Redactor ? options.redaction : new Redactor(options.redaction);
  const guard = await openWorkspaceGuard({ fs, store, registry, redactor, safety: options.safety });
  const profile = resolveProfile(options.profile ?? 'large');
  return new GuardedSession(store, guard, options.agent ?? 'default', SessionContext.open(store, profile, options.sessionId));
}
