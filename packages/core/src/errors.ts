/**
 * The one error model of ctxfs.
 *
 * Every failure that crosses the protocol boundary is an {@link FsError}: a
 * Node-style `code` (so `err.code === 'ENOENT'` works as callers expect), the
 * operation, the workspace-relative path, and a message that says what to do.
 * Conditions Node has no errno for get a stable ctxfs code of the same shape.
 *
 * @module
 */

/** Codes borrowed from POSIX / Node, used with their usual meaning. */
export type NodeErrorCode =
  | 'ENOENT'
  | 'EEXIST'
  | 'EISDIR'
  | 'ENOTDIR'
  | 'ENOTEMPTY'
  | 'EACCES'
  | 'EPERM'
  | 'EROFS'
  | 'EINVAL'
  | 'ENAMETOOLONG'
  | 'ENOSPC'
  | 'EMFILE'
  | 'ELOOP'
  | 'EIO'
  | 'EBUSY';

/** Stable ctxfs codes for conditions the platform has no errno for. */
export type CtxfsErrorCode =
  /** The path resolves outside the workspace root (`..`, absolute path, symlink). */
  | 'EPATHESCAPE'
  /** The operation would read or buffer more than the configured cap. */
  | 'ETOOLARGE'
  /** A lock could not be acquired within the timeout. */
  | 'ELOCKTIMEOUT'
  /** The content changed since it was read; the edit was not applied. */
  | 'ECONFLICT'
  /** The backend does not support this operation (see its capabilities). */
  | 'EUNSUPPORTED'
  /** The backend (engine, container, disk) cannot be reached. */
  | 'EUNAVAILABLE'
  /** A text operation met binary content. */
  | 'EBINARY'
  /** The bytes are not valid in the requested encoding. */
  | 'EDECODE'
  /** A reader or writer was used after it was closed or aborted. */
  | 'ECLOSED'
  /** A snapshot id that the backend does not know. */
  | 'ENOSNAPSHOT'
  /** A regular expression or glob pattern that does not compile. */
  | 'EBADPATTERN'
  /** The workspace's policy, or the person asked, refused the operation. */
  | 'EDENIED'
  /** A budget or rate limit of the session is spent. */
  | 'ELIMIT';

/** Every code an {@link FsError} can carry. */
export type FsErrorCode = NodeErrorCode | CtxfsErrorCode;

/** The protocol operation that failed, recorded on every error. */
export type FsOperation =
  | 'openRead'
  | 'openWrite'
  | 'openText'
  | 'read'
  | 'readBytes'
  | 'readWithStat'
  | 'write'
  | 'writeBytes'
  | 'exists'
  | 'stat'
  | 'realpath'
  | 'list'
  | 'walk'
  | 'digest'
  | 'glob'
  | 'grep'
  | 'delete'
  | 'mkdir'
  | 'rename'
  | 'copy'
  | 'snapshot'
  | 'restore'
  | 'listSnapshots'
  | 'dropSnapshot'
  | 'close'
  | (string & {});

/** What to do about a loop of symbolic links, whichever call met it. */
const LOOP_HINT = 'a loop of links leads to no file: name a path that does not go through it, or point one of its links at a real file or directory';

