/**
 * Approvals over MCP. When the policy says "ask", the person behind the
 * client whose call it is gets asked through MCP elicitation, shown the diff;
 * accept approves, decline and cancel deny, and a timeout (the safety layer's)
 * denies. A client that cannot elicit gets the fallback approver's answer, or
 * a denial that says how to allow the change in the policy.
 *
 * @module
 */

import type { ApprovalAnswer, ApprovalRequest, Approver } from '@ctxfs/context';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * Characters of the request (with its diffs) shown in one elicitation: every
 * file's header, and each file's diff cut to its share (see `describeRequest`).
 */
export const ELICIT_MESSAGE_CHARS = 12_000;

/**
 * Asks through one client's elicitation.
 *
 * @example
 * ```ts
 * workspace.approver.route(session.sessionContext.id, elicitationApprover(server, 'claude-code'));
 * ```
 */
export function elicitationApprover(server: Server, client: string, callOf?: () => RequestId | undefined): Approver {
  return {
    name: `mcp-elicitation:${client}`,
    async approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
      const { describeRequest } = await import('@ctxfs/context');
      // No screenful to fit, only the message's size: every file of a patch gets its share of it.
      const message = describeRequest(request, { diffLines: Number.POSITIVE_INFINITY, chars: ELICIT_MESSAGE_CHARS });
      const answer = await server.elicitInput(
        {
          mode: 'form',
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              // The paths are named (shown safely) in the message; a client may show this description raw.
              approve: { type: 'boolean', title: 'Approve', description: `Allow ${request.op} as described above` },
              note: { type: 'string', title: 'Note', description: 'Told to the model (optional)' },
            },
            required: ['approve'],
          },
        },
        // With the call that asked (on Streamable HTTP, its own response stream: a client need not open another).
        { signal, relatedRequestId: callOf?.() },
      );
      const note = typeof answer.content?.note === 'string' && answer.content.note !== '' ? answer.content.note : undefined;
      if (answer.action === 'accept' && answer.content?.approve === true) return { approved: true, approver: client, note };
      if (answer.action === 'accept') return { approved: false, approver: client, note: note ?? 'not approved' };
      return { approved: false, approver: client, note: note ?? (answer.action === 'decline' ? 'declined by the user' : 'the user dismissed the request') };
    },
  };
}

/**
 * The workspace's one approver: each question goes to the approver of the
 * session that asked it (its client), else to the fallback, else it is
 * denied with the way to allow it.
 */
export class RoutingApprover implements Approver {
  readonly name = 'mcp';
  readonly #bySession = new Map<string, Approver>();
  readonly #fallback: Approver | undefined;

  constructor(fallback?: Approver) {
    this.#fallback = fallback;
  }

  /** Questions of session `sessionId` go to `approver` (until `unroute`). */
  route(sessionId: string, approver: Approver): void {
    this.#bySession.set(sessionId, approver);
  }

  unroute(sessionId: string): void {
    this.#bySession.delete(sessionId);
  }

  approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const approver = this.#bySession.get(request.sessionId) ?? this.#fallback;
    if (approver !== undefined) return approver.approve(request, signal);
    return Promise.resolve({
      approved: false,
      unasked: true,
      approver: 'mcp',
      note: 'the policy asks a person, and this MCP client cannot ask one (it does not support elicitation); tell the user: a person can allow it with a [[policy.rules]] entry (effect = "allow", these paths and operations) in .ctxfs/config.toml, edited outside ctxfs',
    });
  }
}
