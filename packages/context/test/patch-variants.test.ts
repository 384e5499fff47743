import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { lcg, type PatchCase, scoreCtxfs, variantsOf } from './support/patch-variants.ts';
import { gitDiff as diffTexts } from './support/release-diffs.ts';

const work = mkdtempSync(join(tmpdir(), 'ctxfs-patch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Real source files nobody here wrote: the installed dependencies. */
function corpus(limit: number): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (out.length >= limit || depth > 7) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (out.length >= limit) return;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (/\.(js|ts|md)$/.test(e.name)) {
        const size = statSync(p).size;
        if (size < 2000 || size > 60_000) continue;
        const text = readFileSync(p, 'utf8');
        if (text.split('\n').some((l) => l.length > 300)) continue; // bundles and minified code
        out.push(p);
      }
    }
  };
  walk(join(import.meta.dirname, '../../../node_modules/.pnpm'), 0);
  return out;
}

const gitDiff = (a: string, b: string, context: number) => diffTexts(work, a, b, context);

it('applies malformed variants of real diffs correctly, never wrongly, and refuses only ambiguity and missing context', () => {
  const rand = lcg(11);
  const files = corpus(120);
  expect(files.length).toBeGreaterThan(40);
  const cases: PatchCase[] = [];
  for (const file of files) {
    const original = readFileSync(file, 'utf8');
    const lines = original.split('\n');
    const edited = [...lines];
    // Lines a model adds take the file's own line ending, as the patcher does.
    const cr = original.includes('\r\n') ? '\r' : '';
    // A few realistic edits spread over the file, bottom-up so indices stay valid.
    const spots = Array.from({ length: 2 + rand(4) }, () => rand(Math.max(1, edited.length - 4))).sort((a, b) => b - a);
    for (const at of spots) {
      const kind = rand(3);
      if (kind === 0) edited.splice(at, 1 + rand(3), `  // rewritten ${rand(1e6)}${cr}`);
      else if (kind === 1) edited.splice(at, 0, ...Array.from({ length: 1 + rand(4) }, (_, k) => `  added(${k}, ${rand(1e6)});${cr}`));
      else edited.splice(at, 1 + rand(3));
    }
    const expected = edited.join('\n');
    if (expected === original) continue;
    cases.push(...variantsOf(original, expected, gitDiff, rand));
  }
  const score = scoreCtxfs(cases);
  console.log(`patch variants: ${cases.length} cases, ${score.unambiguous} unambiguous, ${score.unambiguousCorrect} of them correct`);
  console.table(score.perVariant);
  expect(score.wrong, score.examples.join('\n')).toBe(0);
  expect(score.unambiguousCorrect / score.unambiguous, score.examples.join('\n')).toBeGreaterThanOrEqual(0.995);
  expect(score.ambiguous.correct + score.ambiguous.refusedNamingLines).toBe(score.ambiguous.total);
  expect(score.missingContext.total).toBeGreaterThan(40);
  expect(score.missingContext.refusedNamingLines).toBe(score.missingContext.total);
});
