/**
 * What `ctxfs` exits with, and how an error code maps to it. A script can
 * tell a refusal from a typo, a missing file, a policy denial and a backend
 * that is down without reading the message.
 *
 * @module
 */

/** The exit codes of every command. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Refused: an edit conflict, a patch that does not apply, a check that failed. */
  refused: 1,
  /** Usage: an unknown command or option, a bad argument. */
  usage: 2,
  /** Not found: a file, a symbol, a snapshot, a session or an agent. */
  notFound: 3,
  /** Denied by the policy (or the person asked, or a spent budget). */
  denied: 4,
  /** The backend cannot be reached: no such directory, container or Docker engine. */
  unavailable: 5,
} as const;

/** One of {@link EXIT}'s values. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const BY_CODE: Readonly<Record<string, ExitCode>> = {
  ENOENT: EXIT.notFound,
  ENOSNAPSHOT: EXIT.notFound,
  ENOSESSION: EXIT.notFound,
  ENOAGENT: EXIT.notFound,
  EDENIED: EXIT.denied,
  ELIMIT: EXIT.denied,
  EUNAVAILABLE: EXIT.unavailable,
  EINVAL: EXIT.usage,
  ENOTOOL: EXIT.usage,
  EBADPATTERN: EXIT.usage,
  EPATHESCAPE: EXIT.usage,
  ENAMETOOLONG: EXIT.usage,
};

/**
 * The exit code of an error code (a ctxfs or Node code); anything not listed
 * is a refusal (1).
 *
 * @example
 * ```ts
 * exitCodeOf('ENOENT');    // 3
 * exitCodeOf('ECONFLICT'); // 1
 * ```
 */
export function exitCodeOf(code: string | undefined): ExitCode {
  return (code !== undefined ? BY_CODE[code] : undefined) ?? EXIT.refused;
}

/**
 * An error the CLI reports itself (a bad option value, a backend that is
 * down): its code, what to do, and the exit code.
 *
 * @example
 * ```ts
 * throw new CliError('EINVAL', '--lines 40:10: the end is before the start', 'write --lines 10:40');
 * ```
 */
export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;

  constructor(code: string, message: string, hint?: string, exitCode: ExitCode = exitCodeOf(code)) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.hint = hint;
    this.exitCode = exitCode;
  }
}
