/**
 * What the hint-following tests share (the TypeScript API's,
 * test/follow-hints.test.ts, and the tool surface's in @ctxfs/tools): the
 * corpus of real files of every size, the choices their probes make, the
 * run over one backend that keeps the corpus unchanged, and the report of
 * failures grouped by class with the chain that led to each.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type CodeSymbol, type ContextLayer, createContext, MODEL_PROFILES } from '../../src/index.ts';
import type { BackendFactory, Workspace } from '../backends.ts';
import { npmPackage } from './npm-package.ts';
import { testState } from './test-state.ts';

export const MiB = 1024 * 1024;
/** What every call a hint names must fit: the small profile's per-call budget. */
export const BUDGET = MODEL_PROFILES.small.perCallTokens;
/** Hops of following: the calls a probe's result names are depth 1. */
export const MAX_DEPTH = 3;
/** Followed calls per file and backend, so a run stays within a couple of minutes; breadth first, so shallow hints go first. */
export const MAX_FOLLOWED = 40;
/** Set CTXFS_FOLLOW_TRACE=1 to print every call made, indented by depth, with its view and tokens. */
export const TRACE = process.env.CTXFS_FOLLOW_TRACE === '1';

// ------------------------------------------------------------------ corpus

/** Real files picked for their shape: [package, version, path in the package, why]. */
export const PICKS: ReadonlyArray<readonly [string, string, string, string]> = [
  ['typescript', '5.4.5', 'lib/lib.dom.d.ts', 'a 1.3 MB declaration file, tens of thousands of lines'],
  ['typescript', '5.4.5', 'lib/lib.es5.d.ts', 'a 210 KB declaration file with doc comments'],
  ['typescript', '5.4.5', 'lib/lib.es2015.symbol.d.ts', 'a small declaration file'],
  ['typescript', '5.4.5', 'lib/typescript.js', 'a 9 MB compiler, under the document limit'],
  ['moment', '2.30.1', 'min/moment.min.js', 'a minified bundle: one 58 KB line'],
  ['rxjs', '7.8.1', 'dist/bundles/rxjs.umd.min.js', 'a minified UMD bundle: 195 lines of up to 600 characters'],
  ['rxjs', '7.8.1', 'CHANGELOG.md', 'a long markdown document'],
  ['eslint', '8.57.0', 'README.md', 'a markdown README'],
  ['webpack', '5.91.0', 'schemas/WebpackOptions.json', 'a 190 KB JSON schema'],
  ['semver', '7.6.0', 'package.json', 'a small JSON manifest'],
  ['semver', '7.6.0', 'functions/major.js', 'a five-line module'],
  ['node-gyp', '10.1.0', 'gyp/pylib/gyp/input.py', 'a 126 KB Python module'],
  ['node-gyp', '10.1.0', 'gyp/pylib/gyp/common.py', 'a mid-sized Python module'],
  ['node-gyp', '10.1.0', 'gyp/pylib/gyp/generator/__init__.py', 'an empty file'],
  ['mobx', '6.13.5', 'src/core/observable.ts', 'a TypeScript source file'],
];

/** Files made by concatenating real ones: past the loader's 16 MiB document limit, and past the core's 32 MiB convenience cap. */
export const GENERATED: ReadonlyArray<{ path: string; parts: readonly string[]; over: number }> = [
  { path: 'generated/over-16mib.js', parts: ['lib/typescript.js', 'lib/tsserver.js', 'lib/lib.es5.d.ts'], over: 16 * MiB },
  {
    path: 'generated/over-32mib.js',
    parts: ['lib/typescript.js', 'lib/tsserver.js', 'lib/tsc.js', 'lib/typingsInstaller.js', 'lib/lib.dom.d.ts', 'lib/typescript.js'],
    over: 32 * MiB,
  },
];

export interface CorpusFile {
  readonly path: string;
  readonly text: string;
  /** Where to take symbol names from: the file itself, or (a generated file, too big to load) the real file it starts with. */
  readonly symbolsFrom: string;
  /** Probed; false for a file that is only in the workspace because a probed one takes its symbols from it. */
  readonly probed: boolean;
}

/**
 * The corpus, or the part of it whose paths `keep` accepts (plus, unprobed,
 * the real file a kept generated one takes its symbols from).
 */
