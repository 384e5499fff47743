/**
 * `applyPatch`: a patch of one or many files — a unified diff or a
 * `*** Begin Patch` envelope — applied all or nothing.
 * Every file is planned first — hunks located by content in the version the
 * editor read (merged with later changes when it is stale), new files
 * checked absent, deleted files checked present — and only when every file
 * plans cleanly is anything written; a write that fails puts the earlier
 * files back.
 *
 * @module
 */

import { callShape, callsApi, callText, optionName } from '../calls/call-text.ts';
import { applyHunks } from '../patch/apply-hunks.ts';
import { type FilePatch, PatchParseError, parsePatch, withoutBom } from '../patch/parse-patch.ts';
import { maskInOldText } from '../safety/redaction.ts';
import { plural } from '../search/narrowing.ts';
import { type EditResult, refusal } from './edit-result.ts';
import { type EditOptions, type FileEditor, type PlannedFile, Refusal, type Transform, type TransformOutcome } from './file-editor.ts';

/** Options of `applyPatch`. */
export interface ApplyPatchOptions extends EditOptions {
  /** The file a patch without `---`/`+++` headers applies to. */
  path?: string;
  /** Base versions per file of a multi-file patch (default: each file's last read). */
  baseVersions?: Readonly<Record<string, string>>;
}

/**
 * Characters of refusal detail in one message: about 1,000 tokens, inside the
 * smallest profile's call budget whatever the patch's size.
 */
const MESSAGE_CHARS = 4000;

/** The leading parts whose total length stays within `chars` (at least the first). */
function upTo(parts: readonly string[], chars: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const p of parts) {
    if (out.length > 0 && used + p.length > chars) break;
    out.push(p);
    used += p.length;
  }
  return out;
}

/** One file's hunks as a transform of its text (refusing with every failed hunk); buffers apply patches with it too. */
export function hunkTransform(fp: FilePatch): Transform {
  return (text) => {
    const r = applyHunks(text, fp.hunks, { ordered: fp.format === 'envelope' });
    if (r.ok) return { ok: true, text: r.text };
    // A few refusals in full are enough to act on; the rest are named, so the message stays small.
    const shown = upTo(
      r.failures.map((f) => f.message),
      MESSAGE_CHARS,
    );
    const rest = r.failures.slice(shown.length);
    const detail = [
      ...shown,
      ...(rest.length > 0
        ? [
            `${plural(rest.length, 'more hunk', 'more hunks')} refused (${rest.map((f) => `#${f.hunk.index}`).join(', ')}); fix those above, then apply again to see them.`,
          ]
        : []),
    ].join('\n\n');
    // A hunk made from a read where a secret was masked: its report shows the same mask on both sides, which says nothing without this.
    const masked = maskInOldText(
      r.failures
        .filter((f) => f.reason === 'not-found')
        .flatMap((f) => f.hunk.lines.filter((l) => l.op !== '+').map((l) => l.text))
        .join('\n'),
    );
    return {
      ok: false,
      code: 'ECONFLICT',
      message: `The patch does not apply: ${r.failures.length} of ${plural(fp.hunks.length, 'hunk')} refused, so no file was changed.\n\n${detail}${masked === undefined ? '' : `\n\n${masked}`}`,
      hunks: r.failures,
    };
  };
}

/**
 * Applies `patch` through `editor`: every file planned first (adds, deletes
 * and moves included), then all written as one change, or none.
 *
 * @example
 * ```ts
 * await applyPatch(editor, '--- a/a.ts\n+++ b/a.ts\n@@ @@\n-old\n+new\n', { author: 'llm:claude' });
 * await applyPatch(editor, '*** Begin Patch\n*** Update File: a.ts\n@@\n-old\n+new\n*** End Patch\n');
 * ```
 */
