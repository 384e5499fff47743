/**
 * The one place a caller's path enters the context layer. Every spelling of
 * a file (`./src/a.ts`, `src//a.ts`, `src\a.ts`, `x/../src/a.ts`) resolves
 * here, through core's path module, to the single key under which reads,
 * versions, the registry and the audit record it. A read through one
 * spelling is then the base of an edit through another, so a change made in
 * between is merged or refused, never overwritten.
 *
 * @module
 */

import { displayPath, fsError, resolvePath } from '@ctxfs/core';
import { operationName } from '../calls/call-text.ts';

/** What the path must name. */
export type PathTarget = 'file' | 'any';

/**
 * Resolves a caller's path to its canonical workspace-relative form (`''` is
 * the root). A trailing slash on a path that must name a file is `ENOTDIR`
 * (as `open("a.ts/")` is); escapes, control characters and over-long paths
 * throw core's `FsError`.
 *
 * @example
 * ```ts
 * contextPath('./src//lib/../a.ts', 'readFile'); // 'src/a.ts'
 * contextPath('src/a.ts/', 'readFile');          // throws FsError ENOTDIR
 * contextPath('docs/', 'listFiles', 'any');      // 'docs'
 * contextPath('/home/ana/app/a.ts', 'readFile', 'file', ['/home/ana/app']); // throws EPATHESCAPE, hint: use "a.ts"
 * ```
 *
 * `hostRoots`, the absolute spellings of the root ({@link rootSpellings}),
 * let the refusal of an absolute path inside it name the relative path to use.
 */
export function contextPath(input: unknown, op: string, target: PathTarget = 'file', hostRoots: readonly string[] = []): string {
  const { path, dirOnly } = resolvePath(input, op, undefined, hostRoots);
  if (dirOnly && target === 'file') {
    throw fsError('ENOTDIR', op, displayPath(path), {
      reason: `"${String(input)}" ends with a slash, which names a directory, but ${operationName(op)} takes a file`,
      hint: `remove the trailing slash: ${JSON.stringify(displayPath(path))}`,
    });
  }
  return path;
}

/** Core's {@link rootSpellings}: the root's absolute spellings the boundary, the editor and the buffers resolve against. */
export { rootSpellings } from '@ctxfs/core';