const DEFAULT_HINTS: Record<FsErrorCode, string> = {
  ENOENT: 'check the path with list() or glob(), or create it first',
  EEXIST: 'choose another name, or pass overwrite/existOk if replacing is intended',
  EISDIR: 'the path is a directory; use list() to see its entries or name a file inside it',
  ENOTDIR: 'a component of the path is a file, not a directory',
  ENOTEMPTY: 'the directory has entries; pass { recursive: true } to remove it with its contents',
  EACCES: 'the backend denied access; check permissions on the workspace',
  EPERM: 'the operation is not permitted on this path',
  EROFS: 'the filesystem was opened read-only; open it writable to change files',
  EINVAL: 'the arguments are not valid for this operation',
  ENAMETOOLONG: 'shorten the path; see the path limits of the filesystem',
  ENOSPC: 'the backend is out of space; free some and retry (the original file is intact)',
  EMFILE: 'too many open files; close readers and writers you no longer need',
  ELOOP: LOOP_HINT,
  EIO: 'the backend reported an I/O error; retry, and check the backend if it persists',
  EBUSY: 'the resource is busy; retry later',
  EPATHESCAPE: 'use a path relative to the workspace root that stays inside it',
  ETOOLARGE: 'use openRead()/openText() to stream, or read() / readBytes() with offset and limit to page',
  ELOCKTIMEOUT: 'another writer holds the lock; retry later or raise the lock timeout',
  ECONFLICT: 'the file changed since it was read; read it again and redo the edit',
  EUNSUPPORTED: 'this backend does not support the operation; check fs.capabilities',
  EUNAVAILABLE: 'the backend cannot be reached; check that it is running and retry',
  EBINARY: 'the file is binary; use readBytes() or openRead() instead of a text read',
  EDECODE: 'the bytes are not valid in that encoding; pass the right { encoding } or read bytes',
  ECLOSED: 'the stream was already closed; open a new one',
  ENOSNAPSHOT: 'list the known snapshots with listSnapshots()',
  EBADPATTERN: 'fix the pattern syntax, or pass { literal: true } to search for the text as-is',
  EDENIED: 'the policy does not allow this; do the task without it, or ask the user to change the policy',
  ELIMIT: 'a limit of this session is reached; wait until it resets or finish with what you have',
};

/** Fields accepted by the {@link FsError} constructor. */
export interface FsErrorInit {
  code: FsErrorCode;
  op: FsOperation;
  path?: string | undefined;
  /** Second path for two-path operations (rename, copy). */
  dest?: string | undefined;
  /** What went wrong, in a few words. Defaults to a description of the code. */
  reason?: string | undefined;
  /** What to do about it. Defaults to a per-code hint. */
  hint?: string | undefined;
  cause?: unknown;
}

/**
 * The error thrown by every ctxfs operation.
 *
 * @example
 * ```ts
 * try {
 *   await fs.read('missing.txt');
 * } catch (err) {
 *   if (isFsError(err) && err.code === 'ENOENT') console.log(err.hint);
 * }
 * ```
 */
export class FsError extends Error {
  /** Node-style or ctxfs code; stable across releases. */
  readonly code: FsErrorCode;
  /** The protocol operation that failed. */
  readonly op: FsOperation;
  /** Workspace-relative path the error concerns, when there is one. */
  readonly path: string | undefined;
  /** Destination path of a rename or copy. */
  readonly dest: string | undefined;
  /** What the caller can do about it. */
  readonly hint: string;
  /** Node's name for the failed call; mirrors `op` so Node-style handlers work. */
  readonly syscall: string;
  /** What went wrong, without the operation, path and hint. */
  readonly reason: string;

  constructor(init: FsErrorInit) {
    const reason = plainReason(init.code, init.reason);
    const hint = init.hint ?? DEFAULT_HINTS[init.code];
    const where = init.path === undefined ? '' : init.dest === undefined ? ` '${init.path}'` : ` '${init.path}' -> '${init.dest}'`;
    super(`${init.code}: ${reason}, ${init.op}${where} (${hint})`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'FsError';
    this.code = init.code;
    this.op = init.op;
    this.path = init.path;
    this.dest = init.dest;
    this.hint = hint;
    this.syscall = init.op;
    this.reason = reason;
  }

  /**
   * The same error reported under another operation: a convenience call
   * (`read`) reports failures of the streaming call it delegates to under
   * its own name.
   */
  withOperation(op: FsOperation): FsError {
    if (op === this.op) return this;
    const err = new FsError({ code: this.code, op, path: this.path, dest: this.dest, reason: this.reason, hint: this.hint, cause: this.cause });
    return err;
  }
}

/**
 * Whether `err`'s hint is the protocol's default for its code (it names
 * Filesystem calls such as `list()`), not one written for the call that
 * failed: a surface with calls of its own may say it in its own words.
 */
export function hasDefaultHint(err: FsError): boolean {
  return err.hint === DEFAULT_HINTS[err.code];
}

/** True when `err` is an {@link FsError}, optionally with the given code. */
export function isFsError(err: unknown, code?: FsErrorCode): err is FsError {
  return err instanceof FsError && (code === undefined || err.code === code);
}

const REASONS: Record<NodeErrorCode, string> = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ENOTEMPTY: 'directory not empty',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only filesystem',
  EINVAL: 'invalid argument',
  ENAMETOOLONG: 'name too long',
  ENOSPC: 'no space left on device',
  EMFILE: 'too many open files',
  ELOOP: 'too many symbolic links',
  EIO: 'input/output error',
  EBUSY: 'resource busy',
};

