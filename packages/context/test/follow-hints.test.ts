/**
 * Issue 11, defect 5: "a read the profile cannot satisfy tells the model to
 * do something that fails". A small model acts on what a call tells it —
 * the `next`, the markers in `text`, an error's hint, a refusal's message —
 * as written. So every call a small-profile result names must be one the
 * model can make as written (no `start, end` placeholders), and making it
 * must work in the same profile: no error, nothing over the per-call budget.
 *
 * On real files of every size (pinned npm packages nobody here wrote, plus
 * generated files over the loader's 16 MiB document limit and over the
 * core's 32 MiB convenience cap), each file gets every retrieval call, a
 * search for one of its names, an ambiguous `replace` and an out-of-range
 * `editLines`; every call their results name is made, and the calls those
 * results name, to depth 3. On the memory backend and on the host backend
 * (a temp dir). Every failure is reported with the chain that led to it.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFsError } from '@ctxfs/core';
import { describe, expect, test } from 'vitest';
import {
  type CodeSymbol,
  type ContextLayer,
  type ContextSession,
  createContext,
  type EditResult,
  flattenSymbols,
  type LineEdit,
  MODEL_PROFILES,
  o200kTokenizer,
  type SearchResult,
  type Served,
  symbolTable,
} from '../src/index.ts';
import { BACKENDS, type BackendFactory, type Workspace } from './backends.ts';
import { type CallArg, type CallFinding, callKey, findCalls, findCallsInServed, type ListingLines } from './support/call-text.ts';
import { npmPackage } from './support/npm-package.ts';

const PROFILE = MODEL_PROFILES.small;
const BUDGET = PROFILE.perCallTokens;
/** Hops of following: the calls a probe's result names are depth 1. */
const MAX_DEPTH = 3;
/** Followed calls per file and backend, so the run stays within a couple of minutes; breadth first, so shallow hints go first. */
const MAX_FOLLOWED = 40;
const MiB = 1024 * 1024;
/** Set CTXFS_FOLLOW_TRACE=1 to print every call made, indented by depth, with its view and tokens. */
const TRACE = process.env.CTXFS_FOLLOW_TRACE === '1';

// ------------------------------------------------------------------ corpus

