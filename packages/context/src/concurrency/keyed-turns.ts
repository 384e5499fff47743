/**
 * Turns by key within one process: callers of one key run one after another,
 * in the order they asked; callers of different keys do not wait for each
 * other. The edit pipeline's per-file locks and the PostgreSQL store's
 * per-key queue before its server lock both take turns here.
 *
 * @module
 */

/**
 * A queue per key.
 *
 * @example
 * ```ts
 * const turns = new KeyedTurns();
 * const release = await turns.take('a.txt');
 * try { await edit(); } finally { release(); }
 * ```
 */
export class KeyedTurns {
  readonly #tails = new Map<string, Promise<void>>();

  /** Waits for the turn of `key`; the returned function ends it (call it exactly once). */
  async take(key: string): Promise<() => void> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = prev.then(() => mine);
    this.#tails.set(key, tail);
    await prev;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}