/** What each ctxfs code means, for an error that gives no reason of its own. */
const CTXFS_REASONS: Record<CtxfsErrorCode, string> = {
  EPATHESCAPE: 'path escapes the workspace',
  ETOOLARGE: 'too large',
  ELOCKTIMEOUT: 'lock wait timed out',
  ECONFLICT: 'content changed since it was read',
  EUNSUPPORTED: 'operation not supported',
  EUNAVAILABLE: 'backend unavailable',
  EBINARY: 'binary content',
  EDECODE: 'bytes invalid in the encoding',
  ECLOSED: 'already closed',
  ENOSNAPSHOT: 'no such snapshot',
  EBADPATTERN: 'invalid pattern',
  EDENIED: 'denied by policy',
  ELIMIT: 'session limit reached',
};

/**
 * The reason as the message shows it, after the code: a description of the
 * code when none was given (or only the code itself), without a leading
 * repetition of the code (`EBINARY: …`, as wrapped Node messages start), and
 * with a clause that repeats the one before it dropped (`invalid regular
 * expression: Invalid regular expression: …`, as wrapped engine messages
 * do). Every message is built here, so no caller can repeat itself.
 */
function plainReason(code: FsErrorCode, reason: string | undefined): string {
  let text = (reason ?? '').trim();
  const prefix = new RegExp(`^${code}\\b[:,]?\\s*`);
  while (prefix.test(text)) text = text.replace(prefix, '');
  if (text === '') return code in REASONS ? REASONS[code as NodeErrorCode] : CTXFS_REASONS[code as CtxfsErrorCode];
  const clauses = text.split(': ');
  return clauses.filter((clause, i) => i === 0 || clause.toLowerCase() !== (clauses[i - 1] as string).toLowerCase()).join(': ');
}

/** Builds an {@link FsError} with the standard reason for `code`. */
export function fsError(code: FsErrorCode, op: FsOperation, path?: string, extra: Omit<FsErrorInit, 'code' | 'op' | 'path'> = {}): FsError {
  return new FsError({ code, op, path, ...extra });
}

/**
 * The refusal of a read of a FIFO, socket or device, in the one wording
 * every backend gives: a model that meets it on the host and in a container
 * learns one thing to do.
 *
 * @example
 * ```ts
 * notRegularFile('openRead', 'pipe').reason; // 'not a regular file (a FIFO, socket or device)'
 * ```
 */
export function notRegularFile(op: FsOperation, path: string | undefined): FsError {
  return new FsError({
    code: 'EINVAL',
    op,
    path,
    reason: 'not a regular file (a FIFO, socket or device)',
    hint: 'only regular files can be read; leave special files alone',
  });
}

/**
 * The refusal of a path that a symbolic link takes out of the workspace
 * root, in the one wording every backend gives, whichever call met the link
 * (a read, a listing, a stat through it, a write, realpath). Where the link
 * leads is never said: that is outside, and a model has nothing to do there
 * (a backend that knows may say it in `cause`, for the local log).
 *
 * @example
 * ```ts
 * // out -> /etc/passwd
 * linkOutsideRoot('readBytes', 'out').message;
 * // "EPATHESCAPE: a symbolic link in the path leads outside the workspace, readBytes 'out' (links that lead outside …)"
 * ```
 */
