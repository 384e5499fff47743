/**
 * What every retrieval call shares: the workspace services, the caller (agent,
 * profile, session), the served-result shape, budgets, redaction of a
 * document (once per content hash) and the bookkeeping after serving.
 *
 * @module
 */

import { type Filesystem, type FsError, fsError, isFsError } from '@ctxfs/core';
import { mergedFirst } from '../buffers/overwritten-text.ts';
import { callText, optionName } from '../calls/call-text.ts';
import { type Document, type DocumentLoader, type DocumentSource, derive } from '../content/document.ts';
import type { LineWindow } from '../content/line-window.ts';
import type { ModelProfile } from '../profiles/model-profiles.ts';
import type { FileRegistry } from '../registry/file-registry.ts';
import { type BlockInfo, wrapContent } from '../safety/delimiters.ts';
import type { Redactor } from '../safety/redaction.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { editDistance } from '../search/symbol-ranking.ts';
import type { SessionContext } from '../session/session-context.ts';
import type { StateStore } from '../state/state-store.ts';
import type { Summarizer, SummaryCache } from '../summaries/summarizer.ts';
import type { Tokenizer } from '../tokens/tokenizer.ts';
import type { RelationIndex } from './related.ts';

/** Services of one workspace, shared by every session. */
export interface Workspace {
  readonly fs: Filesystem;
  readonly store: StateStore;
  readonly registry: FileRegistry;
  /** Where reads get documents: in a session with open buffers, their text for those files (`buffers/buffer-routing.ts`). */
  readonly loader: DocumentSource;
  readonly tokenizer: Tokenizer;
  readonly redactor: Redactor;
  readonly summarizer: Summarizer;
  readonly summaries: SummaryCache;
  readonly relations: RelationIndex;
}

/** The workspace as the context layer builds it, with the loader itself. */
export interface WorkspaceServices extends Workspace {
  readonly loader: DocumentLoader;
}

/** Who is asking. */
export interface Caller {
  readonly agent: string;
  readonly profile: ModelProfile;
  readonly session: SessionContext;
}

/**
 * What a result is served from: a loaded document, or a window of a file too
 * large to load whole (see `content/line-window.ts`).
 */
export type Source = Document | LineWindow;

/** Lines in the file a source comes from. */
export function totalLinesOf(src: Source): number {
  return 'totalLines' in src ? src.totalLines : src.lines.length;
}

/**
 * Tokens of the whole file. A window's file was never tokenized whole: its
 * count is estimated from its characters (four to a token).
 */
export function totalTokensOf(ws: Workspace, src: Source): number {
  return 'totalLines' in src ? Math.ceil(src.totalChars / 4) : documentTokens(ws, src);
}

/** What kind of view a result is. */
export type ViewKind = 'full' | 'truncated' | 'lines' | 'excerpt' | 'symbol' | 'outline' | 'summary' | 'related' | 'narrow' | 'over-budget';

/** A span of lines left out of a result. */
export interface Omission {
  readonly startLine: number;
  readonly endLine: number;
  readonly tokens: number;
}

/**
 * The result of every retrieval call. `text` is what to hand to the model:
 * redacted, wrapped in delimiters naming the file, within budget.
 */
export interface Served {
  readonly path: string;
  /** Content hash of the file as served: the version an edit must be based on. */
  readonly version: string;
  readonly view: ViewKind;
  readonly text: string;
  /** Tokens of `text`, by the tokenizer. */
  readonly tokens: number;
  readonly totalLines: number;
  /**
   * Tokens of the whole file; for a file over the document limit (served by
   * streaming) an estimate from its size.
   */
  readonly totalTokens: number;
  /** Lines served, when the view is a range. */
  readonly startLine?: number | undefined;
  readonly endLine?: number | undefined;
  /** Lines cut out, and what they would cost. */
  readonly omitted: readonly Omission[];
  /**
   * How to get what is missing, in words a model can act on; first, when
   * the read of an open buffer took in a change on disk that overwrote the
   * agent's text there, that note and the call that brings the text back.
   */
  readonly next?: string | undefined;
  /** Secrets masked in the served text. */
  readonly redactions: number;
}

/** A document's redacted lines, computed once per content hash. */
export function redactedLines(ws: Workspace, doc: Document): { lines: readonly string[]; findings: number; lineHits: ReadonlySet<number> } {
  return derive(doc, 'redacted', () => {
    const r = ws.redactor.redact(doc.text);
    const lines = r.findings.length === 0 ? doc.lines : r.text.split(/\r?\n/).slice(0, doc.lines.length);
    return { lines, findings: r.findings.length, lineHits: new Set(r.findings.map((f) => f.line)) };
  });
}

