/**
 * `@ctxfs/tools/ai-sdk` — the tools of a {@link Toolset} as AI SDK tools,
 * for `generateText`, `streamText` and agents. A subpath of its own, so only
 * programs that use the AI SDK need the `ai` package.
 *
 * The AI SDK checks a call's input against the tool's input schema before it
 * runs the tool. Here that check is this package's own argument repair:
 * `file_path` becomes `path`, `"3"` becomes 3, a fenced patch is unwrapped,
 * and what cannot be repaired is refused with the fix, which the AI SDK
 * hands to the model as the call's error. The model reads each result's
 * text; a refusal or failure reaches it as an error.
 *
 * @example
 * ```ts
 * import { generateText, stepCountIs } from 'ai';
 * import { Toolset } from '@ctxfs/tools';
 * import { aiSdkTools } from '@ctxfs/tools/ai-sdk';
 * const toolset = new Toolset(ctx.session({ agent: 'llm:agent', profile: 'medium' }));
 * const { text } = await generateText({ model, tools: aiSdkTools(toolset), stopWhen: stepCountIs(20), prompt: 'Fix the failing test.' });
 * ```
 *
 * @module
 */

import { type JSONSchema7, jsonSchema, type Tool, type ToolResultPart, tool } from 'ai';
import { prepareArguments } from '../arguments.ts';
import type { AnyToolDefinition } from '../definition.ts';
import type { CallResult, Toolset } from '../dispatch.ts';
import { inputJsonSchema } from '../json-schema.ts';

/** A tool's arguments once repaired and checked. */
export type AiSdkToolInput = Record<string, unknown>;

/** One ctxfs tool as an AI SDK tool: it returns the tool's result, and the model reads the result's text. */
export type AiSdkTool = Tool<AiSdkToolInput, CallResult>;

/** What the model is given of a result. */
export type AiSdkModelOutput = ToolResultPart['output'];

/**
 * The model's view of a result: its text, as an error when the call was
 * refused or failed. The tools of {@link aiSdkTools} use it; a tool of your
 * own that runs a ctxfs call can too.
 *
 * @example
 * ```ts
 * toModelOutput(await toolset.run('read_file', { path: 'gone.ts' }));
 * // { type: 'error-text', value: 'ENOENT: no file at gone.ts, …' }
 * ```
 */
export function toModelOutput(result: CallResult): AiSdkModelOutput {
  return result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text };
}

type Validation = { success: true; value: AiSdkToolInput } | { success: false; error: Error };

function validator(definition: AnyToolDefinition): (value: unknown) => Validation {
  return (value) => {
    const prepared = prepareArguments(definition, value);
    if (prepared.ok) return { success: true, value: prepared.value };
    // The AI SDK writes the error as `name: message` into what the model reads; EINVAL is the code the dispatcher gives the same refusal.
    const error = new Error(prepared.message);
    error.name = 'EINVAL';
    return { success: false, error };
  };
}

/**
 * The toolset's tools as an AI SDK tool set (name → tool), run against the
 * toolset's session.
 *
 * @example
 * ```ts
 * const tools = aiSdkTools(new Toolset(session, { tools: READ_TOOLS }));
 * const result = await generateText({ model, tools, prompt: 'Where is the config loaded?' });
 * ```
 */
export function aiSdkTools(toolset: Toolset): Record<string, AiSdkTool> {
  const out: Record<string, AiSdkTool> = {};
  for (const definition of toolset.tools) {
    out[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema<AiSdkToolInput>(inputJsonSchema(definition) as JSONSchema7, { validate: validator(definition) }),
      // The input is already repaired; running it through the toolset again keeps one path for every surface (hints written as
      // tool calls, workspace errors turned into results) and costs a second check of a few fields.
      execute: (input, options) => toolset.run(definition.name, input, { signal: options.abortSignal }),
      toModelOutput: ({ output }) => toModelOutput(output),
    });
  }
  return out;
}
