/**
 * One agent's session on a workspace: every call a model makes — reads,
 * searches, edits, history, commands — resolved at the path boundary
 * (`session/path-boundary.ts`), decided, budgeted and recorded by the
 * safety layer, routed to a buffer when the file is open in one, and served
 * within the agent's model profile. {@link ContextLayer} is the session that
 * also owns the workspace.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import type { BufferEditOp } from './buffers/buffer-edits.ts';
import { BufferRouting } from './buffers/buffer-routing.ts';
import { type ChangeSource, changeSourceFor } from './buffers/change-source.ts';
import { SessionBuffers } from './buffers/session-buffers.ts';
import { staleBuffer } from './conflicts/conflict-detector.ts';
import type { ConflictOptions } from './conflicts/strategies.ts';
import type { DocumentSource } from './content/document.ts';
import type { ApplyPatchOptions } from './edits/apply-patch.ts';
import { type EditConflict, type EditResult, maskedConflict, refusal } from './edits/edit-result.ts';
import { type EditOptions, FileEditor, refusalAsError } from './edits/file-editor.ts';
import { decodeFile } from './edits/file-text.ts';
import type { CrashHook, EditJournal } from './edits/journal.ts';
import { deleteLink, linkRemovedByPatch, renameLink } from './edits/link-entries.ts';
import { EditOperations, type RenameCallOptions, type ReplaceCallOptions } from './edits/operations.ts';
import {
  getDiff,
  getFileHistory,
  getVersion,
  ownUndoTarget,
  rollback,
  type UndoOptions,
  undo,
  type VersionContent,
  type VersionDiff,
  type VersionRef,
} from './history/history.ts';
import { type FileVersion, type RetentionOptions, sha256Hex, type VersionStore } from './history/version-store.ts';
import { buildOverview, type Overview, type ToolDescription } from './overview/project-overview.ts';
import type { LineEdit } from './patch/text-edits.ts';
import type { ModelProfile } from './profiles/model-profiles.ts';
import { type ProgramChange, ProgramRun } from './programs/program-run.ts';
import { getExcerpt } from './retrieval/excerpt.ts';
import { getOutline, type OutlineCallOptions } from './retrieval/outline.ts';
import { type ReadFileOptions, readFile } from './retrieval/read-file.ts';
import { type ReadLinesOptions, readLines } from './retrieval/read-lines.ts';
import { getRelatedFiles, type RelatedResult } from './retrieval/related.ts';
import { type Caller, missingFile, type Served, type Workspace, type WorkspaceServices } from './retrieval/shared.ts';
import { summarizeFile } from './retrieval/summary.ts';
import { getSymbol } from './retrieval/symbol.ts';
import type { CommandRules } from './safety/command-rules.ts';
import type { Decision, OpClass } from './safety/policy.ts';
import { askingFirst, type CallOutcome, currentCall, type GuardedCall, type SafetyLayer } from './safety/safety-layer.ts';
import { type GlobCallOptions, glob, type ListFilesOptions, type ListingResult, listFiles } from './search/file-listing.ts';
import { type FindSymbolOptions, findSymbol, type SymbolHit } from './search/find-symbol.ts';
import { type GrepCallOptions, type GrepResult, grep } from './search/grep.ts';
import type { SearchResult } from './search/search-result.ts';
import { editOutcome, normalized, patchTargets, previews, servedOutcome } from './session/call-shapes.ts';
import { PathBoundary } from './session/path-boundary.ts';
import type { SessionContext } from './session/session-context.ts';

/** Edit settings of a context layer (see `ContextLayer`). */
export interface EditSettings extends ConflictOptions {
  /** Applied on open when given, and by `pruneHistory()`; a limit not given is `DEFAULT_RETENTION`'s (1,000 versions per file, 512 MiB). Without it nothing prunes on its own. */
  retention?: RetentionOptions;
  /** Store the content of every file served to a model (up to this many bytes; default 1 MiB, 0 to disable) so a stale edit can be merged. */
  rememberReadsUpTo?: number;
  /** Test hook: called at the journal's crash points. */
  crashHook?: CrashHook;
}

/** The edit and safety services a workspace shares across its sessions. */
export interface EditServices {
  readonly versions: VersionStore;
  readonly journal: EditJournal;
  readonly settings: EditSettings;
  readonly safety: SafetyLayer;
  /** The workspace's one source of disk changes, made when a session first opens a buffer. */
  readonly changes: { source?: ChangeSource };
}

/** Options of {@link ContextSession.command}. */
export interface CommandCallOptions<T> {
  /** The command will run where nothing confines it to the workspace: refused unless the policy's `[commands] unconfined` allows it. */
  readonly unconfined?: boolean | undefined;
  /** Recorded with the command: where it runs, how (`just-bash`, `bubblewrap`, `container`). */
  readonly params?: Readonly<Record<string, unknown>> | undefined;
  /** What the finished command reports for its audit record and the budgets (bytes handed to the model). */
  readonly outcome?: ((value: T) => { readonly bytes?: number | undefined; readonly code?: string | undefined }) | undefined;
}