/** Tokens of each redacted line with its newline, computed once per content hash. */
export function lineTokens(ws: Workspace, doc: Document): readonly number[] {
  return derive(doc, `lineTokens:${ws.tokenizer.name}`, () => redactedLines(ws, doc).lines.map((l) => ws.tokenizer.count(`${l}\n`)));
}

/** Tokens of the whole (redacted) document. */
export function documentTokens(ws: Workspace, doc: Document): number {
  return derive(doc, `tokens:${ws.tokenizer.name}`, () => lineTokens(ws, doc).reduce((a, b) => a + b, 0));
}

/** Below this a call cannot say anything useful, not even that its budget is too small. */
export const MIN_USEFUL_TOKENS = 48;

/**
 * Tokens the call may use: the caller's ask, capped by the profile and the
 * session. An ask below {@link MIN_USEFUL_TOKENS} is refused (`EINVAL`): no
 * answer, not even the one saying the budget is too small, would fit it.
 */
export function callBudget(caller: Caller, requested: number | undefined, op: string, path?: string): number {
  if (requested !== undefined && !(requested >= MIN_USEFUL_TOKENS)) {
    throw fsError('EINVAL', op, path, {
      // Worded without the option's name: a tool set calls it otherwise (max_tokens).
      reason: `a budget of ${requested} tokens is below the minimum of ${MIN_USEFUL_TOKENS} a call needs`,
      hint: `ask for at least ${MIN_USEFUL_TOKENS} tokens, or leave the budget out for the profile's ${caller.profile.perCallTokens}`,
    });
  }
  const cap = Math.min(caller.profile.perCallTokens, caller.session.remainingTokens);
  const want = Math.max(0, Math.min(requested ?? cap, cap));
  // Under a policy token budget the call gets what it sets aside: calls run together cannot overshoot it.
  return currentCall()?.reserveTokens(want, MIN_USEFUL_TOKENS) ?? want;
}

/** Tokens the session may still be served: the profile's session budget, and the policy's where it sets one. */
export function sessionTokensLeft(caller: Caller): number {
  return Math.min(caller.session.remainingTokens, currentCall()?.tokensLeft() ?? Number.POSITIVE_INFINITY);
}

/** What a call is told when the session, not the call, has no tokens left: which budget, and what to do. */
export function sessionSpentNotice(caller: Caller): string {
  if (caller.session.remainingTokens <= (currentCall()?.tokensLeft() ?? Number.POSITIVE_INFINITY)) {
    return `Session budget spent: ${caller.session.tokensServed} of ${caller.profile.sessionTokens} tokens served (profile ${caller.profile.name}). Nothing more can be served in this session; finish the task with what you have, or ask the orchestrator for a new session.`;
  }
  return `The policy's token budget for this session leaves ${currentCall()?.tokensLeft() ?? 0} tokens, too few for this call. It resets with a new session; finish the task with what you have, or ask the user for a new session.`;
}

