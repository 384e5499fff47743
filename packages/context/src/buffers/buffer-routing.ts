/**
 * Where a session's file calls go once a file is open in one of its
 * buffers (seed 003: once a file is loaded, edits go to the loaded buffer
 * and `save` writes it). The edits that change part or all of one file's
 * text — a whole-content write, replace, a line-range edit, a patch of that
 * one file — change the buffer, not the disk; the reads serve the buffer's
 * text, so the agent sees what it is editing. Everything else, and every
 * file not open, goes to the disk exactly as before.
 *
 * The session consults this at its one edit entry and its one read entry;
 * the tools know nothing of it. Calls that act on the file as a whole on
 * disk (create, delete, rename, rollback, undo of saved versions) still go
 * to the disk; the buffer takes in what they did by its permission, as it
 * takes in a person's change. A patch of several files that touches an open
 * one is refused whole: applied to the disk it would pass over the buffer's
 * unsaved text, and split between buffer and disk it would no longer be all
 * or nothing.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import type { Document, DocumentLoader, DocumentSource } from '../content/document.ts';
import { type EditResult, maskedResult, plainResult, refusal } from '../edits/edit-result.ts';
import { formatUnifiedDiff } from '../history/unified-diff.ts';
import { sha256Hex } from '../history/version-store.ts';
import { errorText } from '../safety/host-paths.ts';
import type { OpClass } from '../safety/policy.ts';
import { maskerOf, type Redactor } from '../safety/redaction.ts';
import type { SessionContext } from '../session/session-context.ts';
import type { BufferEditOp } from './buffer-edits.ts';
import { mergedFirst } from './overwritten-text.ts';
import type { BufferChange, SessionBuffers } from './session-buffers.ts';

/** An edit call as the session received it. */
export interface RoutedEdit {
  /** Every path the call touches and how (a patch's files). */
  readonly targets: ReadonlyArray<{ readonly path: string; readonly opClass: OpClass }>;
  /** The call as a buffer edit; `undefined` for a call that acts on the file on disk as a whole (create, delete, rename, history). */
  readonly edit: BufferEditOp | undefined;
  /** The version the caller says the edit was made from. */
  readonly baseVersion: string | undefined;
  /** A dry run: previewed on the disk's files, so refused for a file open in a buffer. */
  readonly dryRun?: boolean | undefined;
}

/** What the routing needs of the session. */
export interface RoutingHost {
  /** The session's buffers, when it has made them (no buffer is open before). */
  buffers(): SessionBuffers | undefined;
  readonly session: SessionContext;
  readonly agent: string;
  /** Masks what an edit's result quotes of the buffer, as the disk's edits are masked. */
  readonly redactor?: Redactor | undefined;
}

/**
 * The session's routing between its open buffers and the disk.
 *
 * @example
 * ```ts
 * const routing = new BufferRouting({ buffers: () => ctx.buffers, session: ctx.sessionContext, agent: ctx.agent });
 * const r = await routing.edit({ targets: [{ path: 'a.ts', opClass: 'write' }], edit, baseVersion: undefined });
 * // undefined: a.ts is not open, the disk takes the call; else the buffer's result
 * ```
 */
export class BufferRouting {
  readonly #host: RoutingHost;

  constructor(host: RoutingHost) {
    this.#host = host;
  }

