/**
 * The tools over an agent's open files (buffers): open one, see its state
 * and what differs from disk, drop its changes, save it, close it. A buffer
 * stays in step with the disk by its permission — a person's changes are
 * merged in, and text both changed goes to the side the permission names or
 * waits for the agent — and a save is an ordinary recorded edit. While a
 * file is open, the edit tools change its buffer and the read tools serve
 * it (the context layer routes them; see buffers/buffer-routing.ts there).
 *
 * @module
 */

import { type BufferInfo, plural } from '@ctxfs/context';
import { z } from 'zod';
import { CHANGES, defineTool, once, READ_ONLY } from '../definition.ts';
import { callBudget, editDataSchema, editResult, withinBudget, withNext } from '../results.ts';

// Shared by several tools' schemas, built with the first of them (see ToolSpec).
const path = once(() => z.string().min(1).describe('File path relative to the workspace root.'));
const int = once(() => z.number().int());
const permission = once(() => z.enum(['read-only', 'read-write', 'admin', 'human', 'partner']));

const bufferData = once(() =>
  z.object({
    path: z.string(),
    permission: permission(),
    status: z.enum(['clean', 'modified', 'disk_changed', 'conflict']),
    dirty: z.boolean().describe('The buffer holds changes not on disk.'),
    buffer_version: int().describe('Counts every change of the buffer.'),
    disk_version: z.string().optional().describe('Content hash of the disk content the buffer is in step with.'),
    disk_mtime: z.string().optional().describe('ISO time the disk content last changed; absent when the file is gone.'),
    on_disk: z.boolean(),
    auto_save: z.boolean(),
    collisions: int().describe('Places both you and the disk changed, waiting for your decision (status conflict).'),
    undo: int(),
    redo: int(),
    saved_seq: int().optional().describe('History position of the last save.'),
    renamed_from: z.string().optional().describe('The file was renamed on disk; the buffer followed it from this path.'),
    settled: int().describe('At the last change from disk: places both changed that the permission settled.'),
    winner: z.enum(['disk', 'buffer']).optional(),
    overwritten: z
      .string()
      .optional()
      .describe(
        "What the newest merge overwrote where you and the disk changed the same text, and the call that brings your text back (it is kept; the disk's goes into the file history when you save).",
      ),
    next: z.string().optional(),
  }),
);
type BufferData = z.infer<ReturnType<typeof bufferData>>;

function bufferRow(b: BufferInfo): BufferData {
  return {
    path: b.path,
    permission: b.permission,
    status: b.status,
    dirty: b.dirty,
    buffer_version: b.bufferVersion,
    disk_version: b.diskVersion,
    disk_mtime: b.diskMtime,
    on_disk: b.onDisk,
    auto_save: b.autoSave,
    collisions: b.collisions,
    undo: b.undo,
    redo: b.redo,
    saved_seq: b.savedSeq,
    renamed_from: b.renamedFrom,
    settled: b.settled,
    winner: b.winner,
    overwritten: b.overwritten,
    next: b.next,
  };
}

/** One buffer's state as a tool result. */
function bufferResult(b: BufferInfo): { text: string; isError: false; data: BufferData } {
  return { text: bufferLine(b), isError: false, data: bufferRow(b) };
}

function bufferLine(b: BufferInfo): string {
  const parts = [
    `${b.path}: ${b.status}`,
    `${b.permission}`,
    `buffer version ${b.bufferVersion}`,
    b.onDisk ? `disk changed ${b.diskMtime ?? '?'}` : 'absent on disk',
  ];
  if (b.renamedFrom) parts.push(`renamed on disk from ${b.renamedFrom}`);
  if (b.collisions > 0) parts.push(`${plural(b.collisions, 'place')} both you and the disk changed`);
  if (b.settled > 0) parts.push(`${plural(b.settled, 'place')} both changed went to the ${b.winner}`);
  if (b.overwritten !== undefined) parts.push(b.overwritten);
  return withNext(parts.join(', '), b.next);
}

export const openFile = defineTool({
  name: 'open_file',
  title: 'Open a file in a buffer',
  description:
    'Opens a file in a buffer of this session that stays in step with the disk: changes a person or another process makes are merged in on every buffer call. permission says who wins where both changed the same text: read-write (default; the disk), admin (you), human or partner (nobody: you are shown the conflict and decide), read-only (the buffer only follows the disk). While it is open, write_file, replace, edit_lines and apply_patch of it change the buffer, not the disk, and read_file, read_lines, get_excerpt, get_outline, get_symbol and summarize_file show the buffer; save_file writes it, close_file ends that.',
  input: () =>
    z.object({
      path: path(),
      permission: permission().optional().describe('Default read-write; read-only where the policy denies you writes.'),
      auto_save: z.boolean().optional().describe('Save after every change of the buffer. Default false.'),
    }),
  output: bufferData,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.open', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/config.ts', permission: 'human' }],
  async run(session, a) {
    return bufferResult(await session.buffers.open(a.path, { permission: a.permission, autoSave: a.auto_save }));
  },
});

