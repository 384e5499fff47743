/**
 * The edit operations as one agent calls them: write, create, replace,
 * line-range edits, delete, rename, patch, and the history edits. Each
 * returns an {@link EditResult}; none throws for a refusal.
 *
 * @module
 */

import { baseName, isFsError, resolvePath, splitLines } from '@ctxfs/core';
import { callShape, callText } from '../calls/call-text.ts';
import { applyLineEdit, type LineEdit, type Occurrence, replaceText } from '../patch/text-edits.ts';
import { errorText } from '../safety/host-paths.ts';
import { type ApplyPatchOptions, applyPatch } from './apply-patch.ts';
import { type EditResult, refusal, shortHash } from './edit-result.ts';
import { type EditOptions, type FileEditor, Refusal, type TransformOutcome } from './file-editor.ts';

/** Options of `replace`. */
export interface ReplaceCallOptions extends EditOptions {
  /** Default `unique`: exactly one match, else a refusal with the count and where they are. */
  occurrence?: Occurrence;
  /** `old` is a regular expression (ripgrep's syntax, run in linear time: see `replaceText`); `new` may use `$1`, `$<name>`. */
  regex?: boolean;
  /** Extra regex flags (`i`, `m`, `s`). */
  flags?: string;
}

/** Options of `renameFile`. */
export interface RenameCallOptions extends EditOptions {
  /** Replace an existing destination. Default `false`. */
  overwrite?: boolean;
}

function guard(op: string, path: string, fn: () => Promise<EditResult>): Promise<EditResult> {
  return fn().catch((err) => {
    if (err instanceof Refusal) return err.result;
    if (isFsError(err)) return refusal(op, path, err.code, errorText(err, path));
    throw err;
  });
}

/** The edit API over one {@link FileEditor}. */
export class EditOperations {
  readonly editor: FileEditor;

  constructor(editor: FileEditor) {
    this.editor = editor;
  }

  /** Creates or overwrites `path` with `content` (stale edits merge or refuse). */
  writeFile(path: string, content: string, options: EditOptions = {}): Promise<EditResult> {
    const op = 'write';
    return guard(op, path, async () => {
      const p = this.editor.normalize(op, path);
      return this.editor.run(op, [p], options, async () => {
        const current = await this.editor.load(op, p);
        if (current === undefined && options.baseVersion !== undefined) {
          // Written over a version the caller named, a file deleted since is a change made since: brought back, it
          // would undo that deletion unseen (the stale check of a file that still exists refuses or merges instead).
          // A malformed or unknown version is refused as such first.
          const base = await this.editor.baseOf(op, p, options, undefined);
          throw new Refusal(
            refusal(
              op,
              p,
              'ECONFLICT',
              `${p} was deleted since version ${shortHash(base)}, the one this write is based on. Nothing was written. If it should exist again, create it with ${callShape('createFile')}.`,
            ),
          );
        }
        if (current === undefined) return [this.editor.planCreate('create', p, content)];
        return [await this.editor.planModify(op, 'write', p, current, () => ({ ok: true, text: content }), options)];
      });
    });
  }

  /** Creates `path`; refused when it exists. */
  createFile(path: string, content: string, options: EditOptions = {}): Promise<EditResult> {
    const op = 'create';
    return guard(op, path, async () => {
      const p = this.editor.normalize(op, path);
      return this.editor.run(op, [p], options, async () => {
        const current = await this.editor.load(op, p);
        if (current !== undefined) {
          const read = callText('readFile', [p]);
          throw new Refusal(
            refusal(
              op,
              p,
              'EEXIST',
              `${p} already exists. Read it with ${read} and edit it, or overwrite it with ${callShape('writeFile')}, giving its path and the whole new content.`,
              {
                version: current.sha256,
                next: read,
              },
            ),
          );
        }
        return [this.editor.planCreate('create', p, content)];
      });
    });
  }

