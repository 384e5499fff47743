/**
 * Workspace paths: the single implementation every backend uses to turn a
 * caller's path into a normalized, root-relative POSIX path, or to refuse it.
 *
 * A normalized path has no leading or trailing slash, no `.` or `..` segment
 * and no empty segment; the workspace root is the empty string `''`.
 *
 * @module
 */

import { FsError, type FsOperation } from './errors.ts';
import type { FileKind } from './types.ts';

/** Bounds on path shape. Defaults follow Linux (`PATH_MAX`, `NAME_MAX`). */
export interface PathLimits {
  /** Most segments a path may have after normalization. Default 256. */
  maxDepth: number;
  /** Longest segment, in UTF-8 bytes. Default 255. */
  maxSegmentBytes: number;
  /** Longest whole path, in UTF-8 bytes. Default 4096. */
  maxPathBytes: number;
}

/**
 * Default limits. Generous enough for real trees (deep Java packages, nested
 * `node_modules`) and equal to what Linux itself refuses beyond.
 */
export const DEFAULT_PATH_LIMITS: Readonly<PathLimits> = Object.freeze({
  maxDepth: 256,
  maxSegmentBytes: 255,
  maxPathBytes: 4096,
});

/** The result of {@link resolvePath}. */
export interface ResolvedPath {
  /** Normalized root-relative path; `''` is the root. */
  readonly path: string;
  /** The caller wrote a trailing slash: the path must name a directory. */
  readonly dirOnly: boolean;
}

/** Renders a caller's path for an error message, escaping control characters. */
export function describeInput(input: unknown): string {
  if (typeof input !== 'string') return String(input);
  // JSON escapes C0 but not DEL; escape it too so no raw control byte reaches a log.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: this detects them
  return /[\u0000-\u001f\u007f]/.test(input) ? JSON.stringify(input).slice(1, -1).replaceAll('\u007f', '\\u007f') : input;
}

function refuse(code: 'EINVAL' | 'EPATHESCAPE' | 'ENAMETOOLONG', op: FsOperation, input: unknown, reason: string, hint?: string): FsError {
  return new FsError({ code, op, path: describeInput(input), reason, hint });
}

const encoder = new TextEncoder();

/** Whether `s` holds `.` or `..` at `start` (`length` 1 or 2). */
function isDots(s: string, start: number, length: number): boolean {
  return s.charCodeAt(start) === 0x2e && (length === 1 || s.charCodeAt(start + 1) === 0x2e);
}

function utf8Length(s: string): number {
  // Pure ASCII is the overwhelmingly common case; skip the encode.
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) return encoder.encode(s).length;
  }
  return s.length;
}

/** Lexical segments of an absolute host path (`/` or a drive letter first; backslashes as slashes), `.`/`..` applied; undefined when `..` climbs above its start. */
function hostSegments(path: string): string[] | undefined {
  const out: string[] = [];
  for (const seg of path.replaceAll('\\', '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0 || (out.length === 1 && /^[A-Za-z]:$/.test(out[0] as string))) return undefined;
      out.pop();
    } else out.push(seg);
  }
  return out;
}

/**
 * Where the absolute host path `path` lies inside one of `hostRoots` (the
 * workspace root as the host spells it: its real path, the spelling it was
 * opened by), as a root-relative path (`''` for the root itself);
 * `undefined` when it lies in none, or `path` is not absolute. Lexical: a
 * link on the way is not followed, so what the answer names is looked up
 * through the root's own rules when used.
 *
 * @example
 * ```ts
 * relativeToRoot('/tmp/repo/lib/view.js', '/tmp/repo');     // 'lib/view.js'
 * relativeToRoot('/tmp/repo/../other/x', ['/tmp/repo']);    // undefined
 * relativeToRoot('C:\\repo\\src\\a.ts', 'C:\\repo');         // 'src/a.ts'
 * ```
 */
export function relativeToRoot(path: string, hostRoots: string | readonly string[]): string | undefined {
  const roots = typeof hostRoots === 'string' ? [hostRoots] : hostRoots;
  const absolute = (p: string) => p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(p);
  if (roots.length === 0 || !absolute(path)) return undefined;
  const segments = hostSegments(path);
  if (segments === undefined) return undefined;
  for (const root of roots) {
    if (!absolute(root)) continue;
    const base = hostSegments(root);
    if (base === undefined || base.length > segments.length) continue;
    // A drive letter is one drive whichever case it is typed in.
    const same = (a: string, b: string, i: number) => a === b || (i === 0 && /^[A-Za-z]:$/.test(a) && a.toUpperCase() === b.toUpperCase());
    if (base.every((seg, i) => same(seg, segments[i] as string, i))) return segments.slice(base.length).join('/');
  }
  return undefined;
}

