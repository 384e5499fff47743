/**
 * Maps what the container and the engine report onto the ctxfs error model:
 * tool messages (busybox and GNU phrase errno the same way) to Node-style
 * codes, and engine failures to `EUNAVAILABLE` naming the container.
 *
 * @module
 */

import { errno, FsError, type FsErrorCode, type FsOperation, linkOutsideRoot, notRegularFile } from '@ctxfs/core';
import type Docker from 'dockerode';
import { describeEngine, type EngineName, engineTitle } from './engine.ts';
import { STATUS_CODES } from './helper-script.ts';
import { SshEngineError, type SshFailure } from './ssh-transport.ts';

const MESSAGES: ReadonlyArray<readonly [RegExp, FsErrorCode]> = [
  [/no such file or directory|nonexistent directory|can't stat|can't open/i, 'ENOENT'],
  [/not a directory/i, 'ENOTDIR'],
  [/is a directory/i, 'EISDIR'],
  [/file exists/i, 'EEXIST'],
  [/directory not empty/i, 'ENOTEMPTY'],
  [/no space left on device|disk quota exceeded|file too large/i, 'ENOSPC'],
  [/read-only file system/i, 'EROFS'],
  [/permission denied/i, 'EACCES'],
  [/operation not permitted/i, 'EPERM'],
  [/file name too long/i, 'ENAMETOOLONG'],
  [/too many levels of symbolic links/i, 'ELOOP'],
  [/resource busy/i, 'EBUSY'],
  [/invalid argument/i, 'EINVAL'],
  [/changed while it was being read/i, 'ECONFLICT'],
];

/** The code a tool's stderr message names, if any. Specific errno text wins over "can't stat/open". */
export function codeFromMessage(message: string): FsErrorCode | undefined {
  for (const [re, code] of MESSAGES.slice(1)) if (re.test(message)) return code;
  if (MESSAGES[0]?.[0].test(message)) return 'ENOENT';
  return undefined;
}

/**
 * Free space below which a write failure without a message is taken for a full disk: a tool stops
 * at ENOSPC with less than one block free, and a 64 KiB margin covers block and reserve rounding.
 */
export const FULL_DISK_BYTES = 64 << 10;

/** The `Available` column (KiB) of `df -Pk` output for one filesystem, or undefined if it cannot be read. */
export function freeKibibytes(dfOutput: string): number | undefined {
  // POSIX output: a header, then `Filesystem 1024-blocks Used Available Capacity Mounted-on`; a long
  // device name can wrap the row, so read the fields of everything after the header together.
  const fields = dfOutput.split('\n').slice(1).join(' ').trim().split(/\s+/);
  const capacity = fields.findIndex((f) => /^\d+%$/.test(f));
  if (capacity < 3) return undefined;
  const available = Number(fields[capacity - 1]);
  return Number.isSafeInteger(available) ? available : undefined;
}

/** A primitive-level error (the base adds op and path) for a failed helper request. */
export function helperFailure(status: number, stderr: string, op: FsOperation, path: string | undefined): Error {
  const own = STATUS_CODES[status];
  // The helper's refusal of a link that leads out of the root, in the host's words (core's). Labelled as the host
  // labels a primitive's refusal, with an operation the base re-labels as the public call's: a stat primitive serves
  // exists, grep and a write's parent checks too, and the refusal names the call that was made.
  if (own === 'EPATHESCAPE') return linkOutsideRoot('openRead', path);
  // The helper's one EINVAL: a read of a FIFO, socket or device, refused in the host's words.
  if (own === 'EINVAL') return notRegularFile(op, path);
  if (own !== undefined) return errno(own as FsErrorCode);
  const code = codeFromMessage(stderr);
  if (code !== undefined) return errno(code, stderr.trim());
  return new FsError({ code: 'EIO', op, path, reason: `the container reported status ${status}: ${stderr.trim() || 'no message'}` });
}

/**
 * What has become of a container that cannot serve a call. Only `paused`
 * and `stopped` have an engine command that brings the container back
 * (`unpause`, `start`); a `removed` one never answers again, and the others
 * (an engine that does not answer, a helper session lost or silent) are
 * worth a retry but name nothing to type.
 */
export type ContainerCondition = 'paused' | 'stopped' | 'removed' | 'unreachable' | 'unanswered' | 'lost';

