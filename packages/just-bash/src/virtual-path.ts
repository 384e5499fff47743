/**
 * Paths as just-bash hands them to a filesystem — absolute in the script's
 * virtual tree, whose `/` is the workspace root — and the workspace paths
 * they name. `..` stops at `/` as it does in just-bash's own filesystems
 * (`/../../a` is `/a`), so no spelling of a path leaves the root; a NUL is
 * refused before anything else, in just-bash's words.
 *
 * @module
 */

import { posix } from 'node:path';
import { BashFsError } from './bash-errors.ts';

/**
 * `path` in the virtual tree, normalized (`/` for the root).
 *
 * @example
 * ```ts
 * virtualPath('/src/../../a.txt', 'open'); // '/a.txt'
 * ```
 */
export function virtualPath(path: string, syscall: string): string {
  if (path.includes('\0')) throw new BashFsError('ENOENT', syscall, path.replaceAll('\0', '\\0'), 'path contains null byte');
  // normalize, never resolve: posix.resolve would consult process.cwd(), which just-bash blocks while a script runs.
  const normalized = posix.normalize(`/${path}`);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/**
 * The workspace path of a virtual path (`''` for the root).
 *
 * @example
 * ```ts
 * workspacePath('/src/a.ts', 'open'); // 'src/a.ts'
 * workspacePath('/../etc/passwd', 'open'); // 'etc/passwd', inside the workspace
 * ```
 */
export function workspacePath(path: string, syscall: string): string {
  return virtualPath(path, syscall).slice(1);
}

/**
 * `path` resolved against `base` in the virtual tree, as just-bash's
 * `resolvePath` does, keeping a trailing slash (`a.txt/`, `new/.`): the
 * name still asks for a directory, which the call that takes it checks.
 *
 * @example
 * ```ts
 * resolveVirtual('/src', '../a.txt/'); // '/a.txt/'
 * ```
 */
export function resolveVirtual(base: string, path: string): string {
  const v = virtualPath(path.startsWith('/') ? path : `${base}/${path}`, 'resolve');
  return v !== '/' && /\/\.?$/.test(path) ? `${v}/` : v;
}
