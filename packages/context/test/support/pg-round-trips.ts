/**
 * Counts what a `pg` client sends while a piece of code runs: the statements,
 * and the round trips the code waits for. A statement sent while another is
 * unanswered shares that one's round trip (a connection pipelines); one sent
 * when every statement before it is answered starts a new one.
 *
 * Used by the audit append's tests and by the state-store bench, which must
 * count the same way to be compared.
 *
 * @module
 */

/** The part of `pg`'s module this needs: its `Client` class, whose prototype's `query` is wrapped. */
export interface PgModule {
  readonly Client: { readonly prototype: object };
}

/** What {@link countRoundTrips} saw. */
export interface RoundTrips<T> {
  /** Each statement's text, in the order sent. */
  readonly statements: string[];
  /** Round trips waited for. */
  readonly waited: number;
  /** What `fn` returned. */
  readonly value: T;
}

/**
 * Runs `fn` with every `Client#query` of `pgModule` counted. Pass the `pg`
 * the measured code resolves (a bench resolves it from `@ctxfs/context`), or
 * nothing is counted.
 */
export async function countRoundTrips<T>(pgModule: PgModule, fn: () => Promise<T>): Promise<RoundTrips<T>> {
  const proto = pgModule.Client.prototype as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const statements: string[] = [];
  let waited = 0;
  let unanswered = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    statements.push(String(typeof q === 'string' ? q : (q as { text?: string } | null)?.text));
    if (unanswered === 0) waited++;
    unanswered++;
    const sent = original.apply(this, args);
    // Attached before the caller's own continuation, so the count drops before it sends its next statement.
    const answered = () => {
      unanswered--;
    };
    if (sent instanceof Promise) sent.then(answered, answered);
    else answered();
    return sent;
  };
  try {
    const value = await fn();
    return { statements, waited, value };
  } finally {
    proto.query = original;
  }
}
