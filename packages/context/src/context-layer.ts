/**
 * The facade: one object per workspace that owns the state store, registry,
 * caches, redaction and summarizer, and hands out per-agent sessions whose
 * every call is shaped by the agent's model profile.
 *
 * @module
 */

import { type Filesystem, type FsError, fsError } from '@ctxfs/core';
import type { BufferEditOp } from './buffers/buffer-edits.ts';
import { BufferRouting } from './buffers/buffer-routing.ts';
import { type ChangeSource, changeSourceFor } from './buffers/change-source.ts';
import { SessionBuffers } from './buffers/session-buffers.ts';
import { staleBuffer } from './conflicts/conflict-detector.ts';
import type { ConflictOptions } from './conflicts/strategies.ts';
import { DocumentLoader, type DocumentLoaderOptions, type DocumentSource } from './content/document.ts';
import type { ApplyPatchOptions } from './edits/apply-patch.ts';
import { type EditConflict, type EditResult, maskedConflict, refusal } from './edits/edit-result.ts';
import { type EditOptions, FileEditor, refusalAsError } from './edits/file-editor.ts';
import { decodeFile } from './edits/file-text.ts';
import type { CrashHook, EditJournal, RecoveryReport } from './edits/journal.ts';
import { linkChanged, linkEntry } from './edits/link-entries.ts';
import { EditOperations, type RenameCallOptions, type ReplaceCallOptions } from './edits/operations.ts';
import {
  getDiff,
  getFileHistory,
  getVersion,
  rollback,
  type UndoOptions,
  undo,
  type VersionContent,
  type VersionDiff,
  type VersionRef,
} from './history/history.ts';
import { type FileVersion, type PruneResult, type RetentionOptions, sha256Hex, type VersionStore } from './history/version-store.ts';
import { buildOverview, type Overview, type ToolDescription } from './overview/project-overview.ts';
import type { LineEdit } from './patch/text-edits.ts';
import type { PathTarget } from './paths/context-path.ts';
import { type ModelProfile, type ProfileInput, resolveProfile } from './profiles/model-profiles.ts';
import { type ProgramChange, ProgramRun } from './programs/program-run.ts';
import { DEFAULT_ENTRYPOINTS } from './registry/classify.ts';
import { type FileRecord, FileRegistry, type FileRegistryOptions, type ScanOptions, type ScanResult, type VersionAuthor } from './registry/file-registry.ts';
import { getExcerpt } from './retrieval/excerpt.ts';
import { getOutline, type OutlineCallOptions } from './retrieval/outline.ts';
import { type ReadFileOptions, readFile } from './retrieval/read-file.ts';
import { type ReadLinesOptions, readLines } from './retrieval/read-lines.ts';
import { getRelatedFiles, type IndexProgress, type RelatedResult, RelationIndex } from './retrieval/related.ts';
import { type Caller, missingFile, type Served, type Workspace, type WorkspaceServices } from './retrieval/shared.ts';
import { summarizeFile } from './retrieval/summary.ts';
import { getSymbol } from './retrieval/symbol.ts';
import type { AuditTrail } from './safety/audit/audit-trail.ts';
import type { CommandRules } from './safety/command-rules.ts';
import type { Decision, OpClass } from './safety/policy.ts';
import { type RedactionOptions, Redactor } from './safety/redaction.ts';
import { askingFirst, type CallOutcome, currentCall, type GuardedCall, type SafetyLayer } from './safety/safety-layer.ts';
import { type GlobCallOptions, glob, type ListedFile, type ListFilesOptions, listFiles } from './search/file-listing.ts';
import { type FindSymbolOptions, findSymbol, type SymbolHit } from './search/find-symbol.ts';
import { type GrepCallOptions, type GrepHit, grep } from './search/grep.ts';
import { callShape, callText } from './search/next-call.ts';
import type { SearchResult } from './search/search-result.ts';
import { editOutcome, normalized, patchTargets, previews, servedOutcome } from './session/call-shapes.ts';
import { DEFAULT_READ_RETENTION, pruneReads, type ReadPruneResult, type ReadRetentionOptions } from './session/read-retention.ts';
import { SessionContext } from './session/session-context.ts';
import { openWorkspaceGuard, type SafetyOptions } from './session/workspace-guard.ts';
import { SqliteStateStore } from './state/sqlite-store.ts';
import type { StateStore } from './state/state-store.ts';
import { defaultStatePath, openStateStore, userStatePath } from './state/store.ts';
import { StructuralSummarizer } from './summaries/structural-summarizer.ts';
import { type Summarizer, SummaryCache } from './summaries/summarizer.ts';
import { o200kTokenizer, type Tokenizer } from './tokens/tokenizer.ts';

