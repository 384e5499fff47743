/**
 * Hints as commands: a tool result names the call to make next, and on the
 * command line that is a command a person can paste into the shell: the
 * CLI's own command for the tool where it has one (see native-call.ts),
 * else the `ctxfs call` that takes any tool and arguments. Either repeats
 * the global options typed on the command line that gave the hint, so it
 * runs on the same workspace, state, profile and session.
 *
 * @module
 */

import { isAbsolute, relative } from 'node:path';
import { shellArgument } from '@ctxfs/core';
import type { ToolCallWriter } from '@ctxfs/tools';
import { nativeCall, option } from './native-call.ts';
import { type GlobalOptions, stateOf } from './options.ts';

/**
 * The global options a hint repeats, each under its current name, in the
 * order `ctxfs --help` lists them. Not `--json` or `--no-color` (how this
 * command answers, not what the next one does) nor `--request-id` (the key
 * of this command: the next one with it would be taken for a retry).
 */
const REPEATED: ReadonlyArray<readonly [key: keyof GlobalOptions, flag: string]> = [
  ['root', '--root'],
  ['backend', '--backend'],
  ['workdir', '--workdir'],
  ['profile', '--profile'],
  ['agent', '--agent'],
  ['session', '--session'],
];

/**
 * A directory or file of this machine as a hint repeats it: an absolute
 * path relative to the directory the command runs in (`proj`, `../app`),
 * where the hint is pasted: the same place from there, and no host path in
 * a text a model may read.
 */
function fromHere(path: string): string {
  return isAbsolute(path) ? relative(process.cwd(), path) || '.' : path;
}

/**
 * `ctxfs` and the global options of this command line that the next
 * command needs to run where this one ran, shell-quoted: `ctxfs --backend
 * docker:dev --profile small`. Only options typed on the command line: a
 * variable or a config file that set one sets it for the next command too.
 * The root and a state file given as absolute paths are written from the
 * current directory ({@link fromHere}).
 * A password in a `--state` URL is left out (the hint is printed, and may
 * be read by a model); PostgreSQL's client finds it in `PGPASSWORD` or
 * `~/.pgpass`.
 *
 * @example
 * ```ts
 * await commandPrefix({ root: '/repo', profile: 'small', policyFiles: true, color: true, typed: new Set(['profile']) }); // 'ctxfs --profile small'
 * ```
 */
export async function commandPrefix(options: GlobalOptions): Promise<string> {
  const typed = options.typed ?? new Set<string>();
  const words: string[] = [];
  for (const [key, flag] of REPEATED) {
    const value = options[key];
    if (typed.has(key) && typeof value === 'string') words.push(...option(flag, key === 'root' ? fromHere(value) : value));
  }
  // The state the command used (--state over --store, and a variable for either over the other's flag), when a flag named it.
  const state = stateOf(options);
  if (state !== undefined && typed.has(options.state !== undefined ? 'state' : 'store')) {
    // Only a state URL can carry a password; the guard entry is loaded already whenever a state is opened.
    words.push(...option('--state', /^[a-z]+:\/\//i.test(state) ? (await import('@ctxfs/context/guard')).withoutPassword(state) : fromHere(state)));
  }
  if (typed.has('policyFiles') && !options.policyFiles) words.push('--no-policy-files');
  return ['ctxfs', ...words.map(shellArgument)].join(' ');
}

/** A tool call as `ctxfs call <tool> '<JSON>'`, which every tool and argument has (`program` is what runs it, default `ctxfs`). */
export function genericCall(tool: string, args: Readonly<Record<string, unknown>>, program = 'ctxfs'): string {
  return `${program} call ${tool} ${shellArgument(JSON.stringify(args))}`;
}

/**
 * How the CLI writes a tool call in a hint: `ctxfs cat a.ts --lines 10:20`,
 * or `ctxfs call <tool> '<JSON>'` for a call no command of the CLI makes;
 * `program` (from {@link commandPrefix}) stands before each.
 *
 * @example
 * ```ts
 * const calls = cliToolCalls('ctxfs --profile small');
 * calls.call('read_lines', { path: 'a.ts', start_line: 10, end_line: 20 }); // 'ctxfs --profile small cat a.ts --lines 10:20'
 * calls.call('check_conflicts', { path: "it's.ts" }); // `ctxfs --profile small call check_conflicts '{"path":"it'\''s.ts"}'`
 * ```
 */
export function cliToolCalls(program = 'ctxfs'): ToolCallWriter {
  return {
    name: 'cli',
    call: (tool, args) => nativeCall(tool, args, program) ?? genericCall(tool, args, program),
    named: (tool) => `${program} call ${tool}`,
    // The registry's scan has no tool (a server scans as it starts); here it is a command.
    operation: (op) => (op === 'scan' ? `${program} scan` : undefined),
    // The options typed, repeated: a refusal's guard must not take --workdir /srv for a host path to hide.
    verbatim: [program],
  };
}
