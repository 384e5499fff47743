/**
 * A tool call written as one of the CLI's own commands: `ctxfs cat a.ts
 * --lines 10:20` where a hint would otherwise say `ctxfs call read_lines
 * '{"path":"a.ts","start_line":10,"end_line":20}'`. A person reads and
 * types the first; both run the same tool with the same arguments.
 *
 * Each form below is the inverse of its command's action (commands/read.ts,
 * commands/edit.ts): it takes every argument the command has a place for,
 * and a call with any other argument (or a value the command would read
 * otherwise) has no native form, so the hint keeps the `ctxfs call` form,
 * which takes anything. The CLI's tests run both forms of every hint and
 * compare what they print.
 *
 * @module
 */

import { shellArgument } from '@ctxfs/core';

type Args = Readonly<Record<string, unknown>>;

/** The arguments of one call, taken one by one; `ok` turns false when one cannot be written on the command line. */
class Taken {
  readonly #args: Args;
  readonly #used = new Set<string>();
  ok = true;

  constructor(args: Args) {
    this.#args = args;
  }

  #take(key: string): unknown {
    this.#used.add(key);
    return this.#args[key];
  }

  /** A string argument; one with a control character (a newline in a pattern) reads better as JSON. */
  text(key: string): string | undefined {
    const v = this.#take(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || /\p{Cc}/u.test(v)) this.ok = false;
    return String(v);
  }

  /** A positional argument: commander would take one starting with `-` for an option. */
  positional(key: string): string | undefined {
    const v = this.text(key);
    if (v?.startsWith('-')) this.ok = false;
    return v;
  }

  integer(key: string): number | undefined {
    const v = this.#take(key);
    if (v === undefined) return undefined;
    if (!Number.isSafeInteger(v)) this.ok = false;
    return Number(v);
  }

  /** A switch: `true` is the flag, `false` its absence (the tools' default for every switch here). */
  flag(key: string, flag: string): string[] {
    const v = this.#take(key);
    if (v !== undefined && typeof v !== 'boolean') this.ok = false;
    return v === true ? [flag] : [];
  }

  /** A version: a number, or a name or hash that the command would not read as a number. */
  version(key: string): string | undefined {
    const v = this.#take(key);
    if (v === undefined) return undefined;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    if (typeof v !== 'string' || /^\d+$/.test(v) || v.startsWith('-') || /\p{Cc}/u.test(v)) this.ok = false;
    return String(v);
  }

  /** replace's occurrence as `--all`, `--first` or `--nth n`; `unique`, the default, as none. */
  occurrence(key: string): string[] {
    const v = this.#take(key);
    if (v === undefined || v === 'unique') return [];
    if (v === 'all' || v === 'first') return [`--${v}`];
    if (Number.isSafeInteger(v) && (v as number) >= 1) return ['--nth', String(v)];
    this.ok = false;
    return [];
  }

  /** Whether every argument of the call has a place in the command. */
  get complete(): boolean {
    return this.ok && Object.keys(this.#args).every((k) => this.#used.has(k) || this.#args[k] === undefined);
  }
}

/** `--name value` when there is a value (`--name=value` for one that starts with `-`, which would read as an option). */
export function option(name: string, value: string | number | undefined): string[] {
  if (value === undefined) return [];
  const text = String(value);
  return text.startsWith('-') ? [`${name}=${text}`] : [name, text];
}

/** `start:end` as `--lines` reads it (`start:` to the end); `undefined` when neither is given. An end alone has no such form. */
function lines(a: Taken, start: number | undefined, end: number | undefined): string | undefined {
  if (start === undefined) {
    // `--lines 1:end` is not the same call: a tool given no start may serve the whole file.
    if (end !== undefined) a.ok = false;
    return undefined;
  }
  return `${start}:${end ?? ''}`;
}

