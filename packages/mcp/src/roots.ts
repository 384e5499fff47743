/**
 * Client roots. A client may say which directories it works in; the server
 * serves a host workspace only within them: all of it when a root holds the
 * workspace, only the directories a root names when roots lie inside it, and
 * nothing when no root meets it. An empty list sets no bound (the MCP
 * Inspector, or an editor with no folder open, lists none): the server's own
 * root is the bound then. A call that names a path outside is refused
 * before it reaches the workspace; a search without a path is aimed at the
 * one root, or refused with the roots to choose from.
 *
 * @module
 */

import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a client's roots let it reach of the workspace. */
export type RootScope =
  | { readonly kind: 'all' }
  /** Only these workspace-relative directories. */
  | { readonly kind: 'some'; readonly dirs: readonly string[]; readonly roots: readonly string[] }
  | { readonly kind: 'none'; readonly roots: readonly string[] };

/**
 * The scope of `roots` (file URIs) over the workspace at `workspaceRoot`.
 *
 * @example
 * ```ts
 * rootScope('/repo', ['file:///repo/packages/a']); // { kind: 'some', dirs: ['packages/a'], roots: [...] }
 * rootScope('/repo', ['file:///']);                 // { kind: 'all' }
 * rootScope('/repo', []);                            // { kind: 'all' }
 * ```
 */
export function rootScope(workspaceRoot: string, roots: readonly string[]): RootScope {
  if (roots.length === 0) return { kind: 'all' };
  const dirs: string[] = [];
  for (const uri of roots) {
    let dir: string;
    try {
      dir = fileURLToPath(uri);
    } catch {
      continue; // not a file root: it names nothing on this disk
    }
    const down = relative(dir, workspaceRoot);
    if (down === '' || (!down.startsWith('..') && !isAbsolute(down))) return { kind: 'all' };
    const up = relative(workspaceRoot, dir);
    if (!up.startsWith('..') && !isAbsolute(up)) dirs.push(up.split(sep).join('/'));
  }
  return dirs.length > 0 ? { kind: 'some', dirs, roots } : { kind: 'none', roots };
}

/** Argument names that hold a workspace path. */
const PATH_ARGUMENTS = ['path', 'from', 'to', 'cwd'] as const;
/** Tools that search everything when given no path, and the argument that narrows them. */
const SCOPED_SEARCHES: Readonly<Record<string, string>> = { list_files: 'path', grep: 'path', find_symbol: 'path', glob: 'cwd' };

/**
 * Checks (and, for a search without a path, aims) a call's arguments against
 * the scope. Give it the arguments as the tool takes them (`prepareArguments`'
 * value): a path under an alias (`file_path`, `target_file`, `source`) is a
 * path all the same. Returns the arguments to run with — `args` itself when
 * nothing was aimed — or the refusal.
 */
export async function withinRoots(scope: RootScope, tool: string, args: unknown): Promise<{ ok: true; args: unknown } | { ok: false; message: string }> {
  if (scope.kind === 'all') return { ok: true, args };
  if (scope.kind === 'none') {
    return {
      ok: false,
      message: `The client's roots (${scope.roots.join(', ') || 'none'}) do not include this workspace, so nothing in it is served. Add the workspace directory to the client's roots.`,
    };
  }
  const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...(args as Record<string, unknown>) } : undefined;
  if (given === undefined) return { ok: true, args }; // malformed: the tool's own checks refuse it
  if (tool === 'project_overview') {
    return {
      ok: false,
      message: `The client's roots are ${scope.dirs.join(', ')} within the workspace; the overview covers all of it. Use list_files with one of those paths.`,
    };
  }
  let narrowed = false;
  const narrow = SCOPED_SEARCHES[tool];
  if (narrow !== undefined && (given[narrow] === undefined || given[narrow] === null || given[narrow] === '')) {
    if (scope.dirs.length !== 1) {
      return {
        ok: false,
        message: `${tool} searches the whole workspace, which is wider than the client's roots; give ${narrow} one of: ${scope.dirs.join(', ')}.`,
      };
    }
    given[narrow] = scope.dirs[0];
    narrowed = true;
  }
  const [{ parsePatch }, { isSameOrInside, resolvePath }] = await Promise.all([import('@ctxfs/context'), import('@ctxfs/core')]);
  const paths: string[] = [];
  for (const key of PATH_ARGUMENTS) if (typeof given[key] === 'string') paths.push(given[key] as string);
  if (typeof given.patch === 'string') {
    try {
      for (const f of parsePatch(given.patch)) for (const p of [f.oldPath, f.newPath]) if (p !== undefined) paths.push(p);
    } catch {
      // A patch that does not parse is refused by apply_patch itself, naming no path.
    }
  }
  for (const input of paths) {
    let path: string;
    try {
      path = resolvePath(input, 'open').path;
    } catch {
      continue; // the tool refuses it with the path module's own message
    }
    if (!scope.dirs.some((d) => isSameOrInside(d, path))) {
      return {
        ok: false,
        message: `${input} is outside the client's roots (${scope.dirs.join(', ')} within the workspace); only paths under them are served.`,
      };
    }
  }
  // The arguments as given unless a search was aimed at the one root: the caller can tell which it runs.
  return { ok: true, args: narrowed ? given : args };
}