/** Options of {@link createContext}. */
export interface ContextOptions {
  fs: Filesystem;
  /**
   * A store; a SQLite file path, `':memory:'` or a `postgres://` URL (one
   * schema per workspace in that database); or nothing for the default:
   * beside a host workspace (`<parent>/.<name>.ctxfs/state.db`), in memory
   * otherwise.
   */
  store?: StateStore | string;
  /** Profile of the default session; default `large`. */
  profile?: ProfileInput;
  /** Agent name of the default session; default `default`. */
  agent?: string;
  /** Resume this session id. */
  sessionId?: string;
  registry?: FileRegistryOptions;
  redaction?: RedactionOptions | Redactor;
  summarizer?: Summarizer;
  tokenizer?: Tokenizer;
  cache?: DocumentLoaderOptions;
  /** Entrypoint documents for the overview; default AGENTS.md, CLAUDE.md, README.md, docs/ARCHITECTURE.md, manifests. */
  entrypoints?: readonly string[];
  /** Edits: conflict strategy and callbacks, history retention. */
  edits?: EditSettings;
  /**
   * Retention of the read records (see `session/read-retention.ts`): applied
   * on open when given, and by `pruneReads()`. Without it nothing prunes on
   * its own.
   */
  readRetention?: ReadRetentionOptions;
  /** Policy, approvals and audit: the one layer every session call goes through. */
  safety?: SafetyOptions;
}

/** Edit settings of a context layer. */
export interface EditSettings extends ConflictOptions {
  /** Applied on open when given, and by `pruneHistory()`; a limit not given is `DEFAULT_RETENTION`'s (1,000 versions per file, 512 MiB). Without it nothing prunes on its own. */
  retention?: RetentionOptions;
  /** Store the content of every file served to a model (up to this many bytes; default 1 MiB, 0 to disable) so a stale edit can be merged. */
  rememberReadsUpTo?: number;
  /** Test hook: called at the journal's crash points. */
  crashHook?: CrashHook;
}

/** The edit and safety services a workspace shares across its sessions. */
interface EditServices {
  readonly versions: VersionStore;
  readonly journal: EditJournal;
  readonly settings: EditSettings;
  readonly safety: SafetyLayer;
  /** The workspace's one source of disk changes, made when a session first opens a buffer. */
  readonly changes: { source?: ChangeSource };
}

/** Which changes: a session's, an agent's, or both; optionally since a time. */
export interface ChangeFilter {
  readonly sessionId?: string | undefined;
  readonly agent?: string | undefined;
  readonly since?: Date | undefined;
}

/** One recorded change (one call that changed files), as `changesOf` lists it. */
export interface RecordedChange {
  readonly changeId: string;
  readonly author: string;
  readonly sessionId: string | undefined;
  readonly at: Date;
  /** Each file with the history position (`seq`) of the version the change made. */
  readonly files: ReadonlyArray<{ readonly path: string; readonly seq: number; readonly op: string }>;
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
  #guard<T>(call: GuardedCall, body: () => Promise<T>, outcome: (result: T) => CallOutcome): Promise<T> {
    // The call's budget is the session's as the call begins, whoever else spent from it.
    return this.#edits.safety.run(
      call,
      { agent: this.agent, session: this.sessionContext },
      async () => {
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
      resolve: async (path) => this.#ws.registry.spelledAs(await this.#linkFree(path)),
      mayWrite: (path) => this.#edits.safety.decide('write', path, this.agent).effect !== 'deny',
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

  /**
   * The caller's paths resolved to the files they name: normalized, every
   * symbolic link inside the root followed (`link/a.ts` is `real/a.ts`), and
   * a registered file's own spelling taken when the caller's is another
   * Unicode normalization. One file has one key whatever the spelling, so a
   * read through one is the base of an edit through another, and both share
   * one history and one lock. `spellings` maps each spelling that resolved
   * elsewhere to where it led.
   */
  async #resolved(
    op: string,
    inputs: readonly string[],
    target?: PathTarget,
  ): Promise<{ paths: string[]; spellings: ReadonlyMap<string, string> | undefined; invalid: FsError | undefined }> {
    const r = normalized(op, inputs, target);
    if (r.invalid !== undefined) return { ...r, spellings: undefined };
    const spellings = new Map<string, string>();
    const paths: string[] = [];
    for (const p of r.paths) {
      const real = await this.#storedSpelling(this.#ws.registry.spelledAs(await this.#linkFree(p)));
      if (real !== p) spellings.set(p, real);
      paths.push(real);
    }
    return { paths, spellings, invalid: undefined };
  }

