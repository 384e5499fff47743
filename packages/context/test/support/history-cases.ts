/**
 * Histories that stress the delta store: small edits, CRLF text, empty
 * files, deletions, versions entirely unlike their neighbour, and real
 * binaries (the tree-sitter grammars this package depends on, edited in
 * place and swapped for one another). Deterministic, so a store written
 * from them once (fixtures/history-v7.db, by the schema-7 store) can be
 * checked against them again.
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One recorded state of one path; `null` is "deleted". */
export interface HistoryStep {
  readonly path: string;
  readonly bytes: Uint8Array | null;
}

const enc = new TextEncoder();

/** The grammar `name` (e.g. `css`) as shipped in @vscode/tree-sitter-wasm. */
export function grammar(name: string): Uint8Array {
  const pkg = dirname(createRequire(import.meta.url).resolve('@vscode/tree-sitter-wasm/package.json'));
  return new Uint8Array(readFileSync(join(pkg, 'wasm', `tree-sitter-${name}.wasm`)));
}

// Deterministic picks (a multiplicative hash of a counter), so every run makes the same steps.
let counter = 0;
function pick(n: number): number {
  counter = (counter + 1) >>> 0;
  return (Math.imul(counter, 0x9e3779b1) >>> 0) % n;
}

/** The steps, in order. */
export function historySteps(): HistoryStep[] {
  const steps: HistoryStep[] = [];
  counter = 0;
  // Source with small edits, one version entirely rewritten, a deletion and a re-creation.
  const lines = Array.from({ length: 400 }, (_, i) => `export const v${i} = ${i * 7}; // ${i % 3 === 0 ? 'three' : 'other'}`);
  for (let v = 0; v < 40; v++) {
    if (v > 0) lines[pick(lines.length)] = `// edited in version ${v}`;
    if (v === 20) lines.splice(100, 50);
    steps.push({ path: 'src/app.ts', bytes: enc.encode(`${lines.join('\n')}\n`) });
  }
  steps.push({ path: 'src/app.ts', bytes: enc.encode(Array.from({ length: 300 }, (_, i) => `rewritten ${i} ${pick(1e9)}`).join('\n')) });
  steps.push({ path: 'src/app.ts', bytes: null });
  steps.push({ path: 'src/app.ts', bytes: enc.encode(`${lines.join('\n')}\n`) });
  // CRLF text.
  const win = Array.from({ length: 200 }, (_, i) => `Line ${i}\tvalue=${i * 3}`);
  for (let v = 0; v < 12; v++) {
    if (v > 0) win[pick(win.length)] = `Changed in ${v}`;
    steps.push({ path: 'docs/windows.txt', bytes: enc.encode(`${win.join('\r\n')}\r\n`) });
  }
  // Empty, then content, then empty again.
  steps.push({ path: 'empty.txt', bytes: new Uint8Array(0) });
  steps.push({ path: 'empty.txt', bytes: enc.encode('now not empty\n') });
  steps.push({ path: 'empty.txt', bytes: new Uint8Array(0) });
  // Binary: a real grammar, patched in a few places, then replaced by another grammar.
  const wasm = grammar('ini');
  steps.push({ path: 'bin/grammar.wasm', bytes: wasm });
  for (let v = 1; v < 5; v++) {
    const b = wasm.slice();
    for (let k = 0; k < v * 3; k++) b[pick(b.length)] = pick(256);
    steps.push({ path: 'bin/grammar.wasm', bytes: b });
  }
  steps.push({ path: 'bin/grammar.wasm', bytes: grammar('regex') });
  // Undo back to an earlier content: A, B, A.
  steps.push({ path: 'docs/windows.txt', bytes: steps.find((s) => s.path === 'docs/windows.txt')?.bytes ?? null });
  return steps;
}

/** The versions of `file` in the git repository `repo`, oldest first, read in one `git cat-file --batch` (commits that delete it are skipped). */
export function gitFileHistory(repo: string, file: string): Uint8Array[] {
  const commits = execFileSync('git', ['-C', repo, 'log', '--format=%H', '--reverse', '--', file], { maxBuffer: 64 * 1024 * 1024 })
    .toString()
    .trim()
    .split('\n')
    .filter(Boolean);
  const batch = execFileSync('git', ['-C', repo, 'cat-file', '--batch'], { input: commits.map((c) => `${c}:${file}\n`).join(''), maxBuffer: 2 ** 32 });
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < batch.length) {
    const eol = batch.indexOf(10, at);
    const header = batch.subarray(at, eol).toString();
    at = eol + 1;
    if (header.endsWith(' missing')) continue;
    const size = Number(header.split(' ')[2]);
    out.push(new Uint8Array(batch.subarray(at, at + size)));
    at += size + 1;
  }
  return out;
}

/** The `n` files of `repo` changed by the most commits, most first. */
export function mostEditedFiles(repo: string, n: number): string[] {
  const names = execFileSync('git', ['-C', repo, 'log', '--format=', '--name-only'], { maxBuffer: 256 * 1024 * 1024 })
    .toString()
    .split('\n')
    .filter(Boolean);
  const tally = new Map<string, number>();
  for (const f of names) tally.set(f, (tally.get(f) ?? 0) + 1);
  return [...tally]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([f]) => f);
}
