/**
 * An edit of a file over the backend's convenience limit is refused, and
 * the refusal a model gets names only what it can do: read the file in
 * ranges. It also told it to "rewrite it with the protocol's streaming
 * writer (fs.openWrite)", a call of the TypeScript protocol no tool makes
 * (found by the MCP campaign, `replace` on a 40 MB log). A program on the
 * API is still told of the streaming writer.
 */
import { createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';
import { TOOLS, Toolset } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';

const NAMES = callNames(TOOLS);
const BIG = `${'log line with some text\n'.repeat(400)}NEEDLE\n`;

describe('an edit of a file over the convenience limit', () => {
  it('through the tools names tool calls only; through the API the streaming writer too', async () => {
    const fs = new MemoryFilesystem({ files: { 'big.log': BIG }, limits: { maxConvenienceBytes: 4096 } });
    const ctx = await createContext({ fs, safety: { policyFiles: false } });
    try {
      const tools = new Toolset(ctx.session({ agent: 'llm:test', profile: 'small' }));
      for (const [name, args] of [
        ['replace', { path: 'big.log', old_text: 'NEEDLE', new_text: 'FOUND' }],
        ['edit_lines', { path: 'big.log', action: 'replace', start_line: 1, end_line: 1, text: 'x\n' }],
        ['write_file', { path: 'big.log', content: 'small now\n' }],
      ] as const) {
        const r = await tools.run(name, args);
        expect(r.isError, `${name}: ${r.text}`).toBe(true);
        expect(r.text).toMatch(/^ETOOLARGE: /);
        expect(r.text).not.toMatch(/openWrite|streaming writer/);
        const calls = findToolCalls(r.text, NAMES);
        expect(calls.filter((c) => c.kind !== 'call').map((c) => c.source)).toEqual([]);
        expect(calls.map((c) => c.name)).toContain('read_lines');
      }
      const api = await ctx.replace('big.log', 'NEEDLE', 'FOUND');
      expect(api).toMatchObject({ success: false, code: 'ETOOLARGE' });
      expect(api.message).toContain('fs.openWrite');
      expect(new TextDecoder().decode(await fs.readBytes('big.log', { limit: 64 }))).toBe(BIG.slice(0, 64));
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
