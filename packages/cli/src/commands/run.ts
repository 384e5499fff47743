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

/** `ctxfs run [--cwd dir] [--timeout s] <command...>` → run_command. */
export const run: Action = (g, args, o: Readonly<Record<string, unknown>>) =>
  runTool(g, 'run_command', defined({ command: args.join(' '), cwd: o.cwd, timeout_seconds: o.timeout }), 'plain', {
    command: 'run',
    words: { command: '<command...>', cwd: '--cwd', timeout_seconds: '--timeout' },
  });