export async function applyPatch(editor: FileEditor, patch: string, options: ApplyPatchOptions = {}): Promise<EditResult> {
  const op = 'patch';
  let files: FilePatch[];
  try {
    files = parsePatch(patch);
  } catch (err) {
    if (err instanceof PatchParseError)
      return refusal(op, options.path ?? '', 'EINVAL', `The patch could not be parsed, so nothing was applied: ${err.message}.`);
    throw err;
  }
  const binary = files.find((f) => f.binary);
  if (binary !== undefined) {
    const path = binary.newPath ?? binary.oldPath ?? options.path ?? '';
    const what = `The patch has a binary section for ${path} (\`Binary files … differ\` or \`GIT binary patch\`), whose content is not in the patch as text, so nothing was applied.`;
    if (binary.isDelete || (binary.newPath === undefined && binary.oldPath !== undefined)) {
      // A deletion needs no content: the call that does it works as given.
      const del = callText('deleteFile', [path]);
      return refusal(op, path, 'EUNSUPPORTED', `${what} The section deletes it: delete it with ${del}, and send the rest of the patch without that section.`, {
        next: del,
      });
    }
    // The content is the caller's to give: the call is named in the caller's words, with the path it has.
    const write = callsApi() ? `writeFile(${JSON.stringify(path)}, content)` : callShape('writeFile', { path });
    return refusal(op, path, 'EUNSUPPORTED', `${what} Write the file whole with ${write} instead, and send the rest of the patch without that section.`);
  }
  // ctxfs keeps contents, not modes: a mode change is reported as not made, never silently dropped.
  const modes = files.flatMap((f) => (f.mode ? [`${f.newPath ?? f.oldPath} (${f.mode.from} → ${f.mode.to})`] : []));
  const modeNote =
    modes.length > 0
      ? `The mode change of ${modes.join(', ')} was not made: ctxfs changes file contents, not modes; change it outside ctxfs (chmod).`
      : undefined;
  const modeOnly = (f: FilePatch) => f.mode !== undefined && f.hunks.length === 0 && !f.isNew && !f.isDelete && !f.isCopy && f.oldPath === f.newPath;
  if (files.length > 0 && files.every(modeOnly)) {
    return refusal(op, files[0]?.newPath ?? '', 'EUNSUPPORTED', `The patch only changes file modes, so nothing was changed. ${modeNote}`);
  }
  files = files.filter((f) => !modeOnly(f));
  if (files.length === 0) {
    return refusal(
      op,
      options.path ?? '',
      'EINVAL',
      'The patch contains no hunks. Send a unified diff (`--- a/path` and `+++ b/path` headers, then `@@ ... @@` hunks whose lines start with " ", "-" or "+") or a `*** Begin Patch` envelope.',
    );
  }
  const targets: Array<{ fp: FilePatch; path: string; from: string | undefined }> = [];
  try {
    for (const fp of files) {
      const raw = fp.newPath ?? fp.oldPath ?? (files.length === 1 ? options.path : undefined);
      if (raw === undefined) {
        return refusal(
          op,
          '',
          'EINVAL',
          'The patch has no file headers, so it is not known which file it changes. Add `--- a/<path>` and `+++ b/<path>` lines, or pass { path }.',
        );
      }
      let path = editor.normalize(op, raw);
      if (fp.orPath !== undefined && !(await exists(editor, path))) {
        const other = editor.normalize(op, fp.orPath);
        if (await exists(editor, other)) path = other;
      }
      // Compared normalized: `*** Move to: ./a.txt` names the file it moves.
      const old = fp.oldPath !== undefined && fp.newPath !== undefined && fp.orPath === undefined ? editor.normalize(op, fp.oldPath) : undefined;
      targets.push({ fp, path, from: old === path ? undefined : old });
    }
    // `path` is the file of a patch without headers: one that disagrees with the headers is a mistake, not a choice to make silently.
    const headed = files.some((f) => f.newPath !== undefined || f.oldPath !== undefined);
    if (options.path !== undefined && headed) {
      const given = editor.normalize(op, options.path);
      const named = [
        ...new Set(
          targets.flatMap((t) => [
            ...(t.from === undefined ? [] : [t.from]),
            t.path,
            ...(t.fp.orPath === undefined ? [] : [editor.normalize(op, t.fp.orPath)]),
          ]),
        ),
      ];
      if (!named.includes(given)) {
        const option = optionName('applyPatch', 'path') ?? 'path';
        const headers = named.length === 1 ? (named[0] as string) : `${named.slice(0, 5).join(', ')}${named.length > 5 ? ` and ${named.length - 5} more` : ''}`;
        return refusal(
          op,
          given,
          'EINVAL',
          `The patch's headers name ${headers}, but ${option} names ${given}, so nothing was applied. ${option} is for a patch without \`---\`/\`+++\` headers: leave it out to patch ${headers} as the headers say, or make the headers name ${given}.`,
        );
      }
    }
  } catch (err) {
    if (err instanceof Refusal) return err.result;
    throw err;
  }
  // Sections of one file (concatenated commits' diffs, a delete then an add) apply in order, as git apply takes them.
  const groups = new Map<string, typeof targets>();
  for (const t of targets) {
    const group = groups.get(t.path);
    if (group === undefined) groups.set(t.path, [t]);
    else group.push(t);
  }
  for (const [path, group] of groups) {
    if (group.length > 1 && group.some((t) => t.from !== undefined)) {
      return refusal(
        op,
        path,
        'EINVAL',
        `The patch changes ${path} in ${group.length} sections and one of them renames or copies a file onto it; sections of one file are applied in order only when none moves a file. Nothing was applied. Send the section that renames or copies as a patch of its own, then the rest as another.`,
      );
    }
  }
  const units = [...groups.values()];
  const paths = targets.flatMap((t) => (t.from ? [t.from, t.path] : [t.path]));
  const result = await editor.run(op, paths, options, async () => {
    const plans: PlannedFile[] = [];
    const refusals: Refusal[] = [];
    for (const unit of units) {
      const t = unit[0] as (typeof unit)[number];
      const fileOptions: EditOptions = { ...options, baseVersion: options.baseVersions?.[t.path] ?? (units.length === 1 ? options.baseVersion : undefined) };
      try {
        if (unit.length === 1) plans.push(...(await planFile(editor, t.fp, t.path, t.from, fileOptions)));
        else
          plans.push(
            ...(await planSections(
              editor,
              unit.map((u) => u.fp),
              t.path,
              fileOptions,
            )),
          );
      } catch (err) {
        if (err instanceof Refusal) refusals.push(err);
        else throw err;
      }
    }
    if (refusals.length === 1 && units.length === 1) throw refusals[0];
    if (refusals.length > 0) {
      const first = refusals[0] as Refusal;
      const items = upTo(
        refusals.map((r) => `- ${r.result.path}: ${r.result.message}`),
        MESSAGE_CHARS,
      );
      const unshown = refusals.slice(items.length).map((r) => r.result.path);
      if (unshown.length > 0) items.push(`- ${plural(unshown.length, 'more file', 'more files')} refused: ${unshown.join(', ')}`);
      const list = items.join('\n\n');
      throw new Refusal({
        ...first.result,
        message: `The patch was not applied: ${refusals.length} of ${plural(units.length, 'file')} refused, and a patch applies to all its files or to none. No file was changed.\n\n${list}`,
      });
    }
    return plans;
  });
  return result.success && modeNote !== undefined ? { ...result, message: `${result.message} ${modeNote}` } : result;
}