  /** Exact-text (or regex) replacement; unique match by default. */
  replace(path: string, search: string, replacement: string, options: ReplaceCallOptions = {}): Promise<EditResult> {
    return this.#modifyOne(
      'replace',
      path,
      options,
      (text, p) => {
        const r = replaceText(text, search, replacement, { occurrence: options.occurrence, regex: options.regex, flags: options.flags, path: p });
        if (r.ok) return { ok: true, text: r.text };
        const code = r.reason === 'bad-regex' ? 'EBADPATTERN' : r.reason === 'not-found' ? 'ENOENT' : 'EINVAL';
        return {
          ok: false,
          code,
          message: `${p}: ${r.message}`,
          look: lookAfterReplace(
            p,
            search,
            r.locations.map((l) => l.line),
            options.regex === true,
            text,
          ),
        };
      },
      'by-content',
    );
  }

  /** A line-range edit (replace, insert before/after, delete); lines refer to the version the agent read. */
  editLines(path: string, edit: LineEdit, options: EditOptions = {}): Promise<EditResult> {
    return this.#modifyOne('edit-lines', path, options, (text, p) => {
      const r = applyLineEdit(text, edit);
      if (r.ok) return { ok: true, text: r.text };
      const count = splitLines(text).length;
      return { ok: false, code: 'EINVAL', message: `${p}: ${r.message}`, look: callText('readLines', [p, ...lookAt(edit, count)]) };
    });
  }

  /** One existing file changed by `transform`, through the editor's stale-read and history pipeline. */
  #modifyOne(
    op: 'replace' | 'edit-lines',
    path: string,
    options: EditOptions,
    transform: (text: string, path: string) => TransformOutcome,
    located?: 'by-content' | 'by-position',
  ): Promise<EditResult> {
    return guard(op, path, async () => {
      const p = this.editor.normalize(op, path);
      return this.editor.run(op, [p], options, async () => {
        const current = await this.requireFile(op, p);
        return [await this.editor.planModify(op, op, p, current, (text) => transform(text, p), options, located)];
      });
    });
  }

  /** Deletes `path`; refused when the agent's read of it is stale. */
  deleteFile(path: string, options: EditOptions = {}): Promise<EditResult> {
    const op = 'delete';
    return guard(op, path, async () => {
      const p = this.editor.normalize(op, path);
      return this.editor.run(op, [p], options, async () => {
        const current = await this.requireFile(op, p);
        return [await this.editor.planDelete(op, p, current, options)];
      });
    });
  }

  /** Renames `from` to `to` (versions on both paths, one change). */
  renameFile(from: string, to: string, options: RenameCallOptions = {}): Promise<EditResult> {
    const op = 'rename';
    return guard(op, from, async () => {
      const src = this.editor.normalize(op, from);
      const into = directoryNamed(to);
      if (into !== undefined) {
        // As `mv a.ts src/` would: "drop the slash" would name the directory itself, and a rename onto it fails again.
        const moved = into === '' ? baseName(src) : `${into}/${baseName(src)}`;
        return refusal(
          op,
          String(to),
          'EISDIR',
          `"${String(to)}" ends with a slash, which names a directory. To move ${src} into it: ${callText('renameFile', [src, moved])}.`,
        );
      }
      const dst = this.editor.normalize(op, to);
      if (src === dst) return refusal(op, src, 'EINVAL', 'The source and destination are the same path.');
      return this.editor.run(op, [src, dst], options, async () => {
        const current = await this.requireFile(op, src);
        const target = await this.editor.load(op, dst);
        if (target !== undefined) {
          if (!options.overwrite) {
            throw new Refusal(
              refusal(
                op,
                dst,
                'EEXIST',
                `${dst} already exists. Pick another name, or replace it with ${callText('renameFile', [src, dst], { overwrite: true })} (its content stays in history).`,
                {
                  version: target.sha256,
                },
              ),
            );
          }
          // Replacing: the destination's old content becomes a version, then the move is a write + delete.
          return [
            { ...this.editor.planBytes('rename', dst, target, current.bytes), renameFrom: undefined, relatedPath: src },
            { ...this.editor.planBytes('rename', src, current, null), relatedPath: dst },
          ];
        }
        return [{ path: dst, op: 'rename', current, bytes: current.bytes, beforeText: current.text, afterText: current.text, merged: false, renameFrom: src }];
      });
    });
  }

  /** Applies a patch (a unified diff or a `*** Begin Patch` envelope; one or many files), all or nothing. */
  applyPatch(patch: string, options: ApplyPatchOptions = {}): Promise<EditResult> {
    return guard('patch', options.path ?? '', () => applyPatch(this.editor, patch, options));
  }

  async requireFile(op: string, path: string) {
    const current = await this.editor.load(op, path);
    if (current === undefined) {
      throw new Refusal(
        refusal(
          op,
          path,
          'ENOENT',
          // Creating it is advice for an edit, not for a delete or a rename of a file that is not there.
          `${path} does not exist. Check the path (${callText('glob', [`**/${path.split('/').pop()}`])} finds it by name)${op === 'delete' || op === 'rename' ? '.' : `, or create it with ${callShape('writeFile')}.`}`,
        ),
      );
    }
    return current;
  }
}

