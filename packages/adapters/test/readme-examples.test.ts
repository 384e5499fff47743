/**
 * Every example in the package README runs: each fenced `ts` block that
 * imports a package is written beside the package (so its imports resolve
 * as a user's would) and run with Node, each `console.log(x); // value`
 * turned into an assertion that `x` deep-equals `value` (the comment up to
 * its first ' — ').
 */

import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string).filter((code) => code.includes("from '@ctxfs/"));

describe('README examples', () => {
  it('has one example for each adapter', () => {
    expect(examples).toHaveLength(3);
  });

  examples.forEach((code, i) => {
    it(`example ${i + 1} runs and gives what its comments say`, () => {
      const file = `${root}.readme-example-${i}-${process.pid}.ts`;
      const checked = code.replace(
        /console\.log\((.*)\); \/\/ (.*)$/gm,
        (_, expr: string, said: string) => `assert.deepStrictEqual(${expr}, (${said.split(' — ')[0]}));`,
      );
      expect(checked).not.toContain('console.log(');
      writeFileSync(file, `import assert from 'node:assert/strict';\n${checked}`);
      try {
        const run = spawnSync(process.execPath, ['--conditions=ctxfs-source', file], { encoding: 'utf8', timeout: 60_000 });
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
      } finally {
        rmSync(file, { force: true });
      }
    });
  });
});
