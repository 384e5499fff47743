/**
 * Hints as commands: a tool result names the call to make next, and on the
 * command line that is a command a person can paste into the shell: the
 * CLI's own command for the tool where it has one (see native-call.ts),
 * else the `ctxfs call` that takes any tool and arguments.
 *
 * @module
 */

import { shellArgument } from '@ctxfs/core';
import type { ToolCallWriter } from '@ctxfs/tools';
import { nativeCall } from './native-call.ts';

/** A tool call as `ctxfs call <tool> '<JSON>'`, which every tool and argument has. */
export function genericCall(tool: string, args: Readonly<Record<string, unknown>>): string {
  return `ctxfs call ${tool} ${shellArgument(JSON.stringify(args))}`;
}

/**
 * How the CLI writes a tool call in a hint: `ctxfs cat a.ts --lines 10:20`,
 * or `ctxfs call <tool> '<JSON>'` for a call no command of the CLI makes.
 *
 * @example
 * ```ts
 * CLI_TOOL_CALLS.call('read_lines', { path: 'a.ts', start_line: 10, end_line: 20 }); // 'ctxfs cat a.ts --lines 10:20'
 * CLI_TOOL_CALLS.call('check_conflicts', { path: "it's.ts" }); // `ctxfs call check_conflicts '{"path":"it'\''s.ts"}'`
 * ```
 */
export const CLI_TOOL_CALLS: ToolCallWriter = {
  name: 'cli',
  call: (tool, args) => nativeCall(tool, args) ?? genericCall(tool, args),
  named: (tool) => `ctxfs call ${tool}`,
  // The registry's scan has no tool (a server scans as it starts); here it is a command.
  operation: (op) => (op === 'scan' ? 'ctxfs scan' : undefined),
};
