/**
 * Malformed variants of a real unified diff, the way models and hand edits
 * break them: shifted line numbers, every number-less header form (`@@ @@`,
 * `@@ ... @@`, `@@ <function>`), missing counts, the old side alone,
 * whitespace drift in context (trailing and indentation), missing file headers, one line of context,
 * CRLF files with LF patches, a CRLF→LF conversion, hunks out of order,
 * wrong hunk counts, the `*** Begin Patch` envelope, a code fence around the
 * patch — and one that must be refused: a context line that is not in the
 * file. Also how ctxfs's outcome on a case is judged.
 */

import { applyHunks, type HunkFailure } from '../../src/patch/apply-hunks.ts';
import { parsePatch } from '../../src/patch/parse-patch.ts';

export const VARIANTS = [
  'original',
  'shifted',
  'no-numbers',
  'ellipsis',
  'funcname-only',
  'no-counts',
  'old-side-only',
  'whitespace',
  'no-headers',
  'context-1',
  'crlf-file',
  'crlf-to-lf',
  'reordered',
  'wrong-counts',
  'envelope',
  'fenced',
  'missing-context',
] as const;

export type VariantName = (typeof VARIANTS)[number];

export interface PatchCase {
  readonly variant: VariantName;
  readonly original: string;
  /** The text a correct application gives; `undefined` when the only right outcome is a refusal. */
  readonly expected: string | undefined;
  readonly patch: string;
  /** Whether the variant still carries trustworthy line numbers. */
  readonly numbersReliable: boolean;
}

/** `git diff` of two texts with `context` lines of context. */
export type Differ = (a: string, b: string, context: number) => string;

/** A deterministic random source: `rand(n)` is in 0..n-1. */
export function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    // Math.imul keeps the product exact; the high bits are the random ones.
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return Math.floor((s / 0x80000000) * n);
  };
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

/** Git's function name after the header, with its leading space; empty when there is none. */
const funcname = (m: RegExpExecArray) => (m[5] ? ` ${m[5]}` : '');

function mapHeaders(patch: string, fn: (m: RegExpExecArray) => string): string {
  return patch
    .split('\n')
    .map((l) => {
      const m = HEADER.exec(l);
      return m ? fn(m) : l;
    })
    .join('\n');
}

function splitHunks(patch: string): { head: string[]; hunks: string[][] } {
  const head: string[] = [];
  const hunks: string[][] = [];
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('@@')) hunks.push([line]);
    else if (hunks.length === 0) head.push(line);
    else (hunks[hunks.length - 1] as string[]).push(line);
  }
  return { head, hunks };
}

/** The `*** Begin Patch` form of a one-file diff, anchored by git's function names, `*** End of File` where a hunk reaches it. */
function envelopeOf(original: string, patch: string): string {
  const oldLines = original.split('\n').length - (original.endsWith('\n') ? 1 : 0);
  const out = ['*** Begin Patch', '*** Update File: f'];
  for (const [header, ...body] of splitHunks(patch).hunks) {
    const m = HEADER.exec(header as string);
    out.push(m ? `@@${funcname(m)}` : '@@', ...body);
    if (m && Number(m[1]) + Number(m[2] ?? '1') - 1 >= oldLines) out.push('*** End of File');
  }
  out.push('*** End Patch', '');
  return out.join('\n');
}

/** The patch with one context line changed to text the file does not have; `undefined` when no hunk has a usable one. */
function staleContext(original: string, patch: string, rand: (n: number) => number): string | undefined {
  const fold = (s: string) => s.replace(/\s+/g, ' ').trim();
  const lines = patch.split('\n');
  const context = lines.flatMap((l, i) => (l.startsWith(' ') && fold(l) !== '' ? [i] : []));
  if (context.length === 0) return undefined;
  const at = context[rand(context.length)] as number;
  const stale = `${(lines[at] as string).replace(/\r$/, '')} /* stale */`;
  const known = new Set(original.split('\n').map(fold));
  if (known.has(fold(stale.slice(1)))) return undefined;
  lines[at] = stale;
  return lines.join('\n');
}

