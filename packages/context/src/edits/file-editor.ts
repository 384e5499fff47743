/**
 * The edit pipeline shared by every edit operation:
 *
 * 1. lock the files (per path, in path order, so two calls never deadlock);
 * 2. load each file's bytes; a content nobody recorded is first recorded as an
 *    `external` (or `initial`) version, so history is complete and undoable;
 * 3. find the edit's base version — explicit, or what this agent last read —
 *    and, when the file changed since, apply the edit to the base and resolve
 *    the difference with the conflict strategy (never blindly on top);
 * 4. journal the intent, write through the backend's atomic write, record the
 *    versions (see `journal.ts`), refresh the registry and the agent's read
 *    record, and report the diff.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { type Filesystem, type FsErrorCode, fsError, hasDefaultHint, IF_ABSENT, isFsError, parentPath, unencodableText } from '@ctxfs/core';
import { callsApi, callText, operationName, optionName } from '../calls/call-text.ts';
import { KeyedTurns } from '../concurrency/keyed-turns.ts';
import { overlappingEdits, patchMismatch, staleBuffer } from '../conflicts/conflict-detector.ts';
import { type ConflictOptions, resolveStale } from '../conflicts/strategies.ts';
import { type FileVersion, sha256Hex, type VersionOp, type VersionStore } from '../history/version-store.ts';
import type { HunkFailure } from '../patch/apply-hunks.ts';
import { contextPath, rootSpellings } from '../paths/context-path.ts';
import { programChanging } from '../programs/in-flight.ts';
import type { FileRegistry } from '../registry/file-registry.ts';
import { errorText, withoutHostPaths } from '../safety/host-paths.ts';
import { maskerOf, type Redactor, servedMaskRefusal } from '../safety/redaction.ts';
import { currentCall } from '../safety/safety-layer.ts';
import type { ReadRecord, SessionContext } from '../session/session-context.ts';
import type { StateStore } from '../state/state-store.ts';
import { changedByText, type EditConflict, type EditResult, type FileChange, maskedResult, q, refusal, type StaleReader, shortHash } from './edit-result.ts';
import { decodeFile, diskHash, encodeLike, type FileText, loadFileText } from './file-text.ts';
import type { CrashHook, EditJournal, JournalBlob, JournalEntry, PendingChange } from './journal.ts';
import { changeDiff, changing, noChange, type PlannedFile } from './planned-change.ts';
import { nextChangeId, requestFingerprint } from './request-scope.ts';

export type { PlannedFile } from './planned-change.ts';

/** Options every edit accepts. */
export interface EditOptions extends ConflictOptions {
  /** Recorded on the version; default the session's agent. */
  author?: string;
  message?: string;
  /**
   * The version (content hash, or a unique prefix of one) the edit was
   * prepared against. Default: what this agent last read of the file in
   * this session; with neither, the edit applies to the file as it is.
   */
  baseVersion?: string;
  /**
   * The caller's key for this call, the same on every retry of it (a UUID the
   * caller makes once): when an earlier call with this key was applied —
   * its answer lost to a dropped connection, a timeout, a failed store — the
   * retry writes nothing and answers with that change (`unchanged`, its
   * version). The key sent with another call (another operation, file or
   * arguments) is refused with EINVAL, nothing written. A key is the change's
   * id in history and the audit; keep it unique across the workspace. Refused
   * calls wrote nothing and are not remembered, so their retries run again.
   */
  requestId?: string;
  /**
   * Plan the change — patch placed, merge made, refusals as the real call
   * would give them — and answer with its diff, writing nothing: no file,
   * no version, no journal, and no person asked (nothing is changed to
   * approve). The policy's denials still refuse it.
   */
  dryRun?: boolean;
}

/** What an operation wants done to one file, given its text (base or current). */
export type Transform = (text: string) => TransformOutcome;

/** Result of a {@link Transform}. */
export type TransformOutcome =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly code: FsErrorCode;
      readonly message: string;
      readonly hunks?: readonly HunkFailure[] | undefined;
      /** The call that shows what the model needs to redo the edit (the lines around the candidates). */
      readonly look?: string | undefined;
    };

/** A content already in the version store: its hash and size. */
export interface StoredContent {
  readonly sha256: string;
  readonly size: number;
}

/** One file a program changed, as {@link FileEditor.recordMade} records it (`null`: absent). */
export interface RecordedFile {
  readonly path: string;
  readonly before: StoredContent | null;
  readonly after: StoredContent | null;
  /** The change its version belongs to, when the program's change of the file may be recorded in parts (see {@link programChanging}). */
  readonly changeId?: string | undefined;
}

/** The services an editor works with. */
export interface EditorDeps {
  readonly fs: Filesystem;
  readonly store: StateStore;
  readonly registry: FileRegistry;
  readonly versions: VersionStore;
  readonly journal: EditJournal;
  readonly session: SessionContext;
  readonly agent: string;
  readonly defaults: ConflictOptions;
  /** Test hook for crash simulation. */
  readonly crashHook?: CrashHook | undefined;
  /** Called after a change is recorded, with every path it touched (derived caches refresh here). */
  readonly afterCommit?: ((paths: readonly string[]) => Promise<void>) | undefined;
  /**
   * Called with the planned files just before they are written, under the
   * edit's locks; throwing refuses the change (the policy's approval).
   */
  readonly beforeCommit?: ((plans: readonly PlannedFile[]) => Promise<void>) | undefined;
  /**
   * Masks what a result serves of a file (its diff, a conflict, a refusal
   * quoting lines) as every read is masked, and refuses an edit that would
   * write a served mask over its secret. Without it results are served as made.
   */
  readonly redactor?: Redactor | undefined;
}

/**
 * The file contents one {@link FileEditor.run} has loaded or planned: what
 * its result may quote, so what it is masked by. Per call, as calls of one
 * session run at once.
 */
const callSources = new AsyncLocalStorage<string[]>();

/** The paths whose edit locks the operation under way holds (see {@link FileEditor.run}). */
const lockedPaths = new AsyncLocalStorage<ReadonlySet<string>>();

/**
 * The agent's last read of each file the operation under way loaded, asked
 * for as it loaded it (see {@link FileEditor.load}): taken by the file's
 * {@link FileEditor.baseOf}, once.
 */
const baseReads = new AsyncLocalStorage<Map<string, Promise<ReadRecord | undefined>>>();

/**
 * History's newest version of each file the operation under way is about to
 * load, asked for as its lock was (see {@link FileEditor.run}): taken by the
 * file's first {@link FileEditor.noteDisk} under that lock, once.
 */
const lockedHeads = new AsyncLocalStorage<Map<string, Promise<FileVersion | undefined>>>();

