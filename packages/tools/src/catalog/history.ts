/**
 * The tools over a file's recorded versions: its history, diffs between any
 * two versions (or what changed on disk since the last recorded one), undo,
 * rollback, and whether an edit from a given version would conflict.
 *
 * @module
 */

import { changedByText, o200kTokenizer, plural, type VersionDiff } from '@ctxfs/context';
import { fsError, isFsError } from '@ctxfs/core';
import { z } from 'zod';
import { CHANGES, DESTRUCTIVE, defineTool, once, READ_ONLY } from '../definition.ts';
import { callBudget, editDataSchema, editResult, withinBudget } from '../results.ts';

// Shared by several tools' schemas, built with the first of them (see ToolSpec).
const path = once(() => z.string().min(1).describe('File path relative to the workspace root.'));
const versionRef = once(() =>
  z
    .union([z.number().int().min(1), z.string().min(1)])
    .describe(
      'A version: its number in get_file_history, its hash (6+ hex digits), "current" (newest recorded), "previous" or "disk" (the file as it is now).',
    ),
);

const versionData = () =>
  z.object({
    seq: z.number().int(),
    version: z.string().optional(),
    size: z.number().int(),
    op: z.string(),
    author: z.string(),
    message: z.string().optional(),
    change_id: z.string().optional(),
    related_path: z.string().optional(),
    undo_of: z.number().int().optional(),
    at: z.string().describe('ISO time.'),
  });