/** Real files picked for their shape: [package, version, path in the package, why]. */
const PICKS: ReadonlyArray<readonly [string, string, string, string]> = [
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
const GENERATED: ReadonlyArray<{ path: string; parts: readonly string[]; over: number }> = [
  { path: 'generated/over-16mib.js', parts: ['lib/typescript.js', 'lib/tsserver.js', 'lib/lib.es5.d.ts'], over: 16 * MiB },
  {
    path: 'generated/over-32mib.js',
    parts: ['lib/typescript.js', 'lib/tsserver.js', 'lib/tsc.js', 'lib/typingsInstaller.js', 'lib/lib.dom.d.ts', 'lib/typescript.js'],
    over: 32 * MiB,
  },
];

interface CorpusFile {
  readonly path: string;
  readonly text: string;
  /** Where to take symbol names from: the file itself, or (a generated file, too big to load) the real file it starts with. */
  readonly symbolsFrom: string;
}

function buildCorpus(): CorpusFile[] {
  const files: CorpusFile[] = [];
  const read = (name: string, version: string, path: string) => readFileSync(join(npmPackage(name, version), path), 'utf8');
  for (const [name, version, path] of PICKS) {
    const p = `${name}/${path}`;
    files.push({ path: p, text: read(name, version, path), symbolsFrom: p });
  }
  for (const g of GENERATED) {
    const text = g.parts.map((part) => read('typescript', '5.4.5', part)).join('\n');
    if (Buffer.byteLength(text) <= g.over) throw new Error(`${g.path} is ${Buffer.byteLength(text)} bytes, not over ${g.over}`);
    files.push({ path: g.path, text, symbolsFrom: `typescript/${g.parts[0]}` });
  }
  return files;
}

// ------------------------------------------------------------------ running calls

/** Where a call runs: the corpus workspace, or a copy of one file for edits (the corpus must not change). */
interface Target {
  readonly name: 'read' | 'edit';
  readonly layer: ContextLayer;
}

/** What a call returned, reduced to what the model sees and what it is told to do. */
interface Outcome {
  readonly text: string;
  /** Tokens the result says it costs, when it says. */
  readonly tokens: number | undefined;
  readonly next: string | undefined;
  readonly listing: ListingLines;
  /** An edit refused (not thrown): its message is what the model reads. */
  readonly refused: boolean;
  readonly view: string;
}

function isServed(r: unknown): r is Served {
  return typeof r === 'object' && r !== null && 'view' in r && 'text' in r && 'totalLines' in r;
}
function isSearch(r: unknown): r is SearchResult {
  return typeof r === 'object' && r !== null && 'counts' in r && 'text' in r;
}
function isEdit(r: unknown): r is EditResult {
  return typeof r === 'object' && r !== null && 'success' in r && 'message' in r;
}

function outcomeOf(r: unknown): Outcome {
  if (isServed(r)) return { text: r.text, tokens: r.tokens, next: r.next, listing: 'content', refused: false, view: r.view };
  if (isSearch(r)) return { text: r.text, tokens: r.tokens, next: r.next, listing: r.op === 'findSymbol' ? 'calls' : 'content', refused: false, view: r.view };
  if (isEdit(r)) return { text: r.message, tokens: undefined, next: r.next, listing: 'content', refused: !r.success, view: r.success ? 'edited' : 'refused' };
  if (typeof r === 'object' && r !== null && 'text' in r && typeof r.text === 'string') {
    const tokens = 'tokens' in r && typeof r.tokens === 'number' ? r.tokens : undefined;
    return { text: r.text, tokens, next: undefined, listing: 'content', refused: false, view: 'text' };
  }
  // Data without text for a model (scan counts, version lists): nothing to follow.
  return { text: '', tokens: undefined, next: undefined, listing: 'content', refused: false, view: 'data' };
}

const EDIT_OPS = new Set(['writeFile', 'createFile', 'replace', 'editLines', 'deleteFile', 'renameFile', 'applyPatch', 'rollback', 'undo']);

/**
 * Makes a call as a model would: on a session of its own, in the small
 * profile. A fresh session each time because a session's 24k tokens run
 * out within one long chain, after which every answer is "session spent"
 * and hides the hints under test; each hint is checked as the first thing
 * a small session does with it.
 */
async function execute(target: Target, op: string, args: readonly CallArg[]): Promise<unknown> {
  const layer = target.layer;
  if (op === 'scan') return layer.scan();
  if (op === 'indexRelations') return layer.indexRelations();
  const s: ContextSession = layer.session({ agent: 'llm:follow-hints', profile: 'small' });
  // The arguments go through as the model wrote them: a hint that names a wrong type is the defect under test, and the method's own checks answer it.
  const a = args as unknown[];
  const method = (s as unknown as Record<string, unknown>)[op];
  if (typeof method !== 'function') throw new Error(`no session method ${op}`);
  return (method as (...xs: unknown[]) => Promise<unknown>).apply(s, a);
}

// ------------------------------------------------------------------ following

/** One step of a chain: the call made, and the hint text it was found in. */
interface Step {
  readonly call: string;
  /** Where the call was written: `next`, `text`, `error` or `refusal` of the step before, with the words around it. */
  readonly from: string | undefined;
}

type FailureKind = 'throws' | 'over-budget' | 'over-budget-view' | 'not-concrete' | 'refused-without-next' | 'dead-end';

interface Failure {
  readonly backend: string;
  readonly file: string;
  readonly kind: FailureKind;
  /** The failure's class: what went wrong, with paths and numbers taken out. */
  readonly klass: string;
  readonly chain: readonly Step[];
  readonly detail: string;
}

/** A probe or a followed call waiting to be made. */
interface Pending {
  readonly target: Target;
  readonly op: string;
  readonly args: readonly CallArg[];
  readonly depth: number;
  readonly chain: readonly Step[];
}

/** Paths, quoted strings and numbers out, so one defect on many files is one class. */
function shape(text: string): string {
  return text
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '"…"')
    .replace(/'[^'\n]{16,}'/g, "'…'")
    .replace(/\b\d+\b/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 220);
}

/** The words around a found call, so a report quotes the hint as the model read it. */
function around(text: string, source: string): string {
  const at = text.indexOf(source);
  if (at < 0) return source;
  const from = Math.max(0, text.lastIndexOf('\n', at) + 1, at - 100);
  const lineEnd = text.indexOf('\n', at + source.length);
  const to = Math.min(lineEnd < 0 ? text.length : lineEnd, at + source.length + 80);
  return text.slice(from, to).trim();
}

