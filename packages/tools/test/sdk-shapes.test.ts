import { describe, expect, it } from 'vitest';
import { anthropicTools, inputJsonSchema, openAIChatTools, openAIResponsesTools, READ_TOOLS, readLines, strictJsonSchema, TOOLS } from '../src/index.ts';

describe('OpenAI function tools', () => {
  it('lists every tool for Chat Completions, in strict mode by default', () => {
    const tools = openAIChatTools();
    expect(tools.map((t) => t.function.name)).toEqual(TOOLS.map((t) => t.name));
    for (const [i, t] of tools.entries()) {
      const definition = TOOLS[i] as (typeof TOOLS)[number];
      expect(t).toEqual({
        type: 'function',
        function: { name: definition.name, description: definition.description, parameters: strictJsonSchema(inputJsonSchema(definition)), strict: true },
      });
      expect(t.function.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
  });

  it('lists the same tools, flat, for the Responses API', () => {
    const chat = openAIChatTools(READ_TOOLS);
    const responses = openAIResponsesTools(READ_TOOLS);
    expect(responses).toEqual(chat.map((t) => ({ type: 'function', ...t.function })));
    expect(responses.every((t) => t.parameters.required !== undefined && t.strict)).toBe(true);
  });

  it('sends the tools’ own schemas when strict mode is off', () => {
    const [chat] = openAIChatTools([readLines], { strict: false });
    const [responses] = openAIResponsesTools([readLines], { strict: false });
    expect(chat?.function).toMatchObject({ strict: false, parameters: inputJsonSchema(readLines) });
    expect(responses).toMatchObject({ strict: false, parameters: inputJsonSchema(readLines) });
    expect(chat?.function.parameters.required).toEqual(['path', 'start_line']);
  });

  it('gives each call a fresh schema, so a caller may change it', () => {
    const [a] = openAIChatTools([readLines]);
    (a?.function.parameters.properties as Record<string, unknown>).path = 'changed';
    expect(openAIChatTools([readLines])[0]?.function.parameters.properties).toMatchObject({ path: { type: 'string' } });
  });
});

describe('Anthropic tools', () => {
  it('lists every tool with its own input schema', () => {
    const tools = anthropicTools();
    expect(tools).toHaveLength(TOOLS.length);
    for (const [i, t] of tools.entries()) {
      const definition = TOOLS[i] as (typeof TOOLS)[number];
      expect(t).toEqual({ name: definition.name, description: definition.description, input_schema: inputJsonSchema(definition) });
    }
    expect(anthropicTools([readLines])[0]?.input_schema).toMatchObject({
      type: 'object',
      required: ['path', 'start_line'],
      additionalProperties: false,
      properties: { start_line: { type: 'integer', minimum: 1 } },
    });
  });
});