/** What went wrong with the engine or the container, for an `EUNAVAILABLE` message. */
export interface Unavailability {
  /** Container name or id as the caller gave it. */
  container: string;
  /** What has become of it, for code to act on; {@link Unavailability.state} says it in words. */
  condition: ContainerCondition;
  /** Short description: "is not running (exited, exit code 0)", "does not exist", "is unreachable: ...". */
  state: string;
  /** The engine the container is on, where the hint names its command; Docker when not given. */
  engine?: EngineName | undefined;
}

/**
 * The cause an `EUNAVAILABLE` error of this backend carries: the
 * {@link Unavailability} as fields, so a caller can tell a stopped container
 * from a dead engine without reading the message, and the engine's own
 * failure as its cause in turn.
 */
export class ContainerUnavailableError extends Error {
  readonly unavailability: Readonly<Unavailability>;

  constructor(u: Unavailability, cause: unknown) {
    super(`container '${u.container}' ${u.state}`, cause === undefined ? undefined : { cause });
    this.name = 'ContainerUnavailableError';
    this.unavailability = { ...u };
  }
}

/**
 * The {@link Unavailability} behind `err`, an error this backend raised for a
 * container it could not reach (found along `err`'s chain of causes, so an
 * error a layer above re-raised with the same cause is recognized too);
 * `undefined` for any other error.
 *
 * @example
 * ```ts
 * try {
 *   await fs.read('a.txt');
 * } catch (err) {
 *   const u = containerUnavailability(err);
 *   if (u?.condition === 'stopped') console.log(`start it: ${resumeCommand(u)}`);
 * }
 * ```
 */
export function containerUnavailability(err: unknown): Readonly<Unavailability> | undefined {
  // A chain is a few links; the bound only guards against a cycle someone built.
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ContainerUnavailableError) return e.unavailability;
  }
  return undefined;
}

/**
 * The command that brings back a container in the condition `u` names, in
 * its engine's own CLI: a Podman user has no `docker` to type. `undefined`
 * for a condition no command of the engine mends.
 *
 * @example
 * ```ts
 * resumeCommand({ container: 'dev', condition: 'stopped', state: 'is not running (exited, exit code 0)', engine: 'podman' }); // 'podman start dev'
 * ```
 */
export function resumeCommand(u: Unavailability): string | undefined {
  const cli = u.engine ?? 'docker';
  if (u.condition === 'paused') return `${cli} unpause ${u.container}`;
  if (u.condition === 'stopped') return `${cli} start ${u.container}`;
  return undefined;
}

/** What to do about a container in the condition `u` names. */
function unavailableHint(u: Unavailability): string {
  const resume = resumeCommand(u);
  if (u.condition === 'paused')
    return `unpause the container (${resume}) and retry; nothing was half-written, but a write that timed out may have been applied: read before writing again`;
  if (resume !== undefined) return `start the container (${resume}) and retry; nothing was half-written`;
  // No command brings back a removed container: only another one serves.
  if (u.condition === 'removed') return `open a workspace on a running container (${u.engine ?? 'docker'} ps lists them)`;
  return `start the container (or the ${engineTitle(u.engine)} engine) again and retry; nothing was half-written`;
}

/** The `EUNAVAILABLE` error for `op`, naming the container and what happened to it. */
export function unavailable(op: FsOperation, path: string | undefined, u: Unavailability, cause?: unknown): FsError {
  return new FsError({
    code: 'EUNAVAILABLE',
    op,
    path,
    reason: `container '${u.container}' ${u.state}`,
    hint: unavailableHint(u),
    cause: new ContainerUnavailableError(u, cause),
  });
}

/**
 * Why a TLS connection to the engine failed: we refused the engine's
 * certificate (`server-untrusted`), the engine refused ours
 * (`client-refused`), or the engine speaks TLS and we spoke plain HTTP
 * (`server-wants-tls`).
 */
export type TlsFailure = 'server-untrusted' | 'client-refused' | 'server-wants-tls';

