/**
 * The tools that change files. Every change is checked against the version
 * the caller read (a stale edit is merged when the changes do not overlap,
 * refused with the conflict otherwise), may be put to a person by the
 * workspace policy, and is recorded as a version that `undo` reverts. For a
 * file open in a buffer (open_file), the session sends write_file, replace,
 * edit_lines and a one-file apply_patch to the buffer instead; the tools do
 * not know which.
 *
 * @module
 */

import type { LineEdit } from '@ctxfs/context';
import { z } from 'zod';
import { CHANGES, DESTRUCTIVE, defineTool, once } from '../definition.ts';
import { callBudget, editDataSchema, editResult } from '../results.ts';

// Shared by several tools' schemas, built with the first of them (see ToolSpec).
const path = once(() => z.string().min(1).describe('File path relative to the workspace root.'));
const baseVersion = once(() =>
  z
    .string()
    .optional()
    .describe('The version (content hash) your edit is based on; default the version you last read. A file changed since is merged or refused.'),
);
const message = once(() => z.string().optional().describe('Why: recorded in the file history.'));

const options = (a: { base_version?: string | undefined; message?: string | undefined }) => ({ baseVersion: a.base_version, message: a.message });

export const writeFile = defineTool({
  name: 'write_file',
  title: 'Write a whole file',
  description:
    'Replaces the whole content of a file (or creates it). Prefer replace, edit_lines or apply_patch for changes to part of a file: they send less and merge with concurrent changes line by line. Returns the diff and the new version. If the file is open in a buffer (open_file), the change goes to the buffer, not the disk, until save_file.',
  input: () => z.object({ path: path(), content: z.string(), base_version: baseVersion(), message: message() }),
  output: editDataSchema,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'writeFile', args: ['path', 'content'] },
  examples: [{ path: 'notes/todo.md', content: '# TODO\n\n- write tests\n' }],
  run: async (session, a) => editResult(await session.writeFile(a.path, a.content, options(a)), callBudget(session)),
});

export const createFile = defineTool({
  name: 'create_file',
  title: 'Create a file',
  description: 'Creates a new file; refused (EEXIST) when the path exists, so it never overwrites. Parent directories are created.',
  input: () => z.object({ path: path(), content: z.string(), message: message() }),
  output: editDataSchema,
  annotations: CHANGES,
  approval: 'policy',
  api: { op: 'createFile', args: ['path', 'content'] },
  examples: [{ path: 'src/util/slug.ts', content: 'export const slug = (s: string) => s.toLowerCase();\n' }],
  run: async (session, a) => editResult(await session.createFile(a.path, a.content, { message: a.message }), callBudget(session)),
});

export const replace = defineTool({
  name: 'replace',
  title: 'Replace text',
  description:
    'Replaces old_text with new_text in a file. old_text must match exactly once (include a few surrounding lines to make it unique) unless occurrence says otherwise; whitespace-only differences are tolerated and reported. When nothing matches, the refusal shows the closest lines and the read_lines call to see them. If the file is open in a buffer (open_file), the change goes to the buffer, not the disk, until save_file.',
  input: () =>
    z.object({
      path: path(),
      old_text: z.string().min(1).describe('Exact text to find, with enough context to be unique.'),
      new_text: z.string(),
      occurrence: z
        .union([z.enum(['unique', 'first', 'all']), z.number().int().min(1)])
        .optional()
        .describe('unique (default): refuse when old_text matches more than once; first; all; or the n-th match (1-based).'),
      regex: z.boolean().optional().describe('old_text is an RE2 regular expression; new_text may use $1.'),
      base_version: baseVersion(),
      message: message(),
    }),
  output: editDataSchema,
  annotations: CHANGES,
  approval: 'policy',
  api: { op: 'replace', args: ['path', 'old_text', 'new_text'] },
  examples: [{ path: 'src/config.ts', old_text: 'const retries = 3;', new_text: 'const retries = 5;' }],
  run: async (session, a) =>
    editResult(await session.replace(a.path, a.old_text, a.new_text, { ...options(a), occurrence: a.occurrence, regex: a.regex }), callBudget(session)),
});

