/**
 * What every way of running a command shares: the request an executor
 * gets, what it reports back, and the contract of an executor — start one
 * command, stream its output through callbacks, stop it when the signal
 * aborts, resolve with how it ended.
 *
 * @module
 */

import type { ProgramRun } from '@ctxfs/context';

/** How a command runs. */
export type RunnerKind = 'just-bash' | 'bubblewrap' | 'container' | 'unconfined';

/** One command as an executor gets it. */
export interface ExecutionRequest {
  /** The command line, run by a POSIX shell (`sh -c`; just-bash's bash in memory). */
  readonly command: string;
  /** Workspace path of the working directory (`''` the root), normalized and checked to be a directory. */
  readonly cwd: string;
  /**
   * Where the command must see the workspace root: a normalized absolute
   * path; absent, wherever the executor shows it by itself (the host
   * directory, the container's working directory, just-bash's `/`). An
   * executor that cannot show it there (`/` anywhere but just-bash, for
   * one) rejects with `EUNSUPPORTED`.
   */
  readonly mountPath?: string | undefined;
  /** Variables for the command, on top of a minimal environment (never the embedding process's own). */
  readonly env: Readonly<Record<string, string>>;
  /** The command's standard input: bytes, or a stream written while it runs (none: it reads end-of-file). */
  readonly stdin: Uint8Array | AsyncIterable<Uint8Array> | undefined;
  /** Aborts the command: the executor stops it and resolves. */
  readonly signal: AbortSignal;
  /** Wall-clock limit, passed to executors that enforce it themselves (just-bash); the runner enforces it for all. */
  readonly timeoutMs: number;
  /** The policy's view of the files and the history of what the command changes (used by just-bash, whose file calls pass through ctxfs). */
  readonly run: ProgramRun;
  onStdout(chunk: Uint8Array): void;
  onStderr(chunk: Uint8Array): void;
}

/** What a limit bounds: wall-clock time, output kept, memory (just-bash's string and byte limits), work (just-bash's iteration and depth limits). */
export type LimitKind = 'time' | 'output' | 'memory' | 'work';

/** How an execution ended. */
export interface ExecutionEnd {
  /** The exit status; `null` when the command was stopped before it exited. */
  readonly exitCode: number | null;
  /** A limit the executor itself hit (just-bash's output, memory or work limits), in words. */
  readonly limit?: { readonly kind: LimitKind; readonly detail: string } | undefined;
}

/** One way of running commands. */
export interface Executor {
  readonly kind: RunnerKind;
  /** Whether the command is kept inside the workspace by something other than its good manners. */
  readonly confined: boolean;
  /**
   * Where commands run, in words for an agent's instructions (`container
   * abc`, `a bubblewrap sandbox on the host`, `just-bash's bash`); where they
   * see the workspace is the mount path's to say, not this.
   */
  readonly where: string;
  start(request: ExecutionRequest): Promise<ExecutionEnd>;
}

/** The directory a command starts in: `cwd` below where it sees the root. */
export function startDirectory(root: string, cwd: string): string {
  return cwd === '' ? root : `${root}/${cwd}`;
}

/** The environment a command starts from: enough to find programs, nothing of the embedding process's. */
export const BASE_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LANG: 'C.UTF-8',
  TERM: 'dumb',
});
