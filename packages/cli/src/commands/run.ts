/**
 * `ctxfs run <command...>`: the `run_command` tool from a shell — the
 * command runs where the workspace's runner puts it (the container, the
 * host directory under bubblewrap, just-bash in memory), decided by the
 * policy's `[commands]` rules and audited like every tool call.
 *
 * @module
 */

import type { Action } from '../program.ts';
import { defined, runTool } from '../tool-command.ts';

/** What `timeout(1)` exits with when it stopped the command: a script tells it from the command's own failure. */
export const STOPPED_STATUS = 124;

/**
 * The exit status of a command that ran: its own (`ctxfs run -- make test &&
 * deploy` stops when the tests fail), or 124 when a limit stopped it, as
 * `timeout(1)` says it. A refusal before it ran keeps ctxfs's codes.
 */
function commandStatus(data: unknown): number {
  const { exit_code: code } = data as { exit_code?: number | null };
  if (code === null || code === undefined) return STOPPED_STATUS;
  return Math.min(Math.max(code, 0), 255);
}

/** `ctxfs run [--cwd dir] [--timeout s] <command...>` → run_command, exiting with the command's status. */
export const run: Action = (g, args, o: Readonly<Record<string, unknown>>) =>
  runTool(
    g,
    'run_command',
    defined({ command: args.join(' '), cwd: o.cwd, timeout_seconds: o.timeout }),
    'plain',
    { command: 'run', words: { command: '<command...>', cwd: '--cwd', timeout_seconds: '--timeout' } },
    commandStatus,
  );
