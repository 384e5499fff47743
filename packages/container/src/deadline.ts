/**
 * Bounded waits on the engine: a paused or wedged container answers
 * nothing, and without a bound a call on it would wait forever.
 *
 * @module
 */

/** A wait on the container or engine that heard nothing in time; `ETIMEDOUT`, so it maps to `EUNAVAILABLE`. */
export class SilenceError extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * `promise`, or a rejection with `timeout()` after `ms`; `late` receives a
 * value that arrives after the deadline (to close a connection nobody will use).
 *
 * @example
 * ```ts
 * const socket = await within(exec.start({ hijack: true }), 15_000, () => new SilenceError('no answer'), (s) => s.destroy());
 * ```
 */
export function within<T>(promise: Promise<T>, ms: number, timeout: () => Error, late: (value: T) => void = () => {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(timeout());
    }, ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (expired) late(value);
        else resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
