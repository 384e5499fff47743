/**
 * How the audit trail's messages name what their reader can do: check the
 * log, rebuild its index. The trail is a library part, read by programs
 * through its API and by people through a command line that passes its own
 * commands (with the options that reach this trail), so a hint never names
 * a command that would check another trail.
 *
 * @module
 */

/** The remedies a trail's errors and warnings name, each as its reader would write it. */
export interface AuditRemedies {
  /** Checks the log's chain and names the first line that does not verify. */
  readonly verify: string;
  /** Rebuilds the query index from the log as it is now. */
  readonly reindex: string;
}

/** What a program calls: the trail's own methods. */
export const API_REMEDIES: AuditRemedies = { verify: 'AuditTrail.verify()', reindex: 'AuditTrail.rebuildIndex()' };
