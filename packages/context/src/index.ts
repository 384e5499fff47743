/**
 * `@ctxfs/context` — the context layer: a file registry in SQLite,
 * token-budgeted retrieval (whole file, line ranges, excerpts, symbols,
 * outlines, related files), summaries, the startup overview, secret
 * redaction and content delimiters, shaped per model profile. Works over any
 * ctxfs backend through the Filesystem protocol.
 *
 * @example
 * ```ts
 * import { createContext } from '@ctxfs/context';
 * const ctx = await createContext({ fs, profile: 'small', agent: 'llm:ollama' });
 * await ctx.scan();
 * const overview = await ctx.overview();          // ≤ 1,500 tokens
 * const outline = await ctx.getOutline('src/auth.ts');
 * const login = await ctx.getSymbol('src/auth.ts', 'login');
 * ```
 *
 * @module
 */

export { type BufferDiff, bufferDiff } from './buffers/buffer-diff.ts';
export { applyBufferEdit, type BufferEditOp } from './buffers/buffer-edits.ts';
export { type BufferEdit, BufferHistory } from './buffers/buffer-history.ts';
export { type ChangeFeed, type ChangeSource, changeSourceFor, type DiskChange, PollingSource } from './buffers/change-source.ts';
export { codePointLength, utf16Index } from './buffers/code-points.ts';
export { type BufferStatusKind, type DiskSnapshot, FileBuffer, type PendingConflict, type SyncOutcome } from './buffers/file-buffer.ts';
export { type Collision, mergeSides, type SidesMerge } from './buffers/merge-sides.ts';
export {
  type BufferEditOptions,
  type BufferHost,
  type BufferInfo,
  type BufferSave,
  type ListedBufferFile,
  type OpenBufferOptions,
  SessionBuffers,
} from './buffers/session-buffers.ts';
export { type CollisionRule, canWriteBack, collisionRule, SYNC_PERMISSIONS, type SyncPermission } from './buffers/sync-permission.ts';
export {
  API_CALL_STYLE,
  type CallOptions,
  type CallStyle,
  type CallValue,
  callShape,
  callText,
  withCallStyle,
} from './calls/call-text.ts';
export { conflictRegions, describeRanges, overlappingEdits, patchMismatch, staleBuffer } from './conflicts/conflict-detector.ts';
export {
  type ApprovalDecision,
  type ConflictOptions,
  type ConflictStrategy,
  type MergeRequest,
  type Resolution,
  resolveStale,
} from './conflicts/strategies.ts';
export { type Document, DocumentLoader, type DocumentLoaderOptions } from './content/document.ts';
export { LruCache } from './content/lru.ts';
export { type ChangeFilter, ContextLayer, type ContextOptions, createContext, type RecordedChange } from './context-layer.ts';
export { type CommandCallOptions, type CommandOutcome, ContextSession, type EditSettings, type OverviewCallOptions } from './context-session.ts';
export { type ApplyPatchOptions, applyPatch } from './edits/apply-patch.ts';
export type { ConflictRegion, ConflictType, EditConflict, EditResult, FileChange, LineRange, StaleReader } from './edits/edit-result.ts';
export { changedByText } from './edits/edit-result.ts';
export { type EditOptions, FileEditor, type PlannedFile, type StoredContent, type Transform, type TransformOutcome, withLocks } from './edits/file-editor.ts';
export { decodeBytes, decodeFile, encodeLike, type FileText, loadFileText } from './edits/file-text.ts';
export { type CrashHook, EditJournal, type JournalEntry, type PendingChange, type RecoveryReport } from './edits/journal.ts';
export { EditOperations, type RenameCallOptions, type ReplaceCallOptions } from './edits/operations.ts';
export { withRequestId } from './edits/request-scope.ts';
export { BlobStore, MAX_CHAIN, maxDepth, REBUILD_BYTES } from './history/blob-store.ts';
export type { BlobCodec } from './history/delta.ts';
export {
  getDiff,
  getFileHistory,
  getVersion,
  resolveVersion,
  rollback,
  type UndoOptions,
  undo,
  undoTarget,
  type VersionContent,
  type VersionDiff,
  type VersionRef,
} from './history/history.ts';
export { formatUnifiedDiff, type UnifiedDiff, type UnifiedDiffOptions } from './history/unified-diff.ts';
export {
  DEFAULT_RETENTION,
  type FileVersion,
  type PruneResult,
  type RetentionOptions,
  sha256Hex,
  type VersionOp,
  VersionStore,
} from './history/version-store.ts';
export { type Merge3Options, type Merge3Result, type MergeConflict, merge3 } from './merge/merge3.ts';
export { buildOverview, DEFAULT_TOOLS, type Overview, type OverviewDocument, type OverviewOptions, type ToolDescription } from './overview/project-overview.ts';
export { type ApplyHunksOptions, type ApplyResult, applyHunks, type HunkFailure } from './patch/apply-hunks.ts';
export { type FilePatch, type Hunk, type PatchLine, PatchParseError, parsePatch } from './patch/parse-patch.ts';
export { applyLineEdit, type LineEdit, type Occurrence, replaceText } from './patch/text-edits.ts';
export { MODEL_PROFILES, type ModelProfile, type ProfileInput, resolveProfile } from './profiles/model-profiles.ts';
export { type ProgramChange, ProgramRun, type ProgramRunDeps } from './programs/program-run.ts';
export { DEFAULT_ENTRYPOINTS, DEFAULT_SENSITIVE_PATTERNS, type FileTag, languageOf, tagsOf } from './registry/classify.ts';
export {
  DEFAULT_IGNORE,
  type FileRecord,
  FileRegistry,
  type FileRegistryOptions,
  type FileVersionRecord,
  type ScanOptions,
  type ScanProgress,
  type ScanResult,
  type VersionAuthor,
} from './registry/file-registry.ts';
export { extractImports, type ImportSpec, type Relation, type RelationKind, type ResolveContext, resolveImport } from './registry/relations.ts';
export type { OutlineCallOptions, OutlineScope } from './retrieval/outline.ts';
export type { ReadFileOptions } from './retrieval/read-file.ts';
export type { ReadLinesOptions } from './retrieval/read-lines.ts';
export { type IndexProgress, type RelatedFile, type RelatedResult, RelationIndex } from './retrieval/related.ts';
export type { Omission, Served, ViewKind } from './retrieval/shared.ts';
export { MIN_USEFUL_TOKENS } from './retrieval/shared.ts';
export {
  type ApprovalAnswer,
  type ApprovalOutcome,
  type ApprovalRequest,
  type Approver,
  askApproval,
  type ChangePreview,
  callbackApprover,
  type DecidedBy,
  describeRequest,
  TerminalApprover,
} from './safety/approval.ts';
export { type AuditQuery, FLUSH_ROWS } from './safety/audit/audit-index.ts';
export {
  type AuditApproval,
  type AuditDiffSummary,
  type AuditEntry,
  type AuditLocation,
  type AuditRecord,
  type AuditResult,
  ELIDE_OVER_CHARS,
  type ElidedValue,
  elideParams,
  RESULTS,
} from './safety/audit/audit-record.ts';
export {
  type AuditRepair,
  AuditTrail,
  type AuditTrailOptions,
  DEFAULT_MAX_FILE_BYTES,
  defaultAuditDir,
  defaultAuditKeyFile,
} from './safety/audit/audit-trail.ts';
export { ChainKey, MIN_KEY_BYTES } from './safety/audit/chain-key.ts';
export type { ChainTip, FsyncPolicy } from './safety/audit/chain-writer.ts';
export { KEY_BYTES, loadOrCreateKey } from './safety/audit/key-file.ts';
export { API_REMEDIES, type AuditRemedies } from './safety/audit/remedies.ts';
export {
  type ChainAnchor,
  type ChainFileSource,
  type DamageKind,
  fileName as auditFileName,
  type VerifyChainOptions,
  type VerifyDamage,
  type VerifyReport,
  verifyChain,
} from './safety/audit/verify-chain.ts';
export { type CommandRules, type CommandRulesConfig, compileCommandRules, DEFAULT_COMMAND_TIMEOUT_MS, simpleCommands } from './safety/command-rules.ts';
export { type BlockInfo, CONTENT_RULE, findInjectionAttempts, wrapContent } from './safety/delimiters.ts';
export { errorText, withoutHostPaths } from './safety/host-paths.ts';
export {
  DEFAULT_POLICY,
  type Decision,
  decideRestore,
  type Effect,
  MUTATING,
  OP_CLASSES,
  type OpClass,
  type Policy,
  type PolicyBudgets,
  type PolicyConfig,
  type PolicyMode,
  type PolicyRequest,
  type PolicyRule,
  PROJECT_CONFIG_DIR,
  resolvePolicy,
} from './safety/policy.ts';
export { loadPolicyFiles, POLICY_KEYS, type PolicyKey, PROJECT_CONFIG_PATH, parsePolicyFile, SURFACE_TABLES, userConfigPath } from './safety/policy-file.ts';
export {
  DEFAULT_SECRET_RULES,
  entropy,
  looksLikeSecretValue,
  type RedactionOptions,
  type RedactionResult,
  Redactor,
  type SecretFinding,
  type SecretRule,
  SUPPORTED_SECRET_KINDS,
} from './safety/redaction.ts';
export {
  type AuditDraft,
  type AuditSink,
  type CallOutcome,
  type CallState,
  currentCall,
  type GuardedCall,
  SafetyLayer,
} from './safety/safety-layer.ts';
export { type GlobCallOptions, type ListedFile, type ListFilesOptions, type ListingResult, MAX_LISTED_FILES } from './search/file-listing.ts';
export type { FindSymbolOptions, SymbolHit } from './search/find-symbol.ts';
export { GREP_TALLY_CAP, type GrepCallOptions, type GrepContextLine, type GrepHit, type GrepOutput, type GrepResult, MAX_LINE_CHARS } from './search/grep.ts';
export { type Narrowing, narrowTo, plural, type Tally } from './search/narrowing.ts';
export { relativeStart } from './search/relative-names.ts';
export type { SearchCounts, SearchOp, SearchResult, SearchView } from './search/search-result.ts';
export { type IndexedSymbol, type IndexRefresh, MAX_INDEXED_BYTES } from './search/symbol-index.ts';
export { identifierWords, MATCH_TIERS, type MatchTier, matchName, parseQuery, type SymbolQuery } from './search/symbol-ranking.ts';
export { GuardedSession, type GuardedSessionOptions, openGuardedSession } from './session/guarded-session.ts';
export { DEFAULT_READ_RETENTION, pruneReads, type ReadPruneResult, type ReadRetentionOptions } from './session/read-retention.ts';
export { type ReadInput, type ReadRecord, SessionContext } from './session/session-context.ts';
export { openWorkspaceGuard, type SafetyOptions, type WorkspaceGuard } from './session/workspace-guard.ts';
export { AUDIT_GENESIS, type AuditChainDamage, type AuditChainReport, auditHash, verifyAuditChain } from './state/audit-chain.ts';
export { MIGRATIONS, type Migration } from './state/migrations.ts';
export { SqliteDatabase } from './state/sqlite-database.ts';
export { SqliteStateStore, type SqliteStoreOptions } from './state/sqlite-store.ts';
export type { AuditRecord as StoreAuditRecord, AuditRowInput, RunResult, SqlRow, SqlValue, StateStore } from './state/state-store.ts';
export { defaultStatePath, isPostgresUrl, type OpenStateOptions, openStateStore, userStateDir, userStatePath } from './state/store.ts';
export { leadingDoc, StructuralSummarizer } from './summaries/structural-summarizer.ts';
export { type Summarizer, SummaryCache, type SummaryInput } from './summaries/summarizer.ts';
export { markdownSymbols } from './symbols/markdown-sections.ts';
export { findSymbol, type OutlineOptions, otherDefinitionsNote, renderOutline, type SymbolLookup, symbolSelector, symbolTable } from './symbols/outline.ts';
export { regexSymbols } from './symbols/regex-fallback.ts';
export { hasGrammar, loadLanguage, symbolsFromTree, treeSitterSymbols } from './symbols/tree-sitter.ts';
export { type CodeSymbol, flattenSymbols, SYMBOL_KINDS, SYMBOLS_VERSION, type SymbolKind, type SymbolSource, type SymbolTable } from './symbols/types.ts';
export { o200kTokenizer, type TokenCut, type Tokenizer, type TruncationStrategy, truncateTokens } from './tokens/tokenizer.ts';