  /** The open buffers, or `undefined` when none is open (every call goes to the disk). */
  #open(): SessionBuffers | undefined {
    const buffers = this.#host.buffers();
    return buffers !== undefined && buffers.paths.length > 0 ? buffers : undefined;
  }

  /**
   * The result of `call` applied to an open buffer, or of its refusal;
   * `undefined` when the disk takes the call.
   */
  edit(call: RoutedEdit): Promise<EditResult> | undefined {
    const buffers = this.#open();
    if (buffers === undefined) return undefined;
    const open = call.targets.filter((t) => buffers.isOpen(t.path));
    if (open.length === 0) return undefined;
    if (call.dryRun) {
      const path = (open[0] as { path: string }).path;
      return Promise.resolve(
        refusal(
          call.edit?.kind ?? 'edit',
          path,
          'EINVAL',
          `A dry run previews a change of the files on disk, and ${path} is open in a buffer of this session, where the edit would go instead. Leave out dry_run to make the edit in the buffer.`,
        ),
      );
    }
    const only = call.targets.length === 1 ? call.targets[0] : undefined;
    if (call.edit !== undefined && only !== undefined && only.opClass === 'write')
      return this.#apply(buffers, only.path, call.edit.kind, call.edit, call.baseVersion);
    if (call.edit !== undefined && call.targets.length > 1)
      return Promise.resolve(
        severalFiles(
          call.edit.kind,
          open.map((t) => t.path),
        ),
      );
    return undefined;
  }

  async #apply(buffers: SessionBuffers, path: string, op: string, edit: BufferEditOp, given: string | undefined): Promise<EditResult> {
    // Lines and whole contents are placed by position: made from another text than the buffer's, they would undo what was merged in.
    // Replace and patch find their place by content, as on disk.
    const positional = edit.kind === 'edit-lines' || edit.kind === 'write';
    const { session, agent } = this.#host;
    // A base the caller names is checked whatever the edit (it asserts what the edit was made from); only the
    // implicit base, the agent's last read, is left out where the edit finds its place by content.
    const base = given ?? (positional ? (await session.lastRead(agent, path))?.sha256 : undefined);
    try {
      const change = await buffers.change(path, edit, { baseVersion: base });
      // The agent has seen what it wrote: its next edit is made from this version, as after a write to disk.
      await session.recordRead({ agent, path: change.buffer.path, sha256: change.version, op: 'buffer-edit', tokens: 0 });
      return maskedResult(bufferEditResult(op, change), maskerOf(this.#host.redactor, [change.before, change.after]));
    } catch (err) {
      if (!isFsError(err)) throw err;
      const next = err.code === 'ECONFLICT' ? callText('readFile', [path]) : undefined;
      return refusal(op, path, err.code, errorText(err, path), { next });
    }
  }

  /**
   * The content an edit of `path` is checked against: the open buffer's
   * (its content hash and text), or `undefined` when the file is not open.
   */
  async current(path: string): Promise<{ readonly sha256: string; readonly text: string } | undefined> {
    const content = await this.#open()?.content(path);
    return content === undefined ? undefined : { sha256: sha256Hex(content.bytes), text: content.text };
  }

  /**
   * The session's documents: an open buffer's text where a file is open,
   * the disk's elsewhere. `base` is the workspace's loader.
   */
  documents(base: DocumentLoader): DocumentSource {
    return {
      load: async (path: string, op?: string): Promise<Document> => {
        const content = await this.#open()?.content(path);
        if (content === undefined) return await base.load(path, op);
        const doc = base.fromBytes(content.path, content.bytes, content.mtime?.getTime() ?? Date.now(), op);
        // A copy: the cached document may be the disk's own (a clean buffer), which other sessions read.
        return { ...doc, buffered: { version: content.bufferVersion, dirty: content.dirty, overwritten: content.overwritten, said: content.said } };
      },
    };
  }
}

/** A buffer edit as an edit result: the diff of the buffer, and that nothing is on disk until a save. */
function bufferEditResult(op: string, c: BufferChange): EditResult {
  const path = c.buffer.path;
  const d = formatUnifiedDiff(c.before, c.after, { oldLabel: `a/${path}`, newLabel: `b/${path} (buffer)` });
  const unchanged = c.before === c.after;
  const save = callText('buffers.save', [path]);
  const where = `the open buffer of ${path} (buffer version ${c.buffer.bufferVersion})`;
  const message = unchanged
    ? `No change: ${where} already reads so.${c.buffer.dirty ? ` It holds unsaved changes; write them with ${save}.` : ''}`
    : `Changed ${where}, not the file on disk: unsaved until ${save}.`;
  return {
    ...plainResult(op, path, true, mergedFirst(c.overwritten, message)),
    version: c.version,
    previousVersion: c.previousVersion,
    diff: d.text,
    linesAdded: d.linesAdded,
    linesRemoved: d.linesRemoved,
    linesChanged: d.linesAdded + d.linesRemoved,
    unchanged,
    next: c.buffer.dirty ? save : undefined,
  };
}

/** A patch of several files touching open ones: refused whole, naming them and how to free them. */
function severalFiles(op: string, open: readonly string[]): EditResult {
  const [first] = open;
  const names = open.join(', ');
  const free = open
    .map(
      (p) =>
        `${callText('buffers.save', [p])} then ${callText('buffers.close', [p])} (or ${callText('buffers.close', [p], { discard: true })} to drop its changes)`,
    )
    .join('; ');
  return refusal(
    op,
    first ?? '',
    'EBUSY',
    `The patch changes several files, and ${names} ${open.length === 1 ? 'is' : 'are'} open in a buffer of this session: applied to the disk it would pass over the buffer's unsaved text, so nothing was applied. Free ${open.length === 1 ? 'it' : 'them'} first — ${free} — and apply the patch again, or send each open file's hunks as a patch of that file alone (it goes to the buffer).`,
    { next: first === undefined ? undefined : callText('buffers.save', [first]) },
  );
}
