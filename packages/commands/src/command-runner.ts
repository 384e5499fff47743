/**
 * Running a command for a session's agent on any backend: the executor is
 * chosen by the backend (the container's own shell; bubblewrap on the
 * host, or nothing where the policy allows unconfined commands; just-bash
 * over the workspace otherwise), and every command is one call of the
 * session — decided by the policy's command rules, audited with its
 * command line, its time limit enforced. Limits that stop a command are
 * stated in its result, never a silent cut.
 *
 * @module
 */

import { posix } from 'node:path';
import { ContainerFilesystem } from '@ctxfs/container';
import type { ContextSession, ProgramChange } from '@ctxfs/context';
import { fsError, isFsError, resolvePath } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { ContainerExecutor } from './container-executor.ts';
import type { ExecutionEnd, Executor, LimitKind, RunnerKind } from './execution.ts';
import { BubblewrapExecutor, bubblewrapAvailable, UnconfinedExecutor } from './host-executor.ts';
import { JustBashExecutor } from './just-bash-executor.ts';

/** Options of one command. */
export interface CommandOptions {
  /** Working directory, a workspace path (default the root). */
  readonly cwd?: string | undefined;
  /**
   * Where the command sees the workspace root, so that absolute paths in
   * it name workspace files: `/workspace` makes `cat /workspace/a.txt` read
   * the workspace's `a.txt`. An absolute, normalized path. Bubblewrap binds
   * the root there, the container gets a link there (made once, as root;
   * a path that exists in the container as anything else is refused),
   * just-bash mounts it there. Unconfined host commands cannot be shown
   * the root anywhere but where it is: refused with `EUNSUPPORTED`. Default:
   * where the executor shows it by itself (the host directory, the
   * container's working directory, just-bash's `/`).
   */
  readonly mountPath?: string | undefined;
  /** Variables added to the command's minimal environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Standard input (text is sent as UTF-8); `'pipe'`: written while the command runs, through the process's `stdin`. */
  readonly stdin?: string | Uint8Array | 'pipe' | undefined;
  /** Stops the command; its result says it was stopped. */
  readonly signal?: AbortSignal | undefined;
  /** Wall-clock limit in milliseconds; default the policy's (`[commands] timeout_seconds`, 60 s). */
  readonly timeoutMs?: number | undefined;
}

/** Options of {@link CommandRunner.run}. */
export interface RunOptions extends CommandOptions {
  /** Bytes of each stream kept; past it the rest is counted, not kept, and the result says so. Default 16 MiB. */
  readonly maxOutputBytes?: number | undefined;
}

/** A limit that stopped or cut a command. */
export interface LimitHit {
  readonly limit: LimitKind;
  /** What happened, in words a model can act on. */
  readonly detail: string;
}

/** How a command ended. */
export interface CommandResult {
  readonly command: string;
  /** The exit status; `null` when it was stopped (a limit, the caller's signal). */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Bytes the command wrote to each stream (more than kept when the output limit was hit). */
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  /** Limits hit; empty when none. */
  readonly limits: readonly LimitHit[];
  /** The caller's signal stopped it. */
  readonly aborted: boolean;
  readonly runner: RunnerKind;
  readonly durationMs: number;
  /** Files the command changed, as history recorded them (just-bash, whose file calls pass through ctxfs; a process's changes are found by the registry's next check). */
  readonly changes: readonly ProgramChange[];
}

/** A command under way. */
export interface CommandProcess {
  /** The command's output as it comes. */
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** With `stdin: 'pipe'`: the command's input; closing it delivers end of file. */
  readonly stdin?: WritableStream<Uint8Array> | undefined;
  /** Stops the command. */
  kill(): void;
  /**
   * How it ended (its output is in the streams, not here). Rejects with
   * `EDENIED` when the policy refused it (it never started), `ELIMIT` when
   * the session's budget is spent.
   */
  readonly exited: Promise<Omit<CommandResult, 'stdout' | 'stderr'>>;
}

/** Options of {@link CommandRunner}. */
export interface CommandRunnerOptions {
  /** The executor; default chosen by the backend ({@link executorFor}). */
  readonly executor?: Executor | undefined;
}