/** The hint of a refused path that lies inside the root: the path to use instead. */
function insideHint(relative: string): string {
  return relative === '' ? 'that is the workspace root itself: name it "."' : `use the path relative to the workspace root: ${JSON.stringify(relative)}`;
}

/**
 * The hint of a refused absolute path: the path inside the root it names
 * when it lies there, else the general one, the same whatever the path
 * outside (which is not named back).
 */
function absoluteHint(path: string, hostRoots: string | readonly string[]): string {
  const inside = relativeToRoot(path, hostRoots);
  return inside === undefined ? 'use a path relative to the workspace root, e.g. "src/index.ts"' : insideHint(inside);
}

/**
 * Validates and normalizes a caller's path against the workspace root.
 *
 * - Backslashes become `/`; `.` segments and repeated slashes vanish; `..`
 *   pops a segment and may never climb above the root (`EPATHESCAPE`).
 * - Absolute paths (`/x`, `C:\x`, `\\server\share`) are refused with
 *   `EPATHESCAPE`: every path is relative to the workspace root.
 * - NUL, other control characters and unpaired UTF-16 surrogates are refused
 *   with `EINVAL` before any I/O.
 * - Over-long paths, segments or depths are refused with `ENAMETOOLONG`.
 * - `hostRoots`, where the caller knows them (the root as the host spells
 *   it), let the refusal of an absolute path inside the root name the
 *   relative path to use; one outside is refused as without them.
 *
 * @example
 * ```ts
 * resolvePath('src\\lib/../index.ts', 'stat'); // { path: 'src/index.ts', dirOnly: false }
 * resolvePath('docs/', 'list');                // { path: 'docs', dirOnly: true }
 * resolvePath('../etc/passwd', 'read');        // throws FsError EPATHESCAPE
 * ```
 */
export function resolvePath(
  input: unknown,
  op: FsOperation,
  limits: PathLimits = DEFAULT_PATH_LIMITS,
  hostRoots: string | readonly string[] = [],
): ResolvedPath {
  if (typeof input !== 'string') {
    throw refuse('EINVAL', op, input, `path must be a string, got ${input === null ? 'null' : typeof input}`, 'pass a workspace-relative path string');
  }
  let hasBackslash = false;
  // Whether the input is already normal (no empty, `.` or `..` segment, no
  // leading or trailing slash), and its longest segment: most paths come
  // from a listing and are, and those need no splitting and rejoining.
  let normal = input.length > 0;
  let segmentStart = 0;
  let segments = 1;
  let longest = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c === 0x2f) {
      const length = i - segmentStart;
      if (length === 0 || (length <= 2 && isDots(input, segmentStart, length))) normal = false;
      if (length > longest) longest = length;
      segments++;
      segmentStart = i + 1;
    } else if (c < 0x20 || c === 0x7f) {
      throw refuse(
        'EINVAL',
        op,
        input,
        c === 0 ? 'path contains a NUL byte' : `path contains control character U+${c.toString(16).padStart(4, '0').toUpperCase()}`,
        'remove control characters from the path',
      );
    }
    if (c === 0x5c) hasBackslash = true;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const next = input.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else throw refuse('EINVAL', op, input, 'path contains an unpaired UTF-16 surrogate', 'pass a well-formed Unicode string');
    }
  }
  const last = input.length - segmentStart;
  if (last === 0 || (last <= 2 && isDots(input, segmentStart, last))) normal = false;
  // A UTF-16 unit is at most 3 UTF-8 bytes: within these bounds no length check can fail.
  if (
    normal &&
    !hasBackslash &&
    input.charCodeAt(1) !== 0x3a &&
    Math.max(longest, last) * 3 <= limits.maxSegmentBytes &&
    input.length * 3 <= limits.maxPathBytes &&
    segments <= limits.maxDepth
  ) {
    return { path: input, dirOnly: false };
  }
  const p = hasBackslash ? input.replaceAll('\\', '/') : input;
  if (p.charCodeAt(0) === 0x2f) {
    throw refuse('EPATHESCAPE', op, input, 'absolute paths are not accepted', absoluteHint(p, hostRoots));
  }
  // `file:///etc/passwd` would otherwise be the relative `file:/etc/passwd`, and its refusal a puzzling ENOENT.
  // Two letters at least: `C://x` is a drive, refused below.
  if (/^[A-Za-z][A-Za-z0-9+.-]+:\/\//.test(p)) {
    throw refuse('EINVAL', op, input, 'a URL is not a path', 'use a path relative to the workspace root, e.g. "src/index.ts"');
  }
  if (p.length >= 2 && p.charCodeAt(1) === 0x3a && /^[A-Za-z]:/.test(p)) {
    const inside = relativeToRoot(p, hostRoots);
    throw refuse(
      'EPATHESCAPE',
      op,
      input,
      'drive-letter paths are not accepted',
      inside === undefined ? 'use a path relative to the workspace root' : insideHint(inside),
    );
  }
  const dirOnly = p.length > 0 && p.charCodeAt(p.length - 1) === 0x2f;
  const raw = p.split('/');
  const out: string[] = [];
  for (const seg of raw) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) {
        throw refuse(
          'EPATHESCAPE',
          op,
          input,
          'path climbs above the workspace root',
          'remove the leading ".." segments; paths are relative to the workspace root',
        );
      }
      out.pop();
      continue;
    }
    if (utf8Length(seg) > limits.maxSegmentBytes) {
      throw refuse('ENAMETOOLONG', op, input, `a path segment exceeds ${limits.maxSegmentBytes} bytes`, 'shorten the file or directory name');
    }
    out.push(seg);
  }
  if (out.length > limits.maxDepth) {
    throw refuse('ENAMETOOLONG', op, input, `path is deeper than ${limits.maxDepth} segments`, 'use a shallower path');
  }
  const path = out.join('/');
  if (utf8Length(path) > limits.maxPathBytes) {
    throw refuse('ENAMETOOLONG', op, input, `path exceeds ${limits.maxPathBytes} bytes`, 'use a shorter path');
  }
  return { path, dirOnly };
}

