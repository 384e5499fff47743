/**
 * Patch apply rate on real diffs and their malformed variants: ctxfs's
 * patcher beside GNU patch, `git apply` and jsdiff, on the same inputs.
 *
 * Real diffs come from the history of real projects as published: pairs of
 * consecutive releases of npm packages, downloaded from the registry (cached
 * under ~/.cache/ctxfs-bench/releases), diffed file by file with `git diff`.
 * Each diff is then rewritten the ways models write patches (see
 * packages/context/test/support/patch-variants.ts): wrong numbers, every
 * number-less header form, missing counts, whitespace drift, no file
 * headers, one line of context, CRLF files, a CRLF→LF conversion, hunks out
 * of order, wrong counts, the `*** Begin Patch` envelope, a code fence — and
 * a variant whose context is not in the file, which must be refused.
 *
 * Run: `pnpm eval:patch` (writes bench/results/latest-patch-apply-rate.json).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch as jsdiffApply } from 'diff';
import {
  isAmbiguous,
  judge,
  lcg,
  type Outcome,
  type PatchCase,
  runCtxfs,
  scoreCtxfs,
  VARIANTS,
  variantsOf,
} from '../../../packages/context/test/support/patch-variants.ts';
import { gitDiff, PATCH_EVAL_RELEASES as RELEASES, releaseEdits } from '../../../packages/context/test/support/release-diffs.ts';

const MAX_DIFFS_PER_RELEASE = 80;
const work = mkdtempSync(join(tmpdir(), 'ctxfs-patch-eval-'));

type Tool = 'ctxfs' | 'gnu-patch' | 'git-apply' | 'jsdiff';

function runGnuPatch(c: PatchCase): string | undefined {
  const target = join(work, 'target');
  const out = join(work, 'out');
  writeFileSync(target, c.original);
  rmSync(out, { force: true });
  writeFileSync(join(work, 'p.diff'), c.patch);
  // Defaults (fuzz 2), naming the file so missing headers are no obstacle.
  const r = spawnSync('patch', ['--batch', '--silent', '--force', '--no-backup-if-mismatch', '-r', '-', '-o', out, target, '-i', join(work, 'p.diff')], {
    encoding: 'utf8',
  });
  return r.status === 0 && existsSync(out) ? readFileSync(out, 'utf8') : undefined;
}

function runGitApply(c: PatchCase): string | undefined {
  const repo = join(work, 'git');
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo);
  writeFileSync(join(repo, 'f'), c.original);
  // git apply needs the file named in the headers; point them at `f`.
  const patch = c.patch
    .replace(/^diff --git .*$/m, 'diff --git a/f b/f')
    .replace(/^--- .*$/m, '--- a/f')
    .replace(/^\+\+\+ .*$/m, '+++ b/f');
  writeFileSync(join(work, 'g.diff'), patch);
  // Its lenient settings: recount hunk lines, ignore whitespace in context.
  const r = spawnSync('git', ['apply', '--recount', '--ignore-whitespace', '--unsafe-paths', join(work, 'g.diff')], { cwd: repo, encoding: 'utf8' });
  return r.status === 0 ? readFileSync(join(repo, 'f'), 'utf8') : undefined;
}

function runJsdiff(c: PatchCase): string | undefined {
  try {
    const r = jsdiffApply(c.original, c.patch, { fuzzFactor: 2, autoConvertLineEndings: true });
    return r === false ? undefined : r;
  } catch {
    return undefined;
  }
}

function main(): void {
  const rand = lcg(2026);
  const cases: PatchCase[] = [];
  let diffs = 0;
  for (const edit of releaseEdits(RELEASES, MAX_DIFFS_PER_RELEASE, console.error)) {
    const variants = variantsOf(edit.before, edit.after, (a, b, context) => gitDiff(work, a, b, context), rand);
    if (variants.length === 0) continue;
    cases.push(...variants);
    diffs++;
  }
  const tools: Record<Tool, (c: PatchCase) => string | undefined> = {
    ctxfs: (c) => runCtxfs(c).text,
    'gnu-patch': runGnuPatch,
    'git-apply': runGitApply,
    jsdiff: runJsdiff,
  };
  type Tally = Record<Outcome, number>;
  const empty = (): Tally => ({ correct: 0, wrong: 0, refused: 0 });
  const byVariant = new Map<string, Tally>();
  // Per tool: cases that should apply (ambiguous or not) and cases that must be refused.
  const buckets = new Map<string, Tally>();
  const count = (map: Map<string, Tally>, key: string, outcome: Outcome) => {
    const t = map.get(key) ?? empty();
    t[outcome]++;
    map.set(key, t);
  };
  for (const c of cases) {
    const bucket = c.expected === undefined ? 'must-refuse' : isAmbiguous(c) ? 'ambiguous' : 'unambiguous';
    for (const [tool, run] of Object.entries(tools)) {
      const outcome = judge(run(c), c);
      count(byVariant, `${tool} ${c.variant}`, outcome);
      count(buckets, `${tool} ${bucket}`, outcome);
      count(buckets, `${tool} all`, outcome);
    }
  }
  const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(2)}%`);
  const total = (t: Tally) => t.correct + t.wrong + t.refused;
  const rows = Object.keys(tools).map((tool) => {
    const all = buckets.get(`${tool} all`) ?? empty();
    const u = buckets.get(`${tool} unambiguous`) ?? empty();
    const a = buckets.get(`${tool} ambiguous`) ?? empty();
    const m = buckets.get(`${tool} must-refuse`) ?? empty();
    return {
      tool,
      cases: total(all),
      'correct (unambiguous)': `${u.correct} of ${total(u)} (${pct(u.correct, total(u))})`,
      wrong: all.wrong,
      'ambiguous: correct / wrong / refused': `${a.correct} / ${a.wrong} / ${a.refused}`,
      'missing context: refused / applied': `${m.correct} / ${m.wrong}`,
    };
  });
  console.log(`${diffs} real diffs from ${RELEASES.length} release pairs, ${cases.length} cases (${VARIANTS.length} variants)`);
  console.table(rows);
  const perVariant: Record<string, Record<string, string>> = {};
  for (const v of VARIANTS) {
    const row: Record<string, string> = {};
    for (const tool of Object.keys(tools)) {
      const t = byVariant.get(`${tool} ${v}`) ?? empty();
      row[tool] = v === 'missing-context' ? `${pct(t.correct, total(t))} refused / ${t.wrong} applied` : `${pct(t.correct, total(t))} ok / ${t.wrong} wrong`;
    }
    perVariant[v] = row;
  }
  console.table(perVariant);
  const score = scoreCtxfs(cases);
  const goals = {
    'applied correctly (unambiguous, goal >= 99.5%)': `${score.unambiguousCorrect} of ${score.unambiguous} (${pct(score.unambiguousCorrect, score.unambiguous)})`,
    'wrong results (goal 0)': score.wrong,
    'ambiguous: correct, or refused naming every candidate line': `${score.ambiguous.correct} + ${score.ambiguous.refusedNamingLines} of ${score.ambiguous.total}`,
    'missing context: refused naming the closest lines': `${score.missingContext.refusedNamingLines} of ${score.missingContext.total}`,
  };
  console.table(goals);
  for (const e of score.examples) console.log(`  not correct: ${e}`);
  const results = join(import.meta.dirname, '..', '..', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    join(results, 'latest-patch-apply-rate.json'),
    JSON.stringify({ diffs, cases: cases.length, byTool: Object.fromEntries(buckets), perVariant, ctxfsGoals: goals }, null, 2),
  );
  rmSync(work, { recursive: true, force: true });
}

main();
