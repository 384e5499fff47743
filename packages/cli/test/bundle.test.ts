import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO, useProject } from './support/cli.ts';

const TRACER = join(import.meta.dirname, 'support', 'trace-modules.ts');
const BUNDLE = join(REPO, 'packages', 'cli', 'dist', 'bundle');

// The bundle rewrites import.meta.url in ctxfs's modules to the compiled file each came
// from (scripts/bundle.ts); these are the parts that find something beside that file.
describe('the bundled ctxfs finds what lives beside the compiled modules', () => {
  const project = useProject();

  function run(args: readonly string[], trace?: string) {
    const env = trace === undefined ? project.env : { ...project.env, CTXFS_TRACE_MODULES: trace };
    const r = spawnSync(process.execPath, [...(trace === undefined ? [] : ['--import', TRACER]), BIN, ...args], { cwd: project.root, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  }

  it('every location a chunk computes from its own URL is a file that exists', () => {
    let located = 0;
    for (const chunk of readdirSync(BUNDLE).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(BUNDLE, chunk), 'utf8');
      for (const m of code.matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)) {
        const target = new URL(m[1] as string, `file://${join(BUNDLE, chunk)}`);
        expect(() => readFileSync(target), `${chunk}: ${m[1]}`).not.toThrow();
        located++;
      }
    }
    // Workers, lazily required libraries, the language tables, the version, tree-sitter's grammars, the tokenizer's ranks.
    expect(located).toBeGreaterThanOrEqual(10);
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
    const trace = join(project.base, 'scan-trace.txt');
    run(['scan'], trace);
    const lines = readFileSync(trace, 'utf8').split('\n');
    expect(lines.filter((l) => l.startsWith('worker:error'))).toEqual([]);
    expect(lines).toContain('worker:online');
  });
});
