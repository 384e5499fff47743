/**
 * Errors as just-bash's filesystems throw them: an `Error` whose message is
 * Node's form (`ENOENT: no such file or directory, open '/a.txt'`) and whose
 * `code` is the Node code, naming the path as the script wrote it (a
 * virtual path, never a host one). just-bash's commands read both to print
 * `cat: /a.txt: No such file or directory`.
 *
 * @module
 */

import { type FsError, isFsError, type NodeErrorCode } from '@ctxfs/core';

/** The codes this adapter throws. */
export type BashErrorCode = Exclude<NodeErrorCode, 'EMFILE' | 'ELOOP' | 'EBUSY'> | 'EFBIG' | 'ENOTSUP' | 'ENXIO';

const WORDS: Readonly<Record<BashErrorCode, string>> = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  EISDIR: 'illegal operation on a directory',
  ENOTDIR: 'not a directory',
  ENOTEMPTY: 'directory not empty',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EFBIG: 'file too large',
  EINVAL: 'invalid argument',
  ENAMETOOLONG: 'name too long',
  ENOTSUP: 'operation not supported',
  ENOSPC: 'no space left on device',
  ENXIO: 'no such device or address',
  EIO: 'i/o error',
};

/** What bash prints for each code (`bash: a.txt: Permission denied`). */
const BASH_WORDS: Readonly<Record<BashErrorCode, string>> = {
  ENOENT: 'No such file or directory',
  EEXIST: 'File exists',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  ENOTEMPTY: 'Directory not empty',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EROFS: 'Read-only file system',
  EFBIG: 'File too large',
  EINVAL: 'Invalid argument',
  ENAMETOOLONG: 'File name too long',
  ENOTSUP: 'Operation not supported',
  ENOSPC: 'No space left on device',
  ENXIO: 'No such device or address',
  EIO: 'Input/output error',
};

/** An error in just-bash's form, with a `code`. */
export class BashFsError extends Error {
  readonly code: BashErrorCode;
  readonly path: string;

  /** The line bash prints for it: `bash: /a.txt: Permission denied (policy: …)`. */
  get bashLine(): string {
    return `bash: ${this.path}: ${BASH_WORDS[this.code]}${this.detail ? ` (${this.detail})` : ''}\n`;
  }

  readonly detail: string | undefined;

  constructor(code: BashErrorCode, syscall: string, path: string, detail?: string, cause?: unknown) {
    super(`${code}: ${WORDS[code]}, ${syscall} '${path}'${detail ? ` (${detail})` : ''}`, cause === undefined ? undefined : { cause });
    this.name = 'BashFsError';
    this.code = code;
    this.path = path;
    this.detail = detail;
  }
}

/**
 * A redirection's target that could not be opened: the same error, its
 * message the line bash prints for it (`bash: /a.txt: Permission denied
 * (policy: …)`, without the newline). just-bash prints a compound
 * command's error by its message, and a command with an output redirection
 * runs in a group of its own (see redirection-groups.ts).
 */
export class RedirectionError extends BashFsError {
  constructor(err: BashFsError) {
    super(err.code, 'open', err.path, err.detail, err.cause ?? err);
    this.name = 'RedirectionError';
    this.message = this.bashLine.slice(0, -1);
  }
}

/** The ctxfs code as the nearest POSIX one a shell knows. */
function posixCode(err: FsError): BashErrorCode {
  switch (err.code) {
    case 'ENOENT':
    case 'EEXIST':
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENOTEMPTY':
    case 'EINVAL':
    case 'ENAMETOOLONG':
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return err.code;
    // Refused by the policy, or outside the root: what bash says is "Permission denied".
    case 'EDENIED':
    case 'EPATHESCAPE':
      return 'EACCES';
    case 'ETOOLARGE':
      return 'EFBIG';
    case 'EUNSUPPORTED':
      return 'ENOTSUP';
    default:
      return 'EIO';
  }
}

/**
 * Any failure of a ctxfs call as just-bash's error, naming `path` (the
 * script's). Only a policy refusal keeps its reason (the model needs it to
 * change course); other reasons may name host paths and are left out.
 */
export function toBashError(err: unknown, syscall: string, path: string): Error {
  if (err instanceof BashFsError) return err;
  // The cause stays for the embedding program's log; the message a script prints names no host path.
  if (!isFsError(err)) return new BashFsError('EIO', syscall, path, undefined, err);
  const code = posixCode(err);
  const detail = err.code === 'EDENIED' ? `policy: ${err.reason}` : code === 'EIO' || code === 'EACCES' || code === 'ENOTSUP' ? err.code : undefined;
  return new BashFsError(code, syscall, path, detail, err);
}

/**
 * Runs a script and, when a file call's error escapes it (just-bash ends
 * `exec` with an error its statements do not know: a redirection's failed
 * write, without `redirectionGroups`), gives bash's line for it and
 * exit status 1 instead. What the script printed before is not in the
 * error, and is lost.
 *
 * @example
 * ```ts
 * const bash = new Bash({ fs: new CtxfsBashFs(ctx), cwd: '/' }); // no redirectionGroups
 * const r = await asBashResult(() => bash.exec('echo x > locked.txt'));
 * r.stderr; // 'bash: /locked.txt: Permission denied (policy: …)\n'
 * ```
 */
export async function asBashResult<R extends { stdout: string; stderr: string; exitCode: number }>(
  script: () => Promise<R>,
): Promise<R | { stdout: string; stderr: string; exitCode: number; env: Record<string, string> }> {
  try {
    return await script();
  } catch (err) {
    if (!(err instanceof BashFsError)) throw err;
    return { stdout: '', stderr: err.bashLine, exitCode: 1, env: {} };
  }
}
