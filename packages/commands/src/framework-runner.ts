/**
 * A session's commands in the shape agent-framework adapters take
 * (`@ctxfs/adapters`' `CommandRunner`: the AI SDK sandbox session's `run`
 * and `spawn`, deepagents' `execute`): `run(command, { cwd, signal, stdin,
 * env })` resolves with the running command — its output streams, its
 * input when asked for, its exit code, `kill()` — and `description` says
 * where commands run. The shape is structural: nothing here imports the
 * adapters.
 *
 * @module
 */

import type { ContextSession } from '@ctxfs/context';
import { CommandRunner, type CommandRunnerOptions } from './command-runner.ts';

/** Options of {@link FrameworkRunner.run}. */
export interface FrameworkRunOptions {
  /** Working directory, a workspace path (`''` is the root). */
  readonly cwd: string;
  /** Aborting it stops the command (its exit code then rejects with the reason). */
  readonly signal?: AbortSignal | undefined;
  /** Keep standard input open as `stdin`; otherwise it is closed at once. */
  readonly stdin?: boolean | undefined;
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** A command under way, as the adapters take it. */
export interface FrameworkCommand {
  readonly pid?: number | undefined;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly stdin?: WritableStream<Uint8Array> | undefined;
  /**
   * The exit code: 124 when the time limit stopped it, 137 when `kill()` did;
   * rejects with the signal's reason when the signal stopped it, and with
   * `EDENIED` when the policy refused it.
   */
  readonly exitCode: Promise<number>;
  kill(): Promise<void>;
}

/** A runner in the adapters' shape. */
export interface FrameworkRunner {
  run(command: string, options: FrameworkRunOptions): Promise<FrameworkCommand>;
  /** Where commands run and what confines them, for the agent's instructions. */
  readonly description: string;
}

/**
 * The session's commands for an agent-framework adapter.
 *
 * @example
 * ```ts
 * import { frameworkRunner } from '@ctxfs/commands';
 * const sandbox = createSandboxSession(session, { runner: frameworkRunner(session) });
 * ```
 */
export function frameworkRunner(session: ContextSession, options: CommandRunnerOptions = {}): FrameworkRunner {
  const runner = new CommandRunner(session, options);
  const { executor } = runner;
  return {
    description: `Commands run in ${executor.where}; the workspace policy decides each one and the audit records it.`,
    async run(command, o) {
      const p = runner.spawn(command, { cwd: o.cwd, env: o.env, signal: o.signal, stdin: o.stdin ? 'pipe' : undefined });
      const exitCode = p.exited.then((end) => {
        if (end.exitCode !== null) return end.exitCode;
        if (o.signal?.aborted) throw o.signal.reason ?? new Error('aborted');
        // Stopped: by its time limit (124, as timeout(1) says it), or killed (137, as a shell reports SIGKILL).
        return end.limits.some((l) => l.limit === 'time') ? 124 : 137;
      });
      exitCode.catch(() => {});
      return { stdout: p.stdout, stderr: p.stderr, stdin: p.stdin, exitCode, kill: async () => p.kill() };
    },
  };
}
