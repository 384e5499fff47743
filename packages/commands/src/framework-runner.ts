/**
 * A session's commands in the shape agent-framework adapters take
 * (`@ctxfs/adapters`' `CommandRunner`: the AI SDK sandbox session's `run`
 * and `spawn`, deepagents' `execute`): `run(command, { cwd, signal, stdin,
 * env })` resolves with the running command — its output streams, its
 * input when asked for, its exit code, `kill()` — and `description` says
 * where commands run. The shape is the adapters' (`@ctxfs/adapters`
 * defines it, as the port its frameworks' command members take); only its
 * types are imported.
 *
 * @module
 */

import type { CommandRunner as AdapterRunner, RunCommandOptions, RunningCommand } from '@ctxfs/adapters';
import type { ContextSession } from '@ctxfs/context';
import { CommandRunner, type CommandRunnerOptions } from './command-runner.ts';

/** Options of {@link FrameworkRunner.run}: the adapters' own (`@ctxfs/adapters`' `RunCommandOptions`). */
export type FrameworkRunOptions = RunCommandOptions;

/**
 * A command under way, as the adapters take it. Its exit code is 124 when
 * the time limit stopped it and 137 when `kill()` did; it rejects with the
 * signal's reason when the signal stopped it, and with `EDENIED` when the
 * policy refused it.
 */
export type FrameworkCommand = RunningCommand;

/** A runner in the adapters' shape, which always says where commands run. */
export type FrameworkRunner = AdapterRunner & { readonly description: string };

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
      const p = runner.spawn(command, { cwd: o.cwd, mountPath: o.mountPath, env: o.env, signal: o.signal, stdin: o.stdin ? 'pipe' : undefined });
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