/** Node's codes for a server certificate that does not verify against the CA given. */
const UNTRUSTED_SERVER = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Classifies an engine API error: HTTP status and message from dockerode/docker-modem. */
export function describeEngineError(err: unknown): {
  notFound: boolean;
  notRunning: boolean;
  unreachable: boolean;
  tls?: TlsFailure;
  /** The SSH transport's refusal or the host's failure to relay the engine (see {@link engineRefusal}). */
  ssh?: SshFailure;
  message: string;
} {
  const e = err as { statusCode?: number; code?: string; message?: string; json?: { message?: string } } | null;
  const message = String(e?.json?.message ?? e?.message ?? err);
  const status = e?.statusCode;
  const code = typeof e?.code === 'string' ? e.code : '';
  const netCodes = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
  let tls: TlsFailure | undefined;
  if (UNTRUSTED_SERVER.has(code)) tls = 'server-untrusted';
  // The engine's alert after our certificate (or its absence) failed its check.
  else if (/^ERR_SSL_/.test(code) && /alert (bad certificate|unknown ca|certificate required|certificate unknown|access denied)/i.test(message))
    tls = 'client-refused';
  else if (status === 400 && /HTTP request to an HTTPS server/i.test(message)) tls = 'server-wants-tls';
  return {
    // A missing path in an archive request is 404 'no such container - Could not find the file …' (Docker) or
    // '… - no such file or directory' (Podman): the container is there.
    notFound: status === 404 && /no such container/i.test(message) && !/could not find the file|no such file or directory/i.test(message),
    notRunning: status === 409 || /is not running|is paused|is restarting/i.test(message),
    unreachable: tls === undefined && (netCodes.has(code) || /socket hang up|connect E/i.test(message)),
    ...(tls === undefined ? {} : { tls }),
    ...(err instanceof SshEngineError ? { ssh: err.failure } : {}),
    message,
  };
}

const TLS_FAILURES: Readonly<Record<TlsFailure, { reason: string; hint: string }>> = {
  'server-untrusted': {
    reason: 'refused: its certificate does not verify against the CA given (ca.pem)',
    hint: "give the CA that signed the engine's certificate (DOCKER_CERT_PATH/ca.pem or the ca option), and an address the certificate names",
  },
  'client-refused': {
    reason: 'refused the client certificate (missing, or not signed by a CA the engine trusts)',
    hint: "use a client certificate and key signed by the CA in the engine's --tlscacert (DOCKER_CERT_PATH/cert.pem and key.pem)",
  },
  'server-wants-tls': {
    reason: 'speaks TLS, and the connection was plain HTTP',
    hint: 'set DOCKER_TLS_VERIFY=1 with DOCKER_CERT_PATH (or pass certPath / tlsVerify) for this engine',
  },
};

/**
 * Codes of the SSH failures: credentials and trust are `EACCES` (retrying will
 * not help), a host without a usable docker CLI `EUNSUPPORTED`, the rest
 * `EUNAVAILABLE`.
 */
const SSH_CODES: Readonly<Record<SshFailure, FsErrorCode>> = {
  'host-unknown': 'EACCES',
  'host-mismatch': 'EACCES',
  'auth-refused': 'EACCES',
  'engine-denied': 'EACCES',
  'no-docker': 'EUNSUPPORTED',
  'dial-failed': 'EUNAVAILABLE',
  protocol: 'EUNAVAILABLE',
};

/**
 * The error for an engine that refused us or that we refused, over TLS (see
 * {@link tlsFailure}) or SSH (host key, login, the host's docker), naming the
 * engine by its connection ({@link describeEngine}), what happened and what
 * to change; `undefined` for other failures.
 */
export function engineRefusal(op: FsOperation, docker: Docker, err: unknown): FsError | undefined {
  if (err instanceof SshEngineError) {
    return new FsError({ code: SSH_CODES[err.failure], op, reason: `${describeEngine(docker)} ${err.reason}`, hint: err.hint, cause: err });
  }
  const tls = describeEngineError(err).tls;
  return tls === undefined ? undefined : tlsFailure(op, docker, tls, err);
}

/**
 * The error for an engine that could not be used because TLS failed: `EACCES`
 * (a credentials problem: retrying will not help), naming the engine, what
 * was refused and what to change.
 */
export function tlsFailure(op: FsOperation, docker: Docker, failure: TlsFailure, cause: unknown): FsError {
  const t = TLS_FAILURES[failure];
  return new FsError({ code: 'EACCES', op, reason: `${describeEngine(docker)} ${t.reason}`, hint: t.hint, cause });
}