/** Builds every variant of one real edit (`original` → `expected`), diffs made by `diff`. */
export function variantsOf(original: string, expected: string, diff: Differ, rand: (n: number) => number): PatchCase[] {
  const patch = diff(original, expected, 3);
  if (!patch.includes('\n@@ ')) return []; // git saw binary content
  const shift = 5 + rand(40);
  const toCrlf = (s: string) => s.replace(/\r?\n/g, '\r\n');
  const same = { original, expected };
  const cases: PatchCase[] = [
    { variant: 'original', ...same, patch, numbersReliable: true },
    {
      variant: 'shifted',
      ...same,
      patch: mapHeaders(
        patch,
        (m) =>
          `@@ -${Number(m[1]) + shift}${m[2] === undefined ? '' : `,${m[2]}`} +${Number(m[3]) + shift}${m[4] === undefined ? '' : `,${m[4]}`} @@${funcname(m)}`,
      ),
      numbersReliable: false,
    },
    { variant: 'no-numbers', ...same, patch: mapHeaders(patch, () => '@@ @@'), numbersReliable: false },
    { variant: 'ellipsis', ...same, patch: mapHeaders(patch, () => '@@ ... @@'), numbersReliable: false },
    { variant: 'funcname-only', ...same, patch: mapHeaders(patch, (m) => `@@${funcname(m)}`), numbersReliable: false },
    { variant: 'no-counts', ...same, patch: mapHeaders(patch, (m) => `@@ -${m[1]} +${m[3]} @@`), numbersReliable: true },
    { variant: 'old-side-only', ...same, patch: mapHeaders(patch, (m) => `@@ -${m[1]},${m[2] ?? '1'} @@`), numbersReliable: true },
    {
      variant: 'whitespace',
      ...same,
      // Trailing spaces, a trailing tab, or indentation redone (tabs as spaces, two more), line by line.
      patch: patch
        .split('\n')
        .map((l, i) => {
          if (!l.startsWith(' ') || l.trim() === '') return l;
          if (i % 3 === 0) return `${l}  `;
          if (i % 3 === 1) return `${l}\t`;
          return ` ${l.slice(1).replace(/^\s*/, (ws) => `${ws.replace(/\t/g, '    ')}  `)}`;
        })
        .join('\n'),
      numbersReliable: true,
    },
    {
      variant: 'no-headers',
      ...same,
      patch: patch
        .split('\n')
        .filter((l) => !/^(diff --git |index |--- |\+\+\+ |new file mode|deleted file mode)/.test(l))
        .join('\n'),
      numbersReliable: true,
    },
    { variant: 'context-1', ...same, patch: diff(original, expected, 1), numbersReliable: true },
    { variant: 'crlf-file', original: toCrlf(original), expected: toCrlf(expected), patch, numbersReliable: true },
    // git's own diff of a CRLF file made LF: removed lines carry \r, added ones do not.
    { variant: 'crlf-to-lf', original: toCrlf(original), expected, patch: diff(toCrlf(original), expected, 3), numbersReliable: true },
    {
      variant: 'reordered',
      ...same,
      patch: (() => {
        const { head, hunks } = splitHunks(patch);
        return `${[...head, ...hunks.reverse().flat()].join('\n')}\n`;
      })(),
      numbersReliable: true,
    },
    {
      variant: 'wrong-counts',
      ...same,
      patch: mapHeaders(patch, (m) => `@@ -${m[1]},${1 + rand(30)} +${m[3]},${1 + rand(30)} @@${funcname(m)}`),
      numbersReliable: true,
    },
    { variant: 'envelope', ...same, patch: envelopeOf(original, patch), numbersReliable: false },
    { variant: 'fenced', ...same, patch: `\`\`\`diff\n${patch}\`\`\`\n`, numbersReliable: true },
  ];
  const stale = staleContext(original, patch, rand);
  if (stale !== undefined) cases.push({ variant: 'missing-context', original, expected: undefined, patch: stale, numbersReliable: true });
  return cases;
}

function countOccurrences(lines: readonly string[], block: readonly string[]): number {
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  const file = lines.map(norm);
  const want = block.map(norm);
  let n = 0;
  for (let s = 0; s + want.length <= file.length; s++) {
    let ok = true;
    for (let i = 0; i < want.length && ok; i++) ok = file[s + i] === want[i];
    if (ok) n++;
  }
  return n;
}