/**
 * What a path written with a trailing slash (`notes/`, which names a
 * directory, as `open("notes/")` takes it) is wrong for, given the kind of
 * what is there (`undefined`: nothing): `ENOTDIR` where a file is;
 * `EISDIR` where nothing is and the call would make a file (`creating`);
 * `undefined` where a directory is, or where nothing is for a call that
 * makes no file (the caller's own answer follows: a read of a directory,
 * a missing path). `path` is the normalized path, without its slash.
 *
 * @example
 * ```ts
 * trailingSlashError('readBytes', 'a.txt', 'file', false); // ENOTDIR: "a.txt/"
 * trailingSlashError('openWrite', 'notes', undefined, true); // EISDIR: no file is written at "notes/"
 * trailingSlashError('stat', 'src', 'directory', false);     // undefined
 * ```
 */
export function trailingSlashError(op: FsOperation, path: string, kind: FileKind | undefined, creating: boolean): FsError | undefined {
  if (kind === 'directory' || (kind === undefined && !creating)) return undefined;
  const named = `${path}/`;
  if (kind === undefined) {
    return new FsError({
      code: 'EISDIR',
      op,
      path: named,
      reason: 'a name ending in "/" names a directory, so no file is written there',
      hint: `drop the trailing "/" to name a file: ${path}`,
    });
  }
  return new FsError({
    code: 'ENOTDIR',
    op,
    path: named,
    reason: `a name ending in "/" names a directory, and this is ${kind === 'file' ? 'a file' : kind === 'symlink' ? 'a link' : 'not a directory'}`,
    hint: `drop the trailing "/" to name it: ${path}`,
  });
}

/**
 * Whether a directory entry's name can be reached through a path: it is not
 * `''`, `.` or `..`, holds no `/`, no backslash (paths read it as a
 * separator), no control character (code units below 0x20 and 0x7f, which
 * {@link resolvePath} refuses), no U+FFFD (what bytes that are not UTF-8
 * decode to, so the name as listed is not the name on disk) and no unpaired
 * surrogate. Backends leave entries failing it out of every listing, walk,
 * glob and grep, with everything below them: reporting a path nothing can
 * stat, read or write only misleads. Length is not checked: the system
 * bounds every name it lists (`NAME_MAX`), and path limits are per
 * filesystem.
 *
 * @example
 * ```ts
 * isAddressableName('notes.md');      // true
 * isAddressableName('new\nline.txt'); // false: a control character
 * isAddressableName('a\\b');          // false: a backslash
 * isAddressableName('caf\ufffd');     // false: bytes that were not UTF-8
 * ```
 */
