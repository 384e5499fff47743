/**
 * The facade: one object per workspace that owns the state store, registry,
 * caches, redaction and summarizer, and hands out per-agent sessions whose
 * every call is shaped by the agent's model profile.
 *
 * @module
 */

import { type Filesystem, fsError } from '@ctxfs/core';
import { DocumentLoader, type DocumentLoaderOptions } from './content/document.ts';
import { ContextSession, type EditServices, type EditSettings } from './context-session.ts';
import type { EditResult } from './edits/edit-result.ts';
import type { EditOptions } from './edits/file-editor.ts';
import type { EditJournal, RecoveryReport } from './edits/journal.ts';
import type { PruneResult, RetentionOptions, VersionStore } from './history/version-store.ts';
import { type ModelProfile, type ProfileInput, resolveProfile } from './profiles/model-profiles.ts';
import { DEFAULT_ENTRYPOINTS } from './registry/classify.ts';
import { type FileRecord, FileRegistry, type FileRegistryOptions, type ScanOptions, type ScanResult, type VersionAuthor } from './registry/file-registry.ts';
import { type IndexProgress, RelationIndex } from './retrieval/related.ts';
import type { WorkspaceServices } from './retrieval/shared.ts';
import type { AuditTrail } from './safety/audit/audit-trail.ts';
import { type RedactionOptions, Redactor } from './safety/redaction.ts';
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
