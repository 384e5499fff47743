/**
 * Patch apply rate on real diffs and their malformed variants: ctxfs's
 * patcher beside GNU patch, `git apply` and jsdiff, on the same inputs.
 *
 * Real diffs come from the history of real projects as published: pairs of
 * consecutive releases of npm packages, downloaded from the registry (cached
 * under ~/.cache/ctxfs-bench/releases), diffed file by file with `git diff`.
 * Each diff is then broken the ways models break them (see
 * packages/context/test/support/patch-variants.ts).
 *
 * Run: `pnpm eval:patch` (writes bench/results/latest-patch-apply-rate.json).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { applyHunks, parsePatch } from '@ctxfs/context';
import { applyPatch as jsdiffApply } from 'diff';
import { isAmbiguous, type PatchCase, type VariantName, variantsOf } from '../../../packages/context/test/support/patch-variants.ts';

/** Consecutive releases with unminified sources. */
const RELEASES: ReadonlyArray<readonly [string, string, string]> = [
  ['webpack', '5.90.0', '5.91.0'],
  ['eslint', '8.56.0', '8.57.0'],
  ['date-fns', '3.3.0', '3.3.1'],
  ['ajv', '8.12.0', '8.13.0'],
  ['undici', '6.6.0', '6.7.0'],
  ['mocha', '10.3.0', '10.4.0'],
  ['postcss', '8.4.35', '8.4.38'],
  ['commander', '11.1.0', '12.0.0'],
  ['yargs', '17.6.2', '17.7.2'],
  ['semver', '7.5.4', '7.6.0'],
  ['ws', '8.16.0', '8.17.0'],
  ['acorn', '8.11.3', '8.12.0'],
  ['marked', '12.0.0', '12.0.2'],
  ['glob', '10.3.10', '10.4.1'],
  ['luxon', '3.4.3', '3.4.4'],
  ['@babel/core', '7.24.0', '7.24.4'],
  ['prettier', '3.2.4', '3.2.5'],
  ['typescript-eslint', '7.0.1', '7.0.2'],
  ['esbuild', '0.20.0', '0.20.1'],
  ['rxjs', '7.8.0', '7.8.1'],
  ['@babel/parser', '7.23.9', '7.24.0'],
  ['eslint', '8.55.0', '8.56.0'],
  ['webpack', '5.89.0', '5.90.0'],
];
const MAX_DIFFS_PER_RELEASE = 80;
const CACHE = join(homedir(), '.cache', 'ctxfs-bench', 'releases');
const work = mkdtempSync(join(tmpdir(), 'ctxfs-patch-eval-'));

function unpack(name: string, version: string): string {
  const dir = join(CACHE, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error(`no tarball for ${name}@${version}`);
  const untar = spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir]);
  if (untar.status !== 0) throw new Error(`cannot unpack ${tgz}`);
  return join(dir, 'package');
}

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|mjs|cjs|ts|md)$/.test(e.name) && statSync(p).size < 200_000) out.push(relative(root, p));
    }
  };
  walk(root);
  return out.sort();
}

function gitDiff(a: string, b: string, context: number): string {
  writeFileSync(join(work, 'a'), a);
  writeFileSync(join(work, 'b'), b);
  return spawnSync('git', ['diff', '--no-index', '--no-color', `-U${context}`, join(work, 'a'), join(work, 'b')], { encoding: 'utf8', maxBuffer: 1 << 28 })
    .stdout;
}

type Outcome = 'correct' | 'wrong' | 'refused';
type Tool = 'ctxfs' | 'gnu-patch' | 'git-apply' | 'jsdiff';

function judge(result: string | undefined, expected: string): Outcome {
  if (result === undefined) return 'refused';
  return result === expected ? 'correct' : 'wrong';
}

