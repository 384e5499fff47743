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
import { createHash } from 'node:crypto';
import { currentCall } from '../safety/safety-layer.ts';

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

/**
 * What the session call under way is, hashed: its operation, its files (as
 * resolved, so another spelling of one file is the same call) and its
 * arguments. A request id's change keeps it, and the id is answered from that
 * change only for the same call again; `undefined` outside a session call.
 *
 * @example
 * ```ts
 * // Inside ctx.replace('a.ts', 'x', 'y', { requestId }): the same hex for every retry of that call.
 * requestFingerprint(); // '9f2c…'
 * ```
 */
export function requestFingerprint(): string | undefined {
  const call = currentCall()?.call;
  if (call === undefined) return undefined;
  // The id is what is compared, not part of the call; `from` and `to` are in `paths`, resolved.
  const { requestId: _id, from: _from, to: _to, ...args } = call.params;
  const shape = { op: call.op, paths: call.paths, extra: call.extra ?? [], args };
  return createHash('sha256')
    .update(JSON.stringify(canonical(shape)))
    .digest('hex');
}

/** `value` with every object's keys in one order and undefined members left out, so equal calls stringify alike. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) out[key] = canonical(member);
  }
  return out;
}
