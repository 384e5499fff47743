/**
 * A counted set of permits taken in the order asked, each wait bounded: the
 * PostgreSQL store's lock connections are handed out here, so that an edit
 * waiting for one waits as long as it would for the lock itself, not as long
 * as a connection attempt may take.
 *
 * @module
 */

/** Why {@link Permits.take} gave up. */
export class PermitTimeoutError extends Error {
  readonly waitedMs: number;

  constructor(waitedMs: number) {
    super(`no permit within ${waitedMs} ms`);
    this.waitedMs = waitedMs;
    this.name = 'PermitTimeoutError';
  }
}

/**
 * `count` permits, first come first served.
 *
 * @example
 * ```ts
 * const permits = new Permits(16);
 * const release = await permits.take(60_000);
 * try { await work(); } finally { release(); }
 * ```
 */
export class Permits {
  #free: number;
  readonly #waiters: Array<() => void> = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Permits held now. */
  get free(): number {
    return this.#free;
  }

  /** Waits up to `timeoutMs` for a permit; the returned function gives it back (call it exactly once). */
  async take(timeoutMs: number): Promise<() => void> {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free--;
      return this.#releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(grant);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(new PermitTimeoutError(timeoutMs));
      }, timeoutMs);
      this.#waiters.push(grant);
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      // A permit given back goes straight to the longest waiter, so no newcomer overtakes it.
      const next = this.#waiters.shift();
      if (next === undefined) this.#free++;
      else next();
    };
  }
}