export const getFileHistory = defineTool({
  name: 'get_file_history',
  title: 'File history',
  description:
    "Lists a file's recorded versions, newest first: number, who made it (an agent, a person, or 'external' for a change made outside ctxfs), when, and the hash. Use the numbers with get_diff, rollback and undo.",
  input: () => z.object({ path: path(), limit: z.number().int().min(1).max(1000).optional().describe('Versions to list; default 20.') }),
  output: () => z.object({ path: z.string(), versions: z.array(versionData()) }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'history', args: ['path', 'limit'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', limit: 5 }],
  async run(session, a) {
    const versions = await session.history(a.path, a.limit ?? 20);
    const rows = versions.map((v) => ({
      seq: v.seq,
      version: v.sha256,
      size: v.size,
      op: v.op,
      author: v.author,
      message: v.message,
      change_id: v.changeId,
      related_path: v.relatedPath,
      undo_of: v.undoOf,
      at: v.createdAt.toISOString(),
    }));
    const text =
      rows.length === 0
        ? `${a.path}: no recorded versions.`
        : [
            `${a.path}: ${plural(rows.length, 'version')}, newest first`,
            ...rows.map(
              (r) =>
                `#${r.seq} ${r.op} by ${r.author} at ${r.at}${r.version ? ` ${r.version.slice(0, 12)}` : ''}${r.undo_of ? ` (undoes #${r.undo_of})` : ''}${r.message ? `: ${r.message}` : ''}`,
            ),
          ].join('\n');
    return { text, isError: false, data: { path: versions[0]?.path ?? a.path, versions: rows } };
  },
});

export const getDiff = defineTool({
  name: 'get_diff',
  title: 'Diff between versions',
  description:
    'A unified diff between two versions of a file; by default what changed outside ctxfs: from the newest recorded version to the file on disk, or, when that change is recorded already (an external version), from the version before it. from/to take a version number, a hash, "current", "previous" or "disk".',
  input: () => z.object({ path: path(), from: versionRef().optional(), to: versionRef().optional() }),
  output: () =>
    z.object({
      path: z.string(),
      from: z.string(),
      to: z.string(),
      diff: z.string(),
      lines_added: z.number().int(),
      lines_removed: z.number().int(),
      truncated: z.boolean(),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'getDiff', args: ['path', 'from', 'to'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', from: 3, to: 'current' }],
  async run(session, a) {
    const byDefault = a.from === undefined && a.to === undefined;
    let d: VersionDiff | undefined;
    try {
      // The diff is asked first: listing the history records a change made outside ctxfs as a version.
      d = await session.getDiff(a.path, a.from, a.to);
    } catch (err) {
      if (!(byDefault && isFsError(err, 'ENOENT'))) throw err;
      // No version recorded yet (a missing file throws here).
      if ((await session.getVersion(a.path, 'disk')).sha256 === undefined) {
        throw fsError('ENOENT', 'getDiff', a.path, { reason: `no file at ${a.path}, and no recorded version of one` });
      }
    }
    let first: string | undefined;
    if (byDefault && (d === undefined || d.diff === '')) {
      // A change made outside ctxfs becomes an `external` version as soon as ctxfs looks at the file (this history, a
      // read): the disk is then the newest recorded version, and the change is that version's, from the one before it.
      const [newest, before] = await session.history(a.path, 2);
      if (newest?.op === 'external' && before !== undefined) d = await session.getDiff(a.path, before.seq, newest.seq);
      // The history's first version says when it is not what ctxfs first saw (a scan keeps only a hash).
      else if (newest?.op === 'initial' && before === undefined) first = newest.message;
    }
    if (d === undefined || (first !== undefined && d.diff === '')) {
      const text = `${a.path}: no recorded change; ${first === undefined ? 'the file is as ctxfs first saw it' : `it ${first}`}.`;
      return { text, isError: false, data: { path: a.path, from: 'current', to: 'disk', diff: '', lines_added: 0, lines_removed: 0, truncated: false } };
    }
    const shown = withinBudget(d.diff, session.profile.perCallTokens, 'diff narrower versions, or read_lines the changed lines');
    const text = d.diff === '' ? `${d.path}: no difference between ${d.from} and ${d.to}.` : shown.text;
    return {
      text,
      isError: false,
      data: { path: d.path, from: d.from, to: d.to, diff: shown.text, lines_added: d.linesAdded, lines_removed: d.linesRemoved, truncated: shown.truncated },
    };
  },
});

export const undo = defineTool({
  name: 'undo',
  title: 'Undo a change',
  description:
    "Reverts your newest change to a file that is not yet undone (call again to go further back), keeping changes others made since (a person's, another agent's) where they touch other lines; or any one change by its number (change), yours or not, like git revert. Refused when later changes touch the same lines; the refusal gives the rollback call instead. It acts on the versions on disk: an edit still unsaved in an open buffer is undone with undo_buffer_edit.",
  input: () =>
    z.object({
      path: path(),
      change: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('The version number of the change to revert (see get_file_history); the number of an undo brings back what it reverted (a redo).'),
      message: z.string().optional(),
    }),
  output: editDataSchema,
  annotations: CHANGES,
  approval: 'policy',
  api: { op: 'undo', args: ['path'] },
  examples: [{ path: 'src/auth.ts' }, { path: 'src/auth.ts', change: 4 }],
  run: async (session, a) => editResult(await session.undo(a.path, { change: a.change, message: a.message }), callBudget(session)),
});

export const rollback = defineTool({
  name: 'rollback',
  title: 'Roll back to a version',
  description: 'Makes an earlier version the current content again, discarding everything after it (recorded as a new version, so it can be undone too).',
  input: () => z.object({ path: path(), to: versionRef(), message: z.string().optional() }),
  output: editDataSchema,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'rollback', args: ['path', 'to'] },
  examples: [{ path: 'src/auth.ts', to: 2 }],
  run: async (session, a) => editResult(await session.rollback(a.path, a.to, { message: a.message }), callBudget(session)),
});

export const checkConflicts = defineTool({
  name: 'check_conflicts',
  title: 'Check for conflicts',
  description:
    'Whether the file changed since the version you read (or base_version): who changed it and which lines, so you can re-read just those before editing. Reports no conflict when your read is current.',
  input: () => z.object({ path: path(), base_version: z.string().optional() }),
  output: () =>
    z.object({
      path: z.string(),
      conflict: z.boolean(),
      type: z.string().optional(),
      base_version: z.string().optional(),
      current_version: z.string().optional(),
      changed_by: z.array(z.string()),
      lines: z.array(z.object({ start: z.number().int(), end: z.number().int() })),
      more_lines: z.number().int().optional().describe('Changed ranges left out of lines, over the call budget; their_diff and read_lines show them.'),
      their_diff: z.string().optional(),
    }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'checkConflicts', args: ['path', 'base_version'] },
  examples: [{ path: 'src/auth.ts' }],
  async run(session, a) {
    const c = await session.checkConflicts(a.path, a.base_version);
    if (c === undefined)
      return { text: `${a.path}: no conflict; your read is current.`, isError: false, data: { path: a.path, conflict: false, changed_by: [], lines: [] } };
    const budget = callBudget(session);
    // The ranges named are those a quarter of the budget holds (a file changed all through has thousands); the rest are counted.
    const ranges = c.lines.map((l) => (l.start === l.end ? `${l.start}` : `${l.start}-${l.end}`));
    let named = 0;
    for (let used = 0; named < ranges.length; named++) {
      used += o200kTokenizer.count(`${ranges[named]}, `);
      if (used > budget / 4) break;
    }
    const more = ranges.length - named;
    const lines = `${ranges.slice(0, named).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    const header = `${c.path}: changed since your read (${c.type}) by ${changedByText(c.changedBy) || 'someone'}${lines ? `; lines ${lines}` : ''}.`;
    const room = budget - o200kTokenizer.count(header) - 40;
    const theirs = c.theirsDiff === undefined ? undefined : withinBudget(c.theirsDiff, room, 'read_lines the changed lines').text;
    return {
      text: [header, theirs].filter(Boolean).join('\n'),
      isError: false,
      data: {
        path: c.path,
        conflict: true,
        type: c.type,
        base_version: c.baseVersion,
        current_version: c.currentVersion,
        changed_by: [...c.changedBy],
        lines: c.lines.slice(0, named).map((l) => ({ start: l.start, end: l.end })),
        more_lines: more > 0 ? more : undefined,
        their_diff: theirs,
      },
    };
  },
});
