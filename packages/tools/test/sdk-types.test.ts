/**
 * The generated tools and the dispatcher's replies checked against the SDKs'
 * own types: `pnpm typecheck` compiles this file, so a shape that drifts
 * from an SDK fails the build. The `@ts-expect-error` lines are wrong on
 * purpose: they keep the checks from passing by accepting anything. The
 * tests run the same values for real, with no network.
 */

import type Anthropic from '@anthropic-ai/sdk';
import { aiSdkTools } from '@ctxfs/tools/ai-sdk';
import type { ModelMessage, ToolCallPart, ToolModelMessage, ToolResultPart, ToolSet, TypedToolCall } from 'ai';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { anthropicTools, openAIChatTools, openAIResponsesTools, READ_TOOLS } from '../src/index.ts';
import { freshWorkspace } from './workspace.ts';

describe('tool definitions typed as the SDKs take them', () => {
  it('are OpenAI Chat Completions tools and request params', () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = openAIChatTools();
    const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'Where is Doc defined?' }],
      tools: openAIChatTools(READ_TOOLS),
      tool_choice: 'auto',
    };
    // @ts-expect-error a Chat Completions tool wraps its function; a Responses tool is flat.
    const flat: OpenAI.Chat.Completions.ChatCompletionTool[] = openAIResponsesTools();
    expect(tools.length).toBeGreaterThan(params.tools?.length ?? 0);
    expect(flat[0]).not.toHaveProperty('function');
  });

  it('are OpenAI Responses API tools and request params', () => {
    const tools: OpenAI.Responses.FunctionTool[] = openAIResponsesTools();
    const params: OpenAI.Responses.ResponseCreateParamsNonStreaming = {
      model: 'gpt-5',
      input: 'Where is Doc defined?',
      tools: openAIResponsesTools(READ_TOOLS),
    };
    // @ts-expect-error a Responses tool has its name at the top, not under `function`.
    const wrapped: OpenAI.Responses.FunctionTool[] = openAIChatTools();
    expect(tools.every((t) => t.strict)).toBe(true);
    expect(params.tools).toHaveLength(READ_TOOLS.length);
    expect(wrapped[0]).not.toHaveProperty('name');
  });

  it('are Anthropic tools and request params', () => {
    const tools: Anthropic.Messages.Tool[] = anthropicTools();
    const params: Anthropic.Messages.MessageCreateParamsNonStreaming = {
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'Where is Doc defined?' }],
      tools: anthropicTools(READ_TOOLS),
    };
    // @ts-expect-error an Anthropic tool has input_schema, not parameters.
    const openAIShaped: Anthropic.Messages.Tool[] = openAIResponsesTools();
    expect(tools.every((t) => t.input_schema.type === 'object')).toBe(true);
    expect(params.tools).toHaveLength(READ_TOOLS.length);
    expect(openAIShaped[0]).not.toHaveProperty('input_schema');
  });
});

