/**
 * The commands that read: overview, ls, cat, grep, outline, symbol,
 * related. Each is one tool call, except `cat --raw`, which streams the
 * file's bytes from the backend with nothing budgeted — through the
 * session's policy and audit all the same.
 *
 * @module
 */

import { parseLines } from '../arguments.ts';
import { CliError, EXIT, type ExitCode } from '../exit-codes.ts';
import type { GlobalOptions } from '../options.ts';
import { write } from '../output.ts';
import type { Action } from '../program.ts';
import { type CommandWords, defined, runTool } from '../tool-command.ts';
import { withGuard } from '../workspace.ts';

type Opts = Readonly<Record<string, unknown>>;

/** Where each command takes each argument of its tools (an argument the tool refuses is named so). */
const WORDS = {
  overview: { command: 'overview', words: { budget_tokens: '--budget' } },
  ls: { command: 'ls', words: { path: '[path]', glob: '--glob', depth: '--depth', limit: '--limit', offset: '--offset', include_ignored: '--all' } },
  cat: {
    command: 'cat',
    words: { path: '<path>', start_line: '--lines', end_line: '--lines', context: '--context', max_tokens: '--max-tokens', strategy: '--strategy' },
  },
  grep: {
    command: 'grep',
    words: {
      pattern: '<pattern>',
      path: '[path]',
      glob: '--glob',
      literal: '--literal',
      ignore_case: '--ignore-case',
      context_lines: '--context',
      output: '--files or --count',
      limit: '--limit',
      offset: '--offset',
      include_ignored: '--all',
    },
  },
  outline: { command: 'outline', words: { path: '<path>', symbol: '--symbol', start_line: '--lines', end_line: '--lines', max_tokens: '--max-tokens' } },
  getSymbol: { command: 'symbol', words: { name: '<name>', path: '[file]', max_tokens: '--max-tokens' } },
  findSymbol: { command: 'symbol', words: { query: '<name>', kind: '--kind', path: '--in', limit: '--limit' } },
  related: { command: 'related', words: { path: '<path>', depth: '--depth' } },
} as const satisfies Record<string, CommandWords>;

/** `ctxfs overview` → project_overview. */
export const overview: Action = (g, _args, o: Opts) => runTool(g, 'project_overview', defined({ budget_tokens: o.budget }), 'plain', WORDS.overview);

/** `ctxfs ls [path]` → list_files. */
export const ls: Action = (g, [path], o: Opts) =>
  runTool(g, 'list_files', defined({ path, glob: o.glob, depth: o.depth, limit: o.limit, offset: o.offset, include_ignored: o.all }), 'plain', WORDS.ls);

/** The file's bytes, chunk by chunk, to stdout: a read the policy decides and the audit records, as every other. */
async function catRaw(g: GlobalOptions, path: string): Promise<ExitCode> {
  if (g.json) throw new CliError('EINVAL', 'cat --raw writes the bytes themselves; it has no --json form', 'leave out --raw for the read_file data');
  return withGuard(g, { op: 'readBytes', opClass: 'read', path, params: { raw: true } }, async (fs, p) => {
    await using reader = await fs.openRead(p);
    // Copied: stdout may still hold a chunk when the next is requested, and chunks are lent until then.
    for await (const chunk of reader) await write(process.stdout, chunk.slice());
    return EXIT.ok;
  });
}

/** `ctxfs cat <path>` → read_file, `--lines` → read_lines, `--raw` → the bytes. */
export const cat: Action = (g, [path = ''], o: Opts) => {
  if (o.raw === true) {
    if (o.lines !== undefined || o.strategy !== undefined || o.maxTokens !== undefined) {
      throw new CliError('EINVAL', 'cat --raw writes the whole file: it takes no --lines, --strategy or --max-tokens');
    }
    return catRaw(g, path);
  }
  if (typeof o.lines === 'string') {
    const { start, end } = parseLines(o.lines);
    return runTool(g, 'read_lines', defined({ path, start_line: start, end_line: end, context: o.context, max_tokens: o.maxTokens }), 'plain', WORDS.cat);
  }
  if (o.context !== undefined) throw new CliError('EINVAL', '--context goes with --lines');
  return runTool(g, 'read_file', defined({ path, max_tokens: o.maxTokens, strategy: o.strategy }), 'plain', WORDS.cat);
};

/** `ctxfs grep <pattern> [path]` → grep. */
export const grep: Action = (g, [pattern, path], o: Opts) => {
  if (o.files === true && o.count === true) throw new CliError('EINVAL', '--files and --count: choose one');
  const output = o.files === true ? 'files' : o.count === true ? 'count' : undefined;
  return runTool(
    g,
    'grep',
    defined({
      pattern,
      path,
      glob: o.glob,
      literal: o.literal,
      ignore_case: o.ignoreCase,
      context_lines: o.context,
      output,
      limit: o.limit,
      offset: o.offset,
      include_ignored: o.all,
    }),
    'plain',
    WORDS.grep,
  );
};

/** `ctxfs outline <path>` → get_outline. */
export const outline: Action = (g, [path], o: Opts) => {
  const range = typeof o.lines === 'string' ? parseLines(o.lines) : undefined;
  return runTool(
    g,
    'get_outline',
    defined({ path, symbol: o.symbol, start_line: range?.start, end_line: range?.end, max_tokens: o.maxTokens }),
    'plain',
    WORDS.outline,
  );
};

/** `ctxfs symbol <name> <file>` → get_symbol; `ctxfs symbol <name>` → find_symbol. */
export const symbol: Action = (g, [name, file], o: Opts) => {
  if (file !== undefined) {
    if (o.kind !== undefined || o.in !== undefined || o.limit !== undefined)
      throw new CliError('EINVAL', '--kind, --in and --limit search: leave out the file');
    return runTool(g, 'get_symbol', defined({ path: file, name, max_tokens: o.maxTokens }), 'plain', WORDS.getSymbol);
  }
  return runTool(g, 'find_symbol', defined({ query: name, kind: o.kind, path: o.in, limit: o.limit }), 'plain', WORDS.findSymbol);
};

/** `ctxfs related <path>` → get_related_files. */
export const related: Action = (g, [path], o: Opts) => runTool(g, 'get_related_files', defined({ path, depth: o.depth }), 'plain', WORDS.related);