/** Every call an outcome or an error tells the model to make, with where it was written. */
function hintsOf(outcome: Outcome | undefined, error: unknown): Array<{ finding: CallFinding; from: string }> {
  const out: Array<{ finding: CallFinding; from: string }> = [];
  if (error !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    for (const f of findCalls(message)) out.push({ finding: f, from: `error: ${around(message, f.source)}` });
    return out;
  }
  if (outcome === undefined) return out;
  const seen = new Set<string>();
  const add = (list: readonly CallFinding[], where: string, text: string) => {
    for (const f of list) {
      // The narrow instruction is both `next` and a line of `text`: one finding.
      if (seen.has(f.source)) continue;
      seen.add(f.source);
      out.push({ finding: f, from: `${where}: ${around(text, f.source)}` });
    }
  };
  if (outcome.next !== undefined) add(findCalls(outcome.next), 'next', outcome.next);
  if (outcome.refused) add(findCalls(outcome.text), 'refusal', outcome.text);
  else add(findCallsInServed(outcome.text, outcome.listing), 'text', outcome.text);
  return out;
}

interface FileRun {
  readonly failures: Failure[];
  readonly followed: number;
  /** Probes that threw (some are meant to: a missing symbol); their hints were followed. */
  readonly probeErrors: string[];
}

/** Runs the probes of one file and follows what they name, breadth first. */
async function followFile(backend: string, file: string, probes: readonly Pending[], edit: Target): Promise<FileRun> {
  const failures: Failure[] = [];
  const probeErrors: string[] = [];
  const queue: Pending[] = [...probes];
  const made = new Set<string>();
  let followed = 0;
  // One failure per class and failing call: the same hint reached twice (from the corpus and from the edit copy) is one defect.
  const reported = new Set<string>();
  const fail = (kind: FailureKind, klass: string, chain: readonly Step[], detail: string) => {
    const key = `${kind}: ${klass}\0${chain[chain.length - 1]?.call}`;
    if (reported.has(key)) return;
    reported.add(key);
    // The file named in a message would split one class per file.
    failures.push({ backend, file, kind, klass: `${kind}: ${klass.split(file).join('<file>')}`, chain, detail });
  };

  while (queue.length > 0) {
    const item = queue.shift() as Pending;
    const key = `${item.target.name}:${callKey(item)}`;
    if (made.has(key)) continue;
    if (item.depth > 0 && followed >= MAX_FOLLOWED) continue;
    made.add(key);
    if (item.depth > 0) followed++;
    const call = callKey(item);
    const chain = item.chain;
    const parentOp = chain.length > 1 ? (chain[chain.length - 2]?.call.split('(')[0] ?? '') : '';

    let outcome: Outcome | undefined;
    let error: unknown;
    try {
      outcome = outcomeOf(await execute(item.target, item.op, item.args));
    } catch (err) {
      error = err;
      const what = isFsError(err) ? `${err.code}: ${err.reason}` : String(err);
      if (item.depth === 0) probeErrors.push(`${call} → ${what}`.split(file).join('<file>'));
      else {
        const code = isFsError(err) ? err.code : 'Error';
        fail('throws', `${item.op} named by ${parentOp}, ${code}: ${shape(isFsError(err) ? err.reason : String(err))}`, chain, String(err));
      }
    }

    // An error's message is read by the model too, so it has the same budget.
    if (error !== undefined) {
      const message = error instanceof Error ? error.message : String(error);
      const counted = o200kTokenizer.count(message);
      if (counted > BUDGET) fail('over-budget', `${item.op} throws a message of more than ${BUDGET} tokens`, chain, `${counted} tokens`);
    }
    if (outcome !== undefined) {
      const counted = outcome.text === '' ? 0 : o200kTokenizer.count(outcome.text);
      const tokens = Math.max(counted, outcome.tokens ?? 0);
      if (tokens > BUDGET) {
        fail('over-budget', `${item.op} (${outcome.view}) ${tokens > counted ? 'reports' : 'serves'} more than ${BUDGET} tokens`, chain, `${tokens} tokens`);
      }
    }

    const hints = hintsOf(outcome, error);
    const namesACall = hints.some((h) => h.finding.kind === 'call');
    if (TRACE)
      console.log(`${'  '.repeat(item.depth)}${call} → ${error !== undefined ? String(error).slice(0, 160) : `${outcome?.view} ${outcome?.tokens ?? ''}`}`);
    if (outcome?.refused && !namesACall) {
      fail('refused-without-next', `${item.op} refused naming no call: ${shape(outcome.text)}`, chain, outcome.text);
    }
    // A hint that leads to "this call's budget cannot hold even one line" did not work in this profile.
    if (outcome?.view === 'over-budget' && item.depth > 0) {
      fail('over-budget-view', `${item.op} named by ${parentOp} is answered over-budget: ${shape(outcome.text)}`, chain, outcome.text);
    }
    // Nothing of what was asked, and no call at all to make instead: the model is stuck (a thrown followed call already failed
    // above, and a hint with placeholders fails below as not concrete).
    if (hints.length === 0 && item.depth === 0 && (outcome?.view === 'over-budget' || error !== undefined)) {
      const said = outcome?.text ?? (error instanceof Error ? error.message : String(error));
      fail('dead-end', `${item.op} serves nothing and names no call: ${shape(said)}`, chain, said);
    }
    for (const { finding, from } of hints) {
      if (finding.kind === 'not-concrete') {
        const where = from.split(':')[0];
        fail('not-concrete', `${item.op} ${where} names ${shape(finding.source)}`, [...chain, { call: finding.source, from }], finding.reason);
        continue;
      }
      if (item.depth + 1 > MAX_DEPTH) continue;
      // An edit a hint names runs on the copy, never on the corpus.
      const target = EDIT_OPS.has(finding.op) ? edit : item.target;
      queue.push({ target, op: finding.op, args: finding.args, depth: item.depth + 1, chain: [...chain, { call: callKey(finding), from }] });
    }
  }
  return { failures, followed, probeErrors };
}

