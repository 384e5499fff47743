/**
 * The tools as OpenAI function tools, for the Chat Completions API and the
 * Responses API. Parameters are sent in strict mode by default, so the
 * model's arguments always parse against the schema; an optional argument
 * then arrives as `null`, which the dispatcher reads as absent.
 *
 * The types here are this package's own, written to the shapes the `openai`
 * package takes, so using them needs no dependency on it.
 *
 * @module
 */

import { TOOLS } from '../catalog/index.ts';
import type { AnyToolDefinition } from '../definition.ts';
import { inputJsonSchema, type JsonSchema } from '../json-schema.ts';
import { strictJsonSchema } from './strict-json-schema.ts';

/** Options of {@link openAIChatTools} and {@link openAIResponsesTools}. */
export interface OpenAIToolOptions {
  /**
   * Strict mode (Structured Outputs): the arguments are decoded under the
   * schema. Default true; false sends the tools' own schemas as they are,
   * for servers that speak the OpenAI API without strict mode.
   */
  readonly strict?: boolean;
}

/** A Chat Completions function tool (`tools[]` of `chat.completions.create`). */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean };
}

/** A Responses API function tool (`tools[]` of `responses.create`). */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

function parameters(tool: AnyToolDefinition, strict: boolean): JsonSchema {
  const schema = inputJsonSchema(tool);
  return strict ? strictJsonSchema(schema) : schema;
}

/**
 * The tools as Chat Completions function tools.
 *
 * @example
 * ```ts
 * const completion = await openai.chat.completions.create({ model, messages, tools: openAIChatTools() });
 * for (const call of completion.choices[0].message.tool_calls ?? []) {
 *   if (call.type === 'function') messages.push((await toolset.dispatch(call)).reply);
 * }
 * ```
 */
export function openAIChatTools(tools: readonly AnyToolDefinition[] = TOOLS, options: OpenAIToolOptions = {}): OpenAIChatTool[] {
  const strict = options.strict ?? true;
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: parameters(t, strict), strict } }));
}

/**
 * The tools as Responses API function tools.
 *
 * @example
 * ```ts
 * const response = await openai.responses.create({ model, input, tools: openAIResponsesTools() });
 * for (const item of response.output) {
 *   if (item.type === 'function_call') input.push(item, (await toolset.dispatch(item)).reply);
 * }
 * ```
 */
export function openAIResponsesTools(tools: readonly AnyToolDefinition[] = TOOLS, options: OpenAIToolOptions = {}): OpenAIResponsesTool[] {
  const strict = options.strict ?? true;
  return tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: parameters(t, strict), strict }));
}
