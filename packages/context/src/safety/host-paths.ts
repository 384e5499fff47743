/**
 * What of an error a model may see: host paths and server addresses are
 * outside the workspace, so the model is told that instead of where they are.
 *
 * @module
 */

import { FsError } from '@ctxfs/core';
import { verbatimWords } from '../calls/call-text.ts';

/**
 * A server's address (`postgres://user@host/db?host=/run/socket`, `tcp://10.0.0.5:2376`): where a state store or an engine lives.
 */
const ADDRESS = /\b(?:postgres(?:ql)?|tcp|unix|ssh|npipe):\/\/[^\s'"`)\uE000]+/gi;
// An absolute path starts after a space, a quote or an opening sign (a workspace path or a glob has text before its slashes).
const HOST_PATH = /(['"`]?)(?<=^|[\s'"`(=:,])\/[^\s'"`)\uE000]+\1/g;
/** What stands for a kept word while the text is searched: a private-use character around its index, which neither pattern takes in. */
const KEPT = /\uE000(\d+)\uE000/g;

/**
 * The error as a model may see it: an absolute host path (where a symlink
 * leads, a state directory) and a server's address (the state store's
 * PostgreSQL URL, with its socket directory; an engine's) are replaced by a
 * mention that they are outside the workspace, in the reason, the hint and,
 * for an address, the error's path. The mention is bracketed where it
 * stands in the open, and bare where the text already has it in brackets
 * (`(to '/etc/passwd')` becomes `(to a path outside the workspace)`); the
 * hint is read as bracketed, as the message shows it. The original stays as
 * the `cause`, for the local log. The words in `keep` (default: those the
 * active call style keeps verbatim, see `CallStyle.verbatim`) are left as
 * written wherever they stand: a hint's command line names the place its
 * reader typed.
 *
 * @example
 * ```ts
 * withoutHostPaths(err).reason; // 'the PostgreSQL server at (an address outside the workspace) cannot be reached: …'
 * ```
 */
export function withoutHostPaths(err: FsError, keep: readonly string[] = verbatimWords()): FsError {
  const reason = scrub(err.reason, 0, keep);
  const hint = scrub(err.hint, 1, keep);
  const path = err.path === undefined ? undefined : scrub(err.path, 0, keep, false);
  if (reason === err.reason && hint === err.hint && path === err.path) return err;
  return new FsError({ code: err.code, op: err.op, path, dest: err.dest, reason, hint, cause: err });
}

/**
 * `text` with its addresses (and, unless `paths` is false, its host paths)
 * replaced by a mention that they are outside the workspace; `open` is the
 * depth of brackets the text itself stands in; the words of `keep` stay.
 */
function scrub<T extends string | undefined>(text: T, open: number, keep: readonly string[], paths = true): T {
  if (text === undefined) return text;
  const kept = keep.filter((word) => word !== '' && text.includes(word));
  if (kept.length > 0) {
    // Each kept word stands aside as a token while the patterns run, so none matches inside it; longest first, as one may hold another.
    kept.sort((a, b) => b.length - a.length);
    const marked = kept.reduce<string>((t, word, i) => t.split(word).join(`\uE000${i}\uE000`), text);
    return scrub(marked, open, [], paths).replace(KEPT, (_token, i: string) => kept[Number(i)] ?? '') as T;
  }
  const mention =
    (words: string) =>
    (..._match: unknown[]): string => {
      // The replacer's arguments: the match, its groups, then the offset (the one number) and the whole text.
      const i = _match.findIndex((a) => typeof a === 'number');
      return open + bracketDepth(_match[i + 1] as string, _match[i] as number) > 0 ? words : `(${words})`;
    };
  const out = text.replace(ADDRESS, mention('an address outside the workspace'));
  return (paths ? out.replace(HOST_PATH, mention('a path outside the workspace')) : out) as T;
}

/** How many brackets are open in `text` before `at`. */
function bracketDepth(text: string, at: number): number {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && depth > 0) depth--;
  }
  return depth;
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
