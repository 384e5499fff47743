/**
 * `@ctxfs/tools` — one definition per ctxfs tool (a description written for
 * models, zod schemas of its arguments and result, MCP annotations, whether
 * it may need approval), and everything generated from it: JSON Schemas,
 * the dispatcher that runs a call in any SDK's shape against a session, and
 * hints written as calls of the same tools, and the tool definitions in the
 * shapes of the OpenAI and Anthropic APIs (the AI SDK's are in the subpath
 * `@ctxfs/tools/ai-sdk`).
 *
 * @example
 * ```ts
 * import { createContext } from '@ctxfs/context';
 * import { Toolset } from '@ctxfs/tools';
 * const ctx = await createContext({ fs });
 * await ctx.scan();
 * const tools = new Toolset(ctx.session({ agent: 'llm:claude', profile: 'medium' }));
 * const r = await tools.run('read_lines', { path: 'src/a.ts', start_line: 1, end_line: 40 });
 * ```
 *
 * @module
 */

export { type Prepared, prepareArguments } from './arguments.ts';
export { MODEL_TOOL_CALLS, snakeCase, type ToolCallWriter, toolCallStyle, toolCallText, withToolCallWriter } from './call-style.ts';
export * from './catalog/index.ts';
export {
  type AnyToolDefinition,
  CHANGES,
  DESTRUCTIVE,
  defineTool,
  READ_ONLY,
  type ToolAnnotations,
  type ToolDefinition,
  type ToolResult,
  type ToolRunContext,
  type ToolSpec,
  toolSignature,
} from './definition.ts';
export {
  type AiSdkToolCall,
  type AiSdkToolReply,
  type AnthropicToolReply,
  type AnthropicToolUse,
  type CallResult,
  type CallShape,
  type Dispatched,
  type ErrorData,
  errorResult,
  type OpenAIChatToolCall,
  type OpenAIChatToolReply,
  type OpenAIResponsesToolCall,
  type OpenAIResponsesToolReply,
  type ParsedCall,
  type PlainToolCall,
  type PlainToolReply,
  parseCall,
  type RunOptions,
  replyTo,
  type ToolReply,
  Toolset,
  type ToolsetOptions,
} from './dispatch.ts';
export { toolTable } from './docs/tool-table.ts';
export { inputJsonSchema, type JsonSchema, outputJsonSchema } from './json-schema.ts';
export {
  type EditData,
  editResult,
  type GlobData,
  type GrepData,
  type ListingData,
  listingResult,
  type SearchData,
  type ServedData,
  searchResult,
  servedResult,
  withinBudget,
  withNext,
} from './results.ts';
export { type AnthropicInputSchema, type AnthropicTool, anthropicTools } from './sdk/anthropic.ts';
export { type OpenAIChatTool, type OpenAIResponsesTool, type OpenAIToolOptions, openAIChatTools, openAIResponsesTools } from './sdk/openai.ts';
export { strictJsonSchema } from './sdk/strict-json-schema.ts';
export { editData, searchData, servedData } from './shapes.ts';