describe('SDK tool calls dispatched, replies typed as the SDKs take them', () => {
  const workspace = freshWorkspace();

  it('answers an OpenAI Chat Completions tool call with a tool message', async () => {
    const w = workspace();
    const call: OpenAI.Chat.Completions.ChatCompletionMessageToolCall = {
      id: 'call_1',
      type: 'function',
      function: { name: 'find_symbol', arguments: '{"query":"Doc","kind":null,"path":null,"match":null,"limit":null,"offset":null}' },
    };
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'assistant', content: null, tool_calls: [call] }];
    if (call.type === 'function') {
      const { reply } = await w.toolset.dispatch(call);
      const message: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = reply;
      messages.push(reply);
      // @ts-expect-error a tool message is not an Anthropic tool_result block.
      const block: Anthropic.Messages.ToolResultBlockParam = reply;
      expect(message).toEqual({ role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('src/doc.ts') });
      expect(block).toBe(reply);
    }
    // A tool call of either kind (function or custom) is not known to be a function call, so its reply is not typed as a tool message.
    const { reply } = await w.toolset.dispatch(call as OpenAI.Chat.Completions.ChatCompletionMessageToolCall);
    // @ts-expect-error the reply to a call of unknown shape is any reply.
    const untyped: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = reply;
    expect(untyped).toMatchObject({ role: 'tool' });
    expect(messages).toHaveLength(2);
  });

  it('answers an OpenAI Responses function call with a function_call_output item', async () => {
    const w = workspace();
    const call: OpenAI.Responses.ResponseFunctionToolCall = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_2',
      name: 'read_lines',
      arguments: '{"path":"src/doc.ts","start_line":"3","end_line":5}',
      status: 'completed',
    };
    const { reply, result } = await w.toolset.dispatch(call);
    const item: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = reply;
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Show Doc.' }, call, reply];
    const params: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: 'gpt-5', input, tools: openAIResponsesTools() };
    // @ts-expect-error a function_call_output is not a Chat Completions tool message.
    const chat: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = reply;
    expect(item).toEqual({ type: 'function_call_output', call_id: 'call_2', output: result.text });
    expect(result.text).toContain('3\texport class Doc {');
    expect(params.input).toHaveLength(3);
    expect(chat).toBe(reply);
  });

  it('answers an Anthropic tool_use block with a tool_result block, is_error on failure', async () => {
    const w = workspace();
    const blocks: Anthropic.Messages.ToolUseBlock[] = [
      { type: 'tool_use', id: 'toolu_1', name: 'get_outline', input: { file_path: 'src/registries.ts' }, caller: { type: 'direct' } },
      { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'src/missing.ts' }, caller: { type: 'direct' } },
    ];
    const results: Anthropic.Messages.ToolResultBlockParam[] = [];
    for (const block of blocks) results.push((await w.toolset.dispatch(block)).reply);
    const next: Anthropic.Messages.MessageParam = { role: 'user', content: results };
    // @ts-expect-error a tool_result block is not a Responses function_call_output.
    const item: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = results[0];
    expect(results[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.stringContaining('$ZodRegistry') });
    expect(results[0]?.is_error).toBeUndefined();
    expect(results[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: expect.stringMatching(/^ENOENT: /) });
    expect(next.content).toHaveLength(2);
    expect(item).toBe(results[0]);
  });

  it('answers AI SDK tool calls with tool-result parts of a tool message', async () => {
    const w = workspace();
    const tools: ToolSet = aiSdkTools(w.toolset);
    const typed: TypedToolCall<ReturnType<typeof aiSdkTools>> = {
      type: 'tool-call',
      toolCallId: 't_1',
      toolName: 'grep',
      input: { pattern: 'class \\$Zod', path: 'src' },
    };
    const part: ToolCallPart = { type: 'tool-call', toolCallId: 't_2', toolName: 'glob', input: { pattern: '**/*.md' } };
    const first: ToolResultPart = (await w.toolset.dispatch(typed)).reply;
    const second: ToolResultPart = (await w.toolset.dispatch(part)).reply;
    const message: ToolModelMessage = { role: 'tool', content: [first, second] };
    const history: ModelMessage[] = [{ role: 'assistant', content: [part] }, message];
    // @ts-expect-error a tool-result part is not an Anthropic tool_result block.
    const block: Anthropic.Messages.ToolResultBlockParam = first;
    expect(Object.keys(tools)).toEqual(w.toolset.tools.map((t) => t.name));
    expect(first).toMatchObject({ type: 'tool-result', toolCallId: 't_1', toolName: 'grep', output: { type: 'text' } });
    expect(first.output.type === 'text' && first.output.value).toContain('class $ZodRegistry');
    expect(second.output).toMatchObject({ type: 'text', value: expect.stringContaining('README.md') });
    expect(history).toHaveLength(2);
    expect(block).toBe(first);
  });
});
