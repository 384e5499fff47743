/**
 * Approvals: when the policy says "ask", a person decides. An `Approver` is
 * asked with what the operation would do — each file's diff for a change,
 * what would be served for a read — and silence past the timeout is a
 * denial. Every decision says who made it: `user`, `denied_by_user` or
 * `timeout` (the policy's own `policy` and `auto` decisions need no one).
 *
 * Three approvers: a function (`callbackApprover`, for programs and tests),
 * the terminal (`TerminalApprover`: a TTY only, never a pipe), and whatever
 * a surface binds (the MCP server's elicitation).
 *
 * @module
 */

import { createInterface } from 'node:readline/promises';
import type { OpClass } from './policy.ts';

/** One file a change would make. */
export interface ChangePreview {
  readonly path: string;
  /** Unified diff of the change; `''` when none can be shown (binary). */
  readonly diff: string;
  readonly added: number;
  readonly removed: number;
}

/** What a person is asked about. */
export interface ApprovalRequest {
  readonly op: string;
  readonly opClass: OpClass;
  readonly agent: string;
  readonly sessionId: string;
  readonly paths: readonly string[];
  /** Why the policy asks. */
  readonly reason: string;
  /** For a change: every file's diff (a multi-file patch shows them all). */
  readonly changes?: readonly ChangePreview[] | undefined;
  /** For a read or search: what would be served, in a line or two. */
  readonly summary?: string | undefined;
}

/** A person's answer. */
export interface ApprovalAnswer {
  readonly approved: boolean;
  /** Who answered (a user name, a client id); recorded in the audit. */
  readonly approver?: string | undefined;
  /** Said to the model when denied. */
  readonly note?: string | undefined;
  /**
   * No person was asked (the approver had no one to ask, e.g. a client that
   * cannot show a question): the denial is the policy's, not a person's.
   */
  readonly unasked?: boolean | undefined;
}

/** Asks a person. Implementations must give up when `signal` aborts (the timeout). */
export interface Approver {
  readonly name: string;
  approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** How a decision was made, as the audit records it. */
export type DecidedBy = 'policy' | 'auto' | 'user' | 'denied_by_user' | 'timeout';

/** A decision with its record. */
export interface ApprovalOutcome {
  readonly approved: boolean;
  readonly by: DecidedBy;
  /** ISO time of the decision. */
  readonly at: string;
  readonly approver?: string | undefined;
  readonly note?: string | undefined;
}

/**
 * An approver from a function.
 *
 * @example
 * ```ts
 * const approver = callbackApprover((req) => ({ approved: req.paths.every((p) => p.startsWith('src/')), approver: 'ci' }));
 * ```
 */
export function callbackApprover(fn: (request: ApprovalRequest, signal: AbortSignal) => ApprovalAnswer | Promise<ApprovalAnswer>, name = 'callback'): Approver {
  return { name, approve: async (request, signal) => await fn(request, signal) };
}

/**
 * Asks `approver`, denying on timeout, on an abort and when there is no
 * approver (nobody to ask is a denial, never a silent approval).
 */
export async function askApproval(approver: Approver | undefined, request: ApprovalRequest, timeoutMs: number): Promise<ApprovalOutcome> {
  const at = () => new Date().toISOString();
  if (approver === undefined) {
    return { approved: false, by: 'policy', at: at(), note: 'approval is required and no approver is configured' };
  }
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('approval timed out'));
      resolve('timeout');
    }, timeoutMs);
  });
  try {
    const answer = await Promise.race([approver.approve(request, controller.signal), timeout]);
    if (answer === 'timeout')
      return { approved: false, by: 'timeout', at: at(), approver: approver.name, note: `no answer within ${Math.round(timeoutMs / 1000)} s` };
    return {
      approved: answer.approved,
      by: answer.approved ? 'user' : answer.unasked ? 'policy' : 'denied_by_user',
      at: at(),
      approver: answer.approver ?? approver.name,
      note: answer.note,
    };
  } catch (err) {
    // An approver that fails has not approved.
    return { approved: false, by: controller.signal.aborted ? 'timeout' : 'denied_by_user', at: at(), approver: approver.name, note: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** Longest diff shown in a terminal prompt per file, in lines. */
const PROMPT_DIFF_LINES = 80;

/** What a terminal prompt shows before its question. */
export function describeRequest(request: ApprovalRequest): string {
  const out = [`ctxfs: ${request.agent} asks to ${request.op} ${request.paths.join(', ')}`, `  why asked: ${request.reason}`];
  if (request.summary) out.push(`  ${request.summary}`);
  for (const c of request.changes ?? []) {
    out.push(`  ${c.path}: +${c.added} -${c.removed}`);
    const lines = c.diff.split('\n');
    out.push(...lines.slice(0, PROMPT_DIFF_LINES).map((l) => `    ${l}`));
    if (lines.length > PROMPT_DIFF_LINES) out.push(`    … ${lines.length - PROMPT_DIFF_LINES} more diff lines`);
  }
  return out.join('\n');
}

/**
 * Asks at the terminal: shows the request (the diffs of a change) and waits
 * for y or n. Only on a terminal: when input is not a TTY (a pipe, CI, an
 * MCP server's stdio) it denies at once rather than read an answer from
 * data that is not a person.
 *
 * @example
 * ```ts
 * const ctx = await createContext({ fs, safety: { approver: new TerminalApprover() } });
 * ```
 */
export class TerminalApprover implements Approver {
  readonly name = 'terminal';
  readonly #input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly #output: NodeJS.WritableStream;

  constructor(options: { input?: NodeJS.ReadableStream & { isTTY?: boolean }; output?: NodeJS.WritableStream } = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stderr;
  }

  async approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (this.#input.isTTY !== true) return { approved: false, note: 'approval needs a person at a terminal, and input is not a terminal' };
    this.#output.write(`${describeRequest(request)}\n`);
    const rl = createInterface({ input: this.#input, output: this.#output, terminal: true });
    try {
      const answer = await rl.question('Approve? [y/N] ', { signal });
      return { approved: /^\s*y(es)?\s*$/i.test(answer), approver: process.env.USER ?? 'terminal' };
    } finally {
      rl.close();
    }
  }
}