// ------------------------------------------------------------------ probes

/** A name no file defines: the probe is meant to throw, and its hint must work. */
const MISSING_SYMBOL = 'noSuchSymbolInThisFile';

function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** A word that occurs more than once (twice if one does), for an ambiguous `replace`. */
function repeatedWord(text: string): string | undefined {
  const counts = new Map<string, number>();
  for (const m of text.slice(0, MiB).matchAll(/[A-Za-z_][A-Za-z0-9_]{5,}/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  let best: [string, number] | undefined;
  for (const [w, n] of counts) if (n >= 2 && (best === undefined || (best[1] !== 2 && n < best[1]) || n === 2)) best = [w, n];
  return best?.[0];
}

/** The definition spanning most lines, and one from the middle of the list. */
function symbolsOf(list: readonly CodeSymbol[]): { largest: CodeSymbol | undefined; middle: CodeSymbol | undefined } {
  if (list.length === 0) return { largest: undefined, middle: undefined };
  const largest = list.reduce((a, b) => (b.endLine - b.startLine > a.endLine - a.startLine ? b : a));
  // A name a search can tell apart: `ts` or `e` would match nearly every line of every file.
  const named = list.filter((s) => s.name.length >= 4);
  const from = named.length > 0 ? named : list;
  return { largest, middle: from[Math.floor(from.length / 2)] };
}

async function probesFor(read: Target, edit: Target, file: CorpusFile): Promise<Pending[]> {
  const p = file.path;
  const lines = lineCount(file.text);
  const mid = Math.max(1, Math.floor(lines / 2));
  const doc = await read.layer.loader.load(file.symbolsFrom, 'probe');
  const symbols = flattenSymbols((await symbolTable(doc)).symbols);
  const { largest, middle } = symbolsOf(symbols);
  // A name from the file for the searches: a definition's, else a word from its middle.
  const name = middle?.name ?? /[A-Za-z_]\w{3,}/.exec(file.text.slice(Math.floor(file.text.length / 2)))?.[0] ?? 'function';
  const calls: Array<[Target, string, CallArg[]]> = [
    [read, 'readFile', [p]],
    [read, 'readFile', [p, { strategy: 'start' }]],
    [read, 'readFile', [p, { strategy: 'end' }]],
    [read, 'readFile', [p, { strategy: 'middle' }]],
    [read, 'readLines', [p, mid, Math.min(Math.max(lines, 1), mid + 20)]],
    // Past the budget: far more lines than 1,500 tokens hold (the whole file, for a short one).
    [read, 'readLines', [p, Math.max(1, Math.min(mid, lines - 2000)), Math.max(lines, 1)]],
    [read, 'getExcerpt', [p]],
    [read, 'getOutline', [p]],
    [read, 'summarize', [p]],
    [read, 'getRelatedFiles', [p]],
    [read, 'getSymbol', [p, MISSING_SYMBOL]],
    [read, 'grep', [name, { literal: true }]],
    [read, 'grep', [name, { path: p, literal: true }]],
    [read, 'findSymbol', [name]],
  ];
  if (largest) calls.push([read, 'getSymbol', [p, largest.qualifiedName]]);
  if (middle && middle !== largest) calls.push([read, 'getSymbol', [p, middle.qualifiedName]]);
  const twice = repeatedWord(file.text);
  if (twice !== undefined) calls.push([edit, 'replace', [p, twice, `${twice}_renamed`]]);
  const outOfRange: LineEdit = { kind: 'replace', start: lines + 5, end: lines + 6, text: '// past the end\n' };
  calls.push([edit, 'editLines', [p, outOfRange as unknown as CallArg]]);
  return calls.map(([target, op, args]) => ({ target, op, args, depth: 0, chain: [{ call: callKey({ op, args }), from: undefined }] }));
}

// ------------------------------------------------------------------ report

function chainText(f: Failure): string {
  const steps = f.chain.map((s, i) => (i === 0 ? `  ${s.call}` : `  → ${s.call}\n      (from ${s.from})`));
  return [`${f.file} [${f.backend}]`, ...steps, `  ✗ ${f.detail.slice(0, 400)}`].join('\n');
}

/** Failures grouped by class, most frequent first, one example chain each. */
function report(failures: readonly Failure[]): string {
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

// ------------------------------------------------------------------ the test

const corpus = buildCorpus();

async function runBackend(backend: BackendFactory): Promise<{ failures: Failure[]; followed: number; probeErrors: string[] }> {
  const files = Object.fromEntries(corpus.map((f) => [f.path, f.text]));
  const ws: Workspace = await backend.create(files);
  const layer = await createContext({ fs: ws.fs, store: ':memory:', profile: 'small', agent: 'llm:follow-hints' });
  const failures: Failure[] = [];
  const probeErrors: string[] = [];
  let followed = 0;
  try {
    await layer.scan();
    for (const file of corpus) {
      // Edits run on a copy of the one file, on the same kind of backend: refused or not, the corpus stays as it was.
      const copy = await backend.create({ [file.path]: file.text });
      const editLayer = await createContext({ fs: copy.fs, store: ':memory:', profile: 'small', agent: 'llm:follow-hints' });
      try {
        await editLayer.scan();
        const read: Target = { name: 'read', layer };
        const edit: Target = { name: 'edit', layer: editLayer };
        const started = Date.now();
        const run = await followFile(backend.name, file.path, await probesFor(read, edit, file), edit);
        failures.push(...run.failures);
        probeErrors.push(...run.probeErrors);
        followed += run.followed;
        console.log(`${backend.name} ${file.path}: ${run.followed} followed, ${run.failures.length} failures, ${Date.now() - started} ms`);
      } finally {
        editLayer.close();
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
    layer.close();
    await ws.cleanup();
  }
  return { failures, followed, probeErrors };
}

describe('every call a small-profile result names works in the small profile (issue 11, defect 5)', () => {
  for (const backend of BACKENDS) {
    test(`${backend.name}: follow every next, marker and hint to depth ${MAX_DEPTH}: never an error, never over budget, never a placeholder`, {
      timeout: 600_000,
    }, async () => {
      const { failures, followed, probeErrors } = await runBackend(backend);
      const threw = new Map<string, number>();
      for (const e of probeErrors) threw.set(shape(e), (threw.get(shape(e)) ?? 0) + 1);
      const threwText = [...threw].map(([e, n]) => `${n}× ${e}`).join('\n  ');
      console.log(`${backend.name}: ${corpus.length} files, ${followed} calls followed; probes that threw (${probeErrors.length}):\n  ${threwText}`);
      const text = report(failures);
      console.log(text);
      expect(followed, 'the probes name calls to follow').toBeGreaterThan(corpus.length);
      // The count, with the grouped report as the message: a diff of 100 failure objects would bury it.
      expect(failures.length, text).toBe(0);
    });
  }
});