export const editLines = defineTool({
  name: 'edit_lines',
  title: 'Edit lines',
  description:
    'Edits by line number (1-based, inclusive, as read_lines shows them): action "replace" puts text in place of start_line..end_line, "delete" removes them, "insert_before"/"insert_after" add text at start_line. Line numbers refer to the version you read; if the file changed since, the edit is merged or refused. If the file is open in a buffer (open_file), the change goes to the buffer, not the disk, until save_file.',
  input: () =>
    z.object({
      path: path(),
      action: z.enum(['replace', 'delete', 'insert_before', 'insert_after']),
      start_line: z.number().int().min(1),
      end_line: z.number().int().min(1).optional().describe('Last line for replace and delete; default start_line.'),
      text: z.string().optional().describe('New lines for replace and insert (a final newline is added when missing).'),
      base_version: baseVersion(),
      message: message(),
    }),
  output: editDataSchema,
  annotations: CHANGES,
  approval: 'policy',
  api: { op: 'editLines', args: ['path'] },
  examples: [
    { path: 'src/a.py', action: 'replace', start_line: 10, end_line: 12, text: 'return x\n' },
    { path: 'src/a.py', action: 'insert_after', start_line: 3, text: 'import os\n' },
  ],
  async run(session, a) {
    const end = a.end_line ?? a.start_line;
    const text = a.text ?? '';
    const edit: LineEdit =
      a.action === 'replace'
        ? { kind: 'replace', start: a.start_line, end, text }
        : a.action === 'delete'
          ? { kind: 'delete', start: a.start_line, end }
          : { kind: a.action === 'insert_before' ? 'insert-before' : 'insert-after', line: a.start_line, text };
    return editResult(await session.editLines(a.path, edit, options(a)), callBudget(session));
  },
});

export const applyPatch = defineTool({
  name: 'apply_patch',
  title: 'Apply a patch',
  description:
    'Applies a unified diff (git diff / diff -u output, several files at once) or a "*** Begin Patch" envelope (Update/Add/Delete File, optional Move to). Hunks are placed by their context even when line numbers drifted; a file changed since your read is merged line by line. A refused patch says which hunk did not apply, shows the lines that are there, and changes nothing. A patch of one file open in a buffer (open_file) changes the buffer until save_file; a patch of several files that touches an open one is refused (save_file and close_file it first).',
  input: () =>
    z.object({
      patch: z.string().min(1).describe('The patch text (not wrapped in a code fence).'),
      path: z
        .string()
        .optional()
        .describe(
          'The file, for a patch whose hunks have no ---/+++ header. With a patch that has headers it must name a file they name, or the patch is refused.',
        ),
      base_version: baseVersion(),
      message: message(),
      dry_run: z
        .boolean()
        .optional()
        .describe('true: answer with the diff the patch would make (or its refusal) and change nothing: no file written, no new version, no approval asked.'),
    }),
  output: editDataSchema,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'applyPatch', args: ['patch'] },
  examples: [
    { patch: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-const x = 1;\n+const x = 2;\n' },
    { patch: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-const x = 2;\n+const x = 3;\n*** End Patch\n' },
  ],
  run: async (session, a) => editResult(await session.applyPatch(a.patch, { path: a.path, ...options(a), dryRun: a.dry_run }), callBudget(session)),
});

export const deleteFile = defineTool({
  name: 'delete_file',
  title: 'Delete a file',
  description: 'Deletes a file. Its content stays in the history: undo or rollback brings it back.',
  input: () => z.object({ path: path(), base_version: baseVersion(), message: message() }),
  output: editDataSchema,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'deleteFile', args: ['path'] },
  examples: [{ path: 'src/old.ts' }],
  run: async (session, a) => editResult(await session.deleteFile(a.path, options(a)), callBudget(session)),
});

export const renameFile = defineTool({
  name: 'rename_file',
  title: 'Rename or move a file',
  description: 'Moves a file to a new path (parents created). Refused when the target exists unless overwrite is true. History follows the file.',
  input: () =>
    z.object({
      from: z.string().min(1),
      to: z.string().min(1),
      overwrite: z.boolean().optional(),
      message: message(),
    }),
  output: editDataSchema,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'renameFile', args: ['from', 'to'] },
  examples: [{ from: 'src/util.ts', to: 'src/util/index.ts' }],
  run: async (session, a) => editResult(await session.renameFile(a.from, a.to, { overwrite: a.overwrite, message: a.message }), callBudget(session)),
});
