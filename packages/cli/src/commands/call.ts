/**
 * `ctxfs call <tool> [arguments]`: any tool by its name, with its JSON
 * arguments, exactly as a model calls it. The named commands cover the
 * common calls with flags; this one reaches every tool, and it is the form
 * a hint the CLI prints takes when no named command makes its call
 * (`cliToolCalls` in call-text.ts), so a hint is a command to copy.
 *
 * @module
 */

import { text as readAll } from 'node:stream/consumers';
import { CliError } from '../exit-codes.ts';
import type { Action } from '../program.ts';
import { runTool } from '../tool-command.ts';

/** The arguments: the JSON given, stdin's when it is `-`, none when left out. */
async function argumentsOf(given: string | undefined): Promise<Record<string, unknown>> {
  const source = given === '-' ? await readAll(process.stdin) : (given ?? '{}');
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (err) {
    throw new CliError(
      'EINVAL',
      `the arguments are not JSON: ${(err as Error).message}`,
      `quote the object for the shell: ctxfs call read_lines '{"path":"src/a.ts","start_line":1,"end_line":40}'`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError('EINVAL', 'the arguments must be a JSON object', `e.g. ctxfs call grep '{"pattern":"TODO","path":"src"}'`);
  }
  return parsed as Record<string, unknown>;
}

/** `ctxfs call <tool> [arguments]` → that tool. */
export const call: Action = async (g, [tool = '', args]) => runTool(g, tool, await argumentsOf(args));
