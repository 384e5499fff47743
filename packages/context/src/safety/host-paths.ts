/**
 * What of an error a model may see: host paths and server addresses are
 * outside the workspace, so the model is told that instead of where they are.
 *
 * @module
 */

import { FsError } from '@ctxfs/core';

/**
 * A server's address (`postgres://user@host/db?host=/run/socket`, `tcp://10.0.0.5:2376`): where a state store or an engine lives.
 */
const ADDRESS = /\b(?:postgres(?:ql)?|tcp|unix|ssh|npipe):\/\/[^\s'"`)]+/gi;
// An absolute path starts after a space, a quote or an opening sign (a workspace path or a glob has text before its slashes).
const HOST_PATH = /(['"`]?)(?<=^|[\s'"`(=:,])\/[^\s'"`)]+\1/g;

/**
 * The error as a model may see it: an absolute host path (where a symlink
 * leads, a state directory) and a server's address (the state store's
 * PostgreSQL URL, with its socket directory; an engine's) are replaced by a
 * mention that they are outside the workspace, in the reason, the hint and,
 * for an address, the error's path. The original stays as the `cause`, for
 * the local log.
 *
 * @example
 * ```ts
 * withoutHostPaths(err).reason; // 'the PostgreSQL server at (an address outside the workspace) cannot be reached: …'
 * ```
 */
export function withoutHostPaths(err: FsError): FsError {
  const scrub = (s: string | undefined): string | undefined =>
    s?.replace(ADDRESS, '(an address outside the workspace)').replace(HOST_PATH, '(a path outside the workspace)');
  const reason = scrub(err.reason);
  const hint = scrub(err.hint);
  const path = err.path?.replace(ADDRESS, '(an address outside the workspace)');
  if (reason === err.reason && hint === err.hint && path === err.path) return err;
  return new FsError({ code: err.code, op: err.op, path, dest: err.dest, reason, hint, cause: err });
}

/**
 * The text of an error a refusal result gives a model: the path it names
 * (else `path`, the call's; unless its reason says it already), its reason and hint, host paths and
 * addresses taken out. The model reads the text, not the result's `path`:
 * "is a directory" alone does not say which of a patch's files is.
 */
export function errorText(err: FsError, path?: string): string {
  const safe = withoutHostPaths(err);
  const named = safe.path || path;
  const where = named !== undefined && named !== '' && !names(safe.reason ?? '', named) ? `${named}: ` : '';
  return `${where}${safe.reason}; ${safe.hint}`;
}

/** Whether `text` names `path` as a word of its own (the path `d` is not named by "directory"). */
function names(text: string, path: string): boolean {
  for (let at = text.indexOf(path); at !== -1; at = text.indexOf(path, at + 1)) {
    const before = text[at - 1];
    const after = text[at + path.length];
    if ((before === undefined || /[\s"'`(]/.test(before)) && (after === undefined || /[\s"'`),:;.]/.test(after))) return true;
  }
  return false;
}
