/**
 * The policy's per-session budgets — operations, bytes and tokens served,
 * operations a minute — as this process counts them: what each session
 * spent (starting from what earlier processes recorded), and the tokens
 * the calls under way have set aside, so that calls made together cannot
 * serve more between them than the budget leaves.
 *
 * The safety layer charges a call before it runs, gives it a
 * {@link TokenReservation} while it runs, and adds what it served after.
 *
 * @module
 */

import { type FsError, fsError } from '@ctxfs/core';
import type { PolicyBudgets } from './policy.ts';

/** What a session spent, as the policy's budgets count it. */
export interface SessionSpend {
  readonly operations: number;
  readonly tokens: number;
  readonly bytes: number;
  /** Start times (ms) of its operations in the last minute, oldest first. */
  readonly recent: readonly number[];
}

/** What a session whose budget is spent is told to do. */
export const SPENT_HINT = 'it resets with a new session; finish the task with what you have, or ask the user for a new session';

/** One session's counters. */
interface Usage {
  operations: number;
  bytes: number;
  tokens: number;
  /** Tokens set aside by calls under way. */
  reserved: number;
  /** Start times of recent operations, for the per-minute rate. */
  recent: number[];
}

/**
 * The budgets of every session this process has met.
 *
 * @example
 * ```ts
 * const budgets = new SessionBudgets({ tokens: 1_000 });
 * budgets.charge('readFile', 'a.ts', 's1'); // undefined: within every budget
 * const share = budgets.reservation('readFile', 'a.ts', 's1');
 * share.reserve(800); // 800: set aside for this call
 * budgets.reservation('grep', '', 's1').tokensLeft(); // 200: what another call under way may still serve
 * share.release();
 * budgets.spend('s1', { tokens: 650 }); // what the call served
 * ```
 */
export class SessionBudgets {
  readonly #budgets: PolicyBudgets;
  readonly #usage = new Map<string, Usage>();

  constructor(budgets: PolicyBudgets) {
    this.#budgets = budgets;
  }

  /** Whether any budget is set: without one, nothing needs counting from earlier processes. */
  get any(): boolean {
    const b = this.#budgets;
    return b.operations !== undefined || b.tokens !== undefined || b.bytes !== undefined || b.operationsPerMinute !== undefined;
  }

  /** Whether this process has counted `sessionId` yet. */
  has(sessionId: string): boolean {
    return this.#usage.has(sessionId);
  }

  /** Starts the count of a session not met before from what it spent before (another process, a command before this one). */
  resume(sessionId: string, spent: SessionSpend): void {
    if (this.#usage.has(sessionId)) return;
    this.#usage.set(sessionId, { operations: spent.operations, tokens: spent.tokens, bytes: spent.bytes, reserved: 0, recent: [...spent.recent] });
  }

  /** Counts one call of `op` (on `path`) against the session's budgets; the refusal when one is spent or the rate reached. */
  charge(op: string, path: string | undefined, sessionId: string): FsError | undefined {
    const b = this.#budgets;
    const u = this.#of(sessionId);
    const now = Date.now();
    while (u.recent.length > 0 && (u.recent[0] as number) <= now - 60_000) u.recent.shift();
    const spent = (what: string, used: number, cap: number): FsError =>
      fsError('ELIMIT', op, path, {
        reason: `the session's ${what} budget is spent: ${used.toLocaleString('en-US')} of ${cap.toLocaleString('en-US')}`,
        hint: SPENT_HINT,
      });
    if (b.operations !== undefined && u.operations >= b.operations) return spent('operations', u.operations, b.operations);
    if (b.tokens !== undefined && u.tokens >= b.tokens) return spent('tokens', u.tokens, b.tokens);
    if (b.bytes !== undefined && u.bytes >= b.bytes) return spent('bytes', u.bytes, b.bytes);
    if (b.operationsPerMinute !== undefined && u.recent.length >= b.operationsPerMinute) {
      const wait = Math.max(1, Math.ceil(((u.recent[0] as number) + 60_000 - now) / 1000));
      return fsError('ELIMIT', op, path, {
        reason: `rate limit: ${b.operationsPerMinute} operations a minute`,
        hint: `it resets in ${wait} s; wait, then call again`,
      });
    }
    u.operations++;
    u.recent.push(now);
    return undefined;
  }

  /** Adds what a finished call served. */
  spend(sessionId: string, served: { readonly tokens?: number | undefined; readonly bytes?: number | undefined }): void {
    const u = this.#usage.get(sessionId);
    if (u === undefined) return;
    u.tokens += served.tokens ?? 0;
    u.bytes += served.bytes ?? 0;
  }

  /** A call's share of the session's token budget, set aside while it runs (see {@link TokenReservation}). */
  reservation(op: string, path: string | undefined, sessionId: string): TokenReservation {
    return new TokenReservation(this.#budgets.tokens, this.#of(sessionId), op, path);
  }

  #of(sessionId: string): Usage {
    let u = this.#usage.get(sessionId);
    if (u === undefined) {
      u = { operations: 0, bytes: 0, tokens: 0, reserved: 0, recent: [] };
      this.#usage.set(sessionId, u);
    }
    return u;
  }
}

/**
 * What one call sets aside of its session's token budget: taken once, when
 * the call knows how much it wants (a budgeted read asks before it builds
 * its answer), and given back when the call ends, when what it served is
 * counted instead. Without a token budget every ask is granted in full.
 */
export class TokenReservation {
  readonly #cap: number | undefined;
  readonly #usage: Usage;
  readonly #op: string;
  readonly #path: string | undefined;
  #reserved: number | undefined;

  constructor(cap: number | undefined, usage: Usage, op: string, path: string | undefined) {
    this.#cap = cap;
    this.#usage = usage;
    this.#op = op;
    this.#path = path;
  }

  /** Tokens neither served nor set aside by any call under way. */
  get #free(): number {
    return this.#cap === undefined ? Number.POSITIVE_INFINITY : Math.max(0, this.#cap - this.#usage.tokens - this.#usage.reserved);
  }

  /** What this call may still serve: its share once taken, plus what no call has set aside. */
  tokensLeft(): number {
    return (this.#reserved ?? 0) + this.#free;
  }

  /**
   * Sets aside up to `want` tokens and returns how many: the share already
   * taken when asked again. `ELIMIT` naming the budget when fewer than
   * `least` (or `want`, if smaller) are free: too few for an answer.
   */
  reserve(want: number, least = 0): number {
    if (this.#cap === undefined) return want;
    if (this.#reserved !== undefined) return Math.min(want, this.#reserved);
    const free = this.#free;
    if (free < Math.min(least, want)) {
      throw fsError('ELIMIT', this.#op, this.#path, {
        reason: `the session's tokens budget leaves ${free} tokens (${this.#usage.tokens.toLocaleString('en-US')} of ${this.#cap.toLocaleString('en-US')} served, the rest set aside by calls under way): too few for an answer`,
        hint: SPENT_HINT,
      });
    }
    this.#reserved = Math.min(Math.max(0, want), free);
    this.#usage.reserved += this.#reserved;
    return this.#reserved;
  }

  /** Gives the share back (the call ended). Idempotent. */
  release(): void {
    if (this.#reserved === undefined) return;
    this.#usage.reserved = Math.max(0, this.#usage.reserved - this.#reserved);
    this.#reserved = undefined;
  }
}