  /**
   * A non-ASCII path the registry does not know yet (no scan since the file
   * came), as its directory spells it when that is another Unicode
   * normalization of it: `café.md` typed composed names the `cafe\u0301.md`
   * on disk, and a write must not make a second file that looks the same.
   */
  async #storedSpelling(path: string): Promise<string> {
    if (!/[^\p{ASCII}]/u.test(path) || this.#ws.registry.get(path) !== undefined) return path;
    const fs = this.#ws.fs;
    if (await fs.exists(path).catch(() => true)) return path;
    const slash = path.lastIndexOf('/');
    const dir = slash < 0 ? '' : path.slice(0, slash);
    const want = path.slice(slash + 1).normalize('NFC');
    const names = (await fs.list(dir).catch(() => [])).filter((e) => e.name !== path.slice(slash + 1) && e.name.normalize('NFC') === want);
    // One other spelling on disk is the file meant; none, or several, leave the path as given.
    return names.length === 1 ? (names[0] as { path: string }).path : path;
  }

  /** `path` with the links in it followed; as given on a backend without links, for the root, or where it cannot be resolved (the call meets that failure itself). */
  async #linkFree(path: string): Promise<string> {
    const fs = this.#ws.fs;
    if (path === '' || !fs.capabilities.symlinks) return path;
    return await fs.realpath(path).catch(() => path);
  }

  /** A guarded read of one file: normalized path, policy, audit, and the served content remembered. */
  async #read(
    op: string,
    path: string,
    params: Record<string, unknown>,
    body: (path: string, ws: Workspace) => Promise<Served>,
    remember = true,
  ): Promise<Served> {
    const { paths, spellings, invalid } = await this.#resolved(op, [path]);
    return this.#guard(
      { op, opClass: 'read', paths, params, invalid, spellings },
      async () => {
        const served = await body(paths[0] as string, this.#view);
        return remember ? await this.#remember(served) : served;
      },
      servedOutcome,
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
    const { paths, spellings, invalid } = await this.#resolved('getRelatedFiles', [path]);
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
   *
   * @example
   * ```ts
   * (await ctx.listFiles('src', { depth: 1 })).text;
   * // listFiles src to depth 1: 212 files in 9 rows.
   * // <file path="src" view="files" …>
   * // src/auth.ts  4.1 KB  typescript  code  120 lines
   * // src/net/  (61 files)
   * ```
   */
  listFiles(path?: string, options?: ListFilesOptions): Promise<SearchResult<ListedFile>> {
    return this.#search('listFiles', path, { path, ...options }, () => listFiles(this.#ws, this.#caller, path, options));
  }

  /** A guarded search: its scope decided by the policy, its results filtered by the current call. */
  async #search<Item>(
    op: string,
    scope: string | undefined,
    params: Record<string, unknown>,
    body: () => Promise<SearchResult<Item>>,
  ): Promise<SearchResult<Item>> {
    const { paths, invalid } = await this.#resolved(op, [scope ?? ''], 'any');
    return this.#guard({ op, opClass: 'search', paths, params, invalid }, body, (r) => ({ result: 'ok', tokens: r.tokens, bytes: Buffer.byteLength(r.text) }));
  }

  /**
   * Files matching a glob (picomatch, relative to `cwd`), ignored paths left out unless `includeIgnored`.
   *
   * @example
   * ```ts
   * (await ctx.glob('**\/*.test.ts', { cwd: 'packages' })).items.map((f) => f.path);
   * ```
   */
  glob(pattern: string, options?: GlobCallOptions): Promise<SearchResult<ListedFile>> {
    return this.#search('glob', options?.cwd, { pattern, ...options }, () => glob(this.#ws, this.#caller, pattern, options));
  }

  /**
   * Lines matching a regular expression (or `literal` text) across files,
   * as the redacted files read; `node_modules` and other ignored paths are
   * never walked, sensitive files left out unless asked. `output: 'files'`
   * or `'count'` lists files instead of lines.
   *
   * @example
   * ```ts
   * const r = await ctx.grep('retries\\s*=', { path: 'src', contextLines: 1 });
   * r.counts; // { shown: 12, total: 12, exact: true, files: 4, … }
   * r.next;   // undefined — or a narrower call when the result was capped
   * ```
   */
  grep(pattern: string, options?: GrepCallOptions): Promise<SearchResult<GrepHit>> {
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
    const resolved = await this.#resolved(op, [...inputs, ...extra.map((e) => e.path)]);
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
    const link = await this.#linkNamed('deleteFile', path);
    if (link === undefined) return this.#edit('deleteFile', 'delete', [path], { ...options }, () => this.#operations.deleteFile(path, options));
    const dryRun = options?.dryRun === true;
    return this.#guard(
      { op: 'deleteFile', opClass: 'delete', paths: [link], params: { ...options, link: true } },
      askingFirst({ op: 'deleteFile', opClass: 'delete', paths: [link], params: {} }, async () => {
        if (!dryRun) {
          await this.#ws.fs.delete(link);
          await this.#ws.registry.refresh(link);
        }
        return linkChanged(
          'delete',
          link,
          `${dryRun ? 'Would delete' : 'Deleted'} the link ${link}; what it leads to is kept. A link has no versions: undo does not bring it back.`,
          dryRun,
        );
      }),
      editOutcome,
    );
  }

  /**
   * Renames a file (a version on both paths). A symbolic link is moved
   * itself, as `mv` moves one (a relative link keeps its text, so it may
   * lead elsewhere from its new place); no version is made.
   */
  async renameFile(from: string, to: string, options?: RenameCallOptions): Promise<EditResult> {
    const link = await this.#linkNamed('renameFile', from);
    const dest = link === undefined ? undefined : normalized('renameFile', [to]);
    if (link === undefined || dest === undefined || dest.invalid !== undefined) {
      return this.#edit('renameFile', 'rename', [from, to], { from, to, ...options }, () => this.#operations.renameFile(from, to, options));
    }
    const raw = dest.paths[0] as string;
    const slash = raw.lastIndexOf('/');
    const parent = slash < 0 ? '' : await this.#linkFree(raw.slice(0, slash));
    const target = parent === '' ? raw.slice(slash + 1) : `${parent}/${raw.slice(slash + 1)}`;
    if (target === link) return refusal('rename', link, 'EINVAL', 'The source and destination are the same path.');
    const dryRun = options?.dryRun === true;
    const call: GuardedCall = { op: 'renameFile', opClass: 'rename', paths: [link, target], params: { from, to, ...options, link: true } };
    return this.#guard(
      call,
      askingFirst(call, async () => {
        const name = raw.slice(slash + 1);
        const taken = (await this.#ws.fs.list(parent).catch(() => [])).some((e) => e.name === name);
        if (taken && options?.overwrite !== true) {
          return refusal(
            'rename',
            target,
            'EEXIST',
            `${target} already exists. Pick another name, or replace it with ${callText('renameFile', [link, target], { overwrite: true })}.`,
          );
        }
        if (!dryRun) {
          await this.#ws.fs.rename(link, target, { overwrite: options?.overwrite === true });
          await this.#ws.registry.refresh(link);
          await this.#ws.registry.refresh(target);
        }
        return linkChanged(
          'rename',
          target,
          `${dryRun ? 'Would move' : 'Moved'} the link ${link} to ${target}; what it leads to is unchanged. A link has no versions: undo does not move it back.`,
          dryRun,
        );
      }),
      editOutcome,
    );
  }

  /**
   * The refusal of a patch that deletes or moves a path that is itself a
   * link: a patch edits what a link leads to, so its delete would remove
   * that file and leave the link; the link's own calls remove or move it.
   */
  async #linkRemovedByPatch(targets: ReadonlyArray<{ path: string; opClass: OpClass }>): Promise<EditResult | undefined> {
    for (const t of targets) {
      if (t.opClass === 'write') continue;
      const link = await this.#linkNamed('applyPatch', t.path);
      if (link === undefined) continue;
      const verb = t.opClass === 'delete' ? 'delete' : 'move';
      return refusal(
        'patch',
        link,
        'EUNSUPPORTED',
        `${link} is a symbolic link: a patch edits the file a link leads to, and cannot ${verb} the link itself. Nothing was changed. ${verb === 'delete' ? `Delete the link with ${callText('deleteFile', [link])}` : `Move the link with ${callShape('renameFile')}`}, which acts on the link only, and the rest of the patch without it.`,
      );
    }
    return undefined;
  }

  /** The link `path` names itself (its parent's links followed), or undefined when it names no link or does not normalize. */
  async #linkNamed(op: string, path: string): Promise<string | undefined> {
    const r = normalized(op, [path]);
    if (r.invalid !== undefined) return undefined;
    return await linkEntry(this.#ws.fs, r.paths[0] as string, (p) => this.#linkFree(p));
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
      async () => (await this.#linkRemovedByPatch(targets)) ?? this.#operations.applyPatch(patch, options),
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
    const { paths, spellings, invalid } = await this.#resolved(op, [path]);
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

/**
 * The context layer of one workspace.
 *
 * @example
 * ```ts
 * import { MemoryFilesystem } from '@ctxfs/memory';
 * import { createContext } from '@ctxfs/context';
 *
 * const fs = new MemoryFilesystem({ files: { 'src/auth.ts': source } });
 * const ctx = await createContext({ fs, profile: 'small', agent: 'llm:ollama' });
 * await ctx.scan({ onProgress: (p) => console.log(p.phase, p.checked) });
 * const outline = await ctx.getOutline('src/auth.ts');
 * const fn = await ctx.getSymbol('src/auth.ts', 'login');
 * await ctx.close();
 * ```
 */
export class ContextLayer extends ContextSession {
  readonly store: StateStore;
  readonly registry: FileRegistry;
  readonly tokenizer: Tokenizer;
  readonly redactor: Redactor;
  readonly summarizer: Summarizer;
  readonly relations: RelationIndex;
  readonly loader: DocumentLoader;
  readonly #ws: WorkspaceServices;
  readonly #ownsStore: boolean;
  readonly #entrypointList: readonly string[];
  readonly #editServices: EditServices;
  readonly #readRetention: ReadRetentionOptions;
  /** Version storage (content by hash, per-file versions). */
  readonly versions: VersionStore;
  /** The write-ahead journal of edits. */
  readonly journal: EditJournal;
  /** What recovery found on open: changes interrupted by a crash, completed or rolled back. */
  recovery: RecoveryReport = { completed: [], rolledBack: [], untouched: [], inFlight: [] };
  /** The tamper-evident copy of the audit, when configured (`safety.auditTrail`): `verify()` and `query()` it. */
  auditTrail: AuditTrail | undefined;
  /** Whether `close()` closes the trail (this layer opened it). */
  ownsAuditTrail = false;

  /** @internal use {@link createContext} */
  constructor(
    ws: WorkspaceServices,
    ownsStore: boolean,
    profile: ModelProfile,
    agent: string,
    sessionId: string | undefined,
    entrypoints: readonly string[],
    edits: EditServices,
    readRetention?: ReadRetentionOptions,
  ) {
    super(ws, agent, profile, SessionContext.open(ws.store, profile, sessionId), entrypoints, edits);
    this.#editServices = edits;
    this.#readRetention = readRetention ?? DEFAULT_READ_RETENTION;
    this.versions = edits.versions;
    this.journal = edits.journal;
    this.#ws = ws;
    this.#ownsStore = ownsStore;
    this.#entrypointList = entrypoints;
    this.store = ws.store;
    this.registry = ws.registry;
    this.tokenizer = ws.tokenizer;
    this.redactor = ws.redactor;
    this.summarizer = ws.summarizer;
    this.relations = ws.relations;
    this.loader = ws.loader;
  }

  /** Scans the workspace into the registry (incremental after the first time). */
  scan(options?: ScanOptions): Promise<ScanResult> {
    return this.registry.scan(options);
  }

  /**
   * Parses the code files whose imports are not indexed at their current
   * content (all of them the first time). `getRelatedFiles` does this itself;
   * call it ahead to pay the cost up front.
   */
  indexRelations(options?: { onProgress?: (p: IndexProgress) => void }): Promise<{ files: number; relations: number; parsed: number }> {
    return this.relations.indexAll(options);
  }

  /**
   * A session for another agent or profile on the same workspace (a new
   * session, or `sessionId` to share or resume one).
   *
   * @example
   * ```ts
   * const reviewer = ctx.session({ agent: 'llm:claude', profile: 'large' });
   * await reviewer.readFile('src/auth.ts');
   * ```
   */
  session(options: { agent: string; profile?: ProfileInput; sessionId?: string }): ContextSession {
    const profile = resolveProfile(options.profile ?? this.profile);
    return new ContextSession(
      this.#ws,
      options.agent,
      profile,
      SessionContext.open(this.store, profile, options.sessionId),
      this.#entrypointList,
      this.#editServices,
    );
  }

  /**
   * Tells the layer a file was written through ctxfs, so the registry records
   * the new version with its author (a deleted file is dropped).
   */
  afterWrite(path: string, options: { author?: VersionAuthor; message?: string } = {}): Promise<FileRecord | undefined> {
    return this.registry.refresh(path, options);
  }

  /** Re-checks one file against its record: `changed` when it was edited behind ctxfs's back. */
  check(path: string): ReturnType<FileRegistry['check']> {
    return this.registry.check(path);
  }

  /**
   * The changes a session or an agent made, newest first: each with its
   * files and their versions, from the history (which records the session
   * of every change) — what `rollbackChanges` would revert.
   *
   * @example
   * ```ts
   * (await ctx.changesOf({ sessionId: agentSession.sessionContext.id })).map((c) => c.files.map((f) => f.path));
   * ```
   */
  async changesOf(filter: ChangeFilter): Promise<RecordedChange[]> {
    if (filter.sessionId === undefined && filter.agent === undefined) {
      throw fsError('EINVAL', 'changesOf', undefined, { reason: 'no session or agent named', hint: 'pass { sessionId } or { agent }' });
    }
    const where: string[] = ['change_id IS NOT NULL'];
    const args: Array<string | number> = [];
    if (filter.sessionId !== undefined) {
      where.push('session_id = ?');
      args.push(filter.sessionId);
    }
    if (filter.agent !== undefined) {
      where.push('author = ?');
      args.push(filter.agent);
    }
    if (filter.since !== undefined) {
      where.push('created_ms >= ?');
      args.push(filter.since.getTime());
    }
    const rows = (await this.store.all(
      `SELECT change_id, path, seq, op, author, session_id, created_ms FROM history WHERE ${where.join(' AND ')} ORDER BY created_ms DESC, id DESC`,
      args,
    )) as Array<{ change_id: string; path: string; seq: number; op: string; author: string; session_id: string | null; created_ms: number }>;
    const changes = new Map<string, RecordedChange & { files: Array<RecordedChange['files'][number]> }>();
    for (const r of rows) {
      let c = changes.get(r.change_id);
      if (c === undefined) {
        c = { changeId: r.change_id, author: r.author, sessionId: r.session_id ?? undefined, at: new Date(r.created_ms), files: [] };
        changes.set(r.change_id, c);
      }
      c.files.push({ path: r.path, seq: Number(r.seq), op: r.op });
    }
    for (const c of changes.values()) c.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return [...changes.values()];
  }

  /**
   * Reverts every change of a session or an agent, newest first, each file
   * through `undo(path, { change })`: new versions, each an audited call
   * under this layer's policy; a file whose later changes by someone else
   * touch the same lines is refused (its result says so), the others go on.
   *
   * @example
   * ```ts
   * const results = await ctx.rollbackChanges({ sessionId: rogue.sessionContext.id });
   * results.filter((r) => !r.success); // what could not be reverted, and why
   * ```
   */
  async rollbackChanges(filter: ChangeFilter, options: EditOptions = {}): Promise<EditResult[]> {
    const results: EditResult[] = [];
    for (const change of await this.changesOf(filter)) {
      for (const f of change.files) {
        results.push(await this.undo(f.path, { ...options, change: f.seq, message: options.message ?? `roll back change ${change.changeId.slice(0, 8)}` }));
      }
    }
    return results;
  }

  /**
   * Applies read retention (default: the layer's `readRetention`, else
   * {@link DEFAULT_READ_RETENTION}): repeated reads of a version keep their
   * first and last rows, and a session idle past the limit keeps only its
   * last read of each file by each agent.
   *
   * @example
   * ```ts
   * const r = await ctx.pruneReads({ maxIdleMs: 7 * 24 * 3600 * 1000 });
   * r.repeatsRemoved + r.idleReadsRemoved; // rows removed
   * ```
   */
  pruneReads(retention?: ReadRetentionOptions): Promise<ReadPruneResult> {
    return pruneReads(this.store, retention ?? this.#readRetention);
  }

  /** Applies the history retention limits (default: the layer's `edits.retention`). */
  pruneHistory(retention?: RetentionOptions): Promise<PruneResult> {
    return this.versions.prune(retention ?? this.#editServices.settings.retention);
  }

  /**
   * Writes the audit records still queued and closes the store if this layer
   * opened it. The filesystem is the caller's. Idempotent.
   */
  async close(): Promise<void> {
    this.loader.clear();
    this.journal.close();
    // A watcher would keep the process alive.
    void this.#editServices.changes.source?.close();
    // Access counts are statistics: a store that cannot take them does not fail the close.
    if (!this.store.closed) await this.#ws.registry.flushAccesses().catch(() => undefined);
    if (!this.store.closed) await this.store.flushAudit();
    if (this.ownsAuditTrail) this.auditTrail?.close();
    if (this.#ownsStore) await this.store.close();
  }
}

/**
 * Opens the store a context's `store` option names: a path or URL as given,
 * else the default file beside the workspace, else the per-user one.
 */
async function openStore(location: string | undefined, root: string): Promise<StateStore> {
  if (location !== undefined) return openStateStore(location, { workspace: root });
  try {
    return await SqliteStateStore.open({ path: defaultStatePath(root) });
  } catch {
    // A read-only parent (a system tree, a mounted volume): keep state per user instead.
    return SqliteStateStore.open({ path: userStatePath(root) });
  }
}

/**
 * Creates the context layer over any backend.
 *
 * @example
 * ```ts
 * import { HostFilesystem } from '@ctxfs/host';
 * const ctx = await createContext({ fs: new HostFilesystem({ root: '/repo' }), profile: 'small' });
 * const overview = await ctx.overview();
 * ```
 */
export async function createContext(options: ContextOptions): Promise<ContextLayer> {
  const fs = options.fs;
  const ownsStore = typeof options.store !== 'object';
  const store = typeof options.store === 'object' ? options.store : await openStore(options.store, fs.root);
  const registry = new FileRegistry(fs, store, {
    ...options.registry,
    entrypoints: options.registry?.entrypoints ?? options.entrypoints ?? DEFAULT_ENTRYPOINTS,
  });
  // The registry's synchronous lookups answer from what it loaded.
  await registry.load();
  const loader = new DocumentLoader(fs, options.cache);
  const ws: WorkspaceServices = {
    fs,
    store,
    registry,
    loader,
    tokenizer: options.tokenizer ?? o200kTokenizer,
    redactor: options.redaction instanceof Redactor ? options.redaction : new Redactor(options.redaction),
    summarizer: options.summarizer ?? new StructuralSummarizer(options.tokenizer ?? o200kTokenizer),
    summaries: new SummaryCache(store),
    relations: new RelationIndex(fs, store, registry, loader),
  };
  const guard = await openWorkspaceGuard({ fs, store, registry, redactor: ws.redactor, safety: options.safety });
  const { versions, journal, safety } = guard;
  const layer = new ContextLayer(
    ws,
    ownsStore,
    resolveProfile(options.profile ?? 'large'),
    options.agent ?? 'default',
    options.sessionId,
    options.entrypoints ?? DEFAULT_ENTRYPOINTS,
    { versions, journal, settings: options.edits ?? {}, safety, changes: {} },
    options.readRetention,
  );
  layer.auditTrail = guard.trail;
  layer.ownsAuditTrail = guard.ownsTrail;
  layer.recovery = guard.recovery;
  if (options.edits?.retention) await layer.pruneHistory();
  if (options.readRetention) await layer.pruneReads();
  return layer;
}
