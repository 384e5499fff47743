/**
 * `defineTool` builds a schema given as a function when it is first read,
 * once: a process that runs one tool (a CLI command) builds that tool's
 * schemas only. Every surface reads `input` and `output` as schemas, so
 * each must be the same object on every read, and a spread or a schema
 * given as it is must work as before. The shared result shapes the index
 * exports are those tools' output schemas, and `@ctxfs/tools/toolset`
 * (which does not build them as it loads) offers the same tools.
 */

import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { applyPatch, defineTool, editData, findSymbol, READ_ONLY, readFile, searchData, servedData, TOOLS, Toolset } from '../src/index.ts';
import * as toolsetEntry from '../src/toolset.ts';

function counted<T>(build: () => T): { build: () => T; calls: () => number } {
  let n = 0;
  return {
    build: () => {
      n++;
      return build();
    },
    calls: () => n,
  };
}

function echoTool(input: z.ZodObject | (() => z.ZodObject), output: z.ZodObject | (() => z.ZodObject)) {
  return defineTool({
    name: 'echo',
    title: 'Echo',
    description: 'Returns its argument.',
    input,
    output,
    annotations: READ_ONLY,
    approval: 'never',
    api: { op: 'echo', args: ['text'] },
    examples: [{ text: 'hi' }],
    run: async (_session, a) => ({ text: String(a.text), isError: false, data: { text: a.text } }),
  });
}

describe('defineTool', () => {
  test('a schema given as a function is built when first read, once, and is the same object after', () => {
    const input = counted(() => z.object({ text: z.string() }));
    const output = counted(() => z.object({ text: z.string() }));
    const tool = echoTool(input.build, output.build);
    expect([input.calls(), output.calls()]).toEqual([0, 0]);
    const first = tool.input;
    expect(Object.keys(first.shape)).toEqual(['text']);
    expect(tool.input).toBe(first);
    expect([input.calls(), output.calls()]).toEqual([1, 0]);
    expect(tool.output).toBe(tool.output);
    expect(output.calls()).toBe(1);
  });

  test('a schema given as it is stays that schema', () => {
    const input = z.object({ text: z.string() });
    const output = z.object({ text: z.string() });
    const tool = echoTool(input, output);
    expect(tool.input).toBe(input);
    expect(tool.output).toBe(output);
  });

  test('the definition keeps its properties in order, enumerable, and a spread copies the schemas', () => {
    const input = z.object({ text: z.string() });
    const tool = echoTool(
      () => input,
      () => z.object({}),
    );
    expect(Object.keys(tool)).toEqual(['name', 'title', 'description', 'input', 'output', 'annotations', 'approval', 'api', 'examples', 'run']);
    const copy = { ...tool, name: 'echo_again' };
    expect(copy.input).toBe(input);
    expect(Object.getOwnPropertyDescriptor(copy, 'input')?.value).toBe(input);
  });

  test('every tool of the catalog reads its schemas as zod objects, the same on each read', () => {
    for (const tool of TOOLS) {
      expect(tool.input, tool.name).toBeInstanceOf(z.ZodObject);
      expect(tool.output, tool.name).toBeInstanceOf(z.ZodObject);
      expect(tool.input, tool.name).toBe(tool.input);
      expect(tool.output, tool.name).toBe(tool.output);
    }
  });

  test("the shared result shapes the package exports are the tools' output schemas", () => {
    expect(readFile.output).toBe(servedData);
    expect(findSymbol.output).toBe(searchData);
    expect(applyPatch.output).toBe(editData);
  });

  test('@ctxfs/tools/toolset offers the same tool set and tools as the index', () => {
    expect(toolsetEntry.Toolset).toBe(Toolset);
    expect(toolsetEntry.TOOLS).toBe(TOOLS);
    expect(toolsetEntry.readFile).toBe(readFile);
  });

  test('a tool set built from lazily defined tools checks and runs a call', async () => {
    const tool = echoTool(
      () => z.object({ text: z.string() }),
      () => z.object({ text: z.string() }),
    );
    const tools = new Toolset({} as never, { tools: [tool] });
    expect(await tools.run('echo', { text: 'hi' })).toEqual({ text: 'hi', isError: false, data: { text: 'hi' } });
    const refused = await tools.run('echo', { text: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('echo(text)');
  });
});
