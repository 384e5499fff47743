/**
 * Refusals that name a call name one the caller can make: through the tools
 * a tool call, on the command line a command (the CLI's hint writer), never
 * the API's `writeFile("…", content)` or a tool's name where a person types
 * commands. Run in process: the tool set with each surface's writer, as the
 * MCP server and the CLI run it.
 */

import { createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { MODEL_TOOL_CALLS, type ToolCallWriter, Toolset } from '@ctxfs/tools';
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
