/**
 * The tools as Anthropic Messages API tool definitions. Anthropic takes
 * draft 2020-12 JSON Schema as it is, so the input schema is the tool's own:
 * optional arguments stay optional and unknown ones are refused.
 *
 * The types here are this package's own, written to the shape the
 * `@anthropic-ai/sdk` package takes, so using them needs no dependency on it.
 *
 * @module
 */

import { TOOLS } from '../catalog/index.ts';
import type { AnyToolDefinition } from '../definition.ts';
import { inputJsonSchema, type JsonSchema } from '../json-schema.ts';

/** A tool's `input_schema`: a JSON Schema of an object. */
export interface AnthropicInputSchema {
  type: 'object';
  properties: { [name: string]: JsonSchema };
  required?: string[];
  [keyword: string]: unknown;
}

/** A tool definition (`tools[]` of `messages.create`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: AnthropicInputSchema;
}

function inputSchema(tool: AnyToolDefinition): AnthropicInputSchema {
  const { type, properties, required, ...rest } = inputJsonSchema(tool);
  // A definition's input is a zod object, so its schema always has these; the check keeps the types honest.
  if (type !== 'object' || typeof properties !== 'object' || properties === null) throw new Error(`${tool.name}: the input schema is not an object schema.`);
  return {
    type,
    properties: properties as AnthropicInputSchema['properties'],
    ...(Array.isArray(required) ? { required: required.map(String) } : {}),
    ...rest,
  };
}

/**
 * The tools as Anthropic tool definitions.
 *
 * @example
 * ```ts
 * const message = await anthropic.messages.create({ model, max_tokens: 4096, messages, tools: anthropicTools() });
 * const results = [];
 * for (const block of message.content) {
 *   if (block.type === 'tool_use') results.push((await toolset.dispatch(block)).reply);
 * }
 * messages.push({ role: 'assistant', content: message.content }, { role: 'user', content: results });
 * ```
 */
export function anthropicTools(tools: readonly AnyToolDefinition[] = TOOLS): AnthropicTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: inputSchema(t) }));
}