export function buildCorpus(keep: (path: string) => boolean = () => true): CorpusFile[] {
  const files: CorpusFile[] = [];
  const read = (name: string, version: string, path: string) => readFileSync(join(npmPackage(name, version), path), 'utf8');
  for (const [name, version, path] of PICKS) {
    const p = `${name}/${path}`;
    if (keep(p)) files.push({ path: p, text: read(name, version, path), symbolsFrom: p, probed: true });
  }
  for (const g of GENERATED) {
    if (!keep(g.path)) continue;
    const text = g.parts.map((part) => read('typescript', '5.4.5', part)).join('\n');
    if (Buffer.byteLength(text) <= g.over) throw new Error(`${g.path} is ${Buffer.byteLength(text)} bytes, not over ${g.over}`);
    const symbolsFrom = `typescript/${g.parts[0]}`;
    files.push({ path: g.path, text, symbolsFrom, probed: true });
    if (!files.some((f) => f.path === symbolsFrom)) {
      files.push({ path: symbolsFrom, text: read('typescript', '5.4.5', g.parts[0] as string), symbolsFrom, probed: false });
    }
  }
  return files;
}

// ------------------------------------------------------------------ probes

/** A name no file defines: the probe is meant to throw, and its hint must work. */
export const MISSING_SYMBOL = 'noSuchSymbolInThisFile';

