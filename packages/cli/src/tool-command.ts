/**
 * A command that is a tool: its arguments go to `Toolset.run`, and what it
 * answers is the tool's result — the text a model would read, or with
 * `--json` the tool's `data`, which matches the tool's output schema (or,
 * for a failure, `{ error: { code, message, hint?, path? } }`). Nothing here
 * reads or edits a file by itself.
 *
 * @module
 */

import type { CallResult } from '@ctxfs/tools';
import { EXIT, type ExitCode, exitCodeOf } from './exit-codes.ts';
import type { GlobalOptions } from './options.ts';
import { out, outJson, paint, paintDiff, write } from './output.ts';
import { withContext } from './workspace.ts';

/** How a result's text is shown on a terminal: `diff` colours a change's lines. */
export type TextStyle = 'plain' | 'diff';

/** The code a failed result carries: an error's, or an edit refusal's. */
export function resultCode(data: Record<string, unknown>): string | undefined {
  const error = data.error as { code?: unknown } | undefined;
  if (typeof error?.code === 'string') return error.code;
  return typeof data.code === 'string' ? data.code : undefined;
}

/** Shows a tool result and returns the exit code it means. */
export async function showResult(options: GlobalOptions, result: CallResult, style: TextStyle = 'plain'): Promise<ExitCode> {
  if (options.json) await outJson(result.data);
  else if (result.isError) {
    const [first = '', ...rest] = result.text.split('\n');
    const body = rest.length === 0 ? '' : `\n${style === 'diff' ? paintDiff(rest.join('\n'), process.stderr) : rest.join('\n')}`;
    await write(process.stderr, `${paint('red', 'ctxfs:', process.stderr)} ${first}${body}\n`);
  } else await out(style === 'diff' ? paintDiff(result.text) : result.text);
  return result.isError ? exitCodeOf(resultCode(result.data)) : EXIT.ok;
}

/**
 * Runs tool `name` with `args` in the workspace `options` name and shows the
 * result.
 *
 * @example
 * ```ts
 * process.exitCode = await runTool(options, 'read_lines', { path: 'src/a.ts', start_line: 10, end_line: 40 });
 * ```
 */
export function runTool(options: GlobalOptions, name: string, args: Record<string, unknown>, style: TextStyle = 'plain'): Promise<ExitCode> {
  return withContext(options, async (ws) => showResult(options, await ws.tools.run(name, args, { requestId: options.requestId }), style));
}

/** Arguments without the options left out (commander leaves them `undefined`). */
export function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}