/** Each tool that has a command of its own, with how its arguments are written there. */
const FORMS: Readonly<Record<string, (a: Taken) => Array<string | undefined>>> = {
  project_overview: (a) => ['overview', ...option('--budget', a.integer('budget_tokens'))],
  list_files: (a) => {
    const path = a.positional('path');
    return [
      'ls',
      path === '' || path === '.' ? undefined : path,
      ...option('--glob', a.text('glob')),
      ...option('--depth', a.integer('depth')),
      ...option('--limit', a.integer('limit')),
      ...option('--offset', a.integer('offset')),
      ...a.flag('include_ignored', '-a'),
    ];
  },
  grep: (a) => {
    const output = a.text('output');
    if (output !== undefined && !['content', 'files', 'count'].includes(output)) a.ok = false;
    return [
      'grep',
      a.positional('pattern'),
      a.positional('path'),
      ...option('--glob', a.text('glob')),
      ...a.flag('literal', '-F'),
      ...a.flag('ignore_case', '-i'),
      ...option('--context', a.integer('context_lines')),
      ...(output === 'files' ? ['--files'] : output === 'count' ? ['--count'] : []),
      ...option('--limit', a.integer('limit')),
      ...option('--offset', a.integer('offset')),
      ...a.flag('include_ignored', '-a'),
    ];
  },
  read_file: (a) => ['cat', a.positional('path'), ...option('--max-tokens', a.integer('max_tokens')), ...option('--strategy', a.text('strategy'))],
  read_lines: (a) => [
    'cat',
    a.positional('path'),
    ...option('--lines', lines(a, a.integer('start_line'), a.integer('end_line'))),
    ...option('--context', a.integer('context')),
    ...option('--max-tokens', a.integer('max_tokens')),
  ],
  get_outline: (a) => [
    'outline',
    a.positional('path'),
    ...option('--symbol', a.text('symbol')),
    ...option('--lines', lines(a, a.integer('start_line'), a.integer('end_line'))),
    ...option('--max-tokens', a.integer('max_tokens')),
  ],
  get_symbol: (a) => ['symbol', a.positional('name'), a.positional('path'), ...option('--max-tokens', a.integer('max_tokens'))],
  find_symbol: (a) => [
    'symbol',
    a.positional('query'),
    ...option('--kind', a.text('kind')),
    ...option('--in', a.text('path')),
    ...option('--limit', a.integer('limit')),
  ],
  get_related_files: (a) => ['related', a.positional('path'), ...option('--depth', a.integer('depth'))],
  get_file_history: (a) => ['history', a.positional('path'), ...option('--limit', a.integer('limit'))],
  get_diff: (a) => {
    const [path, from, to] = [a.positional('path'), a.version('from'), a.version('to')];
    // Positional: a `to` needs its `from` before it.
    if (to !== undefined && from === undefined) a.ok = false;
    return ['diff', path, from, to];
  },
  undo: (a) => ['undo', a.positional('path'), ...option('--change', a.integer('change')), ...option('--message', a.text('message'))],
  replace: (a) => [
    'replace',
    a.positional('path'),
    a.positional('old_text'),
    a.positional('new_text'),
    ...a.occurrence('occurrence'),
    ...a.flag('regex', '--regex'),
    ...option('--message', a.text('message')),
  ],
  rollback: (a) => ['rollback', a.positional('path'), a.version('to'), ...option('--message', a.text('message'))],
};

/** Arguments the command requires: a form without one of them is no command. */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  grep: ['pattern'],
  read_file: ['path'],
  read_lines: ['path', 'start_line'],
  get_outline: ['path'],
  get_symbol: ['path', 'name'],
  find_symbol: ['query'],
  get_related_files: ['path'],
  get_file_history: ['path'],
  get_diff: ['path'],
  undo: ['path'],
  replace: ['path', 'old_text', 'new_text'],
  rollback: ['path', 'to'],
};

/**
 * `tool` called with `args`, as the CLI command that makes the same call
 * (`ctxfs cat a.ts --lines 3:9`), shell-quoted; `undefined` when the tool
 * has no command of its own or the command has no place for an argument.
 * `program` stands before the command as it is (`ctxfs --profile small`).
 *
 * @example
 * ```ts
 * nativeCall('read_lines', { path: 'src/a.ts', start_line: 3, end_line: 9 }); // 'ctxfs cat src/a.ts --lines 3:9'
 * nativeCall('read_lines', { path: 'src/a.ts', start_line: 3, column: 40 }); // undefined: cat has no column
 * ```
 */
export function nativeCall(tool: string, args: Args, program = 'ctxfs'): string | undefined {
  const form = Object.hasOwn(FORMS, tool) ? FORMS[tool] : undefined;
  if (form === undefined || (REQUIRED[tool] ?? []).some((k) => args[k] === undefined)) return undefined;
  const taken = new Taken(args);
  const words = form(taken);
  if (!taken.complete) return undefined;
  return [program, ...words.filter((w): w is string => w !== undefined).map((w, i) => (i === 0 ? w : shellArgument(w)))].join(' ');
}