/** `text`, noted as content the running call may quote. */
function quoted<T extends string | undefined>(text: T): T {
  if (text !== undefined) callSources.getStore()?.push(text);
  return text;
}

// ------------------------------------------------------------------ locks

const LOCKS = new WeakMap<Filesystem, KeyedTurns>();

function acquire(fs: Filesystem, path: string): Promise<() => void> {
  let turns = LOCKS.get(fs);
  if (!turns) {
    turns = new KeyedTurns();
    LOCKS.set(fs, turns);
  }
  return turns.take(path);
}

/** A backend lock across processes (the host backend's `withLock`); not part of the protocol. */
type BackendLock = <T>(path: string, fn: () => Promise<T>) => Promise<T>;

function backendLock(fs: Filesystem): BackendLock | undefined {
  const f = (fs as { withLock?: unknown }).withLock;
  return typeof f === 'function' ? (f.bind(fs) as BackendLock) : undefined;
}

/** The state store's lock of several paths at once (`StateStore.withLock`). */
type StoreLock = <T>(paths: readonly string[], fn: () => Promise<T>) => Promise<T>;

/**
 * Runs `fn` holding the edit locks of `paths`, acquired in path order so two
 * edits never deadlock: in-process locks always; then the state store's, all
 * paths in one call (`storeLock`: across hosts sharing a PostgreSQL store);
 * then the backend's own cross-process lock when it has one (the host
 * backend's `withLock`, which its writes inside `fn` re-enter).
 */
export async function withLocks<T>(fs: Filesystem, paths: readonly string[], fn: () => Promise<T>, storeLock?: StoreLock): Promise<T> {
  const sorted = [...new Set(paths)].sort();
  const releases: Array<() => void> = [];
  try {
    for (const p of sorted) releases.push(await acquire(fs, p));
    let run = fn;
    // Nested innermost first: the store's locks are taken before the backend's.
    const backend = backendLock(fs);
    if (backend !== undefined) {
      for (const p of [...sorted].reverse()) {
        const inner = run;
        run = () => backend(p, inner);
      }
    }
    if (storeLock !== undefined) {
      const inner = run;
      run = () => storeLock(sorted, inner);
    }
    return await run();
  } finally {
    for (const r of releases.reverse()) r();
  }
}

/** Thrown inside the pipeline to turn into a refusal. */
export class Refusal extends Error {
  readonly result: EditResult;
  constructor(result: EditResult) {
    super(result.message);
    this.result = result;
  }
}

/**
 * A {@link Refusal} out of a call that answers with data, not an
 * {@link EditResult} (a conflict check, a history query): the `FsError` it
 * stands for, so every surface reports it as it reports the others. Any
 * other error is returned as it is.
 */
export function refusalAsError(err: unknown, op: string): unknown {
  if (!(err instanceof Refusal)) return err;
  const r = err.result;
  return fsError(r.code ?? 'EINVAL', op, r.path, { reason: r.message, ...(r.next ? { hint: `next: ${r.next}` } : {}), cause: err });
}

/** The edit pipeline for one agent's session. */
export class FileEditor {
  readonly deps: EditorDeps;

  constructor(deps: EditorDeps) {
    this.deps = deps;
  }

