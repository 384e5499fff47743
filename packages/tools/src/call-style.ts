/**
 * Hints written as tool calls. The context layer names the session call a
 * model should make next (`readLines("a.ts", 10, 20)`); a model that meets
 * ctxfs through tools must be told the tool call instead
 * (`read_lines({"path":"a.ts","start_line":10,"end_line":20})`). Each
 * definition says which session call it runs and how its arguments line up,
 * so the mapping is derived, never written twice.
 *
 * @module
 */

import { API_CALL_STYLE, type CallOptions, type CallStyle, type CallValue } from '@ctxfs/context';
import { type AnyToolDefinition, optionalArguments } from './definition.ts';

/** `contextLines` → `context_lines`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Option names of the API that a tool spells differently from their snake_case. */
const RENAMED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  getOutline: { startLine: 'start_line', endLine: 'end_line' },
};

/** A tool call as a model writes it: the tool's name and its JSON arguments. */
export function toolCallText(name: string, args: Readonly<Record<string, unknown>>): string {
  return `${name}(${JSON.stringify(args)})`;
}

/**
 * The style that writes hints as calls of `tools`; an operation no tool runs
 * is written in the API's style (none should be: the tests follow every hint).
 *
 * @example
 * ```ts
 * const style = toolCallStyle(TOOLS);
 * style.format('readLines', ['a.ts', 10, 20], {}); // 'read_lines({"path":"a.ts","start_line":10,"end_line":20})'
 * ```
 */
export function toolCallStyle(tools: readonly AnyToolDefinition[]): CallStyle {
  const byOp = new Map(tools.map((t) => [t.api.op, t]));
  return {
    name: 'tools',
    format(op: string, args: readonly CallValue[], options: CallOptions): string {
      const tool = byOp.get(op);
      if (tool === undefined) return API_CALL_STYLE.format(op, args, options);
      const out: Record<string, unknown> = {};
      args.forEach((value, i) => {
        const key = tool.api.args[i];
        if (key !== undefined && value !== undefined) out[key] = value;
      });
      for (const [key, value] of Object.entries(options)) {
        if (value !== undefined) out[RENAMED[op]?.[key] ?? snakeCase(key)] = value;
      }
      // A call shape (the model chooses some arguments: a grep's pattern, a
      // file's content) is written as words, not as a call to copy.
      const optional = optionalArguments(tool);
      const missing = Object.keys(tool.input.shape).filter((k) => !(k in out) && !optional.has(k));
      if (missing.length > 0)
        return `${tool.name} with ${missing.map((k) => `your ${k}`).join(' and ')}${Object.keys(out).length > 0 ? ` and ${JSON.stringify(out)}` : ''}`;
      return toolCallText(tool.name, out);
    },
  };
}