export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** A word that occurs more than once (twice if one does), for an ambiguous `replace`. */
export function repeatedWord(text: string): string | undefined {
  const counts = new Map<string, number>();
  for (const m of text.slice(0, MiB).matchAll(/[A-Za-z_][A-Za-z0-9_]{5,}/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  let best: [string, number] | undefined;
  for (const [w, n] of counts) if (n >= 2 && (best === undefined || (best[1] !== 2 && n < best[1]) || n === 2)) best = [w, n];
  return best?.[0];
}

/** The definition spanning most lines, and one from the middle of the list. */
export function symbolsOf(list: readonly CodeSymbol[]): { largest: CodeSymbol | undefined; middle: CodeSymbol | undefined } {
  if (list.length === 0) return { largest: undefined, middle: undefined };
  const largest = list.reduce((a, b) => (b.endLine - b.startLine > a.endLine - a.startLine ? b : a));
  // A name a search can tell apart: `ts` or `e` would match nearly every line of every file.
  const named = list.filter((s) => s.name.length >= 4);
  const from = named.length > 0 ? named : list;
  return { largest, middle: from[Math.floor(from.length / 2)] };
}

// ------------------------------------------------------------------ failures

/** One step of a chain: the call made, and the hint text it was found in. */
export interface Step {
  readonly call: string;
  /** Where the call was written: `next`, `text`, `error` or `refusal` of the step before, with the words around it. */
  readonly from: string | undefined;
}

export interface Failure {
  readonly backend: string;
  readonly file: string;
  readonly kind: string;
  /** The failure's class: what went wrong, with paths and numbers taken out. */
  readonly klass: string;
  readonly chain: readonly Step[];
  readonly detail: string;
}

/** Paths, quoted strings and numbers out, so one defect on many files is one class. */
export function shape(text: string): string {
  return text
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '"…"')
    .replace(/'[^'\n]{16,}'/g, "'…'")
    .replace(/\b\d+\b/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 220);
}

/** The words around a found call, so a report quotes the hint as the model read it. */
export function around(text: string, source: string): string {
  const at = text.indexOf(source);
  if (at < 0) return source;
  const from = Math.max(0, text.lastIndexOf('\n', at) + 1, at - 100);
  const lineEnd = text.indexOf('\n', at + source.length);
  const to = Math.min(lineEnd < 0 ? text.length : lineEnd, at + source.length + 80);
  return text.slice(from, to).trim();
}

/** The failures of one file's run, one per class and failing call: the same hint reached twice (from the corpus and from the edit copy) is one defect. */
export class FailureLog {
  readonly failures: Failure[] = [];
  readonly #reported = new Set<string>();
  readonly #backend: string;
  readonly #file: string;

  constructor(backend: string, file: string) {
    this.#backend = backend;
    this.#file = file;
  }

  fail(kind: string, klass: string, chain: readonly Step[], detail: string): void {
    const key = `${kind}: ${klass}\0${chain[chain.length - 1]?.call}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    // The file named in a message would split one class per file.
    this.failures.push({ backend: this.#backend, file: this.#file, kind, klass: `${kind}: ${klass.split(this.#file).join('<file>')}`, chain, detail });
  }
}

function chainText(f: Failure): string {
  const steps = f.chain.map((s, i) => (i === 0 ? `  ${s.call}` : `  → ${s.call}\n      (from ${s.from})`));
  return [`${f.file} [${f.backend}]`, ...steps, `  ✗ ${f.detail.slice(0, 400)}`].join('\n');
}

/** Failures grouped by class, most frequent first, one example chain each. */
export function report(failures: readonly Failure[]): string {
  const classes = new Map<string, Failure[]>();
  for (const f of failures) classes.set(f.klass, [...(classes.get(f.klass) ?? []), f]);
  const sorted = [...classes.entries()].sort((a, b) => b[1].length - a[1].length);
  const parts = [`${failures.length} failures in ${sorted.length} classes`];
  for (const [klass, list] of sorted) {
    const files = [...new Set(list.map((f) => f.file))];
    const backends = [...new Set(list.map((f) => f.backend))].join(', ');
    parts.push(`\n■ ${list.length}× ${klass}\n  files (${backends}): ${files.join(', ')}\n${chainText(list[0] as Failure)}`);
  }
  return parts.join('\n');
}

// ------------------------------------------------------------------ following

/** A call waiting to be made: how many hops from a probe (a probe is 0), and the chain that led to it. */
export interface Hop {
  readonly depth: number;
  readonly chain: readonly Step[];
}

/**
 * Makes `probes` and the calls their results name, breadth first so shallow
 * hints go first: each call once (by `keyOf`), none deeper than MAX_DEPTH,
 * and past the probes at most MAX_FOLLOWED. `visit` makes one call and
 * gives the calls its result names. Returns how many followed calls were made.
 */
export async function breadthFirst<P extends Hop>(probes: readonly P[], keyOf: (p: P) => string, visit: (p: P) => Promise<readonly P[]>): Promise<number> {
  const queue: P[] = [...probes];
  const made = new Set<string>();
  let followed = 0;
  while (queue.length > 0) {
    const item = queue.shift() as P;
    const key = keyOf(item);
    if (made.has(key) || item.depth > MAX_DEPTH) continue;
    if (item.depth > 0 && followed >= MAX_FOLLOWED) continue;
    made.add(key);
    if (item.depth > 0) followed++;
    queue.push(...(await visit(item)));
  }
  return followed;
}

// ------------------------------------------------------------------ a run over one backend

/** What following one file's hints found. */
export interface FileRun {
  readonly failures: readonly Failure[];
  readonly followed: number;
  /** Probes that threw (some are meant to: a missing symbol); their hints were followed. */
  readonly probeErrors: readonly string[];
}

/**
 * Puts the corpus in a workspace on `backend` and runs `perFile` on each
 * probed file, with the corpus's layer to read and, for edits, a layer over
 * a copy of that one file on the same kind of backend: refused or not, the
 * corpus stays as it was, which is checked at the end.
 */
export async function followCorpus(
  backend: BackendFactory,
  corpus: readonly CorpusFile[],
  agent: string,
  perFile: (read: ContextLayer, edit: ContextLayer, file: CorpusFile) => Promise<FileRun>,
): Promise<{ failures: Failure[]; followed: number; probeErrors: string[] }> {
  const files = Object.fromEntries(corpus.map((f) => [f.path, f.text]));
  const ws: Workspace = await backend.create(files);
  const layer = await createContext({ fs: ws.fs, store: testState(), profile: 'small', agent });
  const failures: Failure[] = [];
  const probeErrors: string[] = [];
  let followed = 0;
  try {
    await layer.scan();
    for (const file of corpus.filter((f) => f.probed)) {
      const copy = await backend.create({ [file.path]: file.text });
      const editLayer = await createContext({ fs: copy.fs, store: testState(), profile: 'small', agent });
      try {
        await editLayer.scan();
        const started = Date.now();
        const run = await perFile(layer, editLayer, file);
        failures.push(...run.failures);
        probeErrors.push(...run.probeErrors);
        followed += run.followed;
        console.log(`${backend.name} ${file.path}: ${run.followed} followed, ${run.failures.length} failures, ${Date.now() - started} ms`);
      } finally {
        await editLayer.close();
        await copy.cleanup();
      }
    }
    // Following hints must not have written to the corpus: every file is as it was copied in.
    const changed: string[] = [];
    for await (const batch of ws.fs.digest(corpus.map((f) => f.path))) {
      for (const d of batch) {
        const text = corpus.find((f) => f.path === d.path)?.text ?? '';
        if (d.error !== undefined || d.sha256 !== createHash('sha256').update(text).digest('hex')) changed.push(d.path);
      }
    }
    expect(changed, 'corpus files changed by following hints').toEqual([]);
  } finally {
    await layer.close();
    await ws.cleanup();
  }
  return { failures, followed, probeErrors };
}

/** Logs a backend's run: the calls followed, the probes that threw (grouped), and the failures' report, which it returns. */
export function logRun(backend: string, probed: number, run: { failures: readonly Failure[]; followed: number; probeErrors: readonly string[] }): string {
  const threw = new Map<string, number>();
  for (const e of run.probeErrors) threw.set(shape(e), (threw.get(shape(e)) ?? 0) + 1);
  const threwText = [...threw].map(([e, n]) => `${n}× ${e}`).join('\n  ');
  console.log(`${backend}: ${probed} files, ${run.followed} calls followed; probes that threw (${run.probeErrors.length}):\n  ${threwText}`);
  const text = report(run.failures);
  console.log(text);
  return text;
}
