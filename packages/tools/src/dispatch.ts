/**
 * Running tool calls against a session. A call arrives in whatever shape the
 * model's SDK gives it — OpenAI Chat Completions or Responses, Anthropic tool
 * use, the AI SDK, MCP, or a plain `{name, arguments}` — and the reply goes
 * back in the same shape. Failures are results with `isError` and an
 * actionable message, never exceptions: a model can act on a message, not on
 * a stack trace.
 *
 * @module
 */

import { type ContextSession, withCallStyle } from '@ctxfs/context';
import { isFsError } from '@ctxfs/core';
import { prepareArguments } from './arguments.ts';
import { toolCallStyle } from './call-style.ts';
import { TOOLS } from './catalog/index.ts';
import type { AnyToolDefinition, ToolResult } from './definition.ts';

/** The SDK shape a call came in. */
export type CallShape = 'openai-chat' | 'openai-responses' | 'anthropic' | 'ai-sdk' | 'plain';

/** A call, whatever its shape, reduced to what running it needs. */
export interface ParsedCall {
  readonly id: string | undefined;
  readonly name: string;
  readonly arguments: unknown;
  readonly shape: CallShape;
}

/** The data of a failed call (arguments refused, an unknown tool, an error of the workspace). */
export interface ErrorData {
  readonly error: { readonly code: string; readonly message: string; readonly path?: string | undefined; readonly hint?: string | undefined };
}

/** What a call returns: the tool's result, or an error result. */
export type CallResult = ToolResult<Record<string, unknown>>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Reads a tool call in any supported shape.
 *
 * @example
 * ```ts
 * parseCall({ id: 'call_1', type: 'function', function: { name: 'read_lines', arguments: '{"path":"a.ts","start_line":1}' } });
 * // { id: 'call_1', name: 'read_lines', arguments: '{"path":"a.ts","start_line":1}', shape: 'openai-chat' }
 * ```
 */
export function parseCall(call: unknown): ParsedCall {
  if (!isObject(call))
    throw new TypeError('A tool call is an object: {name, arguments}, an OpenAI tool call, an Anthropic tool_use block or an AI SDK tool call.');
  if (isObject(call.function) && typeof call.function.name === 'string') {
    return { id: str(call.id), name: call.function.name, arguments: call.function.arguments, shape: 'openai-chat' };
  }
  if (call.type === 'function_call' && typeof call.name === 'string') {
    return { id: str(call.call_id) ?? str(call.id), name: call.name, arguments: call.arguments, shape: 'openai-responses' };
  }
  if (call.type === 'tool_use' && typeof call.name === 'string') return { id: str(call.id), name: call.name, arguments: call.input, shape: 'anthropic' };
  if (typeof call.toolName === 'string') return { id: str(call.toolCallId), name: call.toolName, arguments: call.input ?? call.args, shape: 'ai-sdk' };
  if (typeof call.name === 'string') return { id: str(call.id), name: call.name, arguments: call.arguments ?? call.input ?? call.args, shape: 'plain' };
  throw new TypeError('Not a tool call: expected a name (name, function.name or toolName) and its arguments.');
}

/** An error result. */
export function errorResult(code: string, message: string, extra: { path?: string | undefined; hint?: string | undefined } = {}): CallResult {
  const data: ErrorData = { error: { code, message, path: extra.path, hint: extra.hint } };
  const head = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
  return { text: extra.hint && !head.includes(extra.hint) ? `${head}\n${extra.hint}` : head, isError: true, data: data as unknown as Record<string, unknown> };
}

/** The reply to a call, in the shape the call came in. */
export function replyTo(call: ParsedCall, result: CallResult): Record<string, unknown> {
  switch (call.shape) {
    case 'openai-chat':
      return { role: 'tool', tool_call_id: call.id, content: result.text };
    case 'openai-responses':
      return { type: 'function_call_output', call_id: call.id, output: result.text };
    case 'anthropic':
      return { type: 'tool_result', tool_use_id: call.id, content: result.text, ...(result.isError ? { is_error: true } : {}) };
    case 'ai-sdk':
      return {
        type: 'tool-result',
        toolCallId: call.id,
        toolName: call.name,
        output: result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text },
      };
    default:
      return { name: call.name, id: call.id, content: result.text, isError: result.isError, data: result.data };
  }
}

/** Options of {@link Toolset}. */
export interface ToolsetOptions {
  /** The tools offered; default every tool ({@link TOOLS}). */
  readonly tools?: readonly AnyToolDefinition[];
}

/**
 * The tools bound to one session: list them, run one by name, or dispatch a
 * call in any SDK's shape. Every hint in a result names a call of this tool
 * set.
 *
 * @example
 * ```ts
 * const tools = new Toolset(ctx.session({ agent: 'llm:gpt', profile: 'small' }));
 * const r = await tools.run('grep', { pattern: 'TODO', path: 'src' });
 * r.text;   // matching lines, then e.g. 'read_lines({"path":"src/a.ts","start_line":40,"end_line":60})'
 * const { reply } = await tools.dispatch(openAiToolCall); // { role: 'tool', tool_call_id, content }
 * ```
 */
export class Toolset {
  readonly session: ContextSession;
  readonly tools: readonly AnyToolDefinition[];
  readonly #byName: ReadonlyMap<string, AnyToolDefinition>;
  readonly #style;

  constructor(session: ContextSession, options: ToolsetOptions = {}) {
    this.session = session;
    this.tools = options.tools ?? TOOLS;
    this.#byName = new Map(this.tools.map((t) => [t.name, t]));
    this.#style = toolCallStyle(this.tools);
  }

  /** The definition of `name`, if this set offers it. */
  get(name: string): AnyToolDefinition | undefined {
    return this.#byName.get(name);
  }

  /** Runs tool `name` with a model's arguments (an object or a JSON string). */
  async run(name: string, args: unknown, options: { signal?: AbortSignal | undefined } = {}): Promise<CallResult> {
    const tool = this.#byName.get(name);
    if (tool === undefined) {
      return errorResult('ENOTOOL', `There is no tool "${name}".`, { hint: `The tools: ${this.tools.map((t) => t.name).join(', ')}.` });
    }
    const prepared = prepareArguments(tool, args);
    if (!prepared.ok) return errorResult('EINVAL', prepared.message);
    if (options.signal?.aborted) return errorResult('ECANCELED', `${name} was cancelled before it ran.`);
    try {
      return await withCallStyle(this.#style, () => tool.run(this.session, prepared.value, { signal: options.signal, tools: this.tools }));
    } catch (err) {
      if (isFsError(err)) return errorResult(err.code, err.message, { path: err.path, hint: err.hint });
      throw err;
    }
  }

  /** Runs a call in any supported shape and gives the reply in the same shape. */
  async dispatch(
    call: unknown,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<{ call: ParsedCall; result: CallResult; reply: Record<string, unknown> }> {
    const parsed = parseCall(call);
    const result = await this.run(parsed.name, parsed.arguments, options);
    return { call: parsed, result, reply: replyTo(parsed, result) };
  }
}
