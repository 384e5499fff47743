import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { applyHunks } from '../src/patch/apply-hunks.ts';
import { parsePatch } from '../src/patch/parse-patch.ts';
import { isAmbiguous, type PatchCase, type VariantName, variantsOf } from './support/patch-variants.ts';

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

function gitDiff(a: string, b: string, context: number): string {
  writeFileSync(join(work, 'a'), a);
  writeFileSync(join(work, 'b'), b);
  const r = spawnSync('git', ['diff', '--no-index', '--no-color', `-U${context}`, join(work, 'a'), join(work, 'b')], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return r.stdout;
}

it('applies malformed variants of real diffs correctly, never wrongly, and refuses only ambiguity', () => {
  let seed = 11;
  const rand = (n: number) => {
    // Math.imul keeps the product exact; the high bits are the random ones.
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return Math.floor((seed / 0x80000000) * n);
  };
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
    cases.push(...variantsOf(original, expected, gitDiff(original, expected, 3), gitDiff(original, expected, 1), rand));
  }
  const tally = new Map<VariantName, { correct: number; wrong: number; refused: number; ambiguous: number }>();
  let unambiguous = 0;
  let unambiguousCorrect = 0;
  for (const c of cases) {
    const [file] = parsePatch(c.patch);
    expect(file, c.variant).toBeDefined();
    if (file === undefined) continue;
    const ambiguous = isAmbiguous(c);
    const result = applyHunks(c.original, file.hunks);
    const t = tally.get(c.variant) ?? { correct: 0, wrong: 0, refused: 0, ambiguous: 0 };
    if (ambiguous) t.ambiguous++;
    if (result.ok && result.text === c.expected) t.correct++;
    else if (result.ok) t.wrong++;
    else {
      t.refused++;
      // Every refusal says where: the matching places or the closest region.
      for (const f of result.failures) expect(f.matches.length > 0 || f.closest !== undefined, f.message).toBe(true);
    }
    tally.set(c.variant, t);
    if (!ambiguous) {
      unambiguous++;
      if (result.ok && result.text === c.expected) unambiguousCorrect++;
    }
  }
  console.log(`patch variants: ${cases.length} cases, ${unambiguous} unambiguous, ${unambiguousCorrect} of them correct`);
  console.table(Object.fromEntries(tally));
  const wrong = [...tally.values()].reduce((n, t) => n + t.wrong, 0);
  expect(wrong).toBe(0);
  expect(unambiguousCorrect / unambiguous).toBeGreaterThanOrEqual(0.99);
});