export const fileStatus = defineTool({
  name: 'file_status',
  title: 'Buffer status',
  description:
    'The state of a buffer (a file not open yet is opened) or, without path, of every open buffer: clean, modified (unsaved changes), disk_changed (a change on disk was merged in, or the file is gone), conflict (you and the disk changed the same text; see buffer_diff, then save_file with resolve, or reload_file).',
  input: () => z.object({ path: path().optional() }),
  output: () => z.object({ buffers: z.array(bufferData()) }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.status', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, {}],
  async run(session, a) {
    const rows = await session.buffers.status(a.path);
    const text = rows.length === 0 ? 'No buffer is open.' : rows.map(bufferLine).join('\n');
    return { text, isError: false, data: { buffers: rows.map(bufferRow) } };
  },
});

export const bufferDiff = defineTool({
  name: 'buffer_diff',
  title: 'Buffer against disk',
  description:
    'A unified diff from the file on disk to your buffer (what save_file would write), under a header with the file, its status, when the disk changed and the buffer version. With a conflict, the disk side is the new disk content.',
  input: () => z.object({ path: path() }),
  output: () =>
    z.object({
      path: z.string(),
      status: z.string(),
      disk_mtime: z.string().optional(),
      buffer_version: int(),
      diff: z.string().describe('The diff alone, without the header.'),
      lines_added: int(),
      lines_removed: int(),
      truncated: z.boolean(),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.diff', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }],
  async run(session, a) {
    const d = await session.buffers.diff(a.path);
    const how = 'the rest is in the buffer; read the file for the disk side';
    const shown = withinBudget(d.text, session.profile.perCallTokens, how);
    const diff = withinBudget(d.diff, session.profile.perCallTokens, how);
    return {
      text: d.diff === '' ? `${d.text}\n(no difference: the buffer is the disk)` : shown.text,
      isError: false,
      data: {
        path: d.path,
        status: d.status,
        disk_mtime: d.diskMtime,
        buffer_version: d.bufferVersion,
        diff: diff.text,
        lines_added: d.linesAdded,
        lines_removed: d.linesRemoved,
        truncated: shown.truncated,
      },
    };
  },
});

export const reloadFile = defineTool({
  name: 'reload_file',
  title: 'Reload a buffer',
  description: "Discards the buffer's unsaved changes (and a conflict) and takes the file as it is on disk (a file not open yet is opened).",
  input: () => z.object({ path: path() }),
  output: bufferData,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.reload', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }],
  async run(session, a) {
    return bufferResult(await session.buffers.reload(a.path));
  },
});

export const saveFile = defineTool({
  name: 'save_file',
  title: 'Save a buffer',
  description:
    'Writes the buffer to disk as a recorded version (policy, approval and history as for any edit). A change on disk is merged first by the permission; where the disk wins text you changed too, your text is kept and the result names the places and the undo_buffer_edit call that brings it back. If you and the disk changed the same text and the permission leaves it to you, the save is refused until you choose resolve "disk" or "buffer" (who wins those places; every other change of both is kept).',
  input: () =>
    z.object({
      path: path(),
      resolve: z.enum(['disk', 'buffer']).optional().describe('Who wins where you and the disk changed the same text.'),
      message: z.string().optional().describe('Why: recorded in the file history.'),
    }),
  output: () => z.object({ saved: z.boolean(), buffer: bufferData(), edit: editDataSchema().optional() }),
  annotations: CHANGES,
  approval: 'policy',
  api: { op: 'buffers.save', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/config.ts', resolve: 'disk', message: 'keep the retries the person set' }],
  async run(session, a) {
    const r = await session.buffers.save(a.path, { resolve: a.resolve, message: a.message });
    const edit = r.edit === undefined ? undefined : editResult(r.edit, callBudget(session));
    const head = r.saved ? `Saved ${r.buffer.path}.` : r.edit === undefined ? `${r.buffer.path}: nothing to save.` : `${r.buffer.path} was not saved.`;
    const text = [head, edit?.text, bufferLine(r.buffer)].filter((t) => t !== undefined && t !== '').join('\n');
    return { text, isError: r.edit !== undefined && !r.edit.success, data: { saved: r.saved, buffer: bufferRow(r.buffer), edit: edit?.data } };
  },
});

export const closeFile = defineTool({
  name: 'close_file',
  title: 'Close a buffer',
  description:
    'Closes a buffer; edits of the file go to the disk again. One with unsaved changes, or keeping your text a change from disk replaced, is closed only with discard true (that text is dropped; the file on disk is untouched).',
  input: () => z.object({ path: path(), discard: z.boolean().optional().describe('Drop unsaved changes. Default false.') }),
  output: () =>
    bufferData()
      .partial()
      .extend({
        path: z.string(),
        closed: z.boolean().describe('A buffer was open and is closed now; false: none was open, so there was nothing to close.'),
      }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.close', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', discard: true }],
  async run(session, a) {
    const b = await session.buffers.close(a.path, { discard: a.discard });
    // Not an error: what the call asks for (the file's edits go to the disk) already holds.
    if (b === undefined)
      return { text: `No buffer was open for ${a.path}: nothing to close; its edits go to the disk.`, isError: false, data: { path: a.path, closed: false } };
    return { text: `Closed ${b.path}.`, isError: false, data: { ...bufferRow(b), closed: true } };
  },
});

export const undoBufferEdit = defineTool({
  name: 'undo_buffer_edit',
  title: 'Undo an unsaved edit',
  description:
    'Reverts your newest unsaved edit of an open buffer (redo true: applies the newest undone one again; overwritten true: brings back your text a change from disk replaced), keeping changes merged in from disk since. Nothing is written to disk; save_file does that. A saved change is undone on disk with undo, not here.',
  input: () =>
    z.object({
      path: path(),
      redo: z.boolean().optional().describe('Redo instead of undo. Default false.'),
      overwritten: z
        .boolean()
        .optional()
        .describe(
          'Instead: bring back your text the newest change from disk replaced where you both changed it (file_status and save_file name it), wherever it is among your edits.',
        ),
    }),
  output: bufferData,
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'buffers.undo', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', redo: true }],
  async run(session, a) {
    return bufferResult(a.redo === true ? await session.buffers.redo(a.path) : await session.buffers.undo(a.path, { overwritten: a.overwritten }));
  },
});
