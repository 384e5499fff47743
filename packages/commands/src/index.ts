/**
 * Commands over any ctxfs backend, each one call of a context session:
 * decided by the policy's command rules, audited with its command line,
 * limited in time and output, the limits stated in the result.
 *
 * - container workspace: in the container, through the Engine API;
 * - host workspace: in the workspace directory, confined by bubblewrap
 *   (system read-only, workspace read-write, no network); where bubblewrap
 *   cannot start, only if the policy says `[commands] unconfined = true`;
 * - any other backend (memory): just-bash over the same workspace, its
 *   file calls through the policy and its changes one change of history.
 *
 * @example
 * ```ts
 * import { CommandRunner } from '@ctxfs/commands';
 * const r = await new CommandRunner(session).run('ls -la src');
 * r.exitCode; r.stdout; r.limits;
 * ```
 *
 * @module
 */

export {
  type CommandOptions,
  type CommandProcess,
  type CommandResult,
  CommandRunner,
  type CommandRunnerOptions,
  executorFor,
  type LimitHit,
  type RunOptions,
} from './command-runner.ts';
export { ContainerExecutor } from './container-executor.ts';
export { BASE_ENV, type ExecutionEnd, type ExecutionRequest, type Executor, type LimitKind, type RunnerKind } from './execution.ts';
export { type FrameworkCommand, type FrameworkRunner, type FrameworkRunOptions, frameworkRunner } from './framework-runner.ts';
export { BubblewrapExecutor, bubblewrapAvailable, UnconfinedExecutor } from './host-executor.ts';
export { JustBashExecutor, type JustBashExecutorOptions, type JustBashLimits } from './just-bash-executor.ts';
export { HELD_OUTPUT_CHARS, KEPT_OUTPUTS, keepOutput, readOutputLines } from './output-scratch.ts';
