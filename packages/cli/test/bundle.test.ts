import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { ctxfs, REPO, traced, useProject } from './support/cli.ts';

const BUNDLE = join(REPO, 'packages', 'cli', 'dist', 'bundle');
const MCP_BIN = join(REPO, 'packages', 'mcp', 'dist', 'bundle', 'ctxfs-mcp.js');

// The bundle rewrites import.meta.url in ctxfs's modules to the compiled file each came
// from (scripts/bundle-bins.ts); these are the parts that find something beside that file.
describe('the bundled ctxfs finds what lives beside the compiled modules', () => {
  const project = useProject();

  function run(args: readonly string[]) {
    const r = ctxfs(project, args);
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  }

  it('every location a chunk of either bundle computes from its own URL is a file that exists', () => {
    for (const bundle of [BUNDLE, join(MCP_BIN, '..')]) {
      let located = 0;
      for (const chunk of readdirSync(bundle).filter((f) => f.endsWith('.js'))) {
        const code = readFileSync(join(bundle, chunk), 'utf8');
        for (const m of code.matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)) {
          const target = new URL(m[1] as string, `file://${join(bundle, chunk)}`);
          expect(() => readFileSync(target), `${chunk}: ${m[1]}`).not.toThrow();
          located++;
        }
      }
      // Workers, lazily required libraries, the language tables, tree-sitter's grammars, the tokenizer's ranks.
      expect(located, bundle).toBeGreaterThanOrEqual(10);
    }
  });

  it('the bundled ctxfs-mcp serves the SDK client: a read counted by the tokenizer, an outline by tree-sitter', { timeout: 60_000 }, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN, '--root', project.root],
      cwd: project.root,
      env: project.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'bundle-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'src/math.ts' } });
      expect(read.isError, JSON.stringify(read.content)).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain('export function add');
      const outline = await client.callTool({ name: 'get_outline', arguments: { path: 'src/math.ts' } });
      expect(outline.isError, JSON.stringify(outline.content)).toBeFalsy();
      expect(JSON.stringify(outline.content)).toMatch(/add/);
    } finally {
      await client.close();
    }
  });

  it('--version is the package version', () => {
    const { version } = JSON.parse(readFileSync(join(REPO, 'packages', 'cli', 'package.json'), 'utf8')) as { version: string };
    expect(run(['--version']).trim()).toBe(version);
  });

  it('a Shift_JIS file is detected and served as its text (the legacy detectors and language tables load from their files)', () => {
    const text = 'こんにちは、世界。日本語のテキストです。\n設定ファイルを読み込みます。\n';
    const sjis = spawnSync('iconv', ['-f', 'UTF-8', '-t', 'SHIFT_JIS'], { input: text });
    expect(sjis.status).toBe(0);
    writeFileSync(join(project.root, 'legacy.txt'), sjis.stdout);
    expect(run(['cat', 'legacy.txt'])).toContain('設定ファイルを読み込みます。');
  });

  it('an outline comes from tree-sitter, whose runtime and grammars load from their packages', () => {
    expect(run(['outline', 'src/math.ts'])).toMatch(/add/);
  });

  it("a scan of many files hashes them in worker threads, started from the host package's worker file", () => {
    for (let i = 0; i < 100; i++) project.write(`many/f${i}.txt`, `file ${i}\n`.repeat(50));
    const { lines } = traced(project, ['scan']);
    expect(lines.filter((l) => l.startsWith('worker:error'))).toEqual([]);
    expect(lines).toContain('worker:online');
  });
});