export function linkOutsideRoot(op: FsOperation, path: string | undefined, cause?: unknown): FsError {
  return new FsError({
    code: 'EPATHESCAPE',
    op,
    path,
    reason: 'a symbolic link in the path leads outside the workspace',
    hint: 'links that lead outside the workspace are never followed: use a path inside it that does not go through the link',
    cause,
  });
}

/**
 * The refusal of a path whose symbolic links go round in a loop, in the one
 * wording every backend gives: under `path`, the path the caller asked for
 * (not the link the resolver was on when it gave up, which the caller never
 * named), and, when known, the link that leads back into the loop (both
 * inside the workspace: a loop is only named by links followed inside it).
 *
 * @example
 * ```ts
 * // loop1 -> loop2, loop2 -> loop1
 * symlinkLoop('readBytes', 'loop1', { closure: { link: 'loop2', target: 'loop1' } }).message;
 * // "ELOOP: the symbolic links in the path go round in a loop ('loop2' leads back to 'loop1'), readBytes 'loop1' (a loop of links …)"
 * ```
 */
export function symlinkLoop(
  op: FsOperation,
  path: string | undefined,
  options: {
    /** The link that leads back into the loop, and the link it leads back to. */
    readonly closure?: { readonly link: string; readonly target: string } | undefined;
    /** Second path of a two-path operation. */
    readonly dest?: string | undefined;
    readonly cause?: unknown;
  } = {},
): FsError {
  const { closure, dest, cause } = options;
  const reason =
    closure === undefined
      ? 'the symbolic links in the path go round in a loop, or nest too deep to follow'
      : `the symbolic links in the path go round in a loop ('${closure.link}' leads back to ${closure.link === closure.target ? 'itself' : `'${closure.target}'`})`;
  return new FsError({ code: 'ELOOP', op, path, dest, reason, hint: LOOP_HINT, cause });
}

const NODE_CODES = new Set<string>(Object.keys(REASONS));
/** Every code ctxfs knows; a primitive may throw any of them as `errno(code)`. */
const KNOWN_CODES = new Set<string>(Object.keys(DEFAULT_HINTS));

/**
 * Converts anything thrown by a backend into an {@link FsError}, keeping an
 * existing one and mapping Node errno errors (`err.code`) to the same code.
 * Unknown failures become `EIO` with the original attached as `cause`.
 */
export function toFsError(err: unknown, op: FsOperation, path?: string, dest?: string): FsError {
  if (err instanceof FsError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code === 'ELOOP') return symlinkLoop(op, path, { dest, cause: err });
    if (NODE_CODES.has(code)) {
      return new FsError({ code: code as NodeErrorCode, op, path, dest, reason: REASONS[code as NodeErrorCode], cause: err });
    }
    if (KNOWN_CODES.has(code)) {
      const message = err instanceof Error && err.message !== code ? err.message : undefined;
      return new FsError({ code: code as CtxfsErrorCode, op, path, dest, reason: message, cause: err });
    }
    if (code === 'ERR_FS_EISDIR') return new FsError({ code: 'EISDIR', op, path, dest, reason: REASONS.EISDIR, cause: err });
    if (code === 'EXDEV' || code === 'EBADF') {
      return new FsError({ code: 'EIO', op, path, dest, reason: (err as Error).message, cause: err });
    }
    if (code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
      return new FsError({ code: 'EUNSUPPORTED', op, path, dest, reason: (err as Error).message, cause: err });
    }
    if (code === 'EDQUOT' || code === 'EFBIG') {
      return new FsError({ code: 'ENOSPC', op, path, dest, reason: (err as Error).message, cause: err });
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return new FsError({ code: 'EIO', op, path, dest, reason: message, cause: err });
}
