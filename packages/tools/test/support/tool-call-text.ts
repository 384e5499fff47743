/**
 * The tool calls a model is told to make, found in free text: a result's
 * `next`, its `text`, an error's message. A model that meets ctxfs through
 * tools copies them as written, so each is either a tool call —
 * `read_lines({"path":"a.ts","start_line":10,"end_line":20})`, the tool's
 * name and its JSON arguments — or a defect: a call of the TypeScript API
 * (`readLines("a.ts", 10, 20)`), which no tool runs, or a tool's name with
 * arguments that are not a JSON object (`read_lines(path, start_line)`).
 *
 * The argument syntax tells the styles apart, which matters where a tool and
 * an API method share a name (`grep`, `glob`, `replace`, `undo`,
 * `rollback`): a tool call's parenthesis is followed by `{"` (or `{}`), an
 * API call's by a string, a number or `{` and an option's name.
 *
 * @module
 */

import { callEnd, SESSION_METHODS } from '../../../context/test/support/call-text.ts';
import type { AnyToolDefinition } from '../../src/index.ts';

/** What a call-shaped piece of text is. */
export type ToolCallFinding =
  /** A tool call as written: the name (a tool or not: that is for the caller to check) and the parsed arguments. */
  | { readonly kind: 'call'; readonly name: string; readonly args: Readonly<Record<string, unknown>>; readonly source: string }
  /** A call of the TypeScript API, which a model calling tools cannot make. */
  | { readonly kind: 'api-style'; readonly name: string; readonly source: string }
  /** A tool's name called with something that is not a JSON object of arguments (a placeholder, broken JSON). */
  | { readonly kind: 'malformed'; readonly name: string; readonly source: string; readonly reason: string };

/** The names to look for. */
export interface CallNames {
  /** Tool names (`read_lines`). */
  readonly tools: ReadonlySet<string>;
  /** The API's operations (`readLines`); some are tool names too. */
  readonly api: ReadonlySet<string>;
}

/** The names of `tools`, and of the API calls they run together with every session method a hint could name. */
export function callNames(tools: readonly AnyToolDefinition[]): CallNames {
  return { tools: new Set(tools.map((t) => t.name)), api: new Set([...Object.keys(SESSION_METHODS), ...tools.map((t) => t.api.op)]) };
}

/**
 * A name directly followed by `(`. Not after `.`: `s.replace(` or
 * `fs.grep(` is a method of some other object (quoted code), not a call a
 * model is told to make.
 */
const CALL_NAME = /(?<![\w$.])([A-Za-z_$][\w$]*)\(/g;
/** After the `(`: a JSON object of arguments begins (a quoted key, or nothing). */
const JSON_ARGS = /^\s*\{\s*["}]/;
/** After the `(`: what an API call's first argument begins with (a string, a number, an options object). */
const API_ARGS = /^\s*(?:["'\d-]|\{\s*[A-Za-z_$])/;

/**
 * Where the JSON value opening at `start` (a `{`) ends: the index after its
 * matching `}`, skipping strings and their escapes; -1 when it never closes.
 */
function jsonEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (i >= text.length) return -1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The JSON object of a tool call whose `(` is at `open`, and where the call ends (after its `)`). */
function readToolCall(text: string, open: number): { args: Record<string, unknown>; end: number } | { reason: string; end: number } {
  const brace = text.indexOf('{', open);
  const end = jsonEnd(text, brace);
  if (end < 0) return { reason: 'the JSON arguments never close', end: callEnd(text, open) };
  const close = /^\s*\)/.exec(text.slice(end));
  const after = end + (close?.[0].length ?? 0);
  let args: unknown;
  try {
    args = JSON.parse(text.slice(brace, end));
  } catch (err) {
    return { reason: `the arguments are not JSON (${(err as Error).message})`, end: after };
  }
  if (close === null) return { reason: 'no `)` after the JSON arguments', end };
  return { args: args as Record<string, unknown>, end: after };
}

/**
 * Every call in `text`, in order: tool calls, API calls and tool names
 * called with something other than JSON. A call-shaped piece inside a
 * tool call's JSON string is part of that call, not another one.
 *
 * @example
 * ```ts
 * const names = { tools: new Set(['read_lines', 'grep']), api: new Set(['readLines', 'grep']) };
 * findToolCalls('[… read_lines({"path":"a.ts","start_line":41,"end_line":80}) shows them …]', names);
 * // [{ kind: 'call', name: 'read_lines', args: { path: 'a.ts', start_line: 41, end_line: 80 }, source: 'read_lines({…})' }]
 * findToolCalls('see grep("x", {path: "src"})', names);
 * // [{ kind: 'api-style', name: 'grep', source: 'grep("x", {path: "src"})' }]
 * ```
 */
export function findToolCalls(text: string, names: CallNames): ToolCallFinding[] {
  const out: ToolCallFinding[] = [];
  const re = new RegExp(CALL_NAME.source, 'g');
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const name = m[1] as string;
    const open = m.index + m[0].length - 1;
    const after = text.slice(open + 1, open + 80);
    if (JSON_ARGS.test(after)) {
      const read = readToolCall(text, open);
      const source = text.slice(m.index, read.end);
      out.push('args' in read ? { kind: 'call', name, args: read.args, source } : { kind: 'malformed', name, source, reason: read.reason });
      re.lastIndex = read.end;
      continue;
    }
    const tool = names.tools.has(name);
    const api = names.api.has(name);
    // A name of both styles with neither's arguments (`replace(/x/g, …)`) is quoted code or prose: no call at all.
    const kind = api && (!tool || API_ARGS.test(after)) ? 'api-style' : tool && !api ? 'malformed' : undefined;
    if (kind === undefined) continue;
    const end = callEnd(text, open);
    const source = text.slice(m.index, end);
    out.push(kind === 'api-style' ? { kind, name, source } : { kind, name, source, reason: 'the arguments are not a JSON object' });
    re.lastIndex = end;
  }
  return out;
}
