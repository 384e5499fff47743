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

import { AsyncLocalStorage } from 'node:async_hooks';
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

/**
 * How a surface writes a call of a tool: a model's tool call, or the
 * command a person types (`ctxfs call …`). Every hint a tool set's results
 * carry is written by its writer, so it is a call that works where its
 * reader is.
 */
export interface ToolCallWriter {
  /** The style's name (`tools`, `cli`). */
  readonly name: string;
  /** The call of `tool` with `args`, ready to copy. */
  call(tool: string, args: Readonly<Record<string, unknown>>): string;
  /** `tool`, named in a sentence that says which arguments to add. */
  named(tool: string): string;
  /** An operation of the API that no tool runs (`scan`), where this surface has it. */
  operation?(op: string): string | undefined;
  /** Words of its calls kept as written in a refusal (see `CallStyle.verbatim`): the command line a person typed. */
  readonly verbatim?: readonly string[];
}

/** A model's tool call: `read_lines({"path":"a.ts","start_line":10,"end_line":20})`. */
export const MODEL_TOOL_CALLS: ToolCallWriter = {
  name: 'tools',
  call: (tool, args) => `${tool}(${JSON.stringify(args)})`,
  named: (tool) => tool,
  // No tool scans (a server scans as it starts): a model is told who can, not given a call it cannot make.
  operation: (op) => (op === 'scan' ? 'a scan of the workspace by the application running ctxfs' : undefined),
};

// One writer per async call chain: a CLI and an MCP server may share a process.
const activeWriter = new AsyncLocalStorage<ToolCallWriter>();

/** Runs `body` with tool calls written by `writer` ({@link Toolset} runs every call so). */
export function withToolCallWriter<T>(writer: ToolCallWriter, body: () => T): T {
  return activeWriter.run(writer, body);
}

/**
 * A tool call as the active surface writes it: a model's tool call unless
 * {@link withToolCallWriter} says otherwise.
 *
 * @example
 * ```ts
 * toolCallText('read_lines', { path: 'a.ts', start_line: 10, end_line: 20 }); // 'read_lines({"path":"a.ts","start_line":10,"end_line":20})'
 * ```
 */
export function toolCallText(name: string, args: Readonly<Record<string, unknown>>): string {
  return (activeWriter.getStore() ?? MODEL_TOOL_CALLS).call(name, args);
}

/**
 * The style that writes hints as calls of `tools`, each written by `writer`
 * (a model's tool call by default); an operation no tool runs is written in
 * the API's style (none should be: the tests follow every hint).
 *
 * @example
 * ```ts
 * const style = toolCallStyle(TOOLS);
 * style.format('readLines', ['a.ts', 10, 20], {}); // 'read_lines({"path":"a.ts","start_line":10,"end_line":20})'
 * ```
 */
export function toolCallStyle(tools: readonly AnyToolDefinition[], writer: ToolCallWriter = MODEL_TOOL_CALLS): CallStyle {
  const byOp = new Map(tools.map((t) => [t.api.op, t]));
  return {
    name: writer.name,
    verbatim: writer.verbatim,
    format(op: string, args: readonly CallValue[], options: CallOptions): string {
      const tool = byOp.get(op);
      if (tool === undefined) return writer.operation?.(op) ?? API_CALL_STYLE.format(op, args, options);
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
        return `${writer.named(tool.name)} with ${missing.map((k) => `your ${k}`).join(' and ')}${Object.keys(out).length > 0 ? ` and ${JSON.stringify(out)}` : ''}`;
      return writer.call(tool.name, out);
    },
    operationName(op: string): string {
      return byOp.get(op)?.name ?? op;
    },
    optionName(op: string, key: string): string | undefined {
      const tool = byOp.get(op);
      if (tool === undefined) return key;
      const name = RENAMED[op]?.[key] ?? snakeCase(key);
      return name in tool.input.shape ? name : undefined;
    },
  };
}