export function isAddressableName(name: string): boolean {
  const n = name.length;
  if (n === 0 || (n <= 2 && isDots(name, 0, n))) return false;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c || c === 0x2f || c === 0xfffd) return false;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = name.charCodeAt(i + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/** Joins normalized paths; `''` is the root. */
export function joinPath(dir: string, name: string): string {
  if (dir === '') return name;
  if (name === '') return dir;
  return `${dir}/${name}`;
}

/** Parent of a normalized path; the root's parent is the root. */
export function parentPath(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** Last segment of a normalized path; `''` for the root. */
export function baseName(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** True when `path` is `ancestor` or lies below it (both normalized). */
export function isSameOrInside(ancestor: string, path: string): boolean {
  if (ancestor === '') return true;
  return path === ancestor || (path.startsWith(ancestor) && path.charCodeAt(ancestor.length) === 0x2f);
}

/** Renders a normalized path for people: the root shows as `.`. */
export function displayPath(path: string): string {
  return path === '' ? '.' : path;
}

/** Segments of a normalized path; the root has none. */
export function pathSegments(path: string): string[] {
  return path === '' ? [] : path.split('/');
}

/** The link of a loop of symbolic links that leads back into it, and the link it leads back to (normalized paths). */
export interface LinkLoopClosure {
  /** The link whose target is a link already followed. */
  readonly link: string;
  /** That link already followed (`link` itself when the link leads to itself). */
  readonly target: string;
}

/**
 * Which link closes the loop of symbolic links that `path` (normalized) runs
 * into, for the refusal of the path to name it. The links are followed one
 * component at a time from the root, by their text: `readLink` answers the
 * target of the link at a path whose parent holds no link (relative to the
 * link's directory, or starting with `/` for a path from the workspace
 * root), or `undefined` when the path is no link. A chain that leads out of
 * the root, ends, or runs longer than `maxLinks` without coming back is no
 * loop this can name: `undefined`.
 *
 * @example
 * ```ts
 * // loop1 -> loop2, loop2 -> loop1
 * await linkLoopClosure('loop1/a.txt', readLink); // { link: 'loop2', target: 'loop1' }
 * ```
 */
export async function linkLoopClosure(
  path: string,
  readLink: (path: string) => Promise<string | undefined>,
  maxLinks = 64,
): Promise<LinkLoopClosure | undefined> {
  let pending = pathSegments(path);
  let resolved = '';
  const followed = new Set<string>();
  let last: string | undefined;
  while (pending.length > 0) {
    const at = joinPath(resolved, pending.shift() as string);
    const target = await readLink(at);
    if (target === undefined) {
      resolved = at;
      continue;
    }
    if (followed.has(at)) return { link: last ?? at, target: at };
    if (followed.size >= maxLinks) return undefined;
    followed.add(at);
    last = at;
    // The target replaces the link: from the root when absolute, else from the link's directory (which holds no link,
    // so `..` in it is its parent).
    const next = target.startsWith('/') ? [] : pathSegments(resolved);
    for (const segment of target.split('/')) {
      if (segment === '' || segment === '.') continue;
      if (segment !== '..') next.push(segment);
      else if (next.pop() === undefined) return undefined;
    }
    pending = [...next, ...pending];
    resolved = '';
  }
  return undefined;
}

/**
 * The refusal of a call on `path` that meets `link` (`path` itself, or a
 * directory on its way): a symbolic link the filesystem does not follow,
 * which a stat answers as `symlink`. Said as following the link says it —
 * `EPATHESCAPE` for a link that leads out of the root, `ELOOP` for links in
 * a loop — under `op` and `path`, so that every call on such a link gives
 * the code a read of it gives; `EPATHESCAPE` where the filesystem follows
 * no links (a host workspace that refuses them). Where the link leads is
 * never told.
 *
 * @example
 * ```ts
 * // out -> /etc/passwd
 * (await unfollowedLink(fs, 'list', 'out')).code; // 'EPATHESCAPE'
 * ```
 */
export async function unfollowedLink(
  fs: { readonly capabilities: { readonly symlinks: boolean }; realpath(path: string): Promise<string> },
  op: FsOperation,
  path: string,
  link: string = path,
): Promise<FsError> {
  if (fs.capabilities.symlinks) {
    try {
      await fs.realpath(link);
    } catch (err) {
      if (err instanceof FsError && (err.code === 'EPATHESCAPE' || err.code === 'ELOOP')) {
        return new FsError({ code: err.code, op, path, reason: err.reason, hint: err.hint, cause: err });
      }
    }
  }
  // Without links followed at all, or a link mended or replaced since the stat: what it is is all there is to say.
  const refused = !fs.capabilities.symlinks;
  return new FsError({
    code: 'EPATHESCAPE',
    op,
    path,
    reason: `'${displayPath(link)}' is a symbolic link ${refused ? 'and this workspace refuses symlinks' : 'that leads outside the workspace (or in a loop)'}`,
    hint: refused ? 'use the path of the file or directory the link stands for' : 'use a path whose symlinks stay inside the workspace root',
  });
}
