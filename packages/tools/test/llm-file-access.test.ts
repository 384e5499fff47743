import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { callJson, llmFileAccess } from '../src/docs/llm-file-access.ts';
import { inputJsonSchema, TOOLS } from '../src/index.ts';

const GUIDE = join(import.meta.dirname, '../../../LLM_FILE_ACCESS.md');

// An independent validator: the calls in the guide are checked against the schemas as published.
const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, validateFormats: false });

/** The calls written in the guide: its JSON blocks that hold `{name, arguments}`. */
function callsIn(markdown: string): Array<{ name: string; arguments: unknown }> {
  const calls: Array<{ name: string; arguments: unknown }> = [];
  for (const [, body] of markdown.matchAll(/^```json\n([\s\S]*?)\n```$/gm)) {
    const value = JSON.parse(body as string) as Record<string, unknown>;
    if (Object.keys(value).join() === 'name,arguments') calls.push(value as { name: string; arguments: unknown });
  }
  return calls;
}

describe('LLM_FILE_ACCESS.md', () => {
  let generated: string;
  let committed: string;
  beforeAll(async () => {
    generated = await llmFileAccess();
    committed = readFileSync(GUIDE, 'utf8');
  }, 60_000);

  it('is what the generator writes from the definitions (to fix: pnpm gen:docs)', () => {
    // Compared line by line first, so a failure names the first line that differs rather than two 100 kB strings.
    const want = generated.split('\n');
    const have = committed.split('\n');
    const first = want.findIndex((line, i) => line !== have[i]);
    expect(first === -1 ? undefined : { line: first + 1, committed: have[first], generated: want[first] }, 'run pnpm gen:docs').toBeUndefined();
    expect(committed, 'run pnpm gen:docs').toBe(generated);
  });

  it('comes out the same on every run: nothing in it depends on the clock or a random id', async () => {
    expect(await llmFileAccess()).toBe(generated);
  }, 60_000);

  it('has a section for every tool, with its description and every argument', () => {
    for (const tool of TOOLS) {
      const start = committed.indexOf(`\n### \`${tool.name}\`\n`);
      expect(start, tool.name).toBeGreaterThan(0);
      const section = committed.slice(start, committed.indexOf('\n### ', start + 1));
      expect(section).toContain(tool.description);
      for (const arg of Object.keys(inputJsonSchema(tool).properties as object)) expect(section, `${tool.name}.${arg}`).toContain(`| \`${arg}\` |`);
    }
  });

  it('writes every example of the definitions as a call, and every call in it is valid for its tool', () => {
    const calls = callsIn(committed);
    const byName = new Map(TOOLS.map((t) => [t.name, t]));
    for (const call of calls) {
      const tool = byName.get(call.name);
      expect(tool, `a call of an unknown tool: ${call.name}`).toBeDefined();
      const check = ajv.compile(inputJsonSchema(tool as (typeof TOOLS)[number]));
      expect(check(call.arguments), `${callJson(call.name, call.arguments)}: ${ajv.errorsText(check.errors)}`).toBe(true);
    }
    const written = new Set(calls.map((c) => callJson(c.name, c.arguments)));
    for (const tool of TOOLS) for (const example of tool.examples) expect(written).toContain(callJson(tool.name, example));
  });

  it('finds calls the way the check above does (a block that is not a call is passed over, a bad one fails)', () => {
    const md = '```json\n{"name":"read_lines","arguments":{"path":"a.ts"}}\n```\n\n```json\n{"tokens": 3}\n```\n';
    const calls = callsIn(md);
    expect(calls).toEqual([{ name: 'read_lines', arguments: { path: 'a.ts' } }]);
    const check = ajv.compile(inputJsonSchema(TOOLS.find((t) => t.name === 'read_lines') as (typeof TOOLS)[number]));
    // start_line is required: the guide's check would catch a call that left it out.
    expect(check(calls[0]?.arguments)).toBe(false);
  });
});
