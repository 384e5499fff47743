/**
 * A caller's request id for every change a call makes, without threading it
 * through each operation's options: a surface (a tool set, the MCP server, the
 * CLI) runs the call inside {@link withRequestId}, and the edit pipeline takes
 * its changes' ids from here when the call's own options name none.
 *
 * One request may make more than one change (a tool that runs two edits): the
 * first takes the id as given, the next `id#2`, `id#3` and so on, so a retry
 * of the whole request, making the same changes in the same order, finds each
 * one applied, and no two changes share an id.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';

interface Request {
  readonly id: string;
  changes: number;
}

const requests = new AsyncLocalStorage<Request>();

/**
 * Runs `fn` as request `requestId`: each change it makes through the context
 * layer is applied at most once, however often the request is retried with
 * the same id. `undefined` runs `fn` as it is.
 *
 * @example
 * ```ts
 * import { withRequestId } from '@ctxfs/context';
 * const id = crypto.randomUUID(); // once per request, kept for its retries
 * const r = await withRequestId(id, () => session.replace('src/a.ts', 'let x', 'const x'));
 * // Retried after a lost answer: nothing is written again; r.unchanged is true.
 * ```
 */
export function withRequestId<T>(requestId: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (requestId === undefined) return fn();
  return requests.run({ id: requestId, changes: 0 }, fn);
}

/** The id of the current request's next change (see the module doc), or `undefined` outside a request. */
export function nextChangeId(): string | undefined {
  const request = requests.getStore();
  if (request === undefined) return undefined;
  request.changes++;
  return request.changes === 1 ? request.id : `${request.id}#${request.changes}`;
}
