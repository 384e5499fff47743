/**
 * The context layer's edit operations as pure changes of a buffer's text:
 * whole content, replace (unique, first, all, nth, regex), line ranges, a
 * patch, and a splice at code-point positions. Each reuses the edit side's
 * own text functions; a refusal is an `FsError` with the edit side's code.
 *
 * @module
 */

import { type FsErrorCode, fsError, splitLines } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import { hunkTransform } from '../edits/apply-patch.ts';
import { type FilePatch, PatchParseError, parsePatch } from '../patch/parse-patch.ts';
import { applyLineEdit, type LineEdit, type ReplaceOptions, replaceText } from '../patch/text-edits.ts';
import { plural } from '../search/narrowing.ts';
import { codePointLength, utf16Index } from './code-points.ts';

/** One edit of a buffer. */
export type BufferEditOp =
  | { readonly kind: 'write'; readonly content: string }
  | { readonly kind: 'replace'; readonly search: string; readonly replacement: string; readonly options?: ReplaceOptions | undefined }
  | { readonly kind: 'edit-lines'; readonly edit: LineEdit }
  | { readonly kind: 'patch'; readonly patch: string }
  /** `at` and `remove` count code points, never UTF-16 units or bytes. */
  | { readonly kind: 'splice'; readonly at: number; readonly remove: number; readonly insert: string };

function refused(code: FsErrorCode, path: string, reason: string, hint: string): never {
  throw fsError(code, 'edit', path, { reason, hint });
}

/**
 * The buffer's text after `op`.
 *
 * @example
 * ```ts
 * applyBufferEdit('a😀b\n', { kind: 'splice', at: 1, remove: 1, insert: '!' }, 'x.txt'); // 'a!b\n'
 * ```
 */
export function applyBufferEdit(text: string, op: BufferEditOp, path: string): string {
  switch (op.kind) {
    case 'write':
      return op.content;
    case 'replace': {
      const r = replaceText(text, op.search, op.replacement, { ...op.options, path });
      if (r.ok) return r.text;
      const code: FsErrorCode = r.reason === 'bad-regex' ? 'EBADPATTERN' : r.reason === 'not-found' ? 'ENOENT' : 'EINVAL';
      // Reads serve an open buffer's text: the lines where the text occurs, or the buffer whole (its outline when large).
      const at = r.locations[0]?.line;
      const look = at === undefined ? callText('readFile', [path]) : callText('readLines', [path, Math.max(1, at - 3), at + 3]);
      return refused(code, path, `${path} (open buffer): ${r.message}`, `look at the buffer with ${look} and give text that occurs as asked`);
    }
    case 'edit-lines': {
      const r = applyLineEdit(text, op.edit);
      if (r.ok) return r.text;
      const count = splitLines(text).length;
      const look = callText('readLines', [path, Math.max(1, count - 19), Math.max(1, count)]);
      return refused(
        'EINVAL',
        path,
        `${path} (open buffer): ${r.message}`,
        `line numbers are 1-based and refer to the buffer as it is now; see its last lines with ${look}`,
      );
    }
    case 'patch': {
      let files: FilePatch[];
      try {
        files = parsePatch(op.patch);
      } catch (err) {
        if (err instanceof PatchParseError)
          return refused(
            'EINVAL',
            path,
            `the patch could not be parsed: ${err.message}`,
            `send a unified diff of this one file, made from the buffer as ${callText('readFile', [path])} serves it`,
          );
        throw err;
      }
      const fp = files[0];
      if (files.length !== 1 || fp === undefined || fp.isNew || fp.isDelete) {
        return refused(
          'EINVAL',
          path,
          `a buffer takes a patch of one existing file; this one has ${plural(files.length, 'file section')}`,
          `send the hunks of this file only, made from the buffer as ${callText('readFile', [path])} serves it`,
        );
      }
      const r = hunkTransform(fp)(text);
      if (r.ok) return r.text;
      return refused(r.code, path, r.message, `fix the refused hunks against the buffer as ${callText('readFile', [path])} serves it`);
    }
    case 'splice': {
      if (!Number.isSafeInteger(op.remove) || op.remove < 0)
        return refused('EINVAL', path, `remove ${op.remove} is not a count`, 'remove counts code points, 0 or more');
      const start = utf16Index(text, op.at, path);
      if (op.at + op.remove > codePointLength(text)) {
        return refused('EINVAL', path, `removing ${plural(op.remove, 'code point')} at ${op.at} runs past the end`, 'positions and counts are in code points');
      }
      const end = start + (utf16Index(text.slice(start), op.remove, path) as number);
      return text.slice(0, start) + op.insert + text.slice(end);
    }
  }
}