/**
 * The executor for a session's backend: the container's shell, bubblewrap
 * on the host (or unconfined where bubblewrap cannot start — the policy
 * then decides), just-bash over the workspace for any other backend.
 *
 * @example
 * ```ts
 * executorFor(session).kind; // 'bubblewrap' on a host workspace where bwrap works
 * ```
 */
export function executorFor(session: ContextSession): Executor {
  const fs = session.fs;
  if (fs instanceof ContainerFilesystem) return new ContainerExecutor(fs);
  if (fs instanceof HostFilesystem) return bubblewrapAvailable() ? new BubblewrapExecutor(fs.root) : new UnconfinedExecutor(fs.root);
  return new JustBashExecutor(session);
}

function stream(): { readable: ReadableStream<Uint8Array>; push(chunk: Uint8Array): void; close(): void } {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const readable = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    readable,
    push(chunk) {
      if (!closed) controller?.enqueue(new Uint8Array(chunk));
    },
    close() {
      if (closed) return;
      closed = true;
      controller?.close();
    },
  };
}

/**
 * Runs commands for one session.
 *
 * @example
 * ```ts
 * const runner = new CommandRunner(session);
 * const r = await runner.run('npm test', { cwd: 'packages/app', timeoutMs: 120_000 });
 * r.exitCode; r.stdout; r.limits; // [] or [{ limit: 'time', detail: 'stopped after 120 s' }]
 * const p = runner.spawn('tail -f log.txt');
 * for await (const chunk of p.stdout) { ...; p.kill(); }
 * ```
 */
export class CommandRunner {
  readonly session: ContextSession;
  readonly executor: Executor;

  constructor(session: ContextSession, options: CommandRunnerOptions = {}) {
    this.session = session;
    this.executor = options.executor ?? executorFor(session);
  }

  /** The runner kind, and whether commands are confined to the workspace. */
  get kind(): RunnerKind {
    return this.executor.kind;
  }

  /**
   * Starts a command, its output streamed. Refused by the policy, it never
   * starts: `exited` rejects with `EDENIED` and both streams end empty.
   */
  spawn(command: string, options: CommandOptions = {}): CommandProcess {
    const out = stream();
    const err = stream();
    const stopper = new AbortController();
    const outside = options.signal;
    const onOutside = (): void => stopper.abort(outside?.reason);
    if (outside?.aborted) stopper.abort(outside.reason);
    else outside?.addEventListener('abort', onOutside, { once: true });
    const limits: LimitHit[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    const started = Date.now();
    const exec = this.executor;
    const timeoutMs = options.timeoutMs ?? this.session.commandRules.timeoutMs;
    const pipe = options.stdin === 'pipe' ? new TransformStream<Uint8Array, Uint8Array>() : undefined;
    const input =
      pipe !== undefined
        ? pipe.readable
        : typeof options.stdin === 'string'
          ? new TextEncoder().encode(options.stdin)
          : (options.stdin as Uint8Array | undefined);
    const exited = (async () => {
      const mountPath = checkMountPath(options.mountPath);
      const cwd = await this.#cwd(options.cwd);
      const { value, changes } = await this.session.command(
        command,
        async (run) => {
          const timer = setTimeout(() => {
            limits.push({ limit: 'time', detail: `stopped after ${timeoutMs / 1000} s (the time limit); run it with a larger limit or a narrower task` });
            stopper.abort(new Error('time limit'));
          }, timeoutMs);
          try {
            // Killed before it started: it never starts.
            if (stopper.signal.aborted) return { exitCode: null };
            return await exec.start({
              command,
              cwd,
              mountPath,
              env: options.env ?? {},
              stdin: input,
              signal: stopper.signal,
              timeoutMs,
              run,
              onStdout: (c) => {
                stdoutBytes += c.byteLength;
                out.push(c);
              },
              onStderr: (c) => {
                stderrBytes += c.byteLength;
                err.push(c);
              },
            });
          } finally {
            clearTimeout(timer);
          }
        },
        {
          unconfined: !exec.confined,
          params: { runner: exec.kind, cwd, ...(mountPath === undefined ? {} : { mountPath }) },
          outcome: (end: ExecutionEnd) => ({ bytes: stdoutBytes + stderrBytes, code: end.exitCode === 0 ? undefined : `exit ${end.exitCode ?? 'stopped'}` }),
        },
      );
      if (value.limit && !limits.some((l) => l.limit === value.limit?.kind)) limits.push({ limit: value.limit.kind, detail: value.limit.detail });
      const aborted = outside?.aborted === true;
      return {
        command,
        exitCode: value.exitCode,
        stdoutBytes,
        stderrBytes,
        limits,
        aborted,
        runner: exec.kind,
        durationMs: Date.now() - started,
        changes,
      };
    })().finally(() => {
      outside?.removeEventListener('abort', onOutside);
      // Input nobody will read (a refused command, one that ended first): its writer must not wait.
      if (pipe !== undefined && !pipe.readable.locked) pipe.readable.cancel().catch(() => {});
      out.close();
      err.close();
    });
    // The streams end either way; an unobserved refusal must not crash the process.
    exited.catch(() => {});
    return { stdout: out.readable, stderr: err.readable, stdin: pipe?.writable, kill: () => stopper.abort(new Error('killed')), exited };
  }

  /**
   * Runs a command to its end and collects its output (each stream up to
   * `maxOutputBytes`; past it the result says how much was left out).
   * Rejects with `EDENIED` when the policy refuses the command.
   */
  async run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    const cap = options.maxOutputBytes ?? 16 * 1024 * 1024;
    const p = this.spawn(command, options);
    const [stdout, stderr, end] = await Promise.all([collect(p.stdout, cap), collect(p.stderr, cap), p.exited]);
    const limits = [...end.limits];
    for (const [name, s, total] of [
      ['stdout', stdout, end.stdoutBytes],
      ['stderr', stderr, end.stderrBytes],
    ] as const) {
      if (s.kept < total)
        limits.push({
          limit: 'output',
          detail: `${name}: ${total.toLocaleString('en-US')} bytes, the first ${s.kept.toLocaleString('en-US')} kept (the output limit); redirect it to a file and read that in ranges`,
        });
    }
    return { ...end, stdout: s(stdout), stderr: s(stderr), limits };
  }