function runCtxfs(c: PatchCase): string | undefined {
  const [file] = parsePatch(c.patch);
  if (file === undefined) return undefined;
  const r = applyHunks(c.original, file.hunks);
  return r.ok ? r.text : undefined;
}

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
  let seed = 2026;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const cases: PatchCase[] = [];
  let diffs = 0;
  for (const [name, from, to] of RELEASES) {
    let a: string;
    let b: string;
    try {
      a = unpack(name, from);
      b = unpack(name, to);
    } catch (err) {
      console.error(`skipping ${name}: ${(err as Error).message}`);
      continue;
    }
    const bFiles = new Set(files(b));
    let taken = 0;
    for (const f of files(a)) {
      if (taken >= MAX_DIFFS_PER_RELEASE || !bFiles.has(f)) continue;
      const before = readFileSync(join(a, f), 'utf8');
      const after = readFileSync(join(b, f), 'utf8');
      if (before === after || before.split('\n').some((l) => l.length > 500)) continue;
      const u3 = gitDiff(before, after, 3);
      if (!u3.includes('@@')) continue;
      cases.push(...variantsOf(before, after, u3, gitDiff(before, after, 1), rand));
      taken++;
      diffs++;
    }
  }
  const tools: Record<Tool, (c: PatchCase) => string | undefined> = { ctxfs: runCtxfs, 'gnu-patch': runGnuPatch, 'git-apply': runGitApply, jsdiff: runJsdiff };
  type Tally = Record<Outcome, number>;
  const byTool = new Map<Tool, Tally>();
  const byVariant = new Map<string, Tally>();
  const unambiguous = new Map<Tool, Tally>();
  const ambiguousTally = new Map<Tool, Tally>();
  const empty = (): Tally => ({ correct: 0, wrong: 0, refused: 0 });
  for (const c of cases) {
    const ambiguous = isAmbiguous(c);
    for (const [tool, run] of Object.entries(tools) as Array<[Tool, (c: PatchCase) => string | undefined]>) {
      const outcome = judge(run(c), c.expected);
      const t = byTool.get(tool) ?? empty();
      t[outcome]++;
      byTool.set(tool, t);
      const key = `${tool} ${c.variant}`;
      const v = byVariant.get(key) ?? empty();
      v[outcome]++;
      byVariant.set(key, v);
      const bucket = ambiguous ? ambiguousTally : unambiguous;
      const u = bucket.get(tool) ?? empty();
      u[outcome]++;
      bucket.set(tool, u);
    }
  }
  const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)}%`);
  const rows = [...byTool].map(([tool, t]) => {
    const total = t.correct + t.wrong + t.refused;
    const u = unambiguous.get(tool) ?? empty();
    const a = ambiguousTally.get(tool) ?? empty();
    const uTotal = u.correct + u.wrong + u.refused;
    return {
      tool,
      cases: total,
      correct: pct(t.correct, total),
      wrong: pct(t.wrong, total),
      refused: pct(t.refused, total),
      'correct (unambiguous)': pct(u.correct, uTotal),
      'wrong (ambiguous)': `${a.wrong} of ${a.correct + a.wrong + a.refused}`,
    };
  });
  console.log(`${diffs} real diffs from ${RELEASES.length} release pairs, ${cases.length} cases (${cases.length / Math.max(1, diffs)} variants each)`);
  console.table(rows);
  const variants: VariantName[] = ['original', 'shifted', 'no-numbers', 'whitespace', 'no-headers', 'context-1', 'crlf-file', 'reordered', 'wrong-counts'];
  const perVariant: Record<string, Record<string, string>> = {};
  for (const v of variants) {
    perVariant[v] = {};
    for (const tool of Object.keys(tools)) {
      const t = byVariant.get(`${tool} ${v}`) ?? empty();
      const total = t.correct + t.wrong + t.refused;
      (perVariant[v] as Record<string, string>)[tool] = `${pct(t.correct, total)} ok / ${t.wrong} wrong`;
    }
  }
  console.table(perVariant);
  const results = join(import.meta.dirname, '..', '..', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    join(results, 'latest-patch-apply-rate.json'),
    JSON.stringify(
      {
        diffs,
        cases: cases.length,
        byTool: Object.fromEntries(byTool),
        perVariant,
        unambiguous: Object.fromEntries(unambiguous),
        ambiguous: Object.fromEntries(ambiguousTally),
      },
      null,
      2,
    ),
  );
  rmSync(work, { recursive: true, force: true });
}

main();
