/**
 * `@ctxfs/context/guard` — the workspace's choke point without the rest of
 * the context layer: a guarded session (policy, budgets, approvals, audit),
 * the state store's opening and the audit trail. A command that moves bytes
 * itself (`ctxfs cat --raw`) imports this instead of `@ctxfs/context` and
 * loads neither retrieval nor the tokenizer; every call is still decided
 * and recorded as the context layer would.
 *
 * @example
 * ```ts
 * import { openGuardedSession, openStateStore, defaultStatePath } from '@ctxfs/context/guard';
 * const store = await openStateStore(defaultStatePath(fs.root), { workspace: fs.root });
 * const session = await openGuardedSession({ fs, store, agent: 'cli' });
 * ```
 *
 * @module
 */

export { type Approver, TerminalApprover } from './safety/approval.ts';
export { AuditTrail, type AuditTrailOptions, defaultAuditKeyFile } from './safety/audit/audit-trail.ts';
export type { AuditRemedies } from './safety/audit/remedies.ts';
export type { CallOutcome, GuardedCall } from './safety/safety-layer.ts';
export { GuardedSession, type GuardedSessionOptions, openGuardedSession } from './session/guarded-session.ts';
export type { SafetyOptions } from './session/workspace-guard.ts';
export type { StateStore } from './state/state-store.ts';
export { defaultStatePath, isPostgresUrl, openStateStore, userStateDir, userStatePath, withoutPassword } from './state/store.ts';
