/**
 * Reading history — versions of a file, one version's content, the diff
 * between two versions — and the two history edits, `rollback` and `undo`,
 * which are themselves new versions (history only grows).
 *
 * Version references: a `seq` number (`3`), a content hash or a prefix of
 * one (6+ hex digits), `current` (the newest recorded version), `previous`
 * (the one before it) or `disk` (the file as it is on disk right now).
 *
 * @module
 */

import { fsError, isFsError } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import { type EditResult, q, refusal, shortHash } from '../edits/edit-result.ts';
import { type EditOptions, type FileEditor, Refusal, refusalAsError } from '../edits/file-editor.ts';
import { decodeFile, encodeLike, type FileText, loadFileText } from '../edits/file-text.ts';
import type { PlannedFile } from '../edits/planned-change.ts';
import { merge3 } from '../merge/merge3.ts';
import { listFirst } from '../patch/mismatch-report.ts';
import { missingFile, type Workspace } from '../retrieval/shared.ts';
import { errorText } from '../safety/host-paths.ts';
import { formatUnifiedDiff } from './unified-diff.ts';
import { type FileVersion, sha256Hex, type VersionStore } from './version-store.ts';

/** A version reference: seq number, hash (prefix), `current`, `previous` or `disk`. */
export type VersionRef = number | string;

/** A version with its content. */
export interface VersionContent {
  readonly path: string;
  /** Undefined for `disk` when the on-disk content was never recorded. */
  readonly meta: FileVersion | undefined;
  /** `undefined` when the version is "deleted". */
  readonly sha256: string | undefined;
  readonly bytes: Uint8Array | undefined;
  readonly text: string | undefined;
}

/** Result of `getDiff`. */
export interface VersionDiff {
  readonly path: string;
  readonly from: string;
  readonly to: string;
  readonly diff: string;
  readonly linesAdded: number;
  readonly linesRemoved: number;
}

function label(ref: VersionRef, v: VersionContent): string {
  if (typeof ref === 'string' && (ref === 'disk' || ref === 'current' || ref === 'previous')) return `${ref} (${shortHash(v.sha256)})`;
  return v.meta ? `#${v.meta.seq} (${shortHash(v.sha256)})` : shortHash(v.sha256);
}