/** The sections in order on `text` (`undefined`: the file is absent), each seeing the file as the ones before left it. */
function inOrder(fps: readonly FilePatch[], path: string, text: string | undefined): TransformOutcome | { ok: true; text: undefined } {
  let state = text;
  for (const [i, fp] of fps.entries()) {
    const section = `Section ${i + 1} of ${fps.length} for ${path}`;
    if (fp.isNew) {
      if (state !== undefined && state !== '')
        return { ok: false, code: 'EEXIST', message: `${section} creates ${path}, but it exists at that point of the patch.` };
      state = '';
    } else if (state === undefined) {
      return {
        ok: false,
        code: 'ENOENT',
        message: `${section} changes ${path}, which does not exist at that point of the patch. Check the path, or create the file with a \`--- /dev/null\` section before it.`,
      };
    }
    const r = fp.hunks.length > 0 ? hunkTransform(fp)(state) : { ok: true as const, text: state };
    if (!r.ok) return { ...r, message: `${section}: ${r.message}` };
    if (fp.isDelete && r.text !== '') {
      return {
        ok: false,
        code: 'ECONFLICT',
        message: `${section} deletes ${path}, but its hunks do not remove every line of it. Re-read the file with ${callText('readFile', [path])}.`,
      };
    }
    state = fp.isDelete ? undefined : r.text;
  }
  return { ok: true, text: state };
}

/** Several sections of one file, planned as one change of it from the file as it is to what the last leaves. */
async function planSections(editor: FileEditor, given: readonly FilePatch[], path: string, options: EditOptions): Promise<PlannedFile[]> {
  const op = 'patch';
  const current = await editor.load(op, path);
  const fps = current !== undefined && current.bom.byteLength > 0 ? given.map(withoutBom) : given;
  const kept = !(fps[fps.length - 1] as FilePatch).isDelete;
  if (current !== undefined && kept) {
    return [
      await editor.planModify(
        op,
        'patch',
        path,
        current,
        (text) => {
          const r = inOrder(fps, path, text);
          return r.ok ? { ok: true, text: r.text ?? '' } : r;
        },
        options,
        'by-content',
      ),
    ];
  }
  const r = inOrder(fps, path, current?.text);
  if (!r.ok) throw new Refusal(refusal(op, path, r.code, r.message, { version: current?.sha256 }));
  if (current === undefined) return r.text === undefined ? [] : [editor.planCreate('create', path, r.text)];
  return [await editor.planDelete(op, path, current, options)];
}