/** Loads a document and brings the registry up to date with what was read. */
export async function loadDocument(ws: Workspace, path: string, op: string): Promise<Document> {
  let doc: Document;
  try {
    doc = await ws.loader.load(path, op);
  } catch (err) {
    if (isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR')) throw missingFile(ws, path, op, err);
    throw err;
  }
  // A buffer's text is not the file's: the registry keeps what is on disk.
  if (doc.buffered === undefined) await noteRead(ws, path, { sha256: doc.sha256, size: doc.size, mtimeMs: doc.mtimeMs, head: doc.text.slice(0, 1024) });
  return doc;
}

/** Brings the registry up to date with content just read. */
export async function noteRead(ws: Workspace, path: string, read: { sha256: string; size: number; mtimeMs: number; head: string }): Promise<void> {
  if (ws.registry.isIgnored(path)) return;
  await ws.registry.observe(path, read);
  await ws.registry.recordAccess(path);
}

/**
 * `ENOENT` for a file a read asked for, reported as that read (not the stat
 * under it), with the registered paths nearest to what was asked: same name
 * elsewhere first, then the closest spellings.
 */
export function missingFile(ws: Pick<Workspace, 'registry'>, path: string, op: string, cause?: FsError, reason = `no file at ${path}`): FsError {
  const name = path.slice(path.lastIndexOf('/') + 1);
  // A path given from a directory below the root (a listing's row, named under the directory its header gives) is
  // the end of the path meant: that match goes before every file of the same name elsewhere.
  const tail = `/${path}`;
  const scored: Array<{ path: string; score: number }> = [];
  for (const r of ws.registry.list()) {
    // The registry may still hold the path itself (removed behind ctxfs's back, not yet rescanned): not another name.
    if (r.path === path) continue;
    const base = r.path.slice(r.path.lastIndexOf('/') + 1);
    const score = r.path.endsWith(tail) ? -1 : base === name ? 0 : Math.min(editDistance(path, r.path, 4) + 1, editDistance(name, base, 2) + 2);
    if (score <= 4) scored.push({ path: r.path, score });
  }
  const near = scored
    .sort((a, b) => a.score - b.score || a.path.localeCompare(b.path))
    .slice(0, 3)
    .map((s) => q(s.path));
  const byName = callText('glob', [`**/${name}`]);
  const look = ws.registry.size > 0 ? `${byName} or ${callText('listFiles', [])}` : `${callText('scan', [])} first, then ${byName}`;
  return fsError('ENOENT', op, path, {
    reason,
    hint: near.length > 0 ? `did you mean ${near.join(', ')}? Otherwise find it with ${look}` : `find it with ${look}`,
    cause,
  });
}

/** Wraps, counts and records one result. */
export async function serve(
  ws: Workspace,
  caller: Caller,
  op: string,
  doc: Source,
  body: string,
  fields: Omit<Served, 'text' | 'tokens' | 'path' | 'version' | 'totalLines' | 'totalTokens'> & { label?: string | undefined },
): Promise<Served> {
  const text = servedBlock(ws, doc, body, fields.label, fields.view);
  const tokens = lastWrapped.reuse(ws, doc, body, fields.label, fields.view) ?? ws.tokenizer.count(text);
  const { label: _label, ...rest } = fields;
  const served: Served = {
    path: doc.path,
    version: doc.sha256,
    totalLines: totalLinesOf(doc),
    totalTokens: totalTokensOf(ws, doc),
    text,
    tokens,
    ...rest,
  };
  await caller.session.recordRead({
    agent: caller.agent,
    path: doc.path,
    sha256: doc.sha256,
    op,
    startLine: fields.startLine,
    endLine: fields.endLine,
    tokens,
  });
  // The note of text a change overwrote is said once it is served, not when the change was taken in.
  if ('buffered' in doc && doc.buffered?.overwritten !== undefined) doc.buffered.said?.();
  return served;
}

/** Tokens the wrapper adds around a body (measured on an empty body). */
export function wrapperTokens(ws: Workspace, doc: Source, label: string | undefined, view: ViewKind): number {
  // Asked at every read before its body is cut, and the same for every read of a version: remembered by what
  // the empty block is made of (its nonce, 12 digits, is 4 tokens whatever they are), not wrapped and counted anew.
  const info = blockInfo(ws, doc, label, view);
  const key = JSON.stringify([info.path, info.version, info.lines, info.view, info.sensitive, info.buffer, info.encoding, overwrittenOf(doc)]);
  let counts = wrapperCounts.get(ws.tokenizer);
  if (counts === undefined) {
    counts = new Map();
    wrapperCounts.set(ws.tokenizer, counts);
  }
  const known = counts.get(key);
  if (known !== undefined) return known;
  const tokens = ws.tokenizer.count(servedBlock(ws, doc, '', label, view)) + 2;
  if (counts.size >= WRAPPER_COUNTS) counts.clear();
  counts.set(key, tokens);
  return tokens;
}

/** Empty blocks' counts by tokenizer, at most {@link WRAPPER_COUNTS} each. */
const wrapperCounts = new WeakMap<Tokenizer, Map<string, number>>();
const WRAPPER_COUNTS = 1024;

/**
 * A body as served: wrapped in its block, after the note of text a change
 * on disk overwrote as the read of an open buffer took that change in.
 * The note is told first, outside the block (it is ctxfs's, not the
 * file's), and counted with the block, so a read that fills its budget
 * still says it: in `next` it was dropped whenever the text left no room.
 */
function servedBlock(ws: Workspace, doc: Source, body: string, label: string | undefined, view: ViewKind): string {
  const block = wrapContent(body, blockInfo(ws, doc, label, view));
  const overwritten = overwrittenOf(doc);
  return overwritten === undefined ? block : `${mergedFirst(overwritten, undefined)}\n${block}`;
}

/** The overwritten-text note a read of an open buffer carries, if any. */
function overwrittenOf(doc: Source): string | undefined {
  return 'buffered' in doc ? doc.buffered?.overwritten : undefined;
}

/** The delimiter attributes of a block served from `doc`. */
function blockInfo(ws: Workspace, doc: Source, label: string | undefined, view: ViewKind): BlockInfo {
  const buffered = 'buffered' in doc ? doc.buffered : undefined;
  return {
    path: doc.path,
    version: doc.sha256,
    lines: label,
    view,
    sensitive: ws.registry.get(doc.path)?.sensitive,
    buffer: buffered === undefined ? undefined : buffered.dirty ? 'open buffer, unsaved changes: not on disk' : 'open buffer, same as disk',
    // UTF-8 (with or without a BOM) is what a model assumes; any other decoding is named.
    encoding: doc.encoding === 'utf-8' ? undefined : doc.encoding,
  };
}

/**
 * The last body measured by {@link wrappedTokens}, kept so that `serve`,
 * which most often wraps that very body next, does not tokenize it again.
 * The count does not depend on the nonce: it is always 12 digits, which
 * o200k splits into the same 4 tokens whatever they are.
 */
const lastWrapped = {
  key: undefined as
    | {
        ws: Workspace;
        path: string;
        version: string;
        body: string;
        label: string | undefined;
        view: ViewKind;
        sensitive: boolean | undefined;
        overwritten: string | undefined;
        tokens: number;
      }
    | undefined,
  reuse(ws: Workspace, doc: Source, body: string, label: string | undefined, view: ViewKind): number | undefined {
    const k = this.key;
    return k !== undefined &&
      k.ws === ws &&
      k.path === doc.path &&
      k.version === doc.sha256 &&
      k.label === label &&
      k.view === view &&
      k.sensitive === ws.registry.get(doc.path)?.sensitive &&
      k.overwritten === overwrittenOf(doc) &&
      k.body === body
      ? k.tokens
      : undefined;
  },
};

/** Exact tokens of `body` once wrapped. */
export function wrappedTokens(ws: Workspace, doc: Source, body: string, label: string | undefined, view: ViewKind): number {
  const sensitive = ws.registry.get(doc.path)?.sensitive;
  const tokens = lastWrapped.reuse(ws, doc, body, label, view) ?? ws.tokenizer.count(servedBlock(ws, doc, body, label, view));
  lastWrapped.key = { ws, path: doc.path, version: doc.sha256, body, label, view, sensitive, overwritten: overwrittenOf(doc), tokens };
  return tokens;
}

/** `N\tline` numbering, the conventional form (as `cat -n` and most agent tools print). */
export function numbered(lines: readonly string[], firstLine: number): string {
  return lines.map((l, i) => `${firstLine + i}\t${l}`).join('\n');
}

/** A JSON-quoted path for instructions (`readLines("a b.ts", 1, 40)`). */
export function q(path: string): string {
  return JSON.stringify(path);
}

/**
 * `, or raise max_tokens (the profile allows up to 1500)`, with the budget
 * option named as the caller's surface names it for the call under way;
 * nothing where that surface gives the call no budget option.
 */
export function raiseBudget(caller: Caller): string {
  const op = currentCall()?.call.op;
  const name = op === undefined ? 'maxTokens' : optionName(op, 'maxTokens');
  return name === undefined ? '' : `, or raise ${name} (the profile allows up to ${caller.profile.perCallTokens})`;
}

/** The result when the call's budget cannot hold even the smallest useful answer. */
export function overBudget(ws: Workspace, caller: Caller, doc: Source, budget?: number): Served {
  const perCall = budget !== undefined && sessionTokensLeft(caller) > budget;
  const body = perCall
    ? // The call names the file: the notice does not, so that it fits the smallest budget whatever the path.
      `The budget of this call (${budget} tokens) cannot hold even one line here. Ask for a smaller range${raiseBudget(caller)}.`
    : sessionSpentNotice(caller);
  return {
    path: doc.path,
    version: doc.sha256,
    view: 'over-budget',
    text: body,
    tokens: ws.tokenizer.count(body),
    totalLines: totalLinesOf(doc),
    totalTokens: totalTokensOf(ws, doc),
    omitted: [{ startLine: 1, endLine: totalLinesOf(doc), tokens: totalTokensOf(ws, doc) }],
    // The text says what to do; `next` only ever names a call, and no call of this session can serve more.
    next: undefined,
    redactions: 0,
  };
}
