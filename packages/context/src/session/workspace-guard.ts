/**
 * The choke point of a workspace, assembled once: the policy (from its
 * files and code), the safety layer over the registry's sensitivity, the
 * audit sink with its tamper-evident trail, and the edit journal — settled
 * on open, so nothing reads a file a crashed change left half written.
 *
 * Both the full context layer (`createContext`) and a guarded session
 * (`openGuardedSession`: a raw byte read, a listing) open it here, so a call
 * is decided and recorded the same whichever of them serves it. It loads
 * nothing of retrieval, search, edits or the tokenizer.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { EditJournal, type RecoveryReport } from '../edits/journal.ts';
import { VersionStore } from '../history/version-store.ts';
import type { FileRegistry } from '../registry/file-registry.ts';
import type { Approver } from '../safety/approval.ts';
import { AuditTrail, type AuditTrailOptions } from '../safety/audit/audit-trail.ts';
import { sessionSpend, storeAuditSink } from '../safety/audit-sink.ts';
import { type PolicyConfig, resolvePolicy } from '../safety/policy.ts';
import { loadPolicyFiles } from '../safety/policy-file.ts';
import type { Redactor } from '../safety/redaction.ts';
import { type AuditDraft, type AuditSink, SafetyLayer } from '../safety/safety-layer.ts';
import type { StateStore } from '../state/state-store.ts';

/**
 * Options of the safety layer. The policy is merged from the built-in
 * defaults, the user's file, the project's `.ctxfs/config.toml` and `policy`,
 * in that order (see POLICY.md).
 */
export interface SafetyOptions {
  /** The policy layer given in code (highest precedence). */
  policy?: PolicyConfig;
  /** Read the policy files: default the user's and the project's; `false` for none (tests, embedding). */
  policyFiles?: false | { userConfig?: string | false };
  /** Who decides when the policy says "ask"; without one, "ask" is a denial. */
  approver?: Approver;
  /** Where audit records go instead of the state store's `audit` table (a log shipper, a test's array). */
  audit?: AuditSink;
  /**
   * A tamper-evident copy of every record: an open `AuditTrail`, or where to
   * open one (HMAC-chained JSON lines, see AUDIT.md). Each record is written
   * to the state store's `audit` table first — a change's record in the
   * change's own transaction — and then to the trail; on open, what the trail
   * missed (a crash between the two) is appended, marked `replayed`. One
   * process writes a trail at a time.
   */
  auditTrail?: AuditTrail | Omit<AuditTrailOptions, 'index'>;
}

/** What {@link openWorkspaceGuard} assembled. */
export interface WorkspaceGuard {
  readonly safety: SafetyLayer;
  readonly versions: VersionStore;
  readonly journal: EditJournal;
  /** The trail records are copied to, when one is configured. */
  readonly trail: AuditTrail | undefined;
  /** Whether the trail was opened here (from options), so its closing is the opener's. */
  readonly ownsTrail: boolean;
  /** What recovery found on open: changes interrupted by a crash, completed or rolled back. */
  readonly recovery: RecoveryReport;
}

/** No recovery: a read-only backend cannot have a change of its own to settle. */
const NOTHING_RECOVERED: RecoveryReport = { completed: [], rolledBack: [], untouched: [], inFlight: [] };

/**
 * Opens the workspace's choke point on a loaded registry. Recovery of
 * changes a crash interrupted runs last, once the journal records through
 * this safety layer.
 *
 * @example
 * ```ts
 * const registry = new FileRegistry(fs, store);
 * await registry.load();
 * const guard = await openWorkspaceGuard({ fs, store, registry, redactor: new Redactor(), safety: { policyFiles: false } });
 * ```
 */
export async function openWorkspaceGuard(options: {
  fs: Filesystem;
  store: StateStore;
  registry: FileRegistry;
  redactor: Redactor;
  safety?: SafetyOptions | undefined;
}): Promise<WorkspaceGuard> {
  const { fs, store } = options;
  const trailOption = options.safety?.auditTrail;
  const trail = trailOption === undefined || trailOption instanceof AuditTrail ? trailOption : AuditTrail.open({ ...trailOption, index: store });
  const ownsTrail = trail !== undefined && !(trailOption instanceof AuditTrail);
  try {
    const files = options.safety?.policyFiles === false ? [] : await loadPolicyFiles(fs, options.safety?.policyFiles ?? {});
    const code = options.safety?.policy ? [{ source: 'code', config: options.safety.policy }] : [];
    const safety = new SafetyLayer({
      policy: resolvePolicy([...files, ...code]),
      approver: options.safety?.approver,
      registry: options.registry,
      redactor: options.redactor,
      audit: options.safety?.audit ?? (await storeAuditSink(store, trail, { backend: fs.constructor.name, user: process.env.USER ?? 'unknown' })),
      realpath: fs.capabilities.symlinks ? (path) => fs.realpath(path) : undefined,
      // What a resumed session spent is in the table this sink writes; another sink keeps its own.
      spentBefore: options.safety?.audit === undefined ? (sessionId) => sessionSpend(store, sessionId) : undefined,
    });
    const versions = new VersionStore(store);
    const journal = new EditJournal(store, versions, {
      onRecorded: (audit, change, recovered) => safety.recordCommitted(audit as AuditDraft, change, recovered),
      durable: fs.durableWrites !== false,
    });
    // A change interrupted by a crash is settled before anything else reads or writes.
    const recovery = fs.readOnly ? NOTHING_RECOVERED : await journal.recover(fs);
    return { safety, versions, journal, trail, ownsTrail, recovery };
  } catch (err) {
    // A broken policy file or a failing store: the trail opened here would otherwise stay locked.
    if (ownsTrail) trail?.close();
    throw err;
  }
}
