/**
 * The tool list the server answers `tools/list` with is committed JSON (so
 * it can answer before the tool set loads); it must be exactly what the
 * definitions generate.
 */

import { readFileSync } from 'node:fs';
import { READ_TOOLS, TOOLS } from '@ctxfs/tools';
import { expect, test } from 'vitest';
import { toolList } from '../src/tool-list/tool-list.ts';
import { toolListJson } from '../src/tool-list/write-tool-list.ts';

test('the committed tool list is the one the definitions generate (run `pnpm gen:docs` after changing a definition)', async () => {
  const committed = readFileSync(new URL('../src/tool-list/tools.json', import.meta.url), 'utf8');
  expect(committed).toBe(await toolListJson());
  const entries = JSON.parse(committed) as Array<{ name: string; annotations: { readOnlyHint: boolean } }>;
  expect(entries.map((e) => e.name)).toEqual(TOOLS.map((t) => t.name));
  // The read-only server filters the committed list by annotation: the same set as READ_TOOLS.
  expect(entries.filter((e) => e.annotations.readOnlyHint).map((e) => e.name)).toEqual((await toolList(READ_TOOLS)).map((e) => e.name));
});

test('tools of one result shape share its output schema $id, other shapes have other ids, and the SDK client compiles each shape once', async () => {
  const entries = await toolList(TOOLS);
  const byId = new Map<string, string>();
  for (const e of entries) {
    const { $id, ...shape } = e.outputSchema;
    const text = JSON.stringify(shape);
    expect(byId.get($id) ?? text, `${e.name}: ${$id}`).toBe(text);
    byId.set($id, text);
  }
  expect(new Set([...byId.values()]).size).toBe(byId.size);
  // Fewer shapes than tools: the edit tools share one (the point of the id).
  expect(byId.size).toBeLessThan(entries.length - 5);
  const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv');
  const validator = new AjvJsonSchemaValidator();
  for (const e of entries) validator.getValidator(JSON.parse(JSON.stringify(e.outputSchema)));
  const replace = entries.find((e) => e.name === 'replace');
  const check = validator.getValidator(JSON.parse(JSON.stringify(replace?.outputSchema)));
  expect(check({}).valid).toBe(false);
});

test('the README counts the tools the server lists, and the ones a read-only server keeps', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const m = /all (\d+) tools \(`--read-only`: the (\d+) that only read\)/.exec(readme);
  expect(m, 'the README names the tool counts').not.toBeNull();
  expect([Number(m?.[1]), Number(m?.[2])]).toEqual([TOOLS.length, READ_TOOLS.length]);
});
