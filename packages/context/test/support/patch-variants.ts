/**
 * Malformed variants of a unified diff, the way models and hand edits break
 * them: shifted line numbers, number-less `@@ @@` headers, whitespace drift
 * in context, missing file headers, one line of context, CRLF files with LF
 * patches, hunks out of order, wrong hunk counts.
 */

import { parsePatch } from '../../src/patch/parse-patch.ts';

export type VariantName = 'original' | 'shifted' | 'no-numbers' | 'whitespace' | 'no-headers' | 'context-1' | 'crlf-file' | 'reordered' | 'wrong-counts';

export interface PatchCase {
  readonly variant: VariantName;
  readonly original: string;
  readonly expected: string;
  readonly patch: string;
  /** Whether the variant still carries trustworthy line numbers. */
  readonly numbersReliable: boolean;
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;

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
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) hunks.push([line]);
    else if (hunks.length === 0) head.push(line);
    else (hunks[hunks.length - 1] as string[]).push(line);
  }
  return { head, hunks };
}

/** Builds every variant of one diff; `patchU1` is the same diff made with one line of context. */
export function variantsOf(original: string, expected: string, patch: string, patchU1: string, rand: (n: number) => number): PatchCase[] {
  const shift = 5 + rand(40);
  const cases: PatchCase[] = [
    { variant: 'original', original, expected, patch, numbersReliable: true },
    {
      variant: 'shifted',
      original,
      expected,
      patch: mapHeaders(
        patch,
        (m) => `@@ -${Number(m[1]) + shift}${m[2] === undefined ? '' : `,${m[2]}`} +${Number(m[3]) + shift}${m[4] === undefined ? '' : `,${m[4]}`} @@${m[5]}`,
      ),
      numbersReliable: false,
    },
    { variant: 'no-numbers', original, expected, patch: mapHeaders(patch, () => '@@ @@'), numbersReliable: false },
    {
      variant: 'whitespace',
      original,
      expected,
      patch: patch
        .split('\n')
        .map((l, i) => (l.startsWith(' ') && l.trim() !== '' ? `${l}${i % 2 === 0 ? '  ' : '\t'}` : l))
        .join('\n'),
      numbersReliable: true,
    },
    {
      variant: 'no-headers',
      original,
      expected,
      patch: patch
        .split('\n')
        .filter((l) => !/^(diff --git |index |--- |\+\+\+ |new file mode|deleted file mode)/.test(l))
        .join('\n'),
      numbersReliable: true,
    },
    { variant: 'context-1', original, expected, patch: patchU1, numbersReliable: true },
    {
      variant: 'crlf-file',
      original: original.replace(/\r?\n/g, '\r\n'),
      expected: expected.replace(/\r?\n/g, '\r\n'),
      patch,
      numbersReliable: true,
    },
    {
      variant: 'reordered',
      original,
      expected,
      patch: (() => {
        const { head, hunks } = splitHunks(patch);
        return [...head, ...hunks.reverse().flat()].join('\n');
      })(),
      numbersReliable: true,
    },
    {
      variant: 'wrong-counts',
      original,
      expected,
      patch: mapHeaders(patch, (m) => `@@ -${m[1]},${1 + rand(30)} +${m[3]},${1 + rand(30)} @@${m[5]}`),
      numbersReliable: true,
    },
  ];
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
  if (c.numbersReliable) return false;
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
