/**
 * A lazy, depth-first walk over any backend's directory listing, in sorted
 * order so results are deterministic. Shared by glob and grep.
 *
 * @module
 */

import type { FileEntry } from './types.ts';

const SKIPPABLE: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM']);

/** Lists one directory (entries in any order). */
export type ReadDirectory = (path: string) => Promise<FileEntry[]>;

/** Options of {@link walkTree}. */
export interface WalkTreeOptions {
  /** Deepest level to yield; the start directory's children are depth 1. */
  maxDepth?: number;
  /** Called for each directory before descending; return false to prune it. */
  enter?: (entry: FileEntry, depth: number) => boolean;
}

/** Orders names by UTF-16 code unit, the same everywhere (no locale). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders paths as {@link walkTree} meets them: depth first, parents before
 * their children, siblings by {@link compareNames}. For walks that come back
 * in another order (a `find` in a container) and must read as the base's.
 *
 * @example
 * ```ts
 * ['a/b', 'a', 'a.txt'].sort(compareWalkOrder); // ['a', 'a/b', 'a.txt']
 * ```
 */
export function compareWalkOrder(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = compareNames(x[i] as string, y[i] as string);
    if (c !== 0) return c;
  }
  return x.length - y.length;
}

/** One entry met by a walk, with its depth below the start (children of the start are 1). */
export interface WalkStep {
  readonly entry: FileEntry;
  readonly depth: number;
}

/**
 * Yields every entry below `start` (not `start` itself), parents before
 * children, siblings sorted by name. Each directory is read only when reached.
 *
 * @example
 * ```ts
 * for await (const { entry, depth } of walkTree((p) => fs.list(p), 'src')) console.log(depth, entry.path);
 * ```
 */
export async function* walkTree(readDirectory: ReadDirectory, start: string, options: WalkTreeOptions = {}): AsyncGenerator<WalkStep> {
  for await (const batch of walkBatches(readDirectory, start, options)) yield* batch;
}

/**
 * {@link walkTree} in batches: every entry up to (and including) the next
 * directory to descend into comes in one array, so a consumer pays one async
 * step per directory read instead of one per entry. Same order, same rules.
 */
export async function* walkBatches(readDirectory: ReadDirectory, start: string, options: WalkTreeOptions = {}): AsyncGenerator<WalkStep[]> {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  if (maxDepth < 1) return;
  type Frame = { entries: FileEntry[]; index: number; depth: number };
  const first = await readDirectory(start);
  first.sort((a, b) => compareNames(a.name, b.name));
  const stack: Frame[] = [{ entries: first, index: 0, depth: 1 }];
  let batch: WalkStep[] = [];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.index >= top.entries.length) {
      stack.pop();
      continue;
    }
    const entry = top.entries[top.index++] as FileEntry;
    batch.push({ entry, depth: top.depth });
    if (entry.kind === 'directory' && top.depth < maxDepth && (options.enter?.(entry, top.depth) ?? true)) {
      yield batch;
      batch = [];
      let children: FileEntry[];
      try {
        children = await readDirectory(entry.path);
      } catch (err) {
        // A directory removed, replaced or made unreadable while we walk is
        // passed over, as find and ripgrep do; the walk goes on.
        if (SKIPPABLE.has((err as { code?: string }).code ?? '')) continue;
        throw err;
      }
      children.sort((a, b) => compareNames(a.name, b.name));
      stack.push({ entries: children, index: 0, depth: top.depth + 1 });
    }
  }
  if (batch.length > 0) yield batch;
}
