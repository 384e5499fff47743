/**
 * The patcher's goals on a pinned slice of the patch eval (`pnpm eval:patch`):
 * real single-file edits between consecutive npm releases, rewritten in every
 * form models write patches in. Downloads the releases from the npm registry
 * on first run (cached under ~/.cache/ctxfs-bench/releases).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { lcg, type PatchCase, scoreCtxfs, VARIANTS, variantsOf } from './support/patch-variants.ts';
import { gitDiff, PATCH_EVAL_RELEASES, releaseEdits } from './support/release-diffs.ts';

// Small packages of the eval's list, a few dozen diffs between them.
const PINNED = ['semver', 'ws', 'luxon', 'commander', 'acorn', 'mocha', 'postcss', 'yargs', 'glob'];
const SLICE = PATCH_EVAL_RELEASES.filter(([name]) => PINNED.includes(name));

const work = mkdtempSync(join(tmpdir(), 'ctxfs-patch-releases-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('applies real release diffs in every form correctly, never wrongly, refusing ambiguity and missing context with the lines named', () => {
  expect(SLICE).toHaveLength(PINNED.length);
  const skipped: string[] = [];
  const edits = releaseEdits(SLICE, 30, (m) => skipped.push(m));
  expect(skipped, 'every pinned release downloads').toEqual([]);
  expect(edits.length).toBeGreaterThanOrEqual(50);
  const rand = lcg(2026);
  const cases: PatchCase[] = edits.flatMap((e) => variantsOf(e.before, e.after, (a, b, context) => gitDiff(work, a, b, context), rand));
  const score = scoreCtxfs(cases);
  console.log(`${edits.length} real diffs, ${cases.length} cases; unambiguous ${score.unambiguousCorrect}/${score.unambiguous}`);
  console.table(score.perVariant);
  expect(Object.keys(score.perVariant).sort()).toEqual([...VARIANTS].sort());
  const failures = score.examples.join('\n');
  expect(score.wrong, failures).toBe(0);
  expect(score.unambiguousCorrect / score.unambiguous, failures).toBeGreaterThanOrEqual(0.995);
  expect(score.ambiguous.correct + score.ambiguous.refusedNamingLines, 'every ambiguous case applied right or refused naming its candidates').toBe(
    score.ambiguous.total,
  );
  expect(score.missingContext.total).toBeGreaterThanOrEqual(50);
  expect(score.missingContext.refusedNamingLines, 'every missing-context case refused naming the closest lines').toBe(score.missingContext.total);
}, 300_000);