/** Whether `path` is there, for choosing a file by name before its lock is taken (the plan loads it again, locked). */
async function exists(editor: FileEditor, path: string): Promise<boolean> {
  try {
    return await editor.deps.fs.exists(path);
  } catch {
    return false;
  }
}

async function planFile(editor: FileEditor, given: FilePatch, path: string, from: string | undefined, options: EditOptions): Promise<PlannedFile[]> {
  let fp = given;
  const op = 'patch';
  if (fp.isNew) {
    const current = await editor.load(op, path);
    if (current !== undefined && current.text !== '') {
      const read = callText('readFile', [path]);
      throw new Refusal(
        refusal(op, path, 'EEXIST', `The patch creates ${path}, but it already exists. Read it with ${read} and send a patch against its content.`, {
          version: current.sha256,
          next: read,
        }),
      );
    }
    const r = hunkTransform(fp)('');
    if (!r.ok) throw new Refusal(refusal(op, path, r.code, r.message));
    return [current ? await editor.planModify(op, 'patch', path, current, () => r, options) : editor.planCreate('create', path, r.text)];
  }
  const source = from ?? path;
  const current = await editor.load(op, source);
  if (current !== undefined && current.bom.byteLength > 0) fp = withoutBom(fp);
  if (current === undefined) {
    throw new Refusal(
      refusal(
        op,
        source,
        'ENOENT',
        `The patch changes ${source}, which does not exist. Check the path (${callText('glob', [`**/${source.slice(source.lastIndexOf('/') + 1)}`])} finds it by name), or create the file with a \`--- /dev/null\` patch.`,
      ),
    );
  }
  if (fp.isDelete) {
    if (fp.hunks.length > 0) {
      const check = hunkTransform(fp)(current.text);
      if (!check.ok) throw new Refusal(refusal(op, path, check.code, check.message, { version: current.sha256 }));
      if (check.text !== '') {
        const read = callText('readFile', [path]);
        throw new Refusal(
          refusal(op, path, 'ECONFLICT', `The patch deletes ${path}, but its hunks do not remove every line of it. Re-read the file with ${read}.`, {
            version: current.sha256,
            next: read,
          }),
        );
      }
    }
    return [await editor.planDelete(op, path, current, options)];
  }
  if (from !== undefined && fp.isCopy) {
    const target = await editor.load(op, path);
    if (target !== undefined) {
      const read = callText('readFile', [path]);
      throw new Refusal(
        refusal(
          op,
          path,
          'EEXIST',
          `The patch copies ${from} to ${path}, but ${path} already exists (git apply refuses this too). Read it with ${read} and send a patch against its content.`,
          { version: target.sha256, next: read },
        ),
      );
    }
    // Planned as a change of the source, so a stale read merges as for any edit; only the copy is written.
    const modified = fp.hunks.length > 0 ? await editor.planModify(op, 'patch', from, current, hunkTransform(fp), options, 'by-content') : undefined;
    return [
      {
        path,
        op: 'create',
        current: undefined,
        bytes: modified?.bytes ?? current.bytes,
        beforeText: '',
        afterText: modified?.afterText ?? current.text,
        merged: modified?.merged ?? false,
      },
    ];
  }
  if (from !== undefined) {
    const target = await editor.load(op, path);
    if (target !== undefined) throw new Refusal(refusal(op, path, 'EEXIST', `The patch renames ${from} to ${path}, but ${path} already exists.`));
    const modified = fp.hunks.length > 0 ? await editor.planModify(op, 'patch', from, current, hunkTransform(fp), options, 'by-content') : undefined;
    // A move, with changes or not: the file is renamed (keeping its mode, recorded as a rename both ways), then written.
    return [
      {
        path,
        op: 'rename',
        current,
        bytes: modified?.bytes ?? current.bytes,
        beforeText: current.text,
        afterText: modified?.afterText ?? current.text,
        merged: modified?.merged ?? false,
        editorView: modified?.editorView,
        renameFrom: from,
      },
    ];
  }
  return [await editor.planModify(op, 'patch', path, current, hunkTransform(fp), options, 'by-content')];
}
