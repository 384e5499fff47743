/**
 * What an adapter needs to run a command, and nothing more: the framework
 * members that execute commands (the AI SDK session's `spawn` and `run`,
 * deepagents' sandbox `execute`) are wired to a runner the caller passes in.
 * ctxfs's runners — in the container through the Engine API, on the host
 * under bubblewrap, in memory through just-bash — implement this shape;
 * an adapter given none declares commands unavailable (its `description`
 * says so) and refuses them with `EUNSUPPORTED`.
 *
 * @module
 */

/** Options of {@link CommandRunner.run}. */
export interface RunCommandOptions {
  /** Working directory, a normalized workspace path (`''` is the root). */
  readonly cwd: string;
  /**
   * Where the command must see the workspace root (an absolute path: the
   * adapter's own mount path), so that the paths an agent uses for files
   * name the same files in commands. A runner that cannot show it there
   * rejects with `EUNSUPPORTED`; absent, the runner shows it where it
   * likes and commands should use relative paths.
   */
  readonly mountPath?: string | undefined;
  /** Aborting it kills the command. */
  readonly signal?: AbortSignal | undefined;
  /** Keep standard input open and expose it as `stdin`; otherwise it is closed at once. */
  readonly stdin?: boolean | undefined;
  /** Variables added to the command's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** A command under way. */
export interface RunningCommand {
  readonly pid?: number | undefined;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** Present when asked for with `stdin: true`; closing it delivers end of file. */
  readonly stdin?: WritableStream<Uint8Array> | undefined;
  /** Resolves with the exit code (rejects with the abort reason when aborted). */
  readonly exitCode: Promise<number>;
  /** Stops the command; idempotent. */
  kill(): Promise<void>;
}

/**
 * Runs shell commands in a workspace.
 *
 * @example
 * ```ts
 * const running = await runner.run('ls -1', { cwd: 'src' });
 * const out = await new Response(running.stdout).text();
 * const code = await running.exitCode;
 * ```
 */
export interface CommandRunner {
  /** Starts `command` (a shell command line) in `cwd`. */
  run(command: string, options: RunCommandOptions): Promise<RunningCommand>;
  /** One sentence for the agent's instructions: where commands run, and under what confinement. */
  readonly description?: string | undefined;
}

/** The sentence an adapter without a runner puts in its description. */
export const NO_COMMANDS = 'Commands are not available in this workspace (no command runner was given): use the file operations.';

/**
 * What an adapter's description says of commands: that there are none, or
 * the runner's own sentence and where commands see the workspace (at
 * `mountPath`, or, without one, at the root by relative paths).
 */
export function commandsDescription(runner: CommandRunner | undefined, mountPath: string | undefined): string {
  if (runner === undefined) return NO_COMMANDS;
  const where =
    mountPath === undefined
      ? 'Commands start in the workspace root: name its files in them by relative paths.'
      : `Commands see the workspace at ${mountPath} and start there.`;
  return runner.description === undefined ? where : `${runner.description} ${where}`;
}

/** A command refused because the adapter was opened without a runner; `code` is `EUNSUPPORTED`, as core's errors say it. */
export class CommandsUnavailableError extends Error {
  readonly code = 'EUNSUPPORTED';

  constructor(command: string) {
    super(
      `EUNSUPPORTED: cannot run \`${command.slice(0, 80)}\`: this workspace was opened without a command runner (use the file operations, or open the adapter with a runner: container, bubblewrap or just-bash)`,
    );
    this.name = 'CommandsUnavailableError';
  }
}
