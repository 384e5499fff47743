/**
 * The tool surface's twin of packages/context/test/follow-hints.test.ts. A
 * model calling ctxfs through tools acts on what a result tells it — the
 * `next`, the markers in `text`, an error's message, a refusal — as
 * written. So every call a small-profile result names must be a tool call
 * of the same tool set, with JSON arguments the tool takes as they are (a
 * hint that needs repairing is wrong, however forgiving the dispatcher is),
 * and making it must work in the same profile: no error, nothing over the
 * per-call budget. No result may name a call of the TypeScript API
 * (`readLines("a.ts", 1, 2)`): no tool runs it.
 *
 * On real files (pinned npm packages nobody here wrote, and a generated
 * file over the loader's 16 MiB document limit), each file gets the calls a
 * model makes first — reads, an outline, a symbol, a search for one of its
 * names, listings — and the mistakes it makes: a range past the end, an
 * ambiguous `replace`, an out-of-range `edit_lines`, an `undo` with nothing
 * to undo. Every call their results name is made, and the calls those name,
 * to depth 3, on the memory backend and on the host backend (a temp dir).
 * Failures are reported by class with the chain that led to each.
 */

import { dirname, extname } from 'node:path';
import { type ContextLayer, type ContextSession, createContext, flattenSymbols, o200kTokenizer, symbolTable } from '@ctxfs/context';
import { describe, expect, test } from 'vitest';
import { BACKENDS } from '../../context/test/backends.ts';
import { servedParts } from '../../context/test/support/call-text.ts';
import * as follow from '../../context/test/support/follow-hints.ts';
import { type CallResult, prepareArguments, TOOLS, Toolset, toolCallText } from '../src/index.ts';
import { callNames, findToolCalls, type ToolCallFinding } from './support/tool-call-text.ts';

const AGENT = 'llm:follow-tool-hints';
const NAMES = callNames(TOOLS);
/** The tool set a Toolset offers by default, by name. */
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * A part of the API test's corpus, one file of each shape, to keep the run
 * short: declarations large and mid-sized, a one-line minified bundle, a
 * bundle of long lines, Markdown, JSON, Python, TypeScript, a five-line
 * module, an empty file, and a file the loader refuses.
 */
const PROBED = new Set([
  'typescript/lib/lib.dom.d.ts',
  'typescript/lib/lib.es5.d.ts',
  'moment/min/moment.min.js',
  'rxjs/dist/bundles/rxjs.umd.min.js',
  'rxjs/CHANGELOG.md',
  'webpack/schemas/WebpackOptions.json',
  'node-gyp/gyp/pylib/gyp/input.py',
  'mobx/src/core/observable.ts',
  'semver/functions/major.js',
  'node-gyp/gyp/pylib/gyp/generator/__init__.py',
  'generated/over-16mib.js',
]);

/**
 * Failure classes known today, each with where it comes from and why it is
 * not fixed here. The test fails on any class not listed; a listed class
 * that no longer occurs is printed so its entry can go.
 */
const KNOWN: Readonly<Record<string, string>> = {
  // Lines past the end of an empty file: "the file is empty", and no call. That is the whole answer: there is
  // nothing to read, and naming a write would invite a change nobody asked for.
  "dead-end: read_lines serves nothing and names no call: EINVAL: line N is past the end: the file has N lines, read_lines '…' (the file is empty)":
    'context: retrieval/read-lines.ts (a true dead end)',
};

// ------------------------------------------------------------------ running calls

/**
 * Where a call runs: the corpus workspace, a copy of one file for edits (the
 * corpus must not change), or one session over the copy in which the file
 * is open in a buffer (its edits and reads go to the buffer), opened again
 * before each call should a followed hint have closed it.
 */
interface Target {
  readonly name: 'read' | 'edit' | 'buffer';
  readonly layer: ContextLayer;
  readonly session?: { readonly session: ContextSession; readonly open: string };
}