/** Lines shown around a candidate: enough to tell them apart, few enough for any profile. */
const AROUND = 3;

/**
 * The call that shows what a refused replace needs: the lines around the
 * first candidates (two close ones together), or, when nothing matched, a
 * literal grep in the file for a part of the search that is in it
 * ({@link probeFor}); none when no part is.
 */
function lookAfterReplace(path: string, search: string, lines: readonly number[], regex: boolean, text: string): string | undefined {
  const [first, second] = lines;
  if (first !== undefined) {
    const end = second !== undefined && second - first <= 20 ? second : first;
    return callText('readLines', [path, Math.max(1, first - AROUND), end + AROUND]);
  }
  if (regex) return undefined;
  const probe = probeFor(search, text);
  return probe === undefined ? undefined : callText('grep', [probe], { path, literal: true });
}

/** Words of a search weighed for a probe, at most (a long search has enough among its first). */
const PROBE_WORDS = 64;
/** Lines of a search whose start is weighed for a probe, at most. */
const PROBE_LINES = 8;
/** A word worth a grep: three or more letters, digits, `_` or `$`. */
const WORD = /[\p{L}\p{N}_$]{3,}/u;
const WORDS = new RegExp(WORD.source, 'gu');

/**
 * A part of a search that was not found which the file does hold, to grep
 * for where the text went: the first of its lines (trimmed, up to 80
 * characters) that the file holds whole, when only a later line differs;
 * else the least common in the file of two parts, the longer of two as
 * common: the longest start of a line of the search the file holds (what
 * comes before a change, of whitespace or of a name) and the word of three or
 * more characters the file holds fewest times (for a change at a line's
 * start). A grep lists its first matches within the call's budget, however
 * many there are. A grep of the search's own line (what was offered before)
 * found nothing when that line had changed.
 */
function probeFor(search: string, text: string): string | undefined {
  const lines = search
    .split('\n')
    .map((l) => l.trim())
    // A line of punctuation alone (`}`, `});`) is everywhere: it says nothing of where the text went.
    .filter((l) => WORD.test(l));
  for (const line of lines) {
    const probe = line.slice(0, 80);
    if (text.includes(probe)) return probe;
  }
  let best: { part: string; count: number } | undefined;
  const weigh = (part: string) => {
    const count = occurrences(text, part, best?.count);
    if (count === 0) return;
    if (best === undefined || count < best.count || (count === best.count && part.length > best.part.length)) best = { part, count };
  };
  for (const line of lines.slice(0, PROBE_LINES)) {
    const start = longestStartIn(text, line.slice(0, 80)).trimEnd();
    if (WORD.test(start)) weigh(start);
  }
  for (const word of [...new Set(search.match(WORDS) ?? [])].slice(0, PROBE_WORDS)) weigh(word);
  return best?.part;
}

/** The longest start of `line` that `text` holds (a shorter start of one held is held too). */
function longestStartIn(text: string, line: string): string {
  let held = 0;
  let over = line.length + 1;
  while (over - held > 1) {
    const mid = (held + over) >> 1;
    if (text.includes(line.slice(0, mid))) held = mid;
    else over = mid;
  }
  return line.slice(0, held);
}

/** How many times `word` occurs in `text`, counted up to `cap` (past it the word loses anyway). */
function occurrences(text: string, word: string, cap = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (let at = text.indexOf(word); at !== -1 && count <= cap; at = text.indexOf(word, at + word.length)) count++;
  return count;
}

/** The directory a destination written with a trailing slash names (`''` for the root), or `undefined` when it names a file or does not resolve (its refusal comes from normalizing). */
function directoryNamed(input: string): string | undefined {
  try {
    const { path, dirOnly } = resolvePath(input, 'rename');
    return dirOnly ? path : undefined;
  } catch (err) {
    if (isFsError(err)) return undefined;
    throw err;
  }
}

/**
 * The lines to read after a line edit was refused: those it named, when they
 * are in the file (a range written backwards, `5` to `2`, meant 2 to 5), up
 * to 40; else the end of the file, where an out-of-range edit usually meant
 * to be.
 */
function lookAt(edit: LineEdit, count: number): [number, number] {
  const [a, b] = edit.kind === 'replace' || edit.kind === 'delete' ? [edit.start, edit.end] : [edit.line, edit.line];
  const lo = Math.max(1, Math.min(a, b));
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b) && lo <= count) return [lo, Math.min(count, Math.max(a, b), lo + 39)];
  return [Math.max(1, count - 19), Math.max(1, count)];
}