  /** The working directory as a workspace path: normalized, inside the root, a directory. */
  async #cwd(cwd: string | undefined): Promise<string> {
    const { path } = resolvePath(cwd ?? '', 'stat');
    if (path === '') return path;
    const st = await this.session.fs.stat(path).catch((err: unknown) => {
      if (isFsError(err, 'ENOENT'))
        throw fsError('ENOENT', 'stat', path, { reason: 'the working directory does not exist', hint: 'name a directory of the workspace' });
      throw err;
    });
    if (st.kind !== 'directory')
      throw fsError('ENOTDIR', 'stat', path, { reason: 'the working directory is not a directory', hint: 'name a directory of the workspace' });
    return path;
  }
}

/** A mount path as given, checked: absolute, normalized, a plain string of printable characters. */
function checkMountPath(mountPath: string | undefined): string | undefined {
  if (mountPath === undefined) return undefined;
  const valid =
    typeof mountPath === 'string' &&
    mountPath.startsWith('/') &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    !/[\u0000-\u001f\u007f]/.test(mountPath) &&
    posix.normalize(mountPath) === mountPath &&
    (mountPath === '/' || !mountPath.endsWith('/'));
  if (!valid)
    throw fsError('EINVAL', 'exec', String(mountPath), {
      reason: 'the mount path must be an absolute, normalized path (no `.` or `..` parts, no trailing slash)',
      hint: 'give a path such as /workspace',
    });
  return mountPath;
}

function s(c: { chunks: Uint8Array[] }): string {
  return Buffer.concat(c.chunks).toString('utf8');
}

async function collect(readable: ReadableStream<Uint8Array>, cap: number): Promise<{ chunks: Uint8Array[]; kept: number }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  for await (const chunk of readable) {
    if (kept >= cap) continue;
    const part = chunk.byteLength > cap - kept ? chunk.subarray(0, cap - kept) : chunk;
    chunks.push(part);
    kept += part.byteLength;
  }
  return { chunks, kept };
}