/** What {@link ContextSession.command} returns: the body's value and the files the command changed, as history recorded them. */
export interface CommandOutcome<T> {
  readonly value: T;
  readonly changes: readonly ProgramChange[];
}

/** Options of `overview()`. */
export interface OverviewCallOptions {
  /** Token budget; default the profile's overview budget. */
  budgetTokens?: number;
  tools?: readonly ToolDescription[];
}

/**
 * The retrieval API for one agent in one session. Every result is redacted,
 * delimited, within the profile's per-call budget, and recorded as read by
 * this agent at the version served.
 */
export class ContextSession {
  readonly agent: string;
  readonly profile: ModelProfile;
  /** What this session has served: reads, versions seen, tokens spent. */
  readonly sessionContext: SessionContext;
  readonly #ws: WorkspaceServices;
  readonly #entrypoints: readonly string[];
  readonly #edits: EditServices;
  /** Where every path a call gives is resolved to its file's one key. */
  readonly #paths: PathBoundary;
  #ops: EditOperations | undefined;
  #buffers: SessionBuffers | undefined;
  /** Sends edits and reads of a file open in {@link buffers} to its buffer; everything else to the disk. */
  readonly #routing: BufferRouting;
  /** The documents reads are served from: the open buffers over the workspace's loader. */
  readonly #documents: DocumentSource;

  /** @internal use {@link ContextLayer.session} */
  constructor(ws: WorkspaceServices, agent: string, profile: ModelProfile, session: SessionContext, entrypoints: readonly string[], edits: EditServices) {
    this.#ws = ws;
    this.agent = agent;
    this.profile = profile;
    this.sessionContext = session;
    this.#entrypoints = entrypoints;
    this.#edits = edits;
    this.#paths = new PathBoundary(ws.fs, ws.registry);
    this.#routing = new BufferRouting({ buffers: () => this.#buffers, session, agent, redactor: ws.redactor });
    this.#documents = this.#routing.documents(ws.loader);
  }