/** Resolves `ref` to a recorded version of `path`, or throws an FsError. */
export async function resolveVersion(editor: FileEditor, path: string, ref: VersionRef): Promise<FileVersion> {
  const versions = editor.deps.versions;
  let found: FileVersion | 'ambiguous' | undefined;
  if (typeof ref === 'number') found = await versions.bySeq(path, ref);
  else if (ref === 'current') found = await versions.latest(path);
  else if (ref === 'previous') found = (await versions.list(path, 2))[1];
  else if (/^[0-9a-f]{6,64}$/i.test(ref)) found = await versions.byHash(path, ref.toLowerCase());
  else if (/^#?\d+$/.test(ref)) found = await versions.bySeq(path, Number(ref.replace('#', '')));
  if (found === 'ambiguous')
    throw fsError('EINVAL', 'getVersion', path, { reason: `version ${q(String(ref))} matches several versions`, hint: 'give more hex digits' });
  if (found === undefined) {
    // A number below the oldest version kept was a version once: retention removed it.
    const seq = typeof ref === 'number' ? ref : /^#?\d+$/.test(ref) ? Number(ref.replace('#', '')) : undefined;
    const latest = seq === undefined ? undefined : await versions.latest(path);
    if (seq !== undefined && latest !== undefined && seq >= 1 && seq < latest.seq) {
      throw fsError('ENOENT', 'getVersion', path, {
        reason: `version #${seq} of ${path} was removed by retention`,
        hint: `list the versions kept with ${callText('history', [path])}`,
      });
    }
    throw fsError('ENOENT', 'getVersion', path, {
      reason: `no version ${q(String(ref))} of ${path}`,
      hint: `list the versions with ${callText('history', [path])}; refer to one by its number, its hash, 'current', 'previous' or 'disk'`,
    });
  }
  return found;
}

/**
 * Versions of `path`, newest first. The file on disk is checked first: a
 * change made behind ctxfs's back becomes an `external` version.
 */
export async function getFileHistory(editor: FileEditor, ws: Pick<Workspace, 'registry'>, path: string, limit = 50): Promise<FileVersion[]> {
  let p: string;
  let current: unknown;
  try {
    p = editor.normalize('history', path);
    current = await editor.load('history', p);
  } catch (err) {
    // A path out of the workspace, a directory: refused as any read is. A binary file still has a history.
    const binary = isFsError(err, 'EBINARY') || (err instanceof Refusal && err.result.code === 'EBINARY');
    if (!binary) throw refusalAsError(err, 'history');
    p = editor.normalize('history', path);
    current = true;
  }
  const versions = await editor.deps.versions.list(p, limit);
  // A deleted file keeps its history; a path that never held one is not there.
  if (versions.length === 0 && current === undefined) {
    throw missingFile(ws, p, 'history', undefined, `no file at ${p}, and none was ever recorded there`);
  }
  return versions;
}

/** One version with its content. */
export async function getVersion(editor: FileEditor, path: string, ref: VersionRef): Promise<VersionContent> {
  const p = editor.normalize('getVersion', path);
  if (ref === 'disk') {
    const now = await loadFileText(editor.deps.fs, p, 'getVersion');
    const meta = now ? await editor.deps.versions.byHash(p, now.sha256) : undefined;
    return { path: p, meta: meta === 'ambiguous' ? undefined : meta, sha256: now?.sha256, bytes: now?.bytes, text: now?.text };
  }
  const meta = await resolveVersion(editor, p, ref);
  if (meta.sha256 === undefined) return { path: p, meta, sha256: undefined, bytes: undefined, text: undefined };
  const bytes = await editor.deps.versions.getBlob(meta.sha256);
  if (bytes === undefined) {
    throw fsError('ENOENT', 'getVersion', p, { reason: `the content of version #${meta.seq} was removed by retention`, hint: 'pick a newer version' });
  }
  return { path: p, meta, sha256: meta.sha256, bytes, text: decodeFile(editor.deps.fs, p, bytes, 'getVersion').text };
}

/**
 * Unified diff between two versions (default: the newest recorded version
 * → the file on disk, i.e. what changed behind ctxfs's back), masked by the
 * secrets of both (a hunk inside a key block shows no key line).
 */
export async function getDiff(editor: FileEditor, path: string, from: VersionRef = 'current', to: VersionRef = 'disk'): Promise<VersionDiff> {
  const a = await getVersion(editor, path, from);
  const b = await getVersion(editor, path, to);
  const d = formatUnifiedDiff(a.text ?? '', b.text ?? '', { oldLabel: `a/${a.path} ${label(from, a)}`, newLabel: `b/${b.path} ${label(to, b)}` });
  const diff = editor.masker([a.text, b.text])(d.text);
  return { path: a.path, from: label(from, a), to: label(to, b), diff, linesAdded: d.linesAdded, linesRemoved: d.linesRemoved };
}

/**
 * Makes version `ref` the current content again (a new version; deleting
 * the file when `ref` is a deletion).
 */
export async function rollback(editor: FileEditor, path: string, ref: VersionRef, options: EditOptions = {}): Promise<EditResult> {
  let p: string;
  try {
    p = editor.normalize('rollback', path);
  } catch (err) {
    if (err instanceof Refusal) return err.result;
    throw err;
  }
  return editor.run('rollback', [p], { message: `rollback to ${String(ref)}`, ...options }, async () => {
    const current = await editor.load('rollback', p);
    let target: VersionContent;
    try {
      target = await getVersion(editor, p, ref);
    } catch (err) {
      // A path that never held a file has no history to list: offering it would be a call that fails; look for the file instead.
      if (current === undefined && (await editor.deps.versions.latest(p)) === undefined) {
        const missing = missingFile({ registry: editor.deps.registry }, p, 'rollback', undefined, `no file at ${p}, and none was ever recorded there`);
        throw new Refusal(refusal('rollback', p, 'ENOENT', errorText(missing, p)));
      }
      const e = err as { code?: string; reason?: string; hint?: string };
      throw new Refusal(
        refusal('rollback', p, 'ENOENT', `${e.reason ?? String(err)}; ${e.hint ?? ''}`, { version: current?.sha256, next: callText('history', [p]) }),
      );
    }
    return [editor.planBytes('rollback', p, current, target.bytes ?? null)];
  });
}

/** Options of {@link undo}. */
export interface UndoOptions extends EditOptions {
  /**
   * Revert this change (its `seq`) instead of the newest one, keeping the
   * changes made after it — like `git revert`. Refused when later changes
   * touch the same lines.
   */
  change?: number;
}

/**
 * The version `undo` would revert: change `change` when given; else the
 * newest change by `author` (every author's when none is given) that is not
 * itself an undo nor undone. `before` is the version before it, `undefined`
 * when retention removed it or there is none.
 */
export function undoTarget(
  history: readonly FileVersion[],
  change?: number,
  author?: string,
): { target: FileVersion; before: FileVersion | undefined } | undefined {
  return targetIn(new UndoIndex(history), change, author);
}

/** How many versions of a file undo reads, newest first. */
const UNDO_WINDOW = 10_000;

/**
 * The change `undo(path)` without a change number would revert for
 * `agent`: its newest change of `path` that is neither an undo nor undone;
 * `undefined` when none is left (that undo is refused). What a hint asks
 * before it offers the undo.
 */
export async function ownUndoTarget(versions: Pick<VersionStore, 'list'>, path: string, agent: string): Promise<FileVersion | undefined> {
  return targetIn(new UndoIndex(await versions.list(path, UNDO_WINDOW)), undefined, agent)?.target;
}

function targetIn(index: UndoIndex, change?: number, author?: string): { target: FileVersion; before: FileVersion | undefined } | undefined {
  const { history, undone } = index;
  if (change !== undefined) {
    const target = index.bySeq(change);
    return target === undefined || target.op === 'initial' ? undefined : { target, before: index.before(target) };
  }
  for (let i = 0; i < history.length; i++) {
    const v = history[i] as FileVersion;
    if (v.op === 'undo' || undone.has(v.seq) || v.op === 'initial') continue;
    if (author !== undefined && v.author !== author) continue;
    return { target: v, before: history[i + 1] };
  }
  return undefined;
}

/** The newest change of the history by someone other than `author`, not undone: what an undo of one's own changes leaves alone. */
function newestByOthers({ history, undone }: UndoIndex, author: string): FileVersion | undefined {
  return history.find((v) => v.op !== 'undo' && v.op !== 'initial' && !undone.has(v.seq) && v.author !== author);
}

/**
 * A file's history (newest first) as undo asks it: a version by its `seq`,
 * the one before it, the parts of its change, and what undos reverted — each
 * found in one pass over the history, never by scanning it again per
 * version (a history of undos and redos asked that per undo: its square).
 */
class UndoIndex {
  /** Where each `seq` stands in the history. */
  readonly #at = new Map<number, number>();
  /** The versions of each change but its undos, newest first. */
  readonly #changes = new Map<string, FileVersion[]>();
  /** The `seq` of every version an undo in effect reverted (every part of its change); a redone one is not. */
  readonly undone = new Set<number>();
  readonly history: readonly FileVersion[];

  constructor(history: readonly FileVersion[]) {
    this.history = history;
    for (let i = 0; i < history.length; i++) {
      const v = history[i] as FileVersion;
      if (!this.#at.has(v.seq)) this.#at.set(v.seq, i);
      if (v.changeId === undefined || v.op === 'undo') continue;
      const parts = this.#changes.get(v.changeId);
      if (parts === undefined) this.#changes.set(v.changeId, [v]);
      else parts.push(v);
    }
    // An undo of one part reverts the parts of its change up to that one by the same author: per change and
    // author, everything up to the newest part undone.
    const reach = new Map<string, Map<string, number>>();
    // An undo that a later undo reverted (a redo) no longer reverts its target: newest first, so a redo is met
    // before the undo it cancels.
    const cancelled = new Set<number>();
    for (const v of history) {
      if (v.op !== 'undo' || v.undoOf === undefined || cancelled.has(v.seq)) continue;
      this.undone.add(v.undoOf);
      const target = this.bySeq(v.undoOf);
      if (target?.op === 'undo') cancelled.add(target.seq);
      if (target?.changeId === undefined) continue;
      const authors = reach.get(target.changeId) ?? new Map<string, number>();
      reach.set(target.changeId, authors);
      authors.set(target.author, Math.max(authors.get(target.author) ?? 0, target.seq));
    }
    for (const [changeId, authors] of reach) {
      for (const part of this.#changes.get(changeId) ?? []) {
        if (part.seq <= (authors.get(part.author) ?? 0)) this.undone.add(part.seq);
      }
    }
  }

  /** Version `seq`, if the history holds it. */
  bySeq(seq: number): FileVersion | undefined {
    const i = this.#at.get(seq);
    return i === undefined ? undefined : this.history[i];
  }

  /** The version before `v`; `undefined` when retention removed it or there is none. */
  before(v: FileVersion): FileVersion | undefined {
    const i = this.#at.get(v.seq);
    return i === undefined ? undefined : this.history[i + 1];
  }

  /**
   * `target` and the earlier versions (newest first) that are parts of the
   * same change: a program's change of a file is recorded in parts when
   * another agent's version lands in the middle of it (see `ProgramRun`),
   * and one undo reverts the program, not the part after it.
   */
  partsOf(target: FileVersion): FileVersion[] {
    // An undo is a change of its own (its reverse is a redo), never a part of what it reverted.
    if (target.changeId === undefined || target.op === 'undo') return [target];
    return (this.#changes.get(target.changeId) ?? []).filter((v) => v.seq <= target.seq && v.author === target.author);
  }
}

/** Thrown by an undo's plan whose target is a rename while only its own path is locked: the undo starts over holding both. */
class RenameLocks {
  readonly other: string;
  constructor(other: string) {
    this.other = other;
  }
}

/**
 * Reverts the caller's newest change of `path` that has not been undone (repeated
 * calls walk further back). The revert is merged onto the current content,
 * so later changes to other lines survive; an overlap is refused.
 */
export async function undo(editor: FileEditor, path: string, options: UndoOptions = {}): Promise<EditResult> {
  let p: string;
  try {
    p = editor.normalize('undo', path);
  } catch (err) {
    if (err instanceof Refusal) return err.result;
    throw err;
  }
  // The target is found under the lock of `p`, from its history read there once. A rename's undo changes its
  // other path too, and a call's locks are taken together, in order (withLocks), never one more while some are
  // held: a target that is a rename starts the undo over holding both, where the target is found again.
  try {
    return await undoHolding(editor, p, undefined, options);
  } catch (err) {
    if (!(err instanceof RenameLocks)) throw err;
    return await undoHolding(editor, p, err.other, options);
  }
}

/** {@link undo} of `p`, holding its lock and, for a rename's undo, that of the rename's `other` path. */
async function undoHolding(editor: FileEditor, p: string, other: string | undefined, options: UndoOptions): Promise<EditResult> {
  const opts: EditOptions = { ...options };
  return editor.run('undo', other === undefined ? [p] : [p, other], opts, async () => {
    const current = await editor.load('undo', p);
    const index = new UndoIndex(await editor.deps.versions.list(p, UNDO_WINDOW));
    const { history } = index;
    // Without a change number, undo reverts the caller's own newest change: a change made since by a person
    // (recorded as external) or another agent is theirs to keep, and survives where it touches other lines.
    const agent = editor.deps.agent;
    const found = targetIn(index, options.change, options.change === undefined ? agent : undefined);
    if (!found) {
      const others = options.change === undefined ? newestByOthers(index, agent) : undefined;
      if (others !== undefined) {
        const theirs = callText('undo', [p], { change: others.seq });
        throw new Refusal(
          refusal(
            'undo',
            p,
            'ENOENT',
            `Nothing of yours to undo: ${p} has no change by ${agent} that is not undone. Its newest change, #${others.seq} (${others.op}), was made by ${others.author === 'external' ? 'someone outside ctxfs' : others.author}; to revert that one: ${theirs}.`,
            { version: current?.sha256, next: callText('history', [p]) },
          ),
        );
      }
      // No version at all: a file ctxfs never changed (its history lists nothing, so offering it helps no one), or no file.
      if (history.length === 0) {
        if (current === undefined) {
          const missing = missingFile({ registry: editor.deps.registry }, p, 'undo', undefined, `no file at ${p}, and none was ever recorded there`);
          throw new Refusal(refusal('undo', p, 'ENOENT', `Nothing to undo: ${errorText(missing, p)}`));
        }
        throw new Refusal(
          refusal(
            'undo',
            p,
            'ENOENT',
            `Nothing to undo: ${p} has no recorded change. It was never changed through ctxfs, so it is as ctxfs first saw it; an edit made through ctxfs is recorded and can be undone.`,
            { version: current.sha256 },
          ),
        );
      }
      const asked = options.change === undefined ? undefined : index.bySeq(options.change);
      const why =
        options.change !== undefined
          ? asked?.op === 'initial'
            ? asked.message === undefined
              ? `#${options.change} is the first version of ${p}, as ctxfs first saw it: no change to undo.`
              : `#${options.change} is the first version of ${p}: it ${asked.message}.`
            : `${p} has no version #${options.change}: its versions are #1 to #${history[0]?.seq ?? 1}.`
          : history.some((v) => v.op !== 'initial')
            ? `every recorded change of ${p} is undone already.`
            : `${p} has no recorded change after its first version.`;
      throw new Refusal(
        refusal('undo', p, 'ENOENT', `Nothing to undo: ${why} See ${callText('history', [p])}.`, { version: current?.sha256, next: callText('history', [p]) }),
      );
    }
    const { target } = found;
    const blob = async (sha: string | undefined) => (sha === undefined ? null : ((await editor.deps.versions.getBlob(sha)) ?? null));
    if (target.op === 'rename' && target.relatedPath !== undefined) {
      if (target.relatedPath !== other) {
        if (other === undefined) throw new RenameLocks(target.relatedPath);
        // Holding both, the target is another rename than the one this hold was taken for.
        throw new Refusal(
          refusal('undo', p, 'EBUSY', `The history of ${p} changed while the undo began. Nothing was changed; undo again: ${callText('undo', [p])}.`, {
            version: current?.sha256,
            next: callText('undo', [p]),
          }),
        );
      }
      opts.message ??= `undo #${target.seq} (rename by ${target.author})`;
      return await undoRename(editor, p, current, history, target, blob);
    }
    opts.message ??= `undo #${target.seq} (${target.op} by ${target.author})`;
    const { undone } = index;
    // Each part is reverted over what reverting the newer ones left, starting from the file as it is.
    let now: { sha256: string | undefined; bytes: Uint8Array | null; text: string | undefined } = {
      sha256: current?.sha256,
      bytes: current?.bytes ?? null,
      text: current?.binary === true ? undefined : current?.text,
    };
    let merged = false;
    for (const part of index.partsOf(target)) {
      if (part !== target && undone.has(part.seq)) continue;
      const before = index.before(part);
      const beforeBytes = await blob(before?.sha256);
      // A change past the first with no version before it: retention removed that version, which is
      // not "the file did not exist" (undoing as if it were deleted the file).
      const pruned = before === undefined && part.seq > 1;
      if (pruned || (before?.sha256 !== undefined && beforeBytes === null)) {
        throw new Refusal(
          refusal(
            'undo',
            p,
            'ENOENT',
            `Cannot undo #${target.seq}: the content before ${part === target ? 'it' : `#${part.seq}, a part of it,`} was removed by retention.`,
            {
              version: current?.sha256,
            },
          ),
        );
      }
      if (now.sha256 === part.sha256) {
        now = { sha256: before?.sha256, bytes: beforeBytes, text: undefined };
        merged = false;
        continue;
      }
      // The file moved on since the change being undone: revert it by merging.
      const targetBytes = await blob(part.sha256);
      const binary = (bytes: Uint8Array | null) => bytes !== null && decodeFile(editor.deps.fs, p, bytes, 'undo', true).binary === true;
      if ((now.text === undefined && binary(now.bytes)) || binary(targetBytes) || binary(beforeBytes)) {
        throw new Refusal(
          refusal(
            'undo',
            p,
            'ECONFLICT',
            `Cannot undo #${target.seq}: ${p} is binary and changed since, and binary content cannot be merged. Nothing was changed. To go back to the version before #${part.seq}, discarding the later changes: ${callText('rollback', [p, before?.seq ?? 1])}.`,
            {
              version: current?.sha256,
              next: callText('rollback', [p, before?.seq ?? 1]),
            },
          ),
        );
      }
      if (now.bytes === null || part.sha256 === undefined || beforeBytes === null || targetBytes === null) {
        throw new Refusal(
          refusal('undo', p, 'ECONFLICT', `Cannot undo #${target.seq}: the file was created or deleted since, so the change cannot be reverted on its own.`, {
            version: current?.sha256,
            next: callText('rollback', [p, before?.seq ?? 1]),
          }),
        );
      }
      const text = now.text ?? decodeFile(editor.deps.fs, p, now.bytes).text;
      const merge = merge3(decodeFile(editor.deps.fs, p, targetBytes).text, decodeFile(editor.deps.fs, p, beforeBytes).text, text);
      if (!merge.clean || merge.text === undefined) {
        const lines = listFirst(merge.conflicts.map((c) => `${c.theirs.start + 1}-${Math.max(c.theirs.start + 1, c.theirs.end)}`));
        const first = (merge.conflicts[0]?.theirs.start ?? 0) + 1;
        throw new Refusal(
          refusal(
            'undo',
            p,
            'ECONFLICT',
            `Cannot undo #${target.seq}: later changes touch the same lines (current lines ${lines}). Nothing was changed. Edit those lines by hand, or ${callText('rollback', [p, before?.seq ?? 1])} to discard the later changes too.`,
            {
              version: current?.sha256,
              next: callText('readLines', [p, first, Math.max(first, merge.conflicts[0]?.theirs.end ?? 1)]),
            },
          ),
        );
      }
      const bytes = encodeLike(merge.text, current);
      now = { sha256: sha256Hex(bytes), bytes, text: merge.text };
      merged = true;
    }
    if (!merged) return [editor.planBytes('undo', p, current, now.bytes, target.seq)];
    const plan = editor.planBytes('undo', p, current, null, target.seq);
    return [{ ...plan, bytes: now.bytes, afterText: now.text as string }];
  });
}

/**
 * The undo of a rename (with what the same change did to the content, and
 * the file it overwrote): the source back with its content before the
 * change, the destination back to what it held (absent, or the file it
 * replaced). Only while neither path moved on since; otherwise refused, with
 * the way back in two calls.
 */
async function undoRename(
  editor: FileEditor,
  p: string,
  current: FileText | undefined,
  history: readonly FileVersion[],
  target: FileVersion,
  blob: (sha: string | undefined) => Promise<Uint8Array | null>,
): Promise<PlannedFile[]> {
  const related = target.relatedPath as string;
  const [src, dst] = target.sha256 === undefined ? [p, related] : [related, p];
  const historyOf = async (path: string) => (path === p ? history : await editor.deps.versions.list(path, UNDO_WINDOW));
  const side = async (path: string, moved: boolean) => {
    const h = await historyOf(path);
    const at = h.findIndex((v) => v.op === 'rename' && v.changeId === target.changeId && (v.sha256 === undefined) === moved);
    const now = path === p ? current : await editor.load('undo', path);
    return { version: h[at], before: at < 0 ? undefined : h[at + 1], now };
  };
  const from = await side(src, true);
  const to = await side(dst, false);
  const back = callText('renameFile', [dst, src]);
  const refuse = (why: string): never => {
    const rollback = from.before === undefined ? '' : ` and its content with ${callText('rollback', [src, from.before.seq])}`;
    throw new Refusal(
      refusal(
        'undo',
        p,
        'ECONFLICT',
        `Cannot undo #${target.seq}, a rename (${src} → ${dst}): ${why}. Nothing was changed. Bring the name back with ${back}${rollback}.`,
        {
          version: current?.sha256,
          next: back,
        },
      ),
    );
  };
  if (from.version === undefined || to.version === undefined || from.before?.sha256 === undefined)
    return refuse(`its record on ${from.version === undefined ? src : dst} is gone`);
  if (from.now !== undefined) return refuse(`${src} exists again`);
  if (to.now?.sha256 !== to.version.sha256) return refuse(`${dst} changed since`);
  const srcBytes = await blob(from.before.sha256);
  const dstBytes = await blob(to.before?.sha256);
  if (srcBytes === null || (to.before?.sha256 !== undefined && dstBytes === null)) {
    throw new Refusal(
      refusal('undo', p, 'ENOENT', `Cannot undo #${target.seq}: the content before it was removed by retention.`, { version: current?.sha256 }),
    );
  }
  return [editor.planBytes('undo', src, undefined, srcBytes, from.version.seq), editor.planBytes('undo', dst, to.now, dstBytes, to.version.seq)];
}