/** A probe or a followed call waiting to be made. */
interface Pending extends follow.Hop {
  readonly target: Target;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * Makes a call as a model would: through a tool set over a session of its
 * own, in the small profile. A fresh session each time because a session's
 * tokens run out within one long chain, after which every answer is
 * "session spent" and hides the hints under test; each hint is checked as
 * the first thing a small session does with it.
 */
async function execute(target: Target, tool: string, args: Readonly<Record<string, unknown>>): Promise<CallResult> {
  if (target.session === undefined) return await new Toolset(target.layer.session({ agent: AGENT, profile: 'small' })).run(tool, args);
  const { session, open } = target.session;
  if (!session.buffers.isOpen(open)) await session.buffers.open(open);
  return await new Toolset(session).run(tool, args);
}

// ------------------------------------------------------------------ reading hints

/** Views whose body is the file's own content: only ctxfs's `[…]` marker lines in it are instructions. */
const CONTENT_VIEWS = new Set(['full', 'truncated', 'lines', 'excerpt', 'symbol', 'matches']);
/**
 * Lines of a body ctxfs wrote that still quote the file: an outline's rows
 * (`12-40  function parse(s)`, a minified one's whole statement), a
 * summary's purpose (the file's leading doc) and its symbols.
 */
const QUOTED_LINE = /^\s*(?:\d+-\d+\s|Purpose: |Main symbols: )/;
/** A line of a unified diff (an edit's, get_diff's, check_conflicts'): the file's content, not an instruction. */
const DIFF_LINE = /^(?:[-+ \\]|@@)/;

/** A piece of a result to look for calls in, and whether only a call that starts it counts (a find_symbol row). */
interface Piece {
  readonly text: string;
  readonly leadingOnly: boolean;
}

/**
 * What in a result ctxfs wrote, as opposed to what it quotes from a file:
 * outside the `<file …>` delimiters everything; inside them, in a content
 * view only the marker lines, in a find_symbol listing the call each row
 * starts with, in any other view (an outline, a summary, a listing) every
 * line but those quoting the file.
 */
function instructionPieces(result: CallResult): Piece[] {
  const data = result.data;
  // save_file's result holds its edit's result (diff included) as data.edit.
  const edit = data.edit as { diff?: unknown } | undefined;
  const hasDiff =
    (typeof data.diff === 'string' && data.diff !== '') || typeof data.their_diff === 'string' || (typeof edit?.diff === 'string' && edit.diff !== '');
  const text = hasDiff
    ? result.text
        .split('\n')
        .filter((l) => !DIFF_LINE.test(l))
        .join('\n')
    : result.text;
  const view = typeof data.view === 'string' ? data.view : '';
  const pieces: Piece[] = [];
  for (const part of servedParts(text)) {
    if (!part.delimited) {
      pieces.push({ text: part.text, leadingOnly: false });
      continue;
    }
    for (const line of part.text.split('\n')) {
      if (/^\[(?:…|also named )/.test(line)) pieces.push({ text: line, leadingOnly: false });
      else if (view === 'symbols') pieces.push({ text: line.replace(/^\[\w+\] /, ''), leadingOnly: true });
      else if (!CONTENT_VIEWS.has(view) && !QUOTED_LINE.test(line)) pieces.push({ text: line, leadingOnly: false });
    }
  }
  return pieces;
}

/** Every call a result tells the model to make, with where it was written. */
function hintsOf(result: CallResult): Array<{ finding: ToolCallFinding; from: string }> {
  const out: Array<{ finding: ToolCallFinding; from: string }> = [];
  // The narrow instruction is both `next` and a line of `text`: one finding.
  const seen = new Set<string>();
  const add = (piece: Piece, where: string, whole: string) => {
    for (const f of findToolCalls(piece.text, NAMES)) {
      if (seen.has(f.source) || (piece.leadingOnly && !piece.text.startsWith(f.source))) continue;
      seen.add(f.source);
      out.push({ finding: f, from: `${where}: ${follow.around(whole, f.source)}` });
    }
  };
  const next = result.data.next;
  if (typeof next === 'string') add({ text: next, leadingOnly: false }, 'next', next);
  const where = !result.isError ? 'text' : result.data.success === false ? 'refusal' : 'error';
  for (const piece of instructionPieces(result)) add(piece, where, result.text);
  return out;
}

// ------------------------------------------------------------------ following

/** The error of an error result (not a refusal): its code and message. */
function errorOf(result: CallResult): { code: string; message: string } | undefined {
  const error = result.data.error as { code?: unknown; message?: unknown } | undefined;
  if (!result.isError || error === undefined) return undefined;
  return { code: String(error.code), message: String(error.message) };
}

/** Runs the probes of one file and follows what they name, breadth first. */
async function followFile(backend: string, file: string, probes: readonly Pending[], edit: Target): Promise<follow.FileRun> {
  const log = new follow.FailureLog(backend, file);
  const probeErrors: string[] = [];
  const followed = await follow.breadthFirst(
    probes,
    (item) => `${item.target.name}:${toolCallText(item.tool, item.args)}`,
    async (item) => {
      const found: Pending[] = [];
      const call = toolCallText(item.tool, item.args);
      const chain = item.chain;
      const parent = chain.length > 1 ? (chain[chain.length - 2]?.call.split('(')[0] ?? '') : 'a probe';

      // As written: the tool exists and takes the arguments without a repair.
      const tool = BY_NAME.get(item.tool);
      if (tool === undefined) {
        log.fail('no-such-tool', `${parent} names ${item.tool}`, chain, `the tools: ${TOOLS.map((t) => t.name).join(', ')}`);
        return found;
      }
      const prepared = prepareArguments(tool, item.args);
      if (!prepared.ok) {
        // The signature every refusal ends with would make the class long and say nothing about the defect.
        const why = prepared.message.split(' Call it as ')[0] as string;
        log.fail('arguments-refused', `${item.tool} named by ${parent}: ${follow.shape(why)}`, chain, prepared.message);
        return found;
      }
      if (prepared.repairs.length > 0) {
        log.fail('arguments-repaired', `${item.tool} named by ${parent}: ${follow.shape(prepared.repairs.join('; '))}`, chain, prepared.repairs.join('; '));
      }

      let result: CallResult;
      try {
        result = await execute(item.target, item.tool, item.args);
      } catch (err) {
        // The dispatcher answers a workspace's errors as results; anything thrown is a defect at any depth.
        log.fail('throws', `${item.tool} named by ${parent}: ${follow.shape(String(err))}`, chain, String(err));
        return found;
      }
      const error = errorOf(result);
      const refused = result.isError && error === undefined;
      const view = typeof result.data.view === 'string' ? result.data.view : error !== undefined ? 'error' : refused ? 'refused' : 'data';
      if (error !== undefined) {
        // By tool, not by call: the shaped JSON of a call (`{"…":"…"}`) would say nothing.
        if (item.depth === 0) probeErrors.push(`${item.tool} → ${error.message}`.split(file).join('<file>'));
        else log.fail('error', `${item.tool} named by ${parent}, ${error.code}: ${follow.shape(error.message)}`, chain, result.text);
      }

      // What the model reads has the budget, an error's message included.
      const counted = o200kTokenizer.count(result.text);
      const tokens = Math.max(counted, typeof result.data.tokens === 'number' ? result.data.tokens : 0);
      if (tokens > follow.BUDGET) {
        log.fail(
          'over-budget',
          `${item.tool} (${view}) ${tokens > counted ? 'reports' : 'serves'} more than ${follow.BUDGET} tokens`,
          chain,
          `${tokens} tokens`,
        );
      }

      // `next` is data a program may run as it is: one tool call, nothing around it (an API call there is reported below).
      const next = result.data.next;
      if (typeof next === 'string') {
        const inNext = findToolCalls(next, NAMES);
        if (inNext.length !== 1 || inNext[0]?.source !== next.trim()) {
          log.fail('next-not-one-call', `${item.tool} next is ${follow.shape(next)}`, chain, `next: ${next}`);
        }
      }

      const hints = hintsOf(result);
      const namesACall = hints.some((h) => h.finding.kind === 'call');
      if (follow.TRACE) console.log(`${'  '.repeat(item.depth)}${call} → ${view} ${counted}${error ? ` ${error.code}: ${error.message.slice(0, 120)}` : ''}`);
      if (refused && !namesACall) log.fail('refused-without-next', `${item.tool} refused naming no call: ${follow.shape(result.text)}`, chain, result.text);
      // A hint that leads to "this call's budget cannot hold even one line" did not work in this profile.
      if (view === 'over-budget' && item.depth > 0) {
        log.fail('over-budget-view', `${item.tool} named by ${parent} is answered over-budget: ${follow.shape(result.text)}`, chain, result.text);
      }
      // Nothing of what was asked, and no call at all to make instead: the model is stuck.
      if (hints.length === 0 && item.depth === 0 && (view === 'over-budget' || error !== undefined)) {
        log.fail('dead-end', `${item.tool} serves nothing and names no call: ${follow.shape(result.text)}`, chain, result.text);
      }
      for (const { finding, from } of hints) {
        const where = from.split(':')[0];
        const step = [...chain, { call: finding.source, from }];
        if (finding.kind === 'api-style') {
          log.fail('api-style', `${item.tool} ${where} names ${follow.shape(finding.source)}`, step, 'a call of the TypeScript API, not of a tool');
          continue;
        }
        if (finding.kind === 'malformed') {
          log.fail('not-concrete', `${item.tool} ${where} names ${follow.shape(finding.source)}`, step, finding.reason);
          continue;
        }
        // A call that changes files runs on the copy, never on the corpus (a buffer's, in its session on the copy).
        const changes = BY_NAME.get(finding.name)?.annotations.readOnlyHint === false;
        const target = changes && item.target.name !== 'buffer' ? edit : item.target;
        const hop = { call: toolCallText(finding.name, finding.args), from };
        found.push({ target, tool: finding.name, args: finding.args, depth: item.depth + 1, chain: [...chain, hop] });
      }
      return found;
    },
  );
  return { failures: log.failures, followed, probeErrors };
}

// ------------------------------------------------------------------ probes

async function probesFor(read: Target, edit: Target, buffer: Target, file: follow.CorpusFile): Promise<Pending[]> {
  const path = file.path;
  const lines = follow.lineCount(file.text);
  const doc = await read.layer.loader.load(file.symbolsFrom, 'probe');
  const { largest, middle } = follow.symbolsOf(flattenSymbols((await symbolTable(doc)).symbols));
  // A name from the file for the searches: a definition's, else a word from its middle.
  const name = middle?.name ?? /[A-Za-z_]\w{3,}/.exec(file.text.slice(Math.floor(file.text.length / 2)))?.[0] ?? 'function';
  const calls: Array<[Target, string, Record<string, unknown>]> = [
    [read, 'read_file', { path }],
    [read, 'read_file', { path, strategy: 'end' }],
    [read, 'get_outline', { path }],
    [read, 'get_symbol', { path, name: follow.MISSING_SYMBOL }],
    [read, 'summarize_file', { path }],
    [read, 'get_excerpt', { path }],
    [read, 'read_lines', { path, start_line: lines + 10, end_line: lines + 20 }],
    [read, 'grep', { pattern: name, path, literal: true }],
    [read, 'find_symbol', { query: name }],
    [read, 'list_files', { path: dirname(path) }],
    [read, 'glob', { pattern: `**/*${extname(path)}` }],
    [read, 'get_diff', { path }],
    [read, 'check_conflicts', { path }],
    [edit, 'edit_lines', { path, action: 'replace', start_line: lines + 5, end_line: lines + 6, text: '// past the end\n' }],
    [edit, 'undo', { path }],
    [edit, 'open_file', { path, permission: 'human' }],
    [edit, 'file_status', { path }],
    [edit, 'buffer_diff', { path }],
    [edit, 'reload_file', { path }],
    [edit, 'save_file', { path }],
    [edit, 'close_file', { path }],
  ];
  if (largest) calls.push([read, 'get_symbol', { path, name: largest.qualifiedName }]);
  const twice = follow.repeatedWord(file.text);
  if (twice !== undefined) calls.push([edit, 'replace', { path, old_text: twice, new_text: `${twice}_renamed` }]);
  // The file open in a buffer: the edit tools change the buffer and name save_file; reads serve it; a patch of several files is refused.
  if (buffer.session !== undefined) {
    calls.push(
      [buffer, 'edit_lines', { path, action: 'insert_before', start_line: 1, text: '// buffered\n' }],
      [buffer, 'edit_lines', { path, action: 'replace', start_line: lines + 5, end_line: lines + 6, text: '// past the end\n' }],
      [buffer, 'replace', { path, old_text: '// buffered\n', new_text: '// buffered, replaced\n' }],
      [buffer, 'replace', { path, old_text: follow.MISSING_SYMBOL, new_text: 'x' }],
      [buffer, 'read_lines', { path, start_line: 1, end_line: 3 }],
      [
        buffer,
        'apply_patch',
        {
          patch: `*** Begin Patch\n*** Add File: ${path}.probe\n+probe\n*** Update File: ${path}\n@@\n-// buffered, replaced\n+// buffered, patched\n*** End Patch\n`,
        },
      ],
    );
    if (twice !== undefined) calls.push([buffer, 'replace', { path, old_text: twice, new_text: `${twice}_renamed` }]);
  }
  return calls.map(([target, tool, args]) => ({ target, tool, args, depth: 0, chain: [{ call: toolCallText(tool, args), from: undefined }] }));
}

// ------------------------------------------------------------------ the test

const corpus = follow.buildCorpus((path) => PROBED.has(path));

describe('every call a small-profile tool result names is a tool call that works in the small profile', () => {
  for (const backend of BACKENDS) {
    test(`${backend.name}: follow every next, marker and hint to depth ${follow.MAX_DEPTH}: a tool, exact arguments, no error, within budget, no API call`, {
      timeout: 600_000,
    }, async () => {
      const run = await follow.followCorpus(backend, corpus, AGENT, async (layer, editLayer, file) => {
        const read: Target = { name: 'read', layer };
        const edit: Target = { name: 'edit', layer: editLayer };
        // A copy of its own, so that no other target's edit moves the buffer's lines between a hint and the call it names.
        // Not the file over the document limit: a buffer holds a file whole.
        const opens = file.text.length < 16 * 1024 * 1024;
        const copy = await backend.create(opens ? { [file.path]: file.text } : {});
        const bufferLayer = await createContext({ fs: copy.fs, store: ':memory:', profile: 'small', agent: AGENT });
        try {
          const session = bufferLayer.session({ agent: AGENT, profile: 'small' });
          const buffer: Target = { name: 'buffer', layer: bufferLayer, ...(opens ? { session: { session, open: file.path } } : {}) };
          return await followFile(backend.name, file.path, await probesFor(read, edit, buffer, file), edit);
        } finally {
          await bufferLayer.close();
          await copy.cleanup();
        }
      });
      follow.logRun(backend.name, PROBED.size, run);
      const occurring = new Set(run.failures.map((f) => f.klass));
      const gone = Object.keys(KNOWN).filter((k) => !occurring.has(k));
      if (gone.length > 0) console.log(`known failure classes that no longer occur (their entries can go):\n  ${gone.join('\n  ')}`);
      const unknown: follow.Failure[] = run.failures.filter((f) => !(f.klass in KNOWN));
      expect(run.followed, 'the probes name calls to follow').toBeGreaterThan(PROBED.size);
      expect(corpus.filter((f) => f.probed).length, 'every file picked is in the corpus').toBe(PROBED.size);
      // The count, with the grouped report of the new classes as the message: a diff of failure objects would bury it.
      expect(unknown.length, follow.report(unknown)).toBe(0);
    });
  }
});
