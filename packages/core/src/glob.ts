/**
 * Glob matching shared by every backend: picomatch for the pattern language
 * (`*`, `?`, `[1-2]`, `{a,b}`, `**`), plus the planning that keeps a walk
 * small (static base directory, depth bound, ignore pruning).
 *
 * @module
 */

import { FsError } from './errors.ts';
import { picomatchModule } from './lazy-dependencies.ts';
import { resolvePath } from './path.ts';

/** A compiled glob. */
export interface GlobPlan {
  /** Directory (relative to the glob's cwd) where matches can start. */
  readonly base: string;
  /** Deepest level below `base` a match can be at; Infinity with `**`. */
  readonly maxDepth: number;
  /** Tests a path relative to the glob's cwd. */
  readonly matches: (relativePath: string) => boolean;
  /** Tests whether a directory (relative to cwd) is ignored, so it is not walked. */
  readonly ignored: (relativePath: string) => boolean;
}

/** Options of {@link compileGlob}. */
export interface CompileGlobOptions {
  dot?: boolean;
  ignore?: string | readonly string[];
  maxDepth?: number;
  nocase?: boolean;
}

const MAGIC = /[*?[\]{}()!+@]/;

function badPattern(pattern: string, reason: string): FsError {
  return new FsError({ code: 'EBADPATTERN', op: 'glob', path: pattern, reason });
}

/**
 * Compiles a glob into a {@link GlobPlan}.
 *
 * @example
 * ```ts
 * const plan = compileGlob('src/**\/*.ts');
 * plan.base;                      // 'src'
 * plan.matches('src/a/b.ts');     // true
 * ```
 */
export function compileGlob(pattern: string, options: CompileGlobOptions = {}): GlobPlan {
  const key = JSON.stringify([pattern, options.dot ?? false, options.nocase ?? false, options.maxDepth ?? null, options.ignore ?? null]);
  let plan = recentPlans.get(key);
  if (plan === undefined) {
    plan = planGlob(pattern, options);
    if (recentPlans.size >= RECENT_PLANS) recentPlans.delete(recentPlans.keys().next().value as string);
    recentPlans.set(key, plan);
  }
  return plan;
}

// An agent lists and globs with the same few patterns again and again, and
// picomatch's compile costs more than matching a directory's files with it. A
// plan holds nothing but the pattern, so one serves every caller.
const RECENT_PLANS = 256;
const recentPlans = new Map<string, GlobPlan>();

function planGlob(pattern: string, options: CompileGlobOptions): GlobPlan {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw badPattern(String(pattern), 'glob pattern must be a non-empty string');
  }
  if (pattern.startsWith('/')) {
    throw new FsError({
      code: 'EPATHESCAPE',
      op: 'glob',
      path: pattern,
      reason: 'absolute glob patterns are not accepted',
      hint: 'write the pattern relative to the workspace root',
    });
  }
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw new FsError({
      code: 'EPATHESCAPE',
      op: 'glob',
      path: pattern,
      reason: 'glob patterns may not contain ".."',
      hint: 'set { cwd } instead of climbing with ".."',
    });
  }
  const staticSegments: string[] = [];
  for (const seg of segments) {
    if (MAGIC.test(seg) || seg.includes('\\')) break;
    staticSegments.push(seg);
  }
  // The base itself must be a valid path; its last static segment may be the match itself.
  const baseSegments = staticSegments.length === segments.length ? staticSegments.slice(0, -1) : staticSegments;
  const base = resolvePath(baseSegments.join('/'), 'glob').path;
  const rest = segments.slice(baseSegments.length);
  const globstar = rest.some((s) => s.includes('**'));
  const patternDepth = globstar ? Number.POSITIVE_INFINITY : rest.length;
  const normalized = segments.join('/');
  let matcher: (p: string) => boolean;
  let ignoreMatcher: ((p: string) => boolean) | undefined;
  // Loaded before the try: a library that cannot load is that failure, not a bad pattern.
  const picomatch = picomatchModule();
  try {
    // `**` with dot matches every path: a listing's default needs no regex per entry.
    matcher =
      normalized === '**' && options.dot === true
        ? () => true
        : // posix: true makes `[!a]` a negated class, as in sh; picomatch 4 reads it literally otherwise.
          picomatch(normalized, { dot: options.dot ?? false, nocase: options.nocase ?? false, strictSlashes: false, posix: true });
    ignoreMatcher = ignoreTest(typeof options.ignore === 'string' ? [options.ignore] : (options.ignore ?? []));
  } catch (err) {
    throw badPattern(pattern, (err as Error).message);
  }
  const limit = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const baseDepth = baseSegments.length;
  return {
    base,
    maxDepth: Math.min(patternDepth, Math.max(0, limit - baseDepth)),
    matches: (p) => matcher(p) && !(ignoreMatcher?.(p) ?? false),
    ignored: (p) => ignoreMatcher?.(p) ?? false,
  };
}

