import { aiSdkTools } from '@ctxfs/tools/ai-sdk';
import { generateText, stepCountIs, type TypedToolResult } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { inputJsonSchema, readLines } from '../src/index.ts';
import { freshWorkspace } from './workspace.ts';

// The test model's own types, so the test needs no package besides `ai`.
type CallOptions = MockLanguageModelV4['doGenerateCalls'][number];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
type Content = GenerateResult['content'][number];

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A model response, as the AI SDK's test model gives it back. */
function turn(content: Content[]): GenerateResult {
  const calls = content.some((c) => c.type === 'tool-call');
  return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' }, usage, warnings: [] };
}

const call = (toolCallId: string, toolName: string, args: unknown): Content => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(args),
});

/** The results of calls of the declared tools (not of unknown or invalid ones), typed as the tools return them. */
function declaredResults(results: readonly TypedToolResult<ReturnType<typeof aiSdkTools>>[]) {
  return results.flatMap((r) => (r.dynamic ? [] : [r]));
}

/** The tool results the model was given in its prompt, by call id. */
function resultsSeen(options: CallOptions | undefined): Map<string, unknown> {
  const seen = new Map<string, unknown>();
  for (const message of options?.prompt ?? []) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') seen.set(part.toolCallId, part.output);
  }
  return seen;
}

describe('AI SDK tools in generateText, with the AI SDK’s own test model', () => {
  const workspace = freshWorkspace();

  it('repairs a call with file_path and numbers as strings, runs it on the session, and gives the model its text', async () => {
    const w = workspace();
    const model = new MockLanguageModelV4({
      doGenerate: [turn([call('call-1', 'read_lines', { file_path: 'src/doc.ts', start_line: '3', end_line: '4' })]), turn([{ type: 'text', text: 'Doc.' }])],
    });
    const result = await generateText({ model, tools: aiSdkTools(w.toolset), stopWhen: stepCountIs(3), prompt: 'Show the class Doc.' });

    const offered = model.doGenerateCalls[0]?.tools?.find((t) => t.name === 'read_lines');
    expect(offered).toMatchObject({ type: 'function', description: readLines.description, inputSchema: inputJsonSchema(readLines) });

    const [step] = result.steps;
    expect(step?.toolCalls.map((c) => c.input)).toEqual([{ path: 'src/doc.ts', start_line: 3, end_line: 4 }]);
    const output = declaredResults(step?.toolResults ?? [])[0]?.output;
    expect(output).toMatchObject({ isError: false, data: { path: 'src/doc.ts', start_line: 3, end_line: 4 } });
    expect(output?.text).toContain('3\texport class Doc {\n4\t  args: string[];\n');
    expect(resultsSeen(model.doGenerateCalls[1]).get('call-1')).toEqual({ type: 'text', value: output?.text });
    expect(result.text).toBe('Doc.');
  });

  it('changes a file through the session with the names models use for the arguments', async () => {
    const w = workspace();
    const model = new MockLanguageModelV4({
      doGenerate: [
        turn([call('call-1', 'read_file', { path: 'src/doc.ts' })]),
        turn([call('call-2', 'replace', { filePath: 'src/doc.ts', old_string: '  indent = 0;\n', new_string: '  indent = 1;\n' })]),
        turn([{ type: 'text', text: 'Changed.' }]),
      ],
    });
    const result = await generateText({ model, tools: aiSdkTools(w.toolset), stopWhen: stepCountIs(5), prompt: 'Start the indent at 1.' });
    expect(result.steps).toHaveLength(3);
    expect(await w.text('src/doc.ts')).toContain('  content: string[] = [];\n  indent = 1;\n');
    const seen = resultsSeen(model.doGenerateCalls[2]).get('call-2');
    expect(seen).toMatchObject({ type: 'text', value: expect.stringContaining('-  indent = 0;\n+  indent = 1;') });
  });

  it('gives the model a refusal of the arguments, and a failure of the tool, as errors', async () => {
    const w = workspace();
    const model = new MockLanguageModelV4({
      doGenerate: [
        turn([call('call-1', 'read_lines', { path: 'src/doc.ts', start_line: 0, end_line: 10 }), call('call-2', 'read_file', { path: 'src/gone.ts' })]),
        turn([{ type: 'text', text: 'Retrying.' }]),
      ],
    });
    const result = await generateText({ model, tools: aiSdkTools(w.toolset), stopWhen: stepCountIs(3), prompt: 'Read the first lines.' });
    const seen = resultsSeen(model.doGenerateCalls[1]);

    const refused = seen.get('call-1') as { type: string; value: string };
    expect(refused.type).toBe('error-text');
    expect(refused.value).toContain('EINVAL: read_lines: lines are 1-based and inclusive, so start_line 0 is not a line');
    expect(refused.value).toContain('read_lines({"path":"src/doc.ts","start_line":1,"end_line":10})');

    expect(seen.get('call-2')).toEqual({ type: 'error-text', value: expect.stringMatching(/^ENOENT: no file at src\/gone\.ts/) });
    // The refused call never ran; the failed one ran and came back as a result that says it failed.
    expect(declaredResults(result.steps[0]?.toolResults ?? []).map((r) => [r.toolCallId, r.output.isError])).toEqual([['call-2', true]]);
    expect(result.steps[0]?.toolResults).toHaveLength(1);
  });
});