  /** The workspace as this session's reads see it: a file open in a buffer is the buffer's text. */
  get #view(): Workspace {
    return this.#buffers === undefined || this.#buffers.paths.length === 0 ? this.#ws : { ...this.#ws, loader: this.#documents };
  }

  /** The workspace's filesystem (the backend itself: what reaches it directly skips the policy). */
  get fs(): Filesystem {
    return this.#ws.fs;
  }

  /** Where the workspace's state lives: the SQLite file or `':memory:'`, or the PostgreSQL URL (without its password). */
  get statePath(): string {
    return this.#ws.store.location;
  }

  /**
   * What the policy says to this agent about `opClass` on `path`, without
   * doing anything: for a program that reaches files on the agent's behalf
   * (see `command`). `directory`: the path is a directory (a search's
   * scope, a directory's rename or delete), so a rule for `secrets/` names
   * it too, as it does for the session's own calls.
   *
   * @example
   * ```ts
   * ctx.policyFor('read', '.env').effect; // 'deny' unless a rule allows it
   * ctx.policyFor('search', 'secrets', true).effect; // decided as the directory itself
   * ```
   */
  policyFor(opClass: OpClass, path: string, directory = false): Decision {
    return this.#edits.safety.decide(opClass, path, this.agent, directory);
  }

  get #caller(): Caller {
    return { agent: this.agent, profile: this.profile, session: this.sessionContext };
  }

  /** The edit pipeline of this session; only the guarded methods below reach it. */
  get #editor(): FileEditor {
    return this.#operations.editor;
  }

  /** Runs one public call through the safety layer: the only way into retrieval, search and edits. */
  #guard<T>(call: GuardedCall, body: () => Promise<T>, outcome: (result: T) => CallOutcome, rerunnable = false): Promise<T> {
    // The call's budget is the session's as the call begins, whoever else spent from it.
    return this.#edits.safety.run(
      call,
      { agent: this.agent, session: this.sessionContext },
      async () => {
        // A call that only reads may start from the spend last seen, its charge confirming it (no round trip of
        // its own); run again after a refresh when another handle charged meanwhile. Not with a change to settle.
        if (rerunnable && !this.#edits.journal.unsettled) {
          const ran = await this.sessionContext.speculate(body);
          if (ran !== undefined) return ran.value;
        }
        await this.sessionContext.refresh();
        await this.#settleOwnChanges();
        return body();
      },
      outcome,
    );
  }

  /**
   * Records a change of this context whose files were written while the
   * state store was failing, before this call reads the disk (see
   * `EditJournal.settleOwn`). While the store still fails the call goes on:
   * it meets the same failure and reports it.
   */
  async #settleOwnChanges(): Promise<void> {
    const journal = this.#edits.journal;
    if (!journal.unsettled || this.#ws.fs.readOnly) return;
    try {
      await journal.settleOwn(this.#ws.fs);
    } catch {
      // Tried again at the next call.
    }
  }

  /**
   * Runs an operation that is not one of this session's own calls through
   * the same choke point: the policy's decision for its paths, the
   * session's budgets and rate limit, and one audit record. For framework
   * adapters (`@ctxfs/adapters`) whose contract moves raw bytes — a byte
   * stream, a listing — that no retrieval call serves; `body` does the I/O.
   *
   * @example
   * ```ts
   * const bytes = await session.guarded({ op: 'readBytes', opClass: 'read', paths: ['a.png'], params: {} },
   *   () => fs.readBytes('a.png'), (b) => ({ result: 'ok', bytes: b.byteLength }));
   * ```
   */
  guarded<T>(call: GuardedCall, body: () => Promise<T>, outcome: (result: T) => CallOutcome): Promise<T> {
    return this.#guard(call, askingFirst(call, body), outcome);
  }

  get #operations(): EditOperations {
    this.#ops ??= new EditOperations(
      new FileEditor({
        fs: this.#ws.fs,
        store: this.#ws.store,
        registry: this.#ws.registry,
        versions: this.#edits.versions,
        journal: this.#edits.journal,
        session: this.sessionContext,
        agent: this.agent,
        defaults: {
          strategy: this.#edits.settings.strategy,
          approve: this.#edits.settings.approve,
          review: this.#edits.settings.review,
          markers: this.#edits.settings.markers,
        },
        crashHook: this.#edits.settings.crashHook,
        afterCommit: (paths) => this.#refreshDerived(paths),
        // A change the policy asks about is shown to the person with every file's diff, then written or not.
        beforeCommit: async (plans) => await currentCall()?.approveChanges(() => previews(plans)),
        redactor: this.#ws.redactor,
      }),
    );
    return this.#ops;
  }

  /**
   * This session's open files: buffers kept in step with the disk by their
   * permission, edited in memory, saved through {@link writeFile}.
   *
   * @example
   * ```ts
   * await ctx.buffers.open('src/a.ts', { permission: 'human' });
   * await ctx.buffers.replace('src/a.ts', 'retries = 3', 'retries = 5');
   * await ctx.buffers.save('src/a.ts');
   * ```
   */
  get buffers(): SessionBuffers {
    this.#buffers ??= new SessionBuffers({
      fs: this.#ws.fs,
      // The save of a buffer: to the disk, never routed back into the buffer.
      writeFile: (path, content, options) => this.#write(path, content, options),
      redactor: this.#ws.redactor,
      // In-memory buffer calls read; their save is a guarded write of its own.
      guard: (op, path, params, body) => this.#guard({ op, opClass: 'read', paths: [path ?? ''], params }, body, () => ({ result: 'ok' })),
      resolve: async (path) => this.#ws.registry.spelledAs(await this.#paths.linkFree(path)),
      mayWrite: (path) => this.#edits.safety.decide('write', path, this.agent).effect !== 'deny',
      ownUndo: async (path) => {
        const target = await ownUndoTarget(this.#edits.versions, path, this.agent);
        // A dry run says whether that undo applies now (later changes may touch its lines): nothing is written.
        if (target === undefined) return undefined;
        const dry = await undo(this.#editor, path, { dryRun: true });
        return { seq: target.seq, op: target.op, refused: dry.success ? undefined : (dry.code ?? 'EIO') };
      },
      diskChanged: async (path) => {
        await this.#ws.registry.refresh(path);
      },
      changes: () => {
        const shared = this.#edits.changes;
        shared.source ??= changeSourceFor(this.#ws.fs);
        return shared.source.feed();
      },
    });
    return this.#buffers;
  }

  /** Re-indexes the imports of edited files that were indexed before, and forgets deleted ones. */
  async #refreshDerived(paths: readonly string[]): Promise<void> {
    const store = this.#ws.store;
    for (const path of paths) {
      if ((await store.get('SELECT 1 AS x FROM relations WHERE source = ? LIMIT 1', [path])) === undefined) continue;
      if (!(await this.#ws.fs.exists(path))) {
        await store.run('DELETE FROM relations WHERE source = ?', [path]);
        continue;
      }
      await this.#ws.relations.relationsOf(await this.#ws.loader.load(path, 'indexRelations'));
    }
  }

  /** Keeps the content a model was served, so its later edit can be merged if the file moves on. */
  async #remember(served: Served): Promise<Served> {
    const limit = this.#edits.settings.rememberReadsUpTo ?? 1024 * 1024;
    if (limit <= 0 || served.version === '' || (await this.#edits.versions.seenStored(served.version))) return served;
    try {
      const recent = this.#ws.loader.recentBytes(served.version);
      if (recent !== undefined) {
        if (recent.byteLength <= limit) await this.#edits.versions.putBlob(recent, served.version);
        return served;
      }
      const stat = await this.#ws.fs.stat(served.path);
      if (stat.size > limit) return served;
      const bytes = await this.#ws.fs.readBytes(served.path);
      if (sha256Hex(bytes) === served.version) await this.#edits.versions.putBlob(bytes, served.version);
    } catch {
      // Best effort: without the stored base, a stale edit is refused instead of merged.
    }
    return served;
  }

  /**
   * The file, whole if it fits; cut by `strategy` if one is given; else its
   * outline and summary with an instruction to narrow.
   *
   * @example
   * ```ts
   * const r = await ctx.readFile('src/auth.ts', { maxTokens: 800, strategy: 'middle' });
   * r.view;    // 'truncated'
   * r.omitted; // [{ startLine: 41, endLine: 1960, tokens: 17102 }]
   * r.next;    // 'readLines("src/auth.ts", 41, 1960)'
   * ```
   */
  readFile(path: string, options?: ReadFileOptions): Promise<Served> {
    return this.#read('readFile', path, { ...options }, (p, ws) => readFile(ws, this.#caller, p, options));
  }

  /** A guarded read of one file: normalized path, policy, audit, and the served content remembered. */
  async #read(
    op: string,
    path: string,
    params: Record<string, unknown>,
    body: (path: string, ws: Workspace) => Promise<Served>,
    remember = true,
  ): Promise<Served> {
    const { paths, spellings, invalid } = await this.#paths.resolve(op, [path]);
    return this.#guard(
      { op, opClass: 'read', paths, params, invalid, spellings },
      async () => {
        const served = await body(paths[0] as string, this.#view);
        return remember ? await this.#remember(served) : served;
      },
      servedOutcome,
      true,
    );
  }

  /**
   * Numbered lines `start`..`end` (`N\tline`), with more-above/below markers.
   *
   * @example
   * ```ts
   * (await ctx.readLines('src/main.py', 45, 60, { context: 2 })).text;
   * // <file path="src/main.py" lines="43-62 of 200" …>
   * // [… 42 more lines above (1-42) …]
   * // 43\tdef process(data):
   * ```
   */
  readLines(path: string, start: number, end?: number, options?: ReadLinesOptions): Promise<Served> {
    return this.#read('readLines', path, { start, end, ...options }, (p, ws) => readLines(ws, this.#caller, p, start, end, options));
  }

  /** The first `maxLines` lines, numbered. */
  getExcerpt(path: string, maxLines?: number): Promise<Served> {
    return this.#read('getExcerpt', path, { maxLines }, (p, ws) => getExcerpt(ws, this.#caller, p, maxLines));
  }

  /**
   * One definition with its doc comment.
   *
   * @example
   * ```ts
   * (await ctx.getSymbol('src/auth.ts', 'AuthManager.login')).text;
   * ```
   */
  getSymbol(path: string, name: string, options?: { maxTokens?: number }): Promise<Served> {
    return this.#read('getSymbol', path, { name, ...options }, (p, ws) => getSymbol(ws, this.#caller, p, name, options));
  }

  /**
   * Definitions with line ranges and signatures, bodies elided: as many as
   * the budget holds, top-level first, shown in file order; what is left out
   * is counted where it lies, with the call that lists it.
   *
   * @example
   * ```ts
   * const o = await ctx.getOutline('src/client.ts');
   * o.next; // 'getOutline("src/client.ts", {symbol: "Client"})' when Client's members did not all fit
   * await ctx.getOutline('src/client.ts', { startLine: 991, endLine: 3400 });
   * ```
   */
  getOutline(path: string, options?: OutlineCallOptions): Promise<Served> {
    return this.#read('getOutline', path, { ...options }, (p, ws) => getOutline(ws, this.#caller, p, options), false);
  }

  /** Files `path` imports and files importing it, to `depth` hops. */
  async getRelatedFiles(path: string, depth = 1): Promise<RelatedResult> {
    const { paths, spellings, invalid } = await this.#paths.resolve('getRelatedFiles', [path]);
    return this.#guard(
      { op: 'getRelatedFiles', opClass: 'read', paths, params: { depth }, invalid, spellings },
      () => getRelatedFiles(this.#ws, this.#caller, paths[0] as string, depth),
      (r) => ({ result: 'ok', tokens: r.tokens }),
    );
  }

  /** The file's summary (structural by default), cached by content hash. */
  summarize(path: string, options?: { maxTokens?: number }): Promise<Served> {
    return this.#read('summarize', path, { ...options }, (p, ws) => summarizeFile(ws, this.#caller, p, options), false);
  }

  // ------------------------------------------------------------ search

  /**
   * Files below `path` (default the root) with size, language, tags and,
   * when known, line counts; ignored paths left out unless `includeIgnored`.
   * Capped by `limit`, `depth` and the call's budget, saying what it left out.
   * The text names each row relative to the directory listed (`dir`); the
   * items keep whole paths.
   *
   * @example
   * ```ts
   * (await ctx.listFiles('src', { depth: 1 })).text;
   * // listFiles src to depth 1: 212 files in 9 rows, paths relative to src/.
   * // <file path="src" view="files" …>
   * // auth.ts  4.1 KB  120 lines
   * // net/  (61 files)
   * ```
   */
  listFiles(path?: string, options?: ListFilesOptions): Promise<ListingResult> {
    return this.#search('listFiles', path, { path, ...options }, () => listFiles(this.#ws, this.#caller, path, options));
  }

  /** A guarded search: its scope decided by the policy, its results filtered by the current call. */
  async #search<Result extends SearchResult<unknown>>(
    op: string,
    scope: string | undefined,
    params: Record<string, unknown>,
    body: () => Promise<Result>,
  ): Promise<Result> {
    // The spellings go to the guard as an edit's do: the policy decides on where they lead without resolving them again.
    const { paths, invalid, spellings } = await this.#paths.resolve(op, [scope ?? ''], 'any');
    return this.#guard({ op, opClass: 'search', paths, params, invalid, spellings }, body, (r) => ({
      result: 'ok',
      tokens: r.tokens,
      bytes: Buffer.byteLength(r.text),
    }));
  }

  /**
   * Files matching a glob (picomatch, relative to `cwd`), ignored paths left out unless `includeIgnored`.
   * The text names each match relative to the directory the page's matches share (`dir`), which its
   * header names once; the items keep whole paths.
   *
   * @example
   * ```ts
   * (await ctx.glob('**\/*.test.ts', { cwd: 'packages' })).items.map((f) => f.path);
   * ```
   */
  glob(pattern: string, options?: GlobCallOptions): Promise<ListingResult> {
    return this.#search('glob', options?.cwd, { pattern, ...options }, () => glob(this.#ws, this.#caller, pattern, options));
  }

  /**
   * Lines matching a regular expression (or `literal` text) across files,
   * as the redacted files read; `node_modules` and other ignored paths are
   * never walked, sensitive files left out unless asked. `output: 'files'`
   * or `'count'` lists files instead of lines. The text names each file
   * relative to the directory the page's files share (`dir`), which its
   * header names once; the items keep whole paths.
   *
   * @example
   * ```ts
   * const r = await ctx.grep('retries\\s*=', { path: 'src', contextLines: 1 });
   * r.counts; // { shown: 12, total: 12, exact: true, files: 4, … }
   * r.next;   // undefined — or a narrower call when the result was capped
   * ```
   */
  grep(pattern: string, options?: GrepCallOptions): Promise<GrepResult> {
    return this.#search('grep', options?.path, { pattern, ...options }, () => grep(this.#ws, this.#caller, pattern, options));
  }

  /**
   * Where a function, class, method or type is defined across the
   * repository, best matches first (exact, prefix, word, fuzzy), each with
   * the `getSymbol` call that shows it.
   *
   * @example
   * ```ts
   * (await ctx.findSymbol('AuthManager.login')).items[0]?.call; // 'getSymbol("src/auth.ts", "AuthManager.login")'
   * ```
   */
  findSymbol(query: string, options?: FindSymbolOptions): Promise<SearchResult<SymbolHit>> {
    return this.#search('findSymbol', options?.path, { query, ...options }, () => findSymbol(this.#ws, this.#caller, query, options));
  }

  // ------------------------------------------------------------ edits

  /**
   * Creates or overwrites a file. When the file changed since this agent
   * read it, the new content is merged with those changes (strategy
   * `auto_merge`) or the write is refused with a conflict.
   *
   * @example
   * ```ts
   * const r = await ctx.readFile('src/a.ts');
   * const w = await ctx.writeFile('src/a.ts', fixed, { message: 'fix off-by-one' });
   * w.success; // true — or false with w.conflict and w.next ('readFile("src/a.ts")')
   * ```
   */
  writeFile(path: string, content: string, options?: EditOptions): Promise<EditResult> {
    return this.#write(path, content, options, { edit: { kind: 'write', content }, baseVersion: options?.baseVersion });
  }

  /** {@link writeFile}; without `buffered`, to the disk even when the file is open (a buffer's save). */
  #write(
    path: string,
    content: string,
    options: EditOptions | undefined,
    buffered?: { edit: BufferEditOp; baseVersion: string | undefined },
  ): Promise<EditResult> {
    return this.#edit('writeFile', 'write', [path], { content, ...options }, () => this.#operations.writeFile(path, content, options), [], buffered);
  }

  /** A guarded edit: every path decided (a change the policy asks about is approved with its diff), one record. */
  async #edit(
    op: string,
    opClass: OpClass,
    inputs: readonly string[],
    params: Record<string, unknown>,
    body: () => Promise<EditResult>,
    extra: GuardedCall['extra'] = [],
    buffered?: { readonly edit: BufferEditOp; readonly baseVersion: string | undefined },
  ): Promise<EditResult> {
    // An edit never throws for bad input: a path that does not normalize is left to the edit, which refuses it as a result.
    const resolved = await this.#paths.resolve(op, [...inputs, ...extra.map((e) => e.path)]);
    const { invalid } = resolved;
    const paths = resolved.paths.slice(0, inputs.length);
    const spellings = resolved.spellings;
    if (invalid === undefined) extra = extra.map((e, i) => ({ ...e, path: resolved.paths[inputs.length + i] as string }));
    // A file open in a buffer takes the edit there (a guarded buffer call of its own); every other goes to the disk.
    const routed =
      invalid === undefined
        ? this.#routing.edit({
            targets: [...paths.map((path) => ({ path, opClass })), ...extra],
            edit: buffered?.edit,
            baseVersion: buffered?.baseVersion,
            dryRun: params.dryRun === true,
          })
        : undefined;
    if (routed !== undefined) return routed;
    return this.#guard({ op, opClass, paths: invalid ? [] : paths, params, extra, spellings }, body, editOutcome);
  }

  /** Creates a new file; refused (`EEXIST`) when it exists. */
  createFile(path: string, content: string, options?: EditOptions): Promise<EditResult> {
    return this.#edit('createFile', 'write', [path], { content, ...options }, () => this.#operations.createFile(path, content, options));
  }

  /**
   * Replaces exact text (unique by default; `occurrence: 'first' | 'all' | n`, or `regex: true`).
   *
   * @example
   * ```ts
   * await ctx.replace('src/a.ts', 'retries = 3', 'retries = 5');
   * await ctx.replace('src/a.ts', 'console\\.log\\((.*)\\)', 'logger.debug($1)', { regex: true, occurrence: 'all' });
   * ```
   */
  replace(path: string, search: string, replacement: string, options?: ReplaceCallOptions): Promise<EditResult> {
    return this.#edit('replace', 'write', [path], { search, replacement, ...options }, () => this.#operations.replace(path, search, replacement, options), [], {
      edit: { kind: 'replace', search, replacement, options: { occurrence: options?.occurrence, regex: options?.regex, flags: options?.flags } },
      baseVersion: options?.baseVersion,
    });
  }

  /**
   * A line-range edit; line numbers refer to the version this agent read.
   *
   * @example
   * ```ts
   * await ctx.editLines('a.py', { kind: 'replace', start: 10, end: 12, text: 'return x\n' });
   * await ctx.editLines('a.py', { kind: 'insert-after', line: 3, text: 'import os\n' });
   * ```
   */
  editLines(path: string, edit: LineEdit, options?: EditOptions): Promise<EditResult> {
    return this.#edit('editLines', 'write', [path], { edit, ...options }, () => this.#operations.editLines(path, edit, options), [], {
      edit: { kind: 'edit-lines', edit },
      baseVersion: options?.baseVersion,
    });
  }

  /**
   * Deletes a file (a version: undo brings it back). A symbolic link is
   * removed itself, as `rm` removes one, never the file it leads to; a link
   * has no versions, so undo does not bring it back.
   */
  async deleteFile(path: string, options?: EditOptions): Promise<EditResult> {
    const link = await this.#paths.linkNamed('deleteFile', path);
    if (link === undefined) return this.#edit('deleteFile', 'delete', [path], { ...options }, () => this.#operations.deleteFile(path, options));
    return this.#guard(
      { op: 'deleteFile', opClass: 'delete', paths: [link], params: { ...options, link: true } },
      askingFirst({ op: 'deleteFile', opClass: 'delete', paths: [link], params: {} }, () => deleteLink(this.#ws, link, options?.dryRun === true)),
      editOutcome,
    );
  }

  /**
   * Renames a file (a version on both paths). A symbolic link is moved
   * itself, as `mv` moves one (a relative link keeps its text, so it may
   * lead elsewhere from its new place); no version is made.
   */
  async renameFile(from: string, to: string, options?: RenameCallOptions): Promise<EditResult> {
    const link = await this.#paths.linkNamed('renameFile', from);
    const dest = link === undefined ? undefined : normalized('renameFile', [to]);
    if (link === undefined || dest === undefined || dest.invalid !== undefined) {
      return this.#edit('renameFile', 'rename', [from, to], { from, to, ...options }, () => this.#operations.renameFile(from, to, options));
    }
    const raw = dest.paths[0] as string;
    const slash = raw.lastIndexOf('/');
    const parent = slash < 0 ? '' : await this.#paths.linkFree(raw.slice(0, slash));
    const target = parent === '' ? raw.slice(slash + 1) : `${parent}/${raw.slice(slash + 1)}`;
    if (target === link) return refusal('rename', link, 'EINVAL', 'The source and destination are the same path.');
    const call: GuardedCall = { op: 'renameFile', opClass: 'rename', paths: [link, target], params: { from, to, ...options, link: true } };
    return this.#guard(
      call,
      askingFirst(call, () =>
        renameLink(this.#ws, link, target, {
          overwrite: options?.overwrite,
          dryRun: options?.dryRun,
          deleteFile: (path, dryRun) => this.#operations.deleteFile(path, { dryRun }),
        }),
      ),
      editOutcome,
    );
  }

  /**
   * Applies a patch — a unified diff or a `*** Begin Patch` envelope, one or
   * many files (adds, deletes and moves included), all or nothing. See
   * EDITING.md for the accepted forms and the line-ending rule.
   *
   * @example
   * ```ts
   * const r = await ctx.applyPatch('--- a/src/a.ts\n+++ b/src/a.ts\n@@ @@\n-const x = 1;\n+const x = 2;\n');
   * if (!r.success) console.log(r.message); // the refused hunk, the closest region, what differs
   * await ctx.applyPatch('*** Begin Patch\n*** Update File: src/a.ts\n@@\n-const x = 2;\n+const x = 3;\n*** End Patch\n');
   * ```
   */
  applyPatch(patch: string, options?: ApplyPatchOptions): Promise<EditResult> {
    const targets = patchTargets(patch, options?.path);
    return this.#edit(
      'applyPatch',
      'write',
      targets.filter((t) => t.opClass === 'write').map((t) => t.path),
      { patch, ...options },
      async () => (await linkRemovedByPatch(targets, (op, p) => this.#paths.linkNamed(op, p))) ?? this.#operations.applyPatch(patch, options),
      targets.filter((t) => t.opClass !== 'write'),
      { edit: { kind: 'patch', patch }, baseVersion: options?.baseVersion },
    );
  }

  /**
   * Whether an edit of `path` by this agent now would be stale: `undefined`
   * when the agent's last read (or `baseVersion`) is the current content,
   * else a `stale_buffer` report — who changed it since and the diff —
   * without editing anything.
   *
   * @example
   * ```ts
   * const c = await ctx.checkConflicts('src/a.ts');
   * if (c) console.log(c.changedBy, c.theirsDiff);
   * ```
   */
  checkConflicts(path: string, baseVersion?: string): Promise<EditConflict | undefined> {
    return this.#history('checkConflicts', path, { baseVersion }, () => this.#checkConflicts(path, baseVersion));
  }

  /** A guarded history query. */
  async #history<T>(op: string, path: string, params: Record<string, unknown>, body: () => Promise<T>): Promise<T> {
    const { paths, spellings, invalid } = await this.#paths.resolve(op, [path]);
    return this.#guard({ op, opClass: 'history', paths, params, invalid, spellings }, body, () => ({ result: 'ok' }));
  }

  async #checkConflicts(path: string, baseVersion?: string): Promise<EditConflict | undefined> {
    const editor = this.#editor;
    let p: string;
    let current: { readonly sha256: string; readonly text: string } | undefined;
    try {
      p = editor.normalize('checkConflicts', path);
      // A file open in a buffer is edited there: an edit is checked against the buffer's text.
      current = (await this.#routing.current(p)) ?? (await editor.load('checkConflicts', p));
    } catch (err) {
      throw refusalAsError(err, 'checkConflicts');
    }
    const base = baseVersion ?? (await this.sessionContext.lastRead(this.agent, p))?.sha256;
    // No file and no read of one: nothing an edit could be stale against.
    if (current === undefined && base === undefined) {
      throw missingFile(this.#ws, p, 'checkConflicts', undefined, `no file at ${p}, and you have not read one there`);
    }
    if (base === undefined || base === current?.sha256) return undefined;
    const bytes = await this.#edits.versions.getBlob(base);
    const baseText = bytes ? decodeFile(this.#ws.fs, p, bytes).text : undefined;
    const conflict = staleBuffer({
      path: p,
      baseVersion: base,
      currentVersion: current?.sha256,
      changedBy: await editor.changedSince(p, base),
      baseText,
      currentText: current?.text,
    });
    return maskedConflict(conflict, editor.masker([baseText, current?.text]));
  }

  /** Versions of a file, newest first (a change made outside ctxfs is recorded as `external` first). */
  history(path: string, limit?: number): Promise<FileVersion[]> {
    return this.#history('history', path, { limit }, () => getFileHistory(this.#editor, this.#ws, path, limit));
  }

  /** One version with its content: a number, a hash (prefix), `current`, `previous` or `disk`. */
  getVersion(path: string, ref: VersionRef): Promise<VersionContent> {
    return this.#history('getVersion', path, { ref }, () => getVersion(this.#editor, path, ref));
  }

  /**
   * Unified diff between two versions; default `current` → `disk`.
   *
   * @example
   * ```ts
   * (await ctx.getDiff('src/a.ts', 1, 'current')).diff;
   * ```
   */
  getDiff(path: string, from?: VersionRef, to?: VersionRef): Promise<VersionDiff> {
    return this.#history('getDiff', path, { from, to }, () => getDiff(this.#editor, path, from, to));
  }

  /** Makes an earlier version current again (a new version). */
  rollback(path: string, ref: VersionRef, options?: EditOptions): Promise<EditResult> {
    return this.#edit('rollback', 'write', [path], { ref, ...options }, () => rollback(this.#editor, path, ref, options));
  }

  /**
   * Reverts this agent's newest change not yet undone (a new version), keeping
   * what others changed since where it touches other lines; repeat to go
   * further back. `{ change: n }` reverts change #n alone, keeping later ones.
   */
  undo(path: string, options?: UndoOptions): Promise<EditResult> {
    return this.#edit('undo', 'write', [path], { ...options }, () => undo(this.#editor, path, options));
  }

  /** The policy's command rules (what may run, whether unconfined, the time limit). */
  get commandRules(): CommandRules {
    return this.#edits.safety.policy.commands;
  }

  /**
   * Runs a program (a bash script, a command) for this agent as one call:
   * the command line decided by the policy's command rules (a person asked
   * when they say so), one audit record naming it, and — for a program that
   * reaches files through `run` — every path decided by the path rules and
   * what it changed recorded as one change whose message is the command, so
   * `undo(path)` restores what it did. The change is recorded even when the
   * body fails.
   *
   * @example
   * ```ts
   * const { value, changes } = await session.command('echo hi > a.txt', async (run) => {
   *   run.check('write', 'a.txt');
   *   await run.willChange('a.txt');
   *   await run.fs.writeBytes('a.txt', new TextEncoder().encode('hi\n'));
   *   return 0;
   * });
   * changes[0]?.path; // 'a.txt'
   * ```
   */
  command<T>(command: string, body: (run: ProgramRun) => Promise<T>, options: CommandCallOptions<T> = {}): Promise<CommandOutcome<T>> {
    const rules = this.commandRules;
    const decision: Decision =
      options.unconfined && !rules.unconfined
        ? {
            effect: 'deny',
            reason:
              'nothing confines commands to the workspace here (no bubblewrap on this host) and the policy does not allow unconfined commands ([commands] unconfined = true)',
            by: 'policy',
          }
        : rules.decide(command);
    return this.#guard(
      { op: 'command', opClass: 'command', paths: [], params: { command, ...options.params }, decision: { decision, subject: command } },
      async () => {
        const run = new ProgramRun({
          fs: this.#ws.fs,
          command,
          decide: (opClass, path) => this.#edits.safety.decide(opClass, path, this.agent),
          keep: async (bytes) => ({ sha256: await this.#edits.versions.putBlob(bytes), size: bytes.byteLength }),
          record: (files, message) => this.#editor.recordMade('command', files, { message }),
        });
        let value: T;
        let changes: ProgramChange[] = [];
        try {
          value = await body(run);
        } finally {
          // What a failed command changed is still recorded, so it can be undone.
          changes = await run.finish();
        }
        return { value, changes };
      },
      (r) => ({ result: 'ok', ...options.outcome?.(r.value) }),
    );
  }

  /**
   * The startup overview (scan first). Charged to the session.
   *
   * @example
   * ```ts
   * await ctx.scan();
   * const o = await ctx.overview({ budgetTokens: 1500 });
   * o.tokens <= 1500; // true
   * ```
   */
  overview(options: OverviewCallOptions = {}): Promise<Overview> {
    return this.#guard(
      { op: 'overview', opClass: 'read', paths: [], params: { budgetTokens: options.budgetTokens } },
      () => this.#overview(options),
      (o) => ({ result: 'ok', tokens: o.tokens, bytes: Buffer.byteLength(o.text) }),
    );
  }

  async #overview(options: OverviewCallOptions): Promise<Overview> {
    if (!this.#ws.registry.scanned && this.#ws.registry.size === 0) await this.#ws.registry.scan();
    const o = await buildOverview(this.#ws, {
      budgetTokens: Math.min(options.budgetTokens ?? this.profile.overviewTokens, this.profile.perCallTokens),
      entrypoints: this.#entrypoints,
      tools: options.tools,
      profileName: this.profile.name,
      perCallTokens: this.profile.perCallTokens,
    });
    await this.sessionContext.charge(o.tokens);
    return o;
  }
}