/**
 * The ignore list as one test. Patterns that name an entry at any depth
 * (`**\/node_modules`, the shape every ignore list of names takes) become a
 * set lookup on the last segment, where picomatch would run one regex per
 * pattern on every entry of a walk; the rest stay picomatch patterns.
 * Ignoring a directory also ignores everything below it, like .gitignore
 * (a walk does not enter it; a path below it is tested with its `/`).
 */
function ignoreTest(ignore: readonly string[]): ((p: string) => boolean) | undefined {
  const names = new Set<string>();
  const patterns: string[] = [];
  for (const pattern of ignore) {
    const name = pattern.startsWith('**/') ? pattern.slice(3) : undefined;
    if (name !== undefined && name !== '' && !name.includes('/') && !MAGIC.test(name) && !name.includes('\\')) names.add(name);
    else patterns.push(pattern);
  }
  const ig = patterns.length === 0 ? undefined : picomatchModule()(patterns, { dot: true, posix: true });
  if (names.size === 0 && ig === undefined) return undefined;
  return (p) => {
    if (names.size > 0 && names.has(p.slice(p.lastIndexOf('/') + 1))) return true;
    return ig !== undefined && (ig(p) || ig(`${p}/`));
  };
}

/**
 * Compiles several file filters ({@link compileFileFilter} rules) into one
 * predicate that is true when any matches. Name patterns (no `/`, or only a
 * leading `**\/` when `dot` is on, where the two mean the same) are joined
 * into a single regular expression over the file name, so a long list costs
 * about one match per path instead of one per pattern.
 *
 * @example
 * ```ts
 * const secret = compileFileFilters(['**\/*.pem', '.env', 'config/keys/**']);
 * secret('a/b/server.pem'); // true
 * ```
 */
export function compileFileFilters(patterns: readonly string[], dot = true): (relativePath: string) => boolean {
  const names: RegExp[] = [];
  const paths: Array<(relativePath: string) => boolean> = [];
  for (const pattern of patterns) {
    const name = dot && pattern.startsWith('**/') ? pattern.slice(3) : pattern;
    if (name.includes('/') || name === '') paths.push(compileFileFilter(pattern, dot));
    else {
      const picomatch = picomatchModule();
      try {
        names.push(picomatch.makeRe(name, { dot, posix: true }));
      } catch (err) {
        throw new FsError({ code: 'EBADPATTERN', op: 'grep', path: pattern, reason: (err as Error).message });
      }
    }
  }
  const byName =
    names.length === 0 ? undefined : new RegExp(names.map((r) => `(?:${r.source})`).join('|'), names.some((r) => r.flags.includes('i')) ? 'i' : '');
  if (byName === undefined && paths.length === 0) return () => false;
  return (p) => (byName?.test(p.slice(p.lastIndexOf('/') + 1)) ?? false) || paths.some((f) => f(p));
}

/**
 * Compiles a file filter the way ripgrep's `-g` works: a pattern without `/`
 * matches the file name at any depth; one with `/` matches the relative path.
 */
export function compileFileFilter(pattern: string, dot = true): (relativePath: string) => boolean {
  const picomatch = picomatchModule();
  try {
    if (!pattern.includes('/')) {
      const m = picomatch(pattern, { dot, posix: true });
      return (p) => m(p.slice(p.lastIndexOf('/') + 1));
    }
    const m = picomatch(pattern.replace(/^\.\//, ''), { dot, posix: true });
    return (p) => m(p);
  } catch (err) {
    throw new FsError({ code: 'EBADPATTERN', op: 'grep', path: pattern, reason: (err as Error).message });
  }
}