  get #versions(): VersionStore {
    return this.deps.versions;
  }

  /** Normalizes a path (a name in another Unicode normalization to the registered file's) or throws a refusal. */
  normalize(op: string, path: string): string {
    try {
      // Within a session call the session resolved its paths (links followed): the same file under the same key.
      const p = contextPath(path, apiOperation(op), 'file', rootSpellings(this.deps.fs));
      return this.deps.registry.spelledAs(currentCall()?.resolved(p) ?? p);
    } catch (err) {
      // Named in the text: a rename's refusal must say which of its two paths is wrong.
      if (isFsError(err)) throw new Refusal(refusal(op, String(path), err.code, errorText(err, String(path))));
      throw err;
    }
  }

  /**
   * Records what is on disk when history does not know it yet: the first
   * content of a file (`initial`), or a change made behind ctxfs's back
   * (`external`, or a deletion). `locked`: the caller holds the file's edit
   * lock, so no other writer is in the middle of a change of it, and a
   * change another writer wrote here but failed to record is recorded as
   * that writer's ({@link EditJournal.settleStranded}), not as external.
   */
  async noteDisk(
    path: string,
    current: (Pick<FileText, 'sha256'> & { readonly bytes?: Uint8Array; readonly size?: number }) | undefined,
    locked = false,
  ): Promise<FileVersion | undefined> {
    let latest = await (this.#headAskedAhead(path, locked) ?? this.#versions.latest(path));
    const sha = current?.sha256;
    if (latest === undefined && current === undefined) return undefined;
    if (latest !== undefined && latest.sha256 === sha) return latest;
    // Content a writer's change wrote but has not recorded is not an outside change. Under the file's
    // lock no writer is in the middle of it (its record failed): it is recorded as its author's.
    // Without the lock it may be in flight, and is left to its writer.
    const intent = sha === undefined ? undefined : await this.deps.journal.writing(path, sha);
    if (intent !== undefined) {
      if (!locked) return latest;
      if (await this.deps.journal.settleStranded(this.deps.fs, intent)) {
        // It may have recorded versions of this call's other files too: the heads asked with their locks are history.
        lockedHeads.getStore()?.clear();
        latest = await this.#versions.latest(path);
        if (latest?.sha256 === sha) return latest;
      }
    }
    // What a program under way wrote is its own (the rest of its change follows when it ends): recorded as
    // external, undoing the program would revert only part of it.
    const program = programChanging(this.deps.fs, path);
    if (program !== undefined && program.before(path)?.sha256 !== sha) {
      return this.deps.store.transaction(async () => {
        if (current?.bytes) await this.#versions.putBlob(current.bytes, current.sha256);
        return this.#versions.append({
          path,
          sha256: sha,
          size: current?.bytes?.byteLength ?? current?.size ?? 0,
          op: sha === undefined ? 'delete' : latest?.sha256 === undefined ? 'create' : 'write',
          author: program.author,
          message: program.message,
          changeId: program.changeId,
        });
      });
    }
    // A file's first content gets its version row only when it is replaced (most files never are). When
    // the disk changed behind ctxfs's back before that, the content the registry knew (and a read kept)
    // is that first version, and what is on disk now is an external change, which undo must know as
    // someone else's, not the file's beginning.
    const known = latest === undefined ? this.deps.registry.get(path) : undefined;
    const changed = known?.sha256 !== undefined && known.sha256 !== sha ? known : undefined;
    const first = changed?.sha256 !== undefined && (await this.#versions.hasBlob(changed.sha256)) ? changed : undefined;
    // Known only by its hash (a scan keeps no content): the disk's content begins the history, and says that
    // it is not what ctxfs first saw, which neither a diff nor an undo can show.
    const unkept = first === undefined && current !== undefined ? changed : undefined;
    return this.deps.store.transaction(async () => {
      if (current?.bytes) await this.#versions.putBlob(current.bytes, current.sha256);
      if (first !== undefined) {
        await this.#versions.append({ path, sha256: first.sha256, size: first.size, op: 'initial', author: 'initial' });
      }
      const initial = latest === undefined && first === undefined;
      return this.#versions.append({
        path,
        sha256: sha,
        size: current?.bytes?.byteLength ?? current?.size ?? 0,
        op: initial ? 'initial' : 'external',
        author: initial ? 'initial' : 'external',
        message:
          current === undefined
            ? 'deleted outside ctxfs'
            : unkept !== undefined
              ? `changed outside ctxfs after it was scanned as ${shortHash(unkept.sha256)}, before ctxfs kept its content: that change cannot be shown or undone`
              : undefined,
      });
    });
  }

  /** The head of `path` asked with its lock, when this is its first look under it (see {@link lockedHeads}). */
  #headAskedAhead(path: string, locked: boolean): Promise<FileVersion | undefined> | undefined {
    const heads = locked ? lockedHeads.getStore() : undefined;
    const head = heads?.get(path);
    heads?.delete(path);
    return head;
  }

  /** Loads a file, recording its content in history if unknown. */
  async load(op: string, path: string): Promise<FileText | undefined> {
    let current: FileText | undefined;
    try {
      current = await loadFileText(this.deps.fs, path, op, WHOLE_FILE_OPS.has(op));
    } catch (err) {
      if (isFsError(err, 'ETOOLARGE')) {
        // The protocol's advice (openRead, readBytes with offsets) names calls a model does not have.
        throw new Refusal(
          refusal(
            op,
            path,
            'ETOOLARGE',
            `${path} is too large to edit through the context layer (${err.reason ?? 'over the convenience limit'}). Nothing was changed. Its lines can still be read in ranges${callsApi() ? "; a program can rewrite it with the protocol's streaming writer (fs.openWrite)" : ''}.`,
            { next: callText('readLines', [path, 1, 100]) },
          ),
        );
      }
      if (isFsError(err)) throw new Refusal(refusal(op, path, err.code, errorText(err, path)));
      throw err;
    }
    quoted(current?.text);
    // Asked now, beside noteDisk's look at history: on PostgreSQL both reads share a round trip. Under the
    // file's lock the agent's own reads of it (this call's) come after baseOf, so nothing it takes is newer.
    const reads = baseReads.getStore();
    if (reads !== undefined && !reads.has(path)) {
      const read = this.deps.session.lastRead(this.deps.agent, path);
      read.catch(() => undefined);
      reads.set(path, read);
    }
    // After this the content is history's latest version of the file, so its blob is stored (a prune
    // keeps every file's latest, and the file's lock keeps it latest): a possible merge base for
    // other agents' stale edits without a store round trip of its own.
    await this.noteDisk(path, current, lockedPaths.getStore()?.has(path) === true);
    return current;
  }

  /** The base version of an edit: explicit, or this agent's last read. */
  async baseOf(op: string, path: string, options: EditOptions, current: FileText | undefined): Promise<string | undefined> {
    const given = options.baseVersion;
    if (given === undefined) {
      const reads = baseReads.getStore();
      const read = reads?.get(path);
      reads?.delete(path);
      return (await (read ?? this.deps.session.lastRead(this.deps.agent, path)))?.sha256;
    }
    if (!/^[0-9a-f]{6,64}$/i.test(given)) {
      throw new Refusal(
        refusal(
          op,
          path,
          'EINVAL',
          `${baseOption(op)} ${q(given)} is not a version id: pass the 64-hex-digit hash (or a prefix of 6+ digits) a read returned as \`version\`.`,
        ),
      );
    }
    const v = given.toLowerCase();
    if (v.length === 64) return v;
    if (current?.sha256.startsWith(v)) return current.sha256;
    const found = await this.#versions.byHash(path, v);
    if (found === 'ambiguous')
      throw new Refusal(refusal(op, path, 'EINVAL', `${baseOption(op)} ${q(given)} matches several versions of ${path}; give more digits.`));
    if (found?.sha256) return found.sha256;
    throw new Refusal(
      refusal(
        op,
        path,
        'ECONFLICT',
        `${baseOption(op)} ${q(given)} is not a known version of ${path}. Re-read the file: ${callText('readFile', [path])}, then redo the edit.`,
        {
          next: callText('readFile', [path]),
          version: current?.sha256,
        },
      ),
    );
  }

  /**
   * Who changed `path` since the agent saw it: the authors of the versions
   * newer than the newest one it has seen (`baseSha`, or any version it was
   * served), other than the agent itself — its own changes are not news to
   * it. The version it read may be missing from the history (read between
   * two changes outside ctxfs, or a merged view that was never a version),
   * which is why every version it saw marks where to stop.
   */
  async changedSince(path: string, baseSha: string): Promise<string[]> {
    const seen = new Set(await this.deps.session.versionsSeen(this.deps.agent, path));
    seen.add(baseSha);
    const authors: string[] = [];
    for (const v of await this.#versions.list(path, 200)) {
      if (v.sha256 !== undefined && seen.has(v.sha256)) break;
      if (v.op !== 'initial' && v.author !== this.deps.agent && !authors.includes(v.author)) authors.push(v.author);
    }
    return authors;
  }

  /**
   * Plans a modification of an existing file: `transform` is applied to the
   * base version when the file changed since the editor read it, and the
   * difference resolved by the conflict strategy.
   */
  async planModify(
    op: string,
    vop: VersionOp,
    path: string,
    current: FileText,
    transform: Transform,
    options: EditOptions,
    located: 'by-content' | 'by-position' = 'by-position',
  ): Promise<PlannedFile> {
    const base = await this.baseOf(op, path, options, current);
    const cfg: ConflictOptions = { ...this.deps.defaults, ...stripUndefined(options) };
    const apply = (text: string, against: 'current' | 'base'): string => {
      const r = transform(text);
      if (r.ok) return r.text;
      const version = against === 'current' ? current.sha256 : base;
      const conflict = r.hunks ? patchMismatch(path, version, r.hunks) : undefined;
      const note = against === 'base' ? ` (applied to version ${shortHash(base)}, the one you read; the file has changed since)` : '';
      throw new Refusal(refusal(op, path, r.code, `${r.message}${note}`, { conflict, version: current.sha256, next: r.look ?? nextRead(path, conflict) }));
    };
    if (base === undefined || base === current.sha256) {
      const text = apply(current.text, 'current');
      return this.#plan(vop, path, current, text, false);
    }
    const changedBy = await this.changedSince(path, base);
    const baseBytes = await this.#versions.getBlob(base);
    if (baseBytes === undefined) {
      const conflict = staleBuffer({ path, baseVersion: base, currentVersion: current.sha256, changedBy, baseText: undefined, currentText: current.text });
      throw new Refusal(
        refusal(
          op,
          path,
          'ECONFLICT',
          `${path} changed since you read it (you read ${shortHash(base)}, it is now ${shortHash(current.sha256)}${by(changedBy)}), and the version you read is not stored, so the edit cannot be merged. Re-read the file with ${callText('readFile', [path])} and redo the edit.`,
          { conflict, version: current.sha256, next: callText('readFile', [path]) },
        ),
      );
    }
    const baseText = quoted(decodeFile(this.deps.fs, path, baseBytes).text);
    const onBase = transform(baseText);
    if (!onBase.ok && located === 'by-content') {
      // The edit names its text: if that text is in the file as it is now,
      // the editor evidently worked from a newer view than its last read here.
      const onCurrent = transform(current.text);
      if (onCurrent.ok) return this.#plan(vop, path, current, onCurrent.text, false);
    }
    const ours = onBase.ok ? onBase.text : apply(baseText, 'base');
    const resolution = await resolveStale(
      { path, agent: this.deps.agent, baseVersion: base, currentVersion: current.sha256, changedBy, base: baseText, theirs: current.text, ours },
      cfg,
    );
    if (resolution.ok) return { ...this.#plan(vop, path, current, resolution.text, true), editorView: encodeLike(ours, current) };
    const markers = cfg.markers ? resolution.markedText : undefined;
    let conflict: EditConflict;
    let message: string;
    if (resolution.conflicts.length > 0) {
      conflict = overlappingEdits({
        path,
        baseVersion: base,
        currentVersion: current.sha256,
        changedBy,
        baseText,
        currentText: current.text,
        yourText: ours,
        conflicts: resolution.conflicts,
        markedText: markers,
      });
      const first = conflict.lines[0];
      message = `${path} changed since you read it${by(changedBy)}, and those changes overlap yours at ${describe(conflict.lines)} of the current file (${resolution.message}). Nothing was written. Re-read ${first ? `lines ${first.start}-${Math.max(first.start, first.end)}` : 'the file'} with ${nextRead(path, conflict)} and redo the edit against the current text.`;
    } else {
      conflict = {
        ...staleBuffer({ path, baseVersion: base, currentVersion: current.sha256, changedBy, baseText, currentText: current.text }),
        markedText: markers,
      };
      message = `${path} changed since you read it (you read ${shortHash(base)}, it is now ${shortHash(current.sha256)}${by(changedBy)}) and the edit was not merged: ${resolution.message}. Nothing was written. Re-read the file with ${callText('readFile', [path])} and redo the edit.`;
    }
    const first = conflict.lines[0];
    throw new Refusal(
      refusal(op, path, 'ECONFLICT', message, {
        conflict,
        version: current.sha256,
        next: first && conflict.type === 'overlapping_edits' ? nextRead(path, conflict) : callText('readFile', [path]),
      }),
    );
  }

  #plan(op: VersionOp, path: string, current: FileText | undefined, text: string, merged: boolean): PlannedFile {
    unencodable(op, path, text, current);
    if (current !== undefined) this.#keepsSecrets(op, path, current, text);
    return { path, op, current, bytes: encodeLike(text, current), beforeText: current?.text ?? '', afterText: text, merged };
  }

  /**
   * Refuses text made from what a read served, where a secret is masked:
   * written, the mask would take the secret's place on disk and the
   * credential would be lost without a word.
   */
  #keepsSecrets(op: string, path: string, current: FileText, text: string): void {
    const at = this.deps.redactor?.servedMaskIn(current.text, text);
    if (at === undefined) return;
    const { reason, hint } = servedMaskRefusal(path, at);
    throw new Refusal(
      refusal(op, path, 'EINVAL', `Nothing was written: ${reason}. Instead, ${hint}.`, {
        version: current.sha256,
        next: callText('readLines', [path, Math.max(1, at.line - 3), at.line + 3]),
      }),
    );
  }

  /** Masks a text quoting `sources` (file contents) for serving; see `Redactor.masker`. */
  masker(sources: ReadonlyArray<string | undefined>): (text: string) => string {
    return maskerOf(this.deps.redactor, sources);
  }

  /** Plans a new file with `text`. */
  planCreate(op: VersionOp, path: string, text: string): PlannedFile {
    return this.#plan(op, path, undefined, text, false);
  }

  /** Plans writing exact bytes (a rollback to a stored version). */
  planBytes(op: VersionOp, path: string, current: FileText | undefined, bytes: Uint8Array | null, undoOf?: number): PlannedFile {
    const afterText = bytes === null ? '' : decodeFile(this.deps.fs, path, bytes, 'edit', true).text;
    return { path, op, current, bytes, beforeText: current?.text ?? '', afterText, merged: false, undoOf };
  }

  /** Plans a deletion, refused when the agent's read is stale. */
  async planDelete(op: string, path: string, current: FileText, options: EditOptions): Promise<PlannedFile> {
    const base = await this.baseOf(op, path, options, current);
    if (base !== undefined && base !== current.sha256) {
      const changedBy = await this.changedSince(path, base);
      const baseBytes = await this.#versions.getBlob(base);
      const conflict = staleBuffer({
        path,
        baseVersion: base,
        currentVersion: current.sha256,
        changedBy,
        baseText: quoted(baseBytes ? decodeFile(this.deps.fs, path, baseBytes, 'edit', true).text : undefined),
        currentText: current.text,
      });
      throw new Refusal(
        refusal(
          op,
          path,
          'ECONFLICT',
          `${path} changed since you read it${by(changedBy)}; deleting it would discard those changes. Nothing was deleted. Re-read it with ${callText('readFile', [path])}; if it should still go, ${callText('deleteFile', [path], { baseVersion: current.sha256 })} deletes it as it is now.`,
          { conflict, version: current.sha256, next: callText('readFile', [path]) },
        ),
      );
    }
    return { path, op: 'delete', current, bytes: null, beforeText: current.text, afterText: '', merged: false };
  }

  /**
   * Journals, writes and records `plans` as one change: all files or none.
   * A plan whose bytes equal the current ones is left out.
   */
  async commit(op: string, plans: readonly PlannedFile[], options: EditOptions): Promise<EditResult> {
    const author = options.author ?? this.deps.agent;
    const first = plans[0];
    const primary = first?.path ?? '';
    const effective = changing(plans);
    if (effective.length === 0) return noChange(op, first);
    const entries: JournalEntry[] = [];
    const blobs: Array<Uint8Array | JournalBlob> = [];
    for (const p of effective) {
      if (p.renameFrom !== undefined) {
        const src = p.current as FileText;
        const bytes = p.bytes ?? src.bytes;
        entries.push({ path: p.renameFrom, before: src.sha256, after: null, op: 'rename', size: 0, relatedPath: p.path });
        entries.push({ path: p.path, before: null, after: sha256Hex(bytes), op: 'rename', size: bytes.byteLength, relatedPath: p.renameFrom });
        blobs.push(src.bytes);
        if (bytes !== src.bytes) blobs.push({ bytes, near: src });
        continue;
      }
      // The content replaced is stored already: loading it stored it, and history's latest version refers to it.
      // The new content is best stored as a delta against it.
      if (p.bytes) blobs.push(p.current === undefined ? p.bytes : { bytes: p.bytes, near: p.current });
      entries.push({
        path: p.path,
        before: p.current?.sha256 ?? null,
        after: p.bytes === null ? null : sha256Hex(p.bytes),
        op: p.op,
        size: p.bytes?.byteLength ?? 0,
        undoOf: p.undoOf,
        relatedPath: p.relatedPath,
      });
    }
    const { fs, journal } = this.deps;
    const cas = fs.capabilities.compareAndSwap;
    // Last look before writing: a change another process made since the load
    // must not be overwritten. On a backend with compare-and-swap a content
    // write checks atomically with its commit, so looking first would only
    // read and hash the file again (a conflict found there puts back what was
    // written and is refused alike); renames and deletes have no such check.
    for (const e of entries) {
      if (cas && e.after !== null && e.op !== 'rename') continue;
      const now = (await diskHash(fs, e.path)) ?? null;
      if (now !== e.before) {
        return refusal(
          op,
          e.path,
          'ECONFLICT',
          `${e.path} changed while the edit was being prepared (by another process or outside ctxfs). Nothing was written. Re-read it with ${callText('readFile', [e.path])} and redo the edit.`,
          { version: now ?? undefined, next: callText('readFile', [e.path]) },
        );
      }
    }
    const fingerprint = options.requestId === undefined ? undefined : requestFingerprint();
    const pending = await this.#begin(op, author, options.message, entries, blobs, options.requestId, fingerprint);
    const hook = this.deps.crashHook;
    await hook?.('after-intent', 0, primary);
    const done: JournalEntry[] = [];
    let writing = primary;
    try {
      let k = 0;
      for (const p of effective) {
        if (p.renameFrom !== undefined) {
          const parent = parentPath(p.path);
          if (parent !== '') await fs.mkdir(parent, { parents: true, existOk: true });
          await fs.rename(p.renameFrom, p.path, { overwrite: false });
          done.push(...entries.filter((e) => e.path === p.renameFrom || e.path === p.path));
          const src = p.current as FileText;
          if (p.bytes !== null && p.bytes !== src.bytes && sha256Hex(p.bytes) !== src.sha256) {
            // Moved and changed: the rename kept the file's mode; now its new content.
            writing = p.path;
            await fs.writeBytes(p.path, p.bytes, cas ? { ifMatch: src.sha256 } : {});
          }
        } else if (p.bytes === null) {
          await fs.delete(p.path);
          done.push(entries.find((e) => e.path === p.path) as JournalEntry);
        } else {
          writing = p.path;
          await fs.writeBytes(p.path, p.bytes, { createParents: true, ...(cas ? { ifMatch: p.current?.sha256 ?? IF_ABSENT } : {}) });
          done.push(entries.find((e) => e.path === p.path) as JournalEntry);
        }
        await hook?.('after-write', k++, p.path);
      }
    } catch (err) {
      // Put back what was written, newest first, then forget the intent.
      let restoreFailed: unknown;
      for (const e of done.reverse()) {
        try {
          await journal.restore(fs, e);
        } catch (restoreErr) {
          restoreFailed ??= restoreErr;
        }
      }
      if (restoreFailed === undefined) await journal.abandon(pending);
      else journal.keep(pending);
      const restored =
        restoreFailed === undefined
          ? 'Every file was left (or put back) as it was.'
          : 'Putting the files back failed too; the journal keeps the change and settles it against the files at a later call.';
      if (isFsError(err, 'ECONFLICT')) {
        // The backend's compare-and-swap saw a change that landed after the
        // last look: the same stale read as that look reports, refused alike.
        const now = await diskHash(fs, writing).catch(() => undefined);
        return refusal(
          op,
          writing,
          'ECONFLICT',
          `${writing} changed while the edit was being written (by another process or outside ctxfs). ${restored} Re-read it with ${callText('readFile', [writing])} and redo the edit.`,
          { version: now, next: callText('readFile', [writing]) },
        );
      }
      const code: FsErrorCode = isFsError(err) ? err.code : 'EIO';
      // Where a symlink led, or any host path, is not the model's to see.
      const safe = isFsError(err) ? withoutHostPaths(err) : undefined;
      // The protocol's default hint names its own calls (`list()`, `openWrite`), which no caller of an edit can make.
      const hint = safe === undefined || hasDefaultHint(safe) ? '' : `; ${safe.hint}`;
      const reason = safe ? `${safe.reason} (${safe.path ?? primary})${hint}` : String((err as Error).message ?? err);
      return refusal(op, primary, code, `The edit could not be written: ${reason}. ${restored}`, { version: first?.current?.sha256 });
    }
    await hook?.('before-record', 0, primary);
    let recorded: FileVersion[];
    try {
      recorded = await journal.commit(pending);
    } catch (err) {
      // The files hold the new content; only its record failed. The journal
      // keeps the intent as its own, and the next call records it (see
      // EditJournal.settleOwn), so history gets it once and nothing is lost.
      const written = effective.map((p) => p.path);
      const reason = isFsError(err) ? errorText(err) : String((err as Error).message ?? err);
      const after = first?.bytes ? sha256Hex(first.bytes) : undefined;
      return refusal(
        op,
        primary,
        isFsError(err) ? err.code : 'EIO',
        `The edit was written (${written.join(', ')} now ${written.length === 1 ? 'holds' : 'hold'} the new content) but the state store could not record it: ${reason}. Do not redo it: ctxfs records it with the next call that reaches the store. Re-read with ${callText('readFile', [primary])} before editing again.`,
        { version: after, next: callText('readFile', [primary]) },
      );
    }
    const described = changeDiff(effective, recorded);
    const { files, added, removed } = described;
    const observed = async () => {
      for (const p of effective) {
        await this.#afterWrite(p, author, options.message);
        if (p.renameFrom !== undefined) await this.#afterWrite({ ...p, path: p.renameFrom, bytes: null, renameFrom: undefined }, author, options.message);
      }
    };
    const derived = async () => {
      try {
        await this.deps.afterCommit?.(effective.flatMap((p) => (p.renameFrom !== undefined ? [p.renameFrom, p.path] : [p.path])));
      } catch {
        // Derived data only; it is rebuilt when next asked for.
      }
    };
    // Independent of each other (the stale readers leave out this agent's own read, which `observed` records; the
    // derived data is rebuilt from the disk): sent together, on PostgreSQL they share a round trip.
    const [, , staleReaders] = await Promise.all([observed(), derived(), this.staleReaders(effective.map((p) => p.path))]);
    const merged = effective.some((p) => p.merged);
    const head = files[0] as FileChange;
    // A rename over an existing file is two plans (a write and a delete): it is still one rename to the reader.
    const replaced = op === 'rename' && effective.length === 2 ? effective.find((p) => p.bytes === null && p.relatedPath !== undefined) : undefined;
    const summary =
      files.length === 1
        ? `${describeOp(head.op, effective[0]?.undoOf)} ${head.path}: +${added} -${removed} lines, version ${shortHash(head.version)} (#${head.seq ?? '?'})`
        : replaced !== undefined
          ? `Renamed ${replaced.path} to ${replaced.relatedPath}, replacing the file that was there (its content stays in history)`
          : `${describeOp(op)} ${files.length} files: +${added} -${removed} lines`;
    const mergeNote = merged ? ' The file had changed since you read it; your edit was merged with those changes (see diff).' : '';
    // Other agents by name. The editing agent's own other sessions stay in `staleReaders` but not in the sentence:
    // "now stale for: cli" told a person at a terminal (every command its own session) that their edit made them stale.
    const others = [...new Set(staleReaders.map((r) => r.agent))].filter((agent) => agent !== this.deps.agent);
    const staleNote = others.length > 0 ? ` Now stale for: ${others.join(', ')}.` : '';
    return this.#applied(op, `${summary}.${mergeNote}${staleNote}`, described, merged, {
      version: head.version,
      previousVersion: head.previousVersion,
      seq: head.seq,
      staleReaders,
    });
  }

  /** The answer of a change that applies (or, in a dry run, would): its diff and its counts. */
  #applied(
    op: string,
    message: string,
    { files, diff, added, removed }: ReturnType<typeof changeDiff>,
    merged: boolean,
    fields: Pick<EditResult, 'version' | 'previousVersion' | 'seq' | 'staleReaders' | 'dryRun'>,
  ): EditResult {
    return {
      success: true,
      message,
      code: undefined,
      op,
      path: (files[0] as FileChange).path,
      diff,
      linesAdded: added,
      linesRemoved: removed,
      linesChanged: added + removed,
      merged,
      unchanged: false,
      conflict: undefined,
      next: undefined,
      files,
      ...fields,
    };
  }

  /**
   * A dry run's answer: the diff `plans` would make, as `commit` would show
   * it, with nothing written, recorded or asked. `version` is the files'
   * content now, still the base of the real call.
   */
  preview(op: string, plans: readonly PlannedFile[]): EditResult {
    const effective = changing(plans);
    if (effective.length === 0) return { ...noChange(op, plans[0]), dryRun: true };
    const described = changeDiff(effective, []);
    const named = effective.map((p) =>
      p.renameFrom !== undefined
        ? `${p.path} (moved from ${p.renameFrom})`
        : p.bytes === null
          ? `${p.path} (deleted)`
          : p.current === undefined
            ? `${p.path} (new)`
            : p.path,
    );
    const merged = effective.some((p) => p.merged);
    const mergeNote = merged ? ' A file has changed since you read it; the diff is your edit merged with those changes.' : '';
    const message = `Dry run, nothing was written. Applied, it would change ${named.join(', ')}: +${described.added} -${described.removed} lines.${mergeNote}`;
    return this.#applied(op, message, described, merged, {
      version: (described.files[0] as FileChange).previousVersion,
      previousVersion: undefined,
      seq: undefined,
      staleReaders: [],
      dryRun: true,
    });
  }

  /**
   * Records, as one change, files a program (a script, a command) already
   * changed on disk: each file's content before the program touched it and
   * after it finished, given as the hash of a blob already in the version
   * store (`null`: absent) and its size. A file whose content did not change
   * is only noted: history learns its content when it did not know it (a
   * program notes each file so before its first change, so undo can bring
   * it back). A file's change is recorded over history's newest version of
   * it: when another writer recorded one while the program ran, over theirs
   * (`before` again would be a return to it nobody made, and undoing the
   * program would revert their change). The journal records the new
   * versions with the current call's audit record.
   */
  async recordMade(op: string, files: readonly RecordedFile[], options: { author?: string | undefined; message?: string | undefined }): Promise<FileVersion[]> {
    const author = options.author ?? this.deps.agent;
    const entries: JournalEntry[] = [];
    const changed: Array<{ path: string; after: StoredContent | null }> = [];
    const same = (a: StoredContent | null, b: StoredContent | null) => (a?.sha256 ?? null) === (b?.sha256 ?? null);
    for (const { path, after, ...file } of files) {
      let before = file.before;
      if (same(before, after)) {
        await this.noteDisk(path, before ?? undefined);
        continue;
      }
      const latest = await this.#versions.latest(path);
      if (latest === undefined) await this.noteDisk(path, before ?? undefined);
      else if (latest.sha256 !== before?.sha256) before = latest.sha256 === undefined ? null : { sha256: latest.sha256, size: latest.size };
      if (same(before, after)) continue;
      entries.push({
        path,
        before: before?.sha256 ?? null,
        after: after?.sha256 ?? null,
        op: after === null ? 'delete' : before === null ? 'create' : 'write',
        size: after?.size ?? 0,
      });
      changed.push({ path, after });
    }
    if (entries.length === 0) return [];
    // The contents are in the store already: the intent carries no blobs of its own.
    const changeId = files.find((f) => f.changeId !== undefined)?.changeId;
    const recorded = await this.deps.journal.commit(await this.#begin(op, author, options.message, entries, [], changeId));
    for (const c of changed) await this.#observe(c.path, c.after, author, options.message, undefined);
    try {
      await this.deps.afterCommit?.(changed.map((c) => c.path));
    } catch {
      // Derived data only; it is rebuilt when next asked for.
    }
    return recorded;
  }

  /** Journals the intent of a change; the call's audit record travels with it, written when the change is recorded, now or by recovery. */
  #begin(
    op: string,
    author: string,
    message: string | undefined,
    entries: readonly JournalEntry[],
    blobs: ReadonlyArray<Uint8Array | JournalBlob>,
    changeId?: string,
    fingerprint?: string,
  ): Promise<PendingChange> {
    return this.deps.journal.begin({
      op,
      author,
      message,
      entries,
      blobs,
      changeId,
      fingerprint,
      sessionId: this.deps.session.id,
      audit: currentCall()?.auditDraft(),
    });
  }

  async #afterWrite(p: PlannedFile, author: string, message: string | undefined): Promise<void> {
    await this.#observe(p.path, p.bytes === null ? null : { sha256: sha256Hex(p.bytes), size: p.bytes.byteLength }, author, message, p.editorView);
  }

  /** The registry and the editor's read record after `path` became `content` (`null`: deleted). */
  async #observe(path: string, content: StoredContent | null, author: string, message: string | undefined, editorView: Uint8Array | undefined): Promise<void> {
    const { registry, fs } = this.deps;
    if (content === null) {
      try {
        await registry.refresh(path);
      } catch {
        // The change is on disk and in history; the registry catches up on its next check.
      }
      return;
    }
    const registered = (async () => {
      try {
        const st = await fs.stat(path);
        await registry.observe(path, { sha256: content.sha256, size: content.size, mtimeMs: st.mtime.getTime() }, author, message);
      } catch {
        // The change is on disk and in history; the registry catches up on its next check.
      }
    })();
    // The editor's read record goes out beside the registry's (on PostgreSQL they share a round trip); a
    // merged view's content is stored before the read of it is recorded.
    const read = (async () => {
      if (editorView) await this.deps.versions.putBlob(editorView).catch(() => undefined);
      await this.#recordEdited(path, editorView, content);
    })();
    await Promise.all([registered, read]);
  }

  /**
   * The editor has now seen what it wrote: its next edit is based on it —
   * or, after a merge, on what it believes the file is (it has not seen the merge).
   * Apart from the registry's update: when the store fails, the session keeps it in memory.
   */
  async #recordEdited(path: string, editorView: Uint8Array | undefined, content: StoredContent): Promise<void> {
    const { session, agent } = this.deps;
    try {
      await session.recordRead({
        agent,
        path,
        sha256: editorView ? sha256Hex(editorView) : content.sha256,
        op: editorView ? 'edit-merged' : 'edit',
        tokens: 0,
      });
    } catch {
      // Kept in the session's memory until the store takes it (SessionContext.recordRead).
    }
  }

  /** Agents (any session) whose last read of one of `paths` is not what is there now. */
  async staleReaders(paths: readonly string[]): Promise<StaleReader[]> {
    const out: StaleReader[] = [];
    // Each reader's last read of it that is not the file's latest version (none when deleted); asked together.
    const found = await Promise.all(
      paths.map(
        (path) =>
          this.deps.store.all(
            'SELECT session_id, agent, sha256 FROM read_heads WHERE path = ? AND sha256 IS DISTINCT FROM (SELECT sha256 FROM history WHERE path = ? ORDER BY seq DESC LIMIT 1)',
            [path, path],
          ) as Promise<Array<{ session_id: string; agent: string; sha256: string }>>,
      ),
    );
    for (const rows of found) {
      for (const r of rows) {
        if (!(r.session_id === this.deps.session.id && r.agent === this.deps.agent)) {
          out.push({ agent: r.agent, sessionId: r.session_id, version: r.sha256 });
        }
      }
    }
    return out;
  }

  /**
   * The answer to a retry of a call that was applied already (see
   * {@link EditOptions.requestId}), or `undefined` when none with this key
   * was. A change of this key still in the journal — written, its record
   * lost — is settled against the disk first.
   */
  async #earlier(op: string, paths: readonly string[], requestId: string): Promise<EditResult | undefined> {
    const path = paths[0] ?? '';
    if (requestId.length === 0 || requestId.length > 200 || /\p{Cc}/u.test(requestId)) {
      throw new Refusal(
        refusal(
          op,
          path,
          'EINVAL',
          `The request id ${q(requestId.slice(0, 40))} is not one: it must be 1 to 200 characters without control characters. Make one UUID per request and reuse it on its retries.`,
        ),
      );
    }
    const { store, journal, fs } = this.deps;
    const recorded = () =>
      store.all<{ path: string; sha256: string | null; seq: number; op: string }>('SELECT path, sha256, seq, op FROM history WHERE change_id = ? ORDER BY id', [
        requestId,
      ]);
    let rows = await recorded();
    if (rows.length === 0) {
      if (!(await journal.pending()).some((p) => p.changeId === requestId)) return undefined;
      // Recovery may record versions of these files: the heads asked with their locks are history now.
      lockedHeads.getStore()?.clear();
      await journal.recover(fs);
      rows = await recorded();
      if (rows.length === 0 && (await journal.pending()).some((p) => p.changeId === requestId)) {
        throw new Refusal(
          refusal(
            op,
            path,
            'EBUSY',
            `A call with request id ${q(requestId)} is being applied by another process. Nothing was written; retry once it has finished.`,
          ),
        );
      }
      if (rows.length === 0) return undefined;
    }
    const head = rows[rows.length - 1] as { path: string; sha256: string | null; seq: number; op: string };
    // A retry repeats its call. An id reused for another call (another file, or an undo for an edit) is
    // refused: answering "already applied" would drop that call's change while reporting it done.
    const kind = (o: string) => (o === 'undo' || o === 'rollback' ? o : 'edit');
    if (rows.some((r) => !paths.includes(r.path) || kind(r.op) !== kind(op))) {
      throw new Refusal(
        refusal(
          op,
          path,
          'EINVAL',
          `The request id ${q(requestId)} was already used by another change (${head.op} of ${[...new Set(rows.map((r) => r.path))].join(', ')}, #${head.seq}), not by this ${op} of ${paths.join(', ')}. Nothing was written. A retry repeats the same call with the same id; give every new call an id of its own.`,
        ),
      );
    }
    // The same file and kind of change is not yet the same call: an edit of other text, or another operation,
    // under the id of one that was applied would be dropped while answered as applied.
    const given = (await store.get<{ fingerprint: string }>('SELECT fingerprint FROM request_calls WHERE change_id = ?', [requestId]))?.fingerprint;
    const now = given === undefined ? undefined : requestFingerprint();
    if (now !== undefined && now !== given) {
      throw new Refusal(
        refusal(
          op,
          path,
          'EINVAL',
          `The request id ${q(requestId)} was already used by another call (${operationName(apiOperation(head.op))} of ${[...new Set(rows.map((r) => r.path))].join(', ')}, #${head.seq}); this ${operationName(apiOperation(op))} of ${paths.join(', ')} ${head.op === op ? 'has other arguments' : 'is another operation'}, so it is not a retry of that call. Nothing was written. A retry repeats the same call with the same id; give every new call an id of its own.`,
        ),
      );
    }
    // The caller learns now what its change made, as when it is answered the first time: its next edit is based on it.
    for (const r of rows) {
      if (r.sha256 !== null && (await this.#versions.latest(r.path))?.sha256 === r.sha256) {
        await this.deps.session.recordRead({ agent: this.deps.agent, path: r.path, sha256: r.sha256, op: 'edit', tokens: 0 }).catch(() => undefined);
      }
    }
    return {
      ...refusal(
        op,
        head.path,
        'EINVAL',
        `Already applied: request ${q(requestId)} changed ${[...new Set(rows.map((r) => r.path))].join(', ')} (version ${shortHash(head.sha256 ?? undefined)}, #${head.seq}) in an earlier call whose answer was lost. Nothing was written again.`,
        { version: head.sha256 ?? undefined },
      ),
      success: true,
      code: undefined,
      unchanged: true,
      seq: Number(head.seq),
    };
  }

  /**
   * Runs a whole operation: locks, plan, commit; refusals become results.
   * Whatever the result quotes of the files — a diff, a conflict, a refused
   * hunk's lines — is masked by the secrets of every content the call loaded
   * or planned.
   */
  async run(op: string, paths: readonly string[], given: EditOptions, plan: () => Promise<PlannedFile[]>): Promise<EditResult> {
    const sources: string[] = [];
    const result = await callSources.run(sources, () => this.#run(op, paths, given, plan));
    return maskedResult(result, this.masker(sources));
  }

  async #run(op: string, paths: readonly string[], given: EditOptions, plan: () => Promise<PlannedFile[]>): Promise<EditResult> {
    const requestId = given.requestId ?? nextChangeId();
    const options = requestId === given.requestId ? given : { ...given, requestId };
    try {
      const store = this.deps.store;
      const reads = new Map<string, Promise<ReadRecord | undefined>>();
      const heads = new Map<string, Promise<FileVersion | undefined>>();
      // What loading each file asks first — history's head of it, the agent's last read of it — is asked with
      // its lock: on PostgreSQL the answers come in the lock's round trip (StateStore.withLock).
      const ahead = () => {
        for (const path of paths) {
          const head = this.#versions.latest(path);
          head.catch(() => undefined);
          heads.set(path, head);
          if (options.baseVersion !== undefined || options.dryRun) continue;
          const read = this.deps.session.lastRead(this.deps.agent, path);
          read.catch(() => undefined);
          reads.set(path, read);
        }
      };
      return await withLocks(
        this.deps.fs,
        paths,
        () => lockedPaths.run(new Set(paths), () => baseReads.run(reads, () => lockedHeads.run(heads, () => this.#locked(op, paths, options, plan)))),
        (sorted, fn) =>
          store.withLock(
            sorted.map((path) => `file:${path}`),
            fn,
            ahead,
          ),
      );
    } catch (err) {
      if (err instanceof Refusal) return err.result;
      if (isFsError(err)) return refusal(op, paths[0] ?? '', err.code, errorText(err, paths[0]));
      throw err;
    }
  }

  /** The operation, its files' locks held: a dry run's preview, an earlier answer to the same request, or the change committed. */
  async #locked(op: string, paths: readonly string[], options: EditOptions, plan: () => Promise<PlannedFile[]>): Promise<EditResult> {
    if (options.dryRun) return this.preview(op, planned(await plan()));
    if (options.requestId !== undefined) {
      const earlier = await this.#earlier(op, paths, options.requestId);
      if (earlier) return earlier;
    }
    const plans = planned(await plan());
    await this.deps.beforeCommit?.(plans);
    return await this.commit(op, plans, options);
  }
}

/**
 * Refuses `text` that `current`'s encoding (UTF-8 for a new file) cannot
 * hold, before anything is written: written, each such character would
 * become a `?` (or another character) on disk while the edit reported
 * success, and the text would be lost.
 */
function unencodable(op: string, path: string, text: string, current: FileText | undefined): void {
  const message = unencodableText(path, text, current?.encoding ?? 'utf-8', 'stored');
  if (message === undefined) return;
  throw new Refusal(refusal(op, path, 'EINVAL', message, current === undefined ? {} : { version: current.sha256 }));
}

/** `plans`, their texts noted as what the running call may quote. */
function planned(plans: PlannedFile[]): PlannedFile[] {
  for (const p of plans) {
    quoted(p.beforeText);
    quoted(p.afterText);
  }
  return plans;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function by(authors: readonly string[]): string {
  return authors.length > 0 ? ` by ${changedByText(authors)}` : '';
}

/** Operations that move a file's bytes whole and never edit its text: a binary file is theirs to act on. */
const WHOLE_FILE_OPS = new Set(['delete', 'rename', 'undo', 'rollback', 'history']);

function describe(ranges: ReadonlyArray<{ start: number; end: number }>): string {
  return ranges.map((r) => (r.end < r.start ? `before line ${r.start}` : r.start === r.end ? `line ${r.start}` : `lines ${r.start}-${r.end}`)).join(', ');
}

function nextRead(path: string, conflict: EditConflict | undefined): string {
  const first = conflict?.lines[0];
  return first ? callText('readLines', [path, first.start, Math.max(first.start, first.end)]) : callText('readFile', [path]);
}

function describeOp(op: string, undoOf?: number): string {
  switch (op) {
    case 'write':
      return 'Wrote';
    case 'create':
      return 'Created';
    case 'delete':
      return 'Deleted';
    case 'rename':
      return 'Renamed to';
    case 'patch':
      return 'Patched';
    case 'replace':
      return 'Replaced in';
    case 'edit-lines':
      return 'Edited';
    case 'rollback':
      return 'Rolled back';
    case 'undo':
      // Not "the last change": undo({ change }) reverts an older one.
      return undoOf === undefined ? 'Undid a change of' : `Undid change #${undoOf} of`;
    default:
      return 'Changed';
  }
}

/** The API operation an edit's recorded op comes from, so a text names the call the caller made (`write_file` through the tools, not `write`). */
const API_OPERATIONS: Readonly<Record<string, string>> = {
  write: 'writeFile',
  create: 'createFile',
  delete: 'deleteFile',
  rename: 'renameFile',
  patch: 'applyPatch',
  'edit-lines': 'editLines',
};

/**
 * The API operation of an edit op (`writeFile` for `write`); an op that is
 * its own API name (`replace`, `undo`) unchanged.
 *
 * @example
 * ```ts
 * apiOperation('edit-lines'); // 'editLines'
 * ```
 */
export function apiOperation(op: string): string {
  return API_OPERATIONS[op] ?? op;
}

/** The base-version option as the caller's surface names it (`base_version` through the tools). */
function baseOption(op: string): string {
  return optionName(apiOperation(op), 'baseVersion') ?? 'baseVersion';
}
