/**
 * Refusals that name a call name one the caller can make: through the tools
 * a tool call, on the command line a command (the CLI's hint writer), never
 * the API's `writeFile("…", content)` or a tool's name where a person types
 * commands. Run in process: the tool set with each surface's writer, as the
 * MCP server and the CLI run it.
 */

import { createContext, replaceText, withCallStyle } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { MODEL_TOOL_CALLS, TOOLS, type ToolCallWriter, Toolset, toolCallStyle } from '@ctxfs/tools';
import { describe, expect, it } from 'vitest';
import { cliToolCalls } from '../src/call-text.ts';

const FILES = {
  'build/out.js': 'console.log(1);\n',
  'lib/view.js': 'export const a = 1;\nexport const b = 2;\n',
  'lib/other.js': 'export const c = 3;\n',
  'dup.txt': 'x = 1;\nx = 1;\n',
};

async function run(writer: ToolCallWriter, tool: string, args: Record<string, unknown>) {
  const fs = new MemoryFilesystem({ files: { ...FILES } });
  const ctx = await createContext({ fs, safety: { policyFiles: false } });
  try {
    await ctx.scan();
    const tools = new Toolset(ctx.session({ agent: 'llm:test', profile: 'small' }), { writer });
    const r = await tools.run(tool, args);
    return { ...r, view: new TextDecoder().decode(await fs.readBytes('lib/view.js')) };
  } finally {
    await ctx.close();
    await fs.close();
  }
}

const CLI = cliToolCalls('ctxfs');
const BINARY = 'diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/logo.png differ\n';

describe('a directory read where a file was meant', () => {
  it('tools: the hint is the list_files call of that directory', async () => {
    const r = await run(MODEL_TOOL_CALLS, 'read_file', { path: 'build' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('list_files({"path":"build"})');
  });

  it('CLI: the hint is the command that lists it', async () => {
    const r = await run(CLI, 'read_file', { path: 'build' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('ctxfs ls build');
    expect(r.text).not.toMatch(/list_files/);
  });
});

describe('a patch with a binary section', () => {
  it('tools: names write_file with the path, not the API', async () => {
    const r = await run(MODEL_TOOL_CALLS, 'apply_patch', { patch: BINARY });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('write_file with your content and {"path":"logo.png"}');
    expect(r.text).not.toContain('writeFile(');
  });

  it('CLI: names the command that writes it', async () => {
    const r = await run(CLI, 'apply_patch', { patch: BINARY });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('ctxfs call write_file with your content and {"path":"logo.png"}');
    expect(r.text).not.toContain('writeFile(');
  });
});

/** A refusal of replaceText as the surface of `writer` words it. */
function replaceRefusal(writer: ToolCallWriter | undefined, search: string, options: Parameters<typeof replaceText>[3]): string {
  const refuse = () => {
    const r = replaceText(FILES['dup.txt'], search, 'x = 2;', options);
    if (r.ok) throw new Error('applied');
    return r.message;
  };
  return writer === undefined ? refuse() : withCallStyle(toolCallStyle(TOOLS, writer), refuse);
}

describe('replace of a text that occurs more than once', () => {
  it('API: the call with the occurrence option', () => {
    const m = replaceRefusal(undefined, 'x = 1;', { path: 'dup.txt' });
    expect(m).toContain('replace("dup.txt", "x = 1;", "x = 2;", {occurrence: "all"})');
    expect(m).not.toMatch(/pass occurrence 'first'/);
  });

  it('tools: the tool call with its occurrence argument, which replaces every one', async () => {
    const m = replaceRefusal(MODEL_TOOL_CALLS, 'x = 1;', { path: 'dup.txt' });
    const call = m.match(/replace\((\{.*?\})\)/)?.[1];
    expect(call, m).toBeDefined();
    const args = JSON.parse(call as string);
    expect(args).toEqual({ path: 'dup.txt', old_text: 'x = 1;', new_text: 'x = 2;', occurrence: 'all' });
    const made = await run(MODEL_TOOL_CALLS, 'replace', args);
    expect(made.isError, made.text).toBe(false);
  });

  it('CLI: a command that, pasted, runs the replace of every one', () => {
    const m = replaceRefusal(CLI, 'x = 1;', { path: 'dup.txt' });
    expect(m).toContain(`ctxfs replace dup.txt 'x = 1;' 'x = 2;' --all`);
  });

  it("through the tool set the refusal names the tools' own argument, not the API's wording", async () => {
    const r = await run(MODEL_TOOL_CALLS, 'replace', { path: 'dup.txt', old_text: 'x = 1;', new_text: 'x = 2;' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('"occurrence":"all"');
    expect(r.text).not.toMatch(/pass occurrence 'first'/);
  });
});

describe('replace with a pattern that is no regular expression', () => {
  it('tools: the call without regex, not "drop regex: true"', () => {
    const m = replaceRefusal(MODEL_TOOL_CALLS, 'x = (1;', { path: 'dup.txt', regex: true, occurrence: 'all' });
    expect(m).not.toContain('regex: true');
    expect(m).toContain('replace({"path":"dup.txt","old_text":"x = (1;","new_text":"x = 2;","occurrence":"all"})');
  });

  it('CLI: the command without the regex', () => {
    const m = replaceRefusal(CLI, 'x = (1;', { path: 'dup.txt', regex: true });
    expect(m).not.toContain('regex: true');
    expect(m).toContain(`ctxfs replace dup.txt 'x = (1;' 'x = 2;'`);
  });

  it('API, no path known: leave out regex', () => {
    expect(replaceRefusal(undefined, 'x = (1;', { regex: true })).toContain('leave out regex');
  });
});

// A path that names nothing, where the error kept the protocol's default hint: `ctxfs diff nope.js` said "check the
// path with list_files or glob", two tool names a person cannot type.
describe('a missing path with the default hint', () => {
  it('tools: the glob call that finds it by name, and the listing', async () => {
    const r = await run(MODEL_TOOL_CALLS, 'get_diff', { path: 'lib/nope.js' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('glob({"pattern":"**/nope.js"})');
    expect(r.text).toContain('list_files({})');
  });

  it('CLI: the commands that find it and list the tree', async () => {
    const r = await run(CLI, 'get_diff', { path: 'lib/nope.js' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`ctxfs call glob '{"pattern":"**/nope.js"}'`);
    expect(r.text).toContain('ctxfs ls');
    expect(r.text).not.toMatch(/list_files|\bglob\b(?! ')/);
  });
});
