/**
 * A real `generateText` tool loop of the AI SDK, driven by its own test
 * model (`MockLanguageModelV4` from `ai/test`), with tools that work through
 * `experimental_sandbox` — the session over a ctxfs workspace.
 */

import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSandboxSession } from '../src/ai-sdk/index.ts';
import { backends, cleanUp, openWorkspace } from './workspaces.ts';

afterAll(cleanUp);

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const call = (id: string, toolName: string, input: unknown): LanguageModelV4GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});

const tools = {
  read_lines: tool({
    description: 'Reads lines of a file.',
    inputSchema: z.object({ path: z.string(), startLine: z.number().optional(), endLine: z.number().optional() }),
    execute: async (input, { experimental_sandbox: sandbox }) => (await sandbox?.readTextFile(input)) ?? 'missing',
  }),
  write_file: tool({
    description: 'Writes a whole file.',
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async (input, { experimental_sandbox: sandbox }) => {
      await sandbox?.writeTextFile(input);
      return 'written';
    },
  }),
};

for (const backend of await backends()) {
  describe(`generateText over the session on ${backend}`, { timeout: 60_000 }, () => {
    it('the model reads, writes, reads back, and hits a refusal it can see', async () => {
      const ws = await openWorkspace(backend, { 'src/config.ts': 'export const retries = 3;\nexport const timeout = 10;\n' });
      try {
        const sandbox = createSandboxSession({ context: ws.context });
        const model = new MockLanguageModelV4({
          doGenerate: [
            call('c1', 'read_lines', { path: 'src/config.ts', startLine: 1, endLine: 1 }),
            call('c2', 'write_file', { path: '/workspace/src/config.ts', content: 'export const retries = 5;\nexport const timeout = 10;\n' }),
            call('c3', 'read_lines', { path: 'src/config.ts', startLine: 1, endLine: 1 }),
            call('c4', 'read_lines', { path: '../../etc/passwd' }),
            { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
          ],
        });
        const result = await generateText({ model, tools, experimental_sandbox: sandbox, stopWhen: isStepCount(10), prompt: 'raise retries to 5' });
        expect(result.text).toBe('done');
        const outputs = result.steps.flatMap((s) => s.content).filter((p) => p.type === 'tool-result' || p.type === 'tool-error');
        expect(outputs.map((p) => (p.type === 'tool-result' ? p.output : String((p as { error: unknown }).error)))).toEqual([
          'export const retries = 3;',
          'written',
          'export const retries = 5;',
          expect.stringContaining('EPATHESCAPE'),
        ]);
        expect(new TextDecoder().decode(await ws.fs.readBytes('src/config.ts'))).toBe('export const retries = 5;\nexport const timeout = 10;\n');
        // The model's write is a version like any other: undo brings the file back.
        expect((await ws.context.undo('src/config.ts')).success).toBe(true);
        expect(new TextDecoder().decode(await ws.fs.readBytes('src/config.ts'))).toContain('retries = 3');
        // The model saw the session's description in no tool; it is there for instructions.
        expect(sandbox.description).toContain('/workspace');
      } finally {
        await ws.close();
      }
    });
  });
}
