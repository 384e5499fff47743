/**
 * Hints as commands: a tool result names the call to make next, and on the
 * command line that is the `ctxfs call` a person can paste into the shell.
 *
 * @module
 */

import { shellArgument } from '@ctxfs/core';
import type { ToolCallWriter } from '@ctxfs/tools';

/**
 * How the CLI writes a tool call in a hint: `ctxfs call read_lines '{"path":"a.ts","start_line":10,"end_line":20}'`.
 *
 * @example
 * ```ts
 * CLI_TOOL_CALLS.call('get_symbol', { path: "it's.ts", name: 'a' }); // `ctxfs call get_symbol '{"path":"it'\''s.ts","name":"a"}'`
 * ```
 */
export const CLI_TOOL_CALLS: ToolCallWriter = {
  name: 'cli',
  call: (tool, args) => `ctxfs call ${tool} ${shellArgument(JSON.stringify(args))}`,
  named: (tool) => `ctxfs call ${tool}`,
  // The registry's scan has no tool (a server scans as it starts); here it is a command.
  operation: (op) => (op === 'scan' ? 'ctxfs scan' : undefined),
};