/**
 * A case no tool can place for sure: its line numbers cannot be trusted and
 * some hunk's old text (whitespace folded) occurs other than exactly once.
 */
export function isAmbiguous(c: PatchCase): boolean {
  if (c.numbersReliable || c.expected === undefined) return false;
  const [file] = parsePatch(c.patch);
  if (file === undefined) return false;
  const lines = c.original.split('\n').map((l) => l.replace(/\r$/, ''));
  return file.hunks.some(
    (h) =>
      countOccurrences(
        lines,
        h.lines.filter((l) => l.op !== '+').map((l) => l.text),
      ) !== 1,
  );
}

export type Outcome = 'correct' | 'wrong' | 'refused';

/** Judges a tool's result: `undefined` is a refusal, right only where the case wants one. */
export function judge(result: string | undefined, c: PatchCase): Outcome {
  if (c.expected === undefined) return result === undefined ? 'correct' : 'wrong';
  if (result === undefined) return 'refused';
  return result === c.expected ? 'correct' : 'wrong';
}

/** ctxfs's parser and engine on one case: the text, or the refused hunks. */
export function runCtxfs(c: PatchCase): { text: string | undefined; failures: readonly HunkFailure[] } {
  const [file] = parsePatch(c.patch);
  if (file === undefined) return { text: undefined, failures: [] };
  const r = applyHunks(c.original, file.hunks, { ordered: file.format === 'envelope' });
  return r.ok ? { text: r.text, failures: [] } : { text: undefined, failures: r.failures };
}

/** Whether a refusal names where to look: every place an ambiguous hunk matches, or the closest region of one that matches nowhere. */
export function refusalNamesLines(failures: readonly HunkFailure[]): boolean {
  return (
    failures.length > 0 &&
    failures.every(
      (f) => (f.reason === 'ambiguous' && f.matches.length >= 2) || (f.reason === 'not-found' && f.closest !== undefined && f.closest.lines.length > 0),
    )
  );
}

/** Tallies of ctxfs's outcomes against the goals. */
export interface CtxfsScore {
  readonly perVariant: Record<string, Record<Outcome, number>>;
  /** Cases that should apply and are not ambiguous. */
  readonly unambiguous: number;
  readonly unambiguousCorrect: number;
  readonly wrong: number;
  readonly ambiguous: { readonly total: number; readonly correct: number; readonly refusedNamingLines: number };
  readonly missingContext: { readonly total: number; readonly refusedNamingLines: number };
  /** A few failing cases, for the message of a failed goal. */
  readonly examples: string[];
}

/** Runs ctxfs on every case and scores it. */
export function scoreCtxfs(cases: readonly PatchCase[]): CtxfsScore {
  const perVariant: Record<string, Record<Outcome, number>> = {};
  let unambiguous = 0;
  let unambiguousCorrect = 0;
  let wrong = 0;
  const ambiguous = { total: 0, correct: 0, refusedNamingLines: 0 };
  const missingContext = { total: 0, refusedNamingLines: 0 };
  const examples: string[] = [];
  for (const c of cases) {
    const r = runCtxfs(c);
    const outcome = judge(r.text, c);
    const t = perVariant[c.variant] ?? { correct: 0, wrong: 0, refused: 0 };
    perVariant[c.variant] = t;
    t[outcome]++;
    if (outcome === 'wrong') wrong++;
    const named = r.text === undefined && refusalNamesLines(r.failures);
    if (c.expected === undefined) {
      missingContext.total++;
      if (named) missingContext.refusedNamingLines++;
    } else if (isAmbiguous(c)) {
      ambiguous.total++;
      if (outcome === 'correct') ambiguous.correct++;
      else if (named) ambiguous.refusedNamingLines++;
    } else {
      unambiguous++;
      if (outcome === 'correct') unambiguousCorrect++;
    }
    if (outcome !== 'correct' && !(outcome === 'refused' && named && isAmbiguous(c)) && examples.length < 5) {
      examples.push(`${c.variant}: ${outcome}; ${r.failures[0]?.message.split('\n')[0] ?? ''}`);
    }
  }
  return { perVariant, unambiguous, unambiguousCorrect, wrong, ambiguous, missingContext, examples };
}
