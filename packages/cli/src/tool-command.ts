/**
 * A command that is a tool: its arguments go to `Toolset.run`, and what it
 * answers is the tool's result — the text a model would read, or with
 * `--json` the tool's `data`, which matches the tool's output schema (or,
 * for a failure, `{ error: { code, message, hint?, path? } }`). Nothing here
 * reads or edits a file by itself.
 *
 * @module
 */

import { shellArgument } from '@ctxfs/core';
import type { CallResult } from '@ctxfs/tools';
import { commandPrefix } from './call-text.ts';
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
 * How a command takes a tool's arguments: its name (`grep`, `snapshot
 * create`) and, for each argument, the word that gives it (`<pattern>`,
 * `--context`). An argument the tool's schema refuses is then named as the
 * person typed it.
 */
export interface CommandWords {
  readonly command: string;
  readonly words: Readonly<Record<string, string>>;
}

/**
 * The tool's refusal of an argument, said in the command's words: `--context
 * 99: too big: expected number to be <=20`, with the command's help as the
 * way out. The tool's own refusal names its arguments (`context_lines`) and
 * its signature (`Call it as grep(pattern, path?, …)`), which is how a model
 * calls it, not how a command is typed. `undefined` when the schema accepts
 * the arguments (the refusal was of something else).
 */
async function commandRefusal(options: GlobalOptions, tool: string, args: Record<string, unknown>, cli: CommandWords): Promise<CallResult | undefined> {
  const { TOOLS } = await import('@ctxfs/tools/toolset');
  const parsed = TOOLS.find((t) => t.name === tool)?.input.safeParse(args);
  const issue = parsed?.success === false ? parsed.error.issues[0] : undefined;
  if (issue === undefined) return undefined;
  const key = String(issue.path[0] ?? '');
  const value = args[key];
  // The value as typed, when it is short enough to read in a line (not a patch's text).
  const shown =
    typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= 60 && !/\p{Cc}/u.test(value))
      ? ` ${shellArgument(String(value))}`
      : '';
  const said = issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
  const message = `${cli.command}: ${cli.words[key] ?? key}${shown}: ${said}`;
  const hint = `${await commandPrefix(options)} ${cli.command} --help shows its arguments, options and examples`;
  return { text: `EINVAL: ${message}\n${hint}`, isError: true, data: { error: { code: 'EINVAL', message, hint } } };
}

/**
 * Runs tool `name` with `args` in the workspace `options` name and shows the
 * result. A command gives `cli`, how it takes the arguments, so an argument
 * the tool refuses is named as it was typed.
 *
 * @example
 * ```ts
 * process.exitCode = await runTool(options, 'read_lines', { path: 'src/a.ts', start_line: 10, end_line: 40 });
 * ```
 */
export function runTool(
  options: GlobalOptions,
  name: string,
  args: Record<string, unknown>,
  style: TextStyle = 'plain',
  cli?: CommandWords,
  statusOf?: (data: unknown) => number,
): Promise<ExitCode | number> {
  return withContext(options, async (ws) => {
    const result = await ws.tools.run(name, args, { requestId: options.requestId });
    const refused = result.isError && cli !== undefined && resultCode(result.data) === 'EINVAL' ? await commandRefusal(options, name, args, cli) : undefined;
    const code = await showResult(options, refused ?? result, style);
    return code === EXIT.ok && statusOf !== undefined ? statusOf(result.data) : code;
  });
}

/** Arguments without the options left out (commander leaves them `undefined`). */
export function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}
