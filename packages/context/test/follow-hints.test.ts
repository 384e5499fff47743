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

import { isFsError } from '@ctxfs/core';
import { describe, expect, test } from 'vitest';
import {
  type ContextLayer,
  type ContextSession,
  type EditResult,
  flattenSymbols,
  type LineEdit,
  o200kTokenizer,
  type SearchResult,
  type Served,
  symbolTable,
} from '../src/index.ts';
import { BACKENDS } from './backends.ts';
import { type CallArg, type CallFinding, callKey, findCalls, findCallsInServed, type ListingLines } from './support/call-text.ts';
import {
  around,
  BUDGET,
  breadthFirst,
  buildCorpus,
  type CorpusFile,
  FailureLog,
  type FileRun,
  followCorpus,
  type Hop,
  lineCount,
  logRun,
  MAX_DEPTH,
  MISSING_SYMBOL,
  repeatedWord,
  type Step,
  shape,
  symbolsOf,
  TRACE,
} from './support/follow-hints.ts';

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

type FailureKind = 'throws' | 'over-budget' | 'over-budget-view' | 'not-concrete' | 'refused-without-next' | 'dead-end';

/** A probe or a followed call waiting to be made. */
interface Pending extends Hop {
  readonly target: Target;
  readonly op: string;
  readonly args: readonly CallArg[];
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

/** Runs the probes of one file and follows what they name, breadth first. */
async function followFile(backend: string, file: string, probes: readonly Pending[], edit: Target): Promise<FileRun> {
  const log = new FailureLog(backend, file);
  const fail = (kind: FailureKind, klass: string, chain: readonly Step[], detail: string) => log.fail(kind, klass, chain, detail);
  const probeErrors: string[] = [];
  const followed = await breadthFirst(
    probes,
    (item) => `${item.target.name}:${callKey(item)}`,
    async (item) => {
      const found: Pending[] = [];
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
        // An edit a hint names runs on the copy, never on the corpus.
        const target = EDIT_OPS.has(finding.op) ? edit : item.target;
        found.push({ target, op: finding.op, args: finding.args, depth: item.depth + 1, chain: [...chain, { call: callKey(finding), from }] });
      }
      return found;
    },
  );
  return { failures: log.failures, followed, probeErrors };
}

// ------------------------------------------------------------------ probes

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

// ------------------------------------------------------------------ the test

const corpus = buildCorpus();

describe('every call a small-profile result names works in the small profile (issue 11, defect 5)', () => {
  for (const backend of BACKENDS) {
    test(`${backend.name}: follow every next, marker and hint to depth ${MAX_DEPTH}: never an error, never over budget, never a placeholder`, {
      timeout: 600_000,
    }, async () => {
      const { failures, followed, probeErrors } = await followCorpus(backend, corpus, 'llm:follow-hints', async (layer, editLayer, file) => {
        const read: Target = { name: 'read', layer };
        const edit: Target = { name: 'edit', layer: editLayer };
        return followFile(backend.name, file.path, await probesFor(read, edit, file), edit);
      });
      const text = logRun(backend.name, corpus.length, { failures, followed, probeErrors });
      expect(followed, 'the probes name calls to follow').toBeGreaterThan(corpus.length);
      // The count, with the grouped report as the message: a diff of 100 failure objects would bury it.
      expect(failures.length, text).toBe(0);
    });
  }
});
