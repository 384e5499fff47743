/**
 * The POSIX scenario table: where the protocol mirrors the platform (delete,
 * mkdir, rename, copy, stat, exists, list and their errors), each expectation
 * is written once here and checked twice — against the backend under test by
 * the conformance sections, and against real `node:fs` in a temp directory
 * by `conformance/test/posix-oracle.test.ts`. The table therefore encodes
 * what Linux does, not what we guessed; the few rows where ctxfs deliberately
 * differs are marked `ctxfsOnly` with the reason.
 *
 * @module
 */

import type { CopyOptions, DeleteOptions, FileKind, MkdirOptions, RenameOptions } from '@ctxfs/core';

/**
 * A file tree: normalized path → file content, or `null` for a directory.
 * Parent directories of listed paths are implied.
 */
export type Tree = Readonly<Record<string, string | null>>;

/** The one operation a scenario applies. */
export type PosixOp =
  | { readonly op: 'delete'; readonly path: string; readonly options?: DeleteOptions }
  | { readonly op: 'mkdir'; readonly path: string; readonly options?: MkdirOptions }
  | { readonly op: 'rename'; readonly from: string; readonly to: string; readonly options?: RenameOptions }
  | { readonly op: 'copy'; readonly from: string; readonly to: string; readonly options?: CopyOptions }
  | { readonly op: 'stat'; readonly path: string }
  | { readonly op: 'exists'; readonly path: string }
  | { readonly op: 'list'; readonly path: string };

/** Which operation families there are. */
export type PosixOpName = PosixOp['op'];

/** What `stat` is compared on: kind always, size for files (directory sizes are platform noise). */
export interface StatShape {
  readonly kind: FileKind;
  readonly size?: number;
}

/**
 * An observed or expected outcome. Mutations always carry the resulting tree
 * (after an error too: a failed mutation must leave the tree as it was).
 * `list` entries are names, directories with a trailing `/`.
 */
export type Outcome =
  | { readonly error: string; readonly tree?: Tree }
  | { readonly tree: Tree }
  | { readonly stat: StatShape }
  | { readonly exists: boolean }
  | { readonly list: readonly string[] };

/** What a scenario row says should happen. */
export type Expectation =
  /** Fails with this code; a mutation leaves the initial tree. */
  | { readonly error: string }
  /** Succeeds; this is the whole resulting tree (implied parents added). */
  | { readonly tree: Tree }
  /** Succeeds and changes nothing. */
  | { readonly unchanged: true }
  | { readonly stat: StatShape }
  | { readonly exists: boolean }
  | { readonly list: readonly string[] };

/** One row of the table. */
export interface Scenario {
  /** Unique, readable test name. */
  readonly name: string;
  /** Initial tree. */
  readonly tree: Tree;
  readonly run: PosixOp;
  readonly expect: Expectation;
  /**
   * Set where ctxfs deliberately differs from the platform; the reason in one
   * line. Such rows run against backends but not against node:fs.
   */
  readonly ctxfsOnly?: string;
  /**
   * For a `ctxfsOnly` row: what node:fs does instead, so the oracle proves the
   * deviation is real and documents it.
   */
  readonly platform?: Expectation;
}

const D = null;

/** Base tree of most mutation rows. */
const T: Tree = { 'a.txt': 'A', 'b.txt': 'B', 'd/x.txt': 'X', 'd/sub/y.txt': 'Y', e: D };

/** `T` without some paths and with others added: keeps the rows short. */
function edit(base: Tree, remove: readonly string[], add: Tree = {}): Tree {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(base)) {
    if (!remove.some((r) => k === r || k.startsWith(`${r}/`))) out[k] = v;
  }
  return { ...out, ...add };
}

const DELETE: Scenario[] = [
  { name: 'delete a file', tree: T, run: { op: 'delete', path: 'a.txt' }, expect: { tree: edit(T, ['a.txt']) } },
  { name: 'delete a nested file leaves its directory', tree: T, run: { op: 'delete', path: 'd/x.txt' }, expect: { tree: edit(T, ['d/x.txt']) } },
  { name: 'delete an empty directory without recursive', tree: T, run: { op: 'delete', path: 'e' }, expect: { tree: edit(T, ['e']) } },
  { name: 'delete a non-empty directory without recursive is ENOTEMPTY', tree: T, run: { op: 'delete', path: 'd' }, expect: { error: 'ENOTEMPTY' } },
  {
    name: 'delete a non-empty directory with force but no recursive is ENOTEMPTY',
    tree: T,
    run: { op: 'delete', path: 'd', options: { force: true } },
    expect: { error: 'ENOTEMPTY' },
  },
  {
    name: 'delete a non-empty directory recursively',
    tree: T,
    run: { op: 'delete', path: 'd', options: { recursive: true } },
    expect: { tree: edit(T, ['d']) },
  },
  {
    name: 'delete a nested directory recursively leaves its parent',
    tree: T,
    run: { op: 'delete', path: 'd/sub', options: { recursive: true } },
    expect: { tree: edit(T, ['d/sub']) },
  },
  {
    name: 'delete a deep tree recursively',
    tree: { 'p/q/r/s/t.txt': 't', 'p/q/r/u': D, 'p/v.txt': 'v', keep: 'k' },
    run: { op: 'delete', path: 'p', options: { recursive: true } },
    expect: { tree: { keep: 'k' } },
  },
  {
    name: 'delete a tree of only empty directories recursively',
    tree: { 'p/q': D, 'p/r/s': D },
    run: { op: 'delete', path: 'p', options: { recursive: true } },
    expect: { tree: {} },
  },
  { name: 'delete a file with recursive', tree: T, run: { op: 'delete', path: 'a.txt', options: { recursive: true } }, expect: { tree: edit(T, ['a.txt']) } },
  { name: 'delete a file with force', tree: T, run: { op: 'delete', path: 'a.txt', options: { force: true } }, expect: { tree: edit(T, ['a.txt']) } },
  {
    name: 'delete an empty directory with recursive',
    tree: T,
    run: { op: 'delete', path: 'e', options: { recursive: true } },
    expect: { tree: edit(T, ['e']) },
  },
  { name: 'delete a missing path is ENOENT', tree: T, run: { op: 'delete', path: 'missing.txt' }, expect: { error: 'ENOENT' } },
  {
    name: 'delete a missing path recursively is ENOENT',
    tree: T,
    run: { op: 'delete', path: 'missing', options: { recursive: true } },
    expect: { error: 'ENOENT' },
  },
  {
    name: 'delete a missing path with force succeeds',
    tree: T,
    run: { op: 'delete', path: 'missing.txt', options: { force: true } },
    expect: { unchanged: true },
  },
  {
    name: 'delete a missing path with force and recursive succeeds',
    tree: T,
    run: { op: 'delete', path: 'missing', options: { force: true, recursive: true } },
    expect: { unchanged: true },
  },
  { name: 'delete under a missing parent is ENOENT', tree: T, run: { op: 'delete', path: 'no/such/file' }, expect: { error: 'ENOENT' } },
  {
    name: 'delete under a missing parent with force succeeds',
    tree: T,
    run: { op: 'delete', path: 'no/such/file', options: { force: true } },
    expect: { unchanged: true },
  },
  { name: 'delete file/child is ENOTDIR', tree: T, run: { op: 'delete', path: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'delete file/child recursively is ENOTDIR',
    tree: T,
    run: { op: 'delete', path: 'a.txt/child', options: { recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'delete file/child with force is still ENOTDIR (force forgives only a missing path)',
    tree: T,
    run: { op: 'delete', path: 'a.txt/child', options: { force: true } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'delete file/child with force and recursive is still ENOTDIR (force forgives only a missing path)',
    tree: T,
    run: { op: 'delete', path: 'a.txt/child', options: { force: true, recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'delete file/ (trailing slash) is ENOTDIR', tree: T, run: { op: 'delete', path: 'a.txt/' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'delete file/ recursively is ENOTDIR',
    tree: T,
    run: { op: 'delete', path: 'a.txt/', options: { recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'delete an empty dir/ with trailing slash', tree: T, run: { op: 'delete', path: 'e/' }, expect: { tree: edit(T, ['e']) } },
  {
    name: 'delete dir/ recursively with trailing slash',
    tree: T,
    run: { op: 'delete', path: 'd/', options: { recursive: true } },
    expect: { tree: edit(T, ['d']) },
  },
  { name: 'delete through a ./ segment', tree: T, run: { op: 'delete', path: 'd/./x.txt' }, expect: { tree: edit(T, ['d/x.txt']) } },
  { name: 'delete through a doubled slash', tree: T, run: { op: 'delete', path: 'd//x.txt' }, expect: { tree: edit(T, ['d/x.txt']) } },
  { name: 'delete is case-sensitive (A.txt is missing)', tree: T, run: { op: 'delete', path: 'A.txt' }, expect: { error: 'ENOENT' } },
  {
    name: 'delete removes only the exact name, not siblings sharing a prefix',
    tree: { 'a.txt': '1', 'a.txt.bak': '2', a: D, 'a-b/c': '3' },
    run: { op: 'delete', path: 'a', options: { recursive: true } },
    expect: { tree: { 'a.txt': '1', 'a.txt.bak': '2', 'a-b/c': '3' } },
  },
  {
    name: 'delete a name with spaces and unicode',
    tree: { 'my file é.txt': 'x', 'other.txt': 'y' },
    run: { op: 'delete', path: 'my file é.txt' },
    expect: { tree: { 'other.txt': 'y' } },
  },
  { name: 'delete missing/ is ENOENT', tree: T, run: { op: 'delete', path: 'missing/' }, expect: { error: 'ENOENT' } },
  { name: 'delete missing/ with force succeeds', tree: T, run: { op: 'delete', path: 'missing/', options: { force: true } }, expect: { unchanged: true } },
  {
    name: 'delete dir/. removes the directory',
    tree: T,
    run: { op: 'delete', path: 'e/.' },
    expect: { tree: edit(T, ['e']) },
    ctxfsOnly: '"." segments are normalized away before any I/O; rmdir("e/.") is EINVAL',
    platform: { error: 'EINVAL' },
  },
  {
    name: 'delete the root is EPERM',
    tree: T,
    run: { op: 'delete', path: '', options: { recursive: true } },
    expect: { error: 'EPERM' },
    ctxfsOnly: 'the workspace root is protected; the platform would remove the directory itself',
  },
  {
    name: 'delete "." is EPERM',
    tree: T,
    run: { op: 'delete', path: '.', options: { recursive: true, force: true } },
    expect: { error: 'EPERM' },
    ctxfsOnly: 'the workspace root is protected in every spelling',
  },
];

const MKDIR: Scenario[] = [
  { name: 'mkdir a new directory', tree: T, run: { op: 'mkdir', path: 'n' }, expect: { tree: { ...T, n: D } } },
  { name: 'mkdir inside an empty directory', tree: T, run: { op: 'mkdir', path: 'e/n' }, expect: { tree: { ...edit(T, ['e']), 'e/n': D } } },
  { name: 'mkdir inside a nested directory', tree: T, run: { op: 'mkdir', path: 'd/sub/n' }, expect: { tree: { ...T, 'd/sub/n': D } } },
  { name: 'mkdir an existing directory is EEXIST', tree: T, run: { op: 'mkdir', path: 'd' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir an existing empty directory is EEXIST', tree: T, run: { op: 'mkdir', path: 'e' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir over an existing file is EEXIST', tree: T, run: { op: 'mkdir', path: 'a.txt' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir file/ over an existing file is EEXIST', tree: T, run: { op: 'mkdir', path: 'a.txt/' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir with a missing parent is ENOENT', tree: T, run: { op: 'mkdir', path: 'm/n' }, expect: { error: 'ENOENT' } },
  { name: 'mkdir with missing ancestors is ENOENT', tree: T, run: { op: 'mkdir', path: 'm/n/o' }, expect: { error: 'ENOENT' } },
  { name: 'mkdir under a file is ENOTDIR', tree: T, run: { op: 'mkdir', path: 'a.txt/n' }, expect: { error: 'ENOTDIR' } },
  { name: 'mkdir under a nested file is ENOTDIR', tree: T, run: { op: 'mkdir', path: 'd/x.txt/n' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'mkdir with parents creates every ancestor',
    tree: T,
    run: { op: 'mkdir', path: 'm/n/o', options: { parents: true } },
    expect: { tree: { ...T, 'm/n/o': D } },
  },
  {
    name: 'mkdir with parents below an existing directory',
    tree: T,
    run: { op: 'mkdir', path: 'd/sub/m/n', options: { parents: true } },
    expect: { tree: { ...T, 'd/sub/m/n': D } },
  },
  {
    name: 'mkdir with parents on an existing directory succeeds',
    tree: T,
    run: { op: 'mkdir', path: 'd', options: { parents: true } },
    expect: { unchanged: true },
  },
  {
    name: 'mkdir with parents on an existing file is EEXIST',
    tree: T,
    run: { op: 'mkdir', path: 'a.txt', options: { parents: true } },
    expect: { error: 'EEXIST' },
  },
  {
    name: 'mkdir with parents under a file is ENOTDIR',
    tree: T,
    run: { op: 'mkdir', path: 'a.txt/n', options: { parents: true } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'mkdir with parents deep under a file is ENOTDIR',
    tree: T,
    run: { op: 'mkdir', path: 'd/x.txt/n/o', options: { parents: true } },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'mkdir dir/ with a trailing slash', tree: T, run: { op: 'mkdir', path: 'n/' }, expect: { tree: { ...T, n: D } } },
  { name: 'mkdir through a ./ segment', tree: T, run: { op: 'mkdir', path: 'd/./n' }, expect: { tree: { ...T, 'd/n': D } } },
  { name: 'mkdir is case-sensitive (D beside d)', tree: T, run: { op: 'mkdir', path: 'D' }, expect: { tree: { ...T, D: D } } },
  { name: 'mkdir a unicode name', tree: T, run: { op: 'mkdir', path: 'répertoire 🚀' }, expect: { tree: { ...T, 'répertoire 🚀': D } } },
  { name: 'mkdir a name that extends a file name (a.txt.d)', tree: T, run: { op: 'mkdir', path: 'a.txt.d' }, expect: { tree: { ...T, 'a.txt.d': D } } },
  { name: 'mkdir dir/ over an existing directory is EEXIST', tree: T, run: { op: 'mkdir', path: 'e/' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir with parents on dir/ succeeds', tree: T, run: { op: 'mkdir', path: 'd/sub/', options: { parents: true } }, expect: { unchanged: true } },
  { name: 'mkdir the root is EEXIST', tree: T, run: { op: 'mkdir', path: '' }, expect: { error: 'EEXIST' } },
  { name: 'mkdir the root with parents succeeds', tree: T, run: { op: 'mkdir', path: '.', options: { parents: true } }, expect: { unchanged: true } },
  {
    name: 'mkdir existOk on an existing directory succeeds',
    tree: T,
    run: { op: 'mkdir', path: 'd', options: { existOk: true } },
    expect: { unchanged: true },
    ctxfsOnly: 'existOk has no platform flag (mkdir(2) is always EEXIST)',
  },
  {
    name: 'mkdir existOk on an existing file is EEXIST',
    tree: T,
    run: { op: 'mkdir', path: 'a.txt', options: { existOk: true } },
    expect: { error: 'EEXIST' },
    ctxfsOnly: 'existOk has no platform flag; a file in the way still fails',
  },
  {
    name: 'mkdir existOk with a missing parent is still ENOENT',
    tree: T,
    run: { op: 'mkdir', path: 'm/n', options: { existOk: true } },
    expect: { error: 'ENOENT' },
    ctxfsOnly: 'existOk has no platform flag; it does not imply parents',
  },
];

const RENAME: Scenario[] = [
  { name: 'rename a file to a new name', tree: T, run: { op: 'rename', from: 'a.txt', to: 'c.txt' }, expect: { tree: edit(T, ['a.txt'], { 'c.txt': 'A' }) } },
  {
    name: 'rename a file over a file replaces it',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'b.txt' },
    expect: { tree: edit(T, ['a.txt', 'b.txt'], { 'b.txt': 'A' }) },
  },
  {
    name: 'rename a file over a file in another directory replaces it',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'd/x.txt' },
    expect: { tree: edit(T, ['a.txt', 'd/x.txt'], { 'd/x.txt': 'A' }) },
  },
  {
    name: 'rename a file into a directory',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'd/a.txt' },
    expect: { tree: edit(T, ['a.txt'], { 'd/a.txt': 'A' }) },
  },
  { name: 'rename a file onto an empty directory is EISDIR', tree: T, run: { op: 'rename', from: 'a.txt', to: 'e' }, expect: { error: 'EISDIR' } },
  { name: 'rename a file onto a non-empty directory is EISDIR', tree: T, run: { op: 'rename', from: 'a.txt', to: 'd' }, expect: { error: 'EISDIR' } },
  {
    name: 'rename a directory to a new name',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'f' },
    expect: { tree: edit(T, ['d'], { 'f/x.txt': 'X', 'f/sub/y.txt': 'Y' }) },
  },
  {
    name: 'rename a directory onto an empty directory replaces it',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'e' },
    expect: { tree: edit(T, ['d', 'e'], { 'e/x.txt': 'X', 'e/sub/y.txt': 'Y' }) },
  },
  { name: 'rename a directory onto a non-empty directory is ENOTEMPTY', tree: T, run: { op: 'rename', from: 'e', to: 'd' }, expect: { error: 'ENOTEMPTY' } },
  { name: 'rename a directory onto its non-empty parent is ENOTEMPTY', tree: T, run: { op: 'rename', from: 'd/sub', to: 'd' }, expect: { error: 'ENOTEMPTY' } },
  { name: 'rename a directory onto a file is ENOTDIR', tree: T, run: { op: 'rename', from: 'd', to: 'a.txt' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename an empty directory onto a file is ENOTDIR', tree: T, run: { op: 'rename', from: 'e', to: 'a.txt' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename a directory into itself is EINVAL', tree: T, run: { op: 'rename', from: 'd', to: 'd/n' }, expect: { error: 'EINVAL' } },
  { name: 'rename a directory into its own subdirectory is EINVAL', tree: T, run: { op: 'rename', from: 'd', to: 'd/sub/n' }, expect: { error: 'EINVAL' } },
  { name: 'rename a directory onto its own subdirectory is EINVAL', tree: T, run: { op: 'rename', from: 'd', to: 'd/sub' }, expect: { error: 'EINVAL' } },
  {
    name: 'rename a directory into a missing path below itself is ENOENT',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'd/m/n' },
    expect: { error: 'ENOENT' },
  },
  {
    name: 'rename a directory below a file inside itself is ENOTDIR',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'd/x.txt/n' },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'rename a missing source is ENOENT', tree: T, run: { op: 'rename', from: 'missing', to: 'n' }, expect: { error: 'ENOENT' } },
  {
    name: 'rename a missing source onto an existing file is ENOENT',
    tree: T,
    run: { op: 'rename', from: 'missing', to: 'a.txt' },
    expect: { error: 'ENOENT' },
  },
  {
    name: 'rename a missing source to file/child is ENOTDIR',
    tree: T,
    run: { op: 'rename', from: 'missing', to: 'a.txt/child' },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'rename a missing source to a missing parent is ENOENT', tree: T, run: { op: 'rename', from: 'missing', to: 'm/n' }, expect: { error: 'ENOENT' } },
  {
    name: 'rename under a missing source parent to file/child is ENOENT',
    tree: T,
    run: { op: 'rename', from: 'no/such', to: 'a.txt/child' },
    expect: { error: 'ENOENT' },
  },
  { name: 'rename from file/child to file/child is ENOTDIR', tree: T, run: { op: 'rename', from: 'a.txt/x', to: 'b.txt/y' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename to a missing parent is ENOENT', tree: T, run: { op: 'rename', from: 'a.txt', to: 'm/a.txt' }, expect: { error: 'ENOENT' } },
  { name: 'rename a directory to a missing parent is ENOENT', tree: T, run: { op: 'rename', from: 'd', to: 'm/n/d' }, expect: { error: 'ENOENT' } },
  { name: 'rename from file/child is ENOTDIR', tree: T, run: { op: 'rename', from: 'a.txt/child', to: 'n' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename to file/child is ENOTDIR', tree: T, run: { op: 'rename', from: 'b.txt', to: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename a directory to file/child is ENOTDIR', tree: T, run: { op: 'rename', from: 'e', to: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename from file/ is ENOTDIR', tree: T, run: { op: 'rename', from: 'a.txt/', to: 'c.txt' }, expect: { error: 'ENOTDIR' } },
  { name: 'rename a file to new/ is ENOTDIR', tree: T, run: { op: 'rename', from: 'a.txt', to: 'c/' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'rename a file to itself with a trailing slash is ENOTDIR',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'a.txt/' },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'rename a file to an existing dir/ is ENOTDIR', tree: T, run: { op: 'rename', from: 'a.txt', to: 'e/' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'rename a file under a missing parent with a trailing slash is ENOENT',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'm/n/' },
    expect: { error: 'ENOENT' },
  },
  { name: 'rename dir/ to a new name', tree: T, run: { op: 'rename', from: 'e/', to: 'f' }, expect: { tree: edit(T, ['e'], { f: D }) } },
  { name: 'rename a directory to new/', tree: T, run: { op: 'rename', from: 'e', to: 'f/' }, expect: { tree: edit(T, ['e'], { f: D }) } },
  {
    name: 'rename dir/ to dir/',
    tree: T,
    run: { op: 'rename', from: 'd/', to: 'f/' },
    expect: { tree: edit(T, ['d'], { 'f/x.txt': 'X', 'f/sub/y.txt': 'Y' }) },
  },
  { name: 'rename a file to itself is a no-op', tree: T, run: { op: 'rename', from: 'a.txt', to: 'a.txt' }, expect: { unchanged: true } },
  { name: 'rename a directory to itself is a no-op', tree: T, run: { op: 'rename', from: 'd', to: 'd' }, expect: { unchanged: true } },
  { name: 'rename a directory to itself/ is a no-op', tree: T, run: { op: 'rename', from: 'd', to: 'd/' }, expect: { unchanged: true } },
  {
    name: 'rename to itself through another spelling is a no-op',
    tree: T,
    run: { op: 'rename', from: 'd/./x.txt', to: 'd//x.txt' },
    expect: { unchanged: true },
  },
  {
    name: 'rename to a case variant makes a new name',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'A.txt' },
    expect: { tree: edit(T, ['a.txt'], { 'A.txt': 'A' }) },
  },
  {
    name: 'rename over a case variant replaces it',
    tree: { 'a.txt': 'lower', 'A.txt': 'upper' },
    run: { op: 'rename', from: 'a.txt', to: 'A.txt' },
    expect: { tree: { 'A.txt': 'lower' } },
  },
  {
    name: 'rename a directory to a case variant',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'D' },
    expect: { tree: edit(T, ['d'], { 'D/x.txt': 'X', 'D/sub/y.txt': 'Y' }) },
  },
  {
    name: 'rename a deep file to the root',
    tree: T,
    run: { op: 'rename', from: 'd/sub/y.txt', to: 'y.txt' },
    expect: { tree: edit(T, ['d/sub/y.txt'], { 'd/sub': D, 'y.txt': 'Y' }) },
  },
  {
    name: 'rename a file deep into another tree',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'd/sub/a.txt' },
    expect: { tree: edit(T, ['a.txt'], { 'd/sub/a.txt': 'A' }) },
  },
  {
    name: 'rename a nested directory up to the root',
    tree: T,
    run: { op: 'rename', from: 'd/sub', to: 'sub' },
    expect: { tree: edit(T, ['d/sub'], { 'sub/y.txt': 'Y' }) },
  },
  {
    name: 'rename a nested directory into another directory',
    tree: T,
    run: { op: 'rename', from: 'd/sub', to: 'e/sub' },
    expect: { tree: edit(T, ['d/sub', 'e'], { 'e/sub/y.txt': 'Y' }) },
  },
  {
    name: 'rename a directory down into a sibling',
    tree: T,
    run: { op: 'rename', from: 'e', to: 'd/sub/e' },
    expect: { tree: edit(T, ['e'], { 'd/sub/e': D }) },
  },
  {
    name: 'rename a nested directory to a sibling name',
    tree: T,
    run: { op: 'rename', from: 'd/sub', to: 'd/sub2' },
    expect: { tree: edit(T, ['d/sub'], { 'd/sub2/y.txt': 'Y' }) },
  },
  {
    name: 'rename a directory over an empty directory deep in another tree',
    tree: { 'p/q/r': D, 's/t.txt': 't' },
    run: { op: 'rename', from: 's', to: 'p/q/r' },
    expect: { tree: { 'p/q/r/t.txt': 't' } },
  },
  {
    name: 'rename a directory keeps empty subdirectories',
    tree: { 'p/q': D, 'p/r/s': D },
    run: { op: 'rename', from: 'p', to: 'z' },
    expect: { tree: { 'z/q': D, 'z/r/s': D } },
  },
  {
    name: 'rename a directory to a name that extends it (d → d.bak)',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'd.bak' },
    expect: { tree: edit(T, ['d'], { 'd.bak/x.txt': 'X', 'd.bak/sub/y.txt': 'Y' }) },
  },
  {
    name: 'rename a file to a unicode name with spaces',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'naïve café 🚀.txt' },
    expect: { tree: edit(T, ['a.txt'], { 'naïve café 🚀.txt': 'A' }) },
  },
  {
    name: 'rename with overwrite false onto an existing file is EEXIST',
    tree: T,
    run: { op: 'rename', from: 'a.txt', to: 'b.txt', options: { overwrite: false } },
    expect: { error: 'EEXIST' },
    ctxfsOnly: 'rename(2) always replaces; node:fs has no no-replace flag',
  },
  {
    name: 'rename with overwrite false onto an empty directory is EEXIST',
    tree: T,
    run: { op: 'rename', from: 'd', to: 'e', options: { overwrite: false } },
    expect: { error: 'EEXIST' },
    ctxfsOnly: 'rename(2) always replaces; node:fs has no no-replace flag',
  },
  {
    name: 'rename the root is EBUSY',
    tree: T,
    run: { op: 'rename', from: '', to: 'n' },
    expect: { error: 'EBUSY' },
    ctxfsOnly: 'the workspace root is protected (the platform would report EINVAL for moving into itself)',
    platform: { error: 'EINVAL' },
  },
  { name: 'rename onto "." is EBUSY', tree: { 'a.txt': 'A' }, run: { op: 'rename', from: 'a.txt', to: '.' }, expect: { error: 'EBUSY' } },
  {
    name: 'rename onto the root is EBUSY',
    tree: { 'a.txt': 'A' },
    run: { op: 'rename', from: 'a.txt', to: '' },
    expect: { error: 'EBUSY' },
    ctxfsOnly: 'the workspace root is protected in every spelling (the platform sees its own ancestor)',
    platform: { error: 'ENOTEMPTY' },
  },
  {
    name: 'rename a directory onto the root is EBUSY',
    tree: { 'p/q.txt': 'q' },
    run: { op: 'rename', from: 'p', to: './' },
    expect: { error: 'EBUSY' },
  },
];

const COPY: Scenario[] = [
  { name: 'copy a file to a new name', tree: T, run: { op: 'copy', from: 'a.txt', to: 'c.txt' }, expect: { tree: { ...T, 'c.txt': 'A' } } },
  { name: 'copy a file over a file replaces it', tree: T, run: { op: 'copy', from: 'a.txt', to: 'b.txt' }, expect: { tree: { ...T, 'b.txt': 'A' } } },
  { name: 'copy a file into a directory', tree: T, run: { op: 'copy', from: 'a.txt', to: 'd/a.txt' }, expect: { tree: { ...T, 'd/a.txt': 'A' } } },
  {
    name: 'copy a file creates missing parents',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'm/n/a.txt' },
    expect: { tree: { ...T, 'm/n/a.txt': 'A' } },
  },
  {
    name: 'copy a file with overwrite false onto an existing file is EEXIST',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'b.txt', options: { overwrite: false } },
    expect: { error: 'EEXIST' },
  },
  {
    name: 'copy a file with overwrite false to a new name',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'c.txt', options: { overwrite: false } },
    expect: { tree: { ...T, 'c.txt': 'A' } },
  },
  {
    name: 'copy a file with overwrite true replaces',
    tree: T,
    run: { op: 'copy', from: 'd/x.txt', to: 'a.txt', options: { overwrite: true } },
    expect: { tree: { ...T, 'a.txt': 'X' } },
  },
  { name: 'copy a file onto an empty directory is EISDIR', tree: T, run: { op: 'copy', from: 'a.txt', to: 'e' }, expect: { error: 'EISDIR' } },
  { name: 'copy a file onto a non-empty directory is EISDIR', tree: T, run: { op: 'copy', from: 'a.txt', to: 'd' }, expect: { error: 'EISDIR' } },
  { name: 'copy a file onto the root is EISDIR', tree: T, run: { op: 'copy', from: 'a.txt', to: '' }, expect: { error: 'EISDIR' } },
  { name: 'copy a directory without recursive is EISDIR', tree: T, run: { op: 'copy', from: 'd', to: 'f' }, expect: { error: 'EISDIR' } },
  { name: 'copy an empty directory without recursive is EISDIR', tree: T, run: { op: 'copy', from: 'e', to: 'f' }, expect: { error: 'EISDIR' } },
  {
    name: 'copy a directory recursively',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'f', options: { recursive: true } },
    expect: { tree: { ...T, 'f/x.txt': 'X', 'f/sub/y.txt': 'Y' } },
  },
  {
    name: 'copy an empty directory recursively',
    tree: T,
    run: { op: 'copy', from: 'e', to: 'f', options: { recursive: true } },
    expect: { tree: { ...T, f: D } },
  },
  {
    name: 'copy a directory recursively keeps empty subdirectories',
    tree: { 'p/q': D, 'p/r/s': D, 'p/t.txt': 't' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true } },
    expect: { tree: { 'p/q': D, 'p/r/s': D, 'p/t.txt': 't', 'z/q': D, 'z/r/s': D, 'z/t.txt': 't' } },
  },
  {
    name: 'copy a directory recursively creates missing parents',
    tree: T,
    run: { op: 'copy', from: 'd/sub', to: 'm/n/sub', options: { recursive: true } },
    expect: { tree: { ...T, 'm/n/sub/y.txt': 'Y' } },
  },
  {
    name: 'copy a directory onto an empty directory fills it',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'e', options: { recursive: true } },
    expect: { tree: { ...T, 'e/x.txt': 'X', 'e/sub/y.txt': 'Y' } },
  },
  {
    name: 'copy a directory onto a non-empty directory merges, replacing files',
    tree: { 'p/a.txt': 'new', 'p/q/b.txt': 'new', 'z/a.txt': 'old', 'z/keep.txt': 'keep', 'z/q/c.txt': 'c' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true } },
    expect: { tree: { 'p/a.txt': 'new', 'p/q/b.txt': 'new', 'z/a.txt': 'new', 'z/keep.txt': 'keep', 'z/q/b.txt': 'new', 'z/q/c.txt': 'c' } },
  },
  {
    name: 'copy a directory with overwrite false and a conflicting file is EEXIST',
    tree: { 'p/a.txt': 'new', 'z/a.txt': 'old' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true, overwrite: false } },
    expect: { error: 'EEXIST' },
  },
  {
    name: 'copy a directory with overwrite false onto an existing directory is EEXIST',
    tree: { 'p/a.txt': 'new', 'z/b.txt': 'old' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true, overwrite: false } },
    expect: { error: 'EEXIST' },
  },
  {
    name: 'copy a directory with overwrite false onto an empty directory is EEXIST',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'e', options: { recursive: true, overwrite: false } },
    expect: { error: 'EEXIST' },
  },
  {
    name: 'copy a directory with overwrite false to a new name',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'f', options: { recursive: true, overwrite: false } },
    expect: { tree: { ...T, 'f/x.txt': 'X', 'f/sub/y.txt': 'Y' } },
  },
  {
    name: 'copy a directory with overwrite false onto a file is ENOTDIR',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'a.txt', options: { recursive: true, overwrite: false } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'copy a file with overwrite false onto a directory is EISDIR',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'e', options: { overwrite: false } },
    expect: { error: 'EISDIR' },
  },
  {
    name: 'copy a file with overwrite false onto itself is EINVAL',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'a.txt', options: { overwrite: false } },
    expect: { error: 'EINVAL' },
  },
  {
    name: 'copy a directory where the destination has a file in place of a directory is ENOTDIR',
    tree: { 'p/q/b.txt': 'b', z: D, 'z/q': 'file' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'copy a directory where the destination has a directory in place of a file is EISDIR',
    tree: { 'p/q': 'file', 'z/q/b.txt': 'b' },
    run: { op: 'copy', from: 'p', to: 'z', options: { recursive: true } },
    expect: { error: 'EISDIR' },
  },
  {
    name: 'copy a directory onto a file is ENOTDIR',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'a.txt', options: { recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  {
    name: 'copy a directory into itself is EINVAL',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'd/n', options: { recursive: true } },
    expect: { error: 'EINVAL' },
  },
  {
    name: 'copy a directory onto its own subdirectory is EINVAL',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'd/sub', options: { recursive: true } },
    expect: { error: 'EINVAL' },
  },
  {
    name: 'copy the root into a subdirectory is EINVAL',
    tree: T,
    run: { op: 'copy', from: '', to: 'backup', options: { recursive: true } },
    expect: { error: 'EINVAL' },
  },
  { name: 'copy a file onto itself is EINVAL', tree: T, run: { op: 'copy', from: 'a.txt', to: 'a.txt' }, expect: { error: 'EINVAL' } },
  {
    name: 'copy a file onto itself through another spelling is EINVAL',
    tree: T,
    run: { op: 'copy', from: 'd/./x.txt', to: 'd//x.txt' },
    expect: { error: 'EINVAL' },
  },
  {
    name: 'copy a directory onto itself is EINVAL',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'd', options: { recursive: true } },
    expect: { error: 'EINVAL' },
  },
  { name: 'copy a file to an existing dir/ is EISDIR', tree: T, run: { op: 'copy', from: 'a.txt', to: 'e/' }, expect: { error: 'EISDIR' } },
  {
    name: 'copy a directory to an existing dir/ merges',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'e/', options: { recursive: true } },
    expect: { tree: { ...T, 'e/x.txt': 'X', 'e/sub/y.txt': 'Y' } },
  },
  { name: 'copy to file/child/grandchild is ENOTDIR', tree: T, run: { op: 'copy', from: 'b.txt', to: 'a.txt/m/n' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'copy a file to new/ is EISDIR (a file cannot be created as a directory)',
    tree: T,
    run: { op: 'copy', from: 'a.txt', to: 'n/' },
    expect: { error: 'EISDIR' },
  },
  { name: 'copy a file to file/ is ENOTDIR', tree: T, run: { op: 'copy', from: 'a.txt', to: 'b.txt/' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'copy a directory to file/ is ENOTDIR',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'b.txt/', options: { recursive: true } },
    expect: { error: 'ENOTDIR' },
  },
  { name: 'copy a missing source is ENOENT', tree: T, run: { op: 'copy', from: 'missing', to: 'n' }, expect: { error: 'ENOENT' } },
  {
    name: 'copy a missing source recursively is ENOENT',
    tree: T,
    run: { op: 'copy', from: 'missing', to: 'n', options: { recursive: true } },
    expect: { error: 'ENOENT' },
  },
  { name: 'copy from file/child is ENOTDIR', tree: T, run: { op: 'copy', from: 'a.txt/child', to: 'n' }, expect: { error: 'ENOTDIR' } },
  { name: 'copy to file/child is ENOTDIR', tree: T, run: { op: 'copy', from: 'b.txt', to: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  { name: 'copy from file/ is ENOTDIR', tree: T, run: { op: 'copy', from: 'a.txt/', to: 'c.txt' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'copy dir/ recursively',
    tree: T,
    run: { op: 'copy', from: 'd/', to: 'f', options: { recursive: true } },
    expect: { tree: { ...T, 'f/x.txt': 'X', 'f/sub/y.txt': 'Y' } },
  },
  { name: 'copy to a case variant makes a new file', tree: T, run: { op: 'copy', from: 'a.txt', to: 'A.txt' }, expect: { tree: { ...T, 'A.txt': 'A' } } },
  {
    name: 'copy a deep file to the root',
    tree: T,
    run: { op: 'copy', from: 'd/sub/y.txt', to: 'y.txt' },
    expect: { tree: { ...T, 'y.txt': 'Y' } },
  },
  {
    name: 'copy a nested directory up into its ancestor merges',
    tree: T,
    run: { op: 'copy', from: 'd/sub', to: 'd', options: { recursive: true } },
    expect: { tree: { ...T, 'd/y.txt': 'Y' } },
  },
  {
    name: 'copy a directory to a name that extends it (d → d.bak)',
    tree: T,
    run: { op: 'copy', from: 'd', to: 'd.bak', options: { recursive: true } },
    expect: { tree: { ...T, 'd.bak/x.txt': 'X', 'd.bak/sub/y.txt': 'Y' } },
  },
  {
    name: 'copy a file with a unicode name',
    tree: { 'é 🚀.txt': 'u' },
    run: { op: 'copy', from: 'é 🚀.txt', to: 'copie é.txt' },
    expect: { tree: { 'é 🚀.txt': 'u', 'copie é.txt': 'u' } },
  },
  {
    name: 'copy an empty file',
    tree: { 'zero.txt': '' },
    run: { op: 'copy', from: 'zero.txt', to: 'zero2.txt' },
    expect: { tree: { 'zero.txt': '', 'zero2.txt': '' } },
  },
];

const BASE_META: Tree = { 'a.txt': 'hello', 'empty.txt': '', 'd/x.txt': 'X', 'd/sub/y.txt': 'Y', e: D };

const STAT: Scenario[] = [
  { name: 'stat a file', tree: BASE_META, run: { op: 'stat', path: 'a.txt' }, expect: { stat: { kind: 'file', size: 5 } } },
  { name: 'stat an empty file', tree: BASE_META, run: { op: 'stat', path: 'empty.txt' }, expect: { stat: { kind: 'file', size: 0 } } },
  { name: 'stat a nested file', tree: BASE_META, run: { op: 'stat', path: 'd/sub/y.txt' }, expect: { stat: { kind: 'file', size: 1 } } },
  { name: 'stat a directory', tree: BASE_META, run: { op: 'stat', path: 'd' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat an empty directory', tree: BASE_META, run: { op: 'stat', path: 'e' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat dir/ with a trailing slash', tree: BASE_META, run: { op: 'stat', path: 'd/' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat the root as ""', tree: BASE_META, run: { op: 'stat', path: '' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat the root as "."', tree: BASE_META, run: { op: 'stat', path: '.' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat the root as "./"', tree: BASE_META, run: { op: 'stat', path: './' }, expect: { stat: { kind: 'directory' } } },
  { name: 'stat through ./ and // segments', tree: BASE_META, run: { op: 'stat', path: './d//sub/./y.txt' }, expect: { stat: { kind: 'file', size: 1 } } },
  { name: 'stat a missing path is ENOENT', tree: BASE_META, run: { op: 'stat', path: 'missing' }, expect: { error: 'ENOENT' } },
  { name: 'stat under a missing parent is ENOENT', tree: BASE_META, run: { op: 'stat', path: 'no/such/file' }, expect: { error: 'ENOENT' } },
  { name: 'stat missing/ is ENOENT', tree: BASE_META, run: { op: 'stat', path: 'missing/' }, expect: { error: 'ENOENT' } },
  { name: 'stat file/child is ENOTDIR', tree: BASE_META, run: { op: 'stat', path: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  { name: 'stat file/child/grandchild is ENOTDIR', tree: BASE_META, run: { op: 'stat', path: 'd/x.txt/c/g' }, expect: { error: 'ENOTDIR' } },
  { name: 'stat file/ is ENOTDIR', tree: BASE_META, run: { op: 'stat', path: 'a.txt/' }, expect: { error: 'ENOTDIR' } },
  {
    name: 'stat file/.. is the root',
    tree: BASE_META,
    run: { op: 'stat', path: 'a.txt/..' },
    expect: { stat: { kind: 'directory' } },
    ctxfsOnly: '".." is resolved lexically inside the root, never through the disk',
    platform: { error: 'ENOTDIR' },
  },
  { name: 'stat is case-sensitive', tree: BASE_META, run: { op: 'stat', path: 'A.txt' }, expect: { error: 'ENOENT' } },
];

const EXISTS: Scenario[] = [
  { name: 'exists: a file', tree: BASE_META, run: { op: 'exists', path: 'a.txt' }, expect: { exists: true } },
  { name: 'exists: an empty file', tree: BASE_META, run: { op: 'exists', path: 'empty.txt' }, expect: { exists: true } },
  { name: 'exists: a directory', tree: BASE_META, run: { op: 'exists', path: 'd/sub' }, expect: { exists: true } },
  { name: 'exists: dir/', tree: BASE_META, run: { op: 'exists', path: 'e/' }, expect: { exists: true } },
  { name: 'exists: the root', tree: BASE_META, run: { op: 'exists', path: '' }, expect: { exists: true } },
  { name: 'exists: "." is the root', tree: BASE_META, run: { op: 'exists', path: '.' }, expect: { exists: true } },
  { name: 'exists: a missing path is false', tree: BASE_META, run: { op: 'exists', path: 'missing' }, expect: { exists: false } },
  { name: 'exists: under a missing parent is false', tree: BASE_META, run: { op: 'exists', path: 'no/such' }, expect: { exists: false } },
  { name: 'exists: file/child is false', tree: BASE_META, run: { op: 'exists', path: 'a.txt/child' }, expect: { exists: false } },
  { name: 'exists: file/ is false', tree: BASE_META, run: { op: 'exists', path: 'a.txt/' }, expect: { exists: false } },
  {
    name: 'exists: missing/.. is the root',
    tree: BASE_META,
    run: { op: 'exists', path: 'missing/..' },
    expect: { exists: true },
    ctxfsOnly: '".." is resolved lexically inside the root, never through the disk',
    platform: { exists: false },
  },
  { name: 'exists: is case-sensitive', tree: BASE_META, run: { op: 'exists', path: 'D' }, expect: { exists: false } },
];

const LIST: Scenario[] = [
  { name: 'list the root as ""', tree: BASE_META, run: { op: 'list', path: '' }, expect: { list: ['a.txt', 'd/', 'e/', 'empty.txt'] } },
  { name: 'list the root as "."', tree: BASE_META, run: { op: 'list', path: '.' }, expect: { list: ['a.txt', 'd/', 'e/', 'empty.txt'] } },
  { name: 'list the root as "./"', tree: BASE_META, run: { op: 'list', path: './' }, expect: { list: ['a.txt', 'd/', 'e/', 'empty.txt'] } },
  { name: 'list a directory', tree: BASE_META, run: { op: 'list', path: 'd' }, expect: { list: ['sub/', 'x.txt'] } },
  { name: 'list dir/', tree: BASE_META, run: { op: 'list', path: 'd/' }, expect: { list: ['sub/', 'x.txt'] } },
  { name: 'list an empty directory', tree: BASE_META, run: { op: 'list', path: 'e' }, expect: { list: [] } },
  { name: 'list an empty root', tree: {}, run: { op: 'list', path: '' }, expect: { list: [] } },
  { name: 'list a file is ENOTDIR', tree: BASE_META, run: { op: 'list', path: 'a.txt' }, expect: { error: 'ENOTDIR' } },
  { name: 'list file/ is ENOTDIR', tree: BASE_META, run: { op: 'list', path: 'a.txt/' }, expect: { error: 'ENOTDIR' } },
  { name: 'list file/child is ENOTDIR', tree: BASE_META, run: { op: 'list', path: 'a.txt/child' }, expect: { error: 'ENOTDIR' } },
  { name: 'list a missing directory is ENOENT', tree: BASE_META, run: { op: 'list', path: 'missing' }, expect: { error: 'ENOENT' } },
  {
    name: 'list sorts by UTF-16 code unit (B < a < b)',
    tree: { b: 'b', a: 'a', B: 'B', _: '_', '1': '1', é: 'é' },
    run: { op: 'list', path: '' },
    expect: { list: ['1', 'B', '_', 'a', 'b', 'é'] },
  },
  {
    name: 'list keeps subdir and subdir.txt apart',
    tree: { 'subdir/inner.txt': 'i', 'subdir.txt': 's', 'subdir-x': D },
    run: { op: 'list', path: '' },
    expect: { list: ['subdir/', 'subdir-x/', 'subdir.txt'] },
  },
  {
    name: 'list shows dotfiles and odd names',
    tree: { '.hidden': 'h', 'with space.txt': 's', '#hash': 'h', '100%': 'p', 'dots...': 'd', '🚀.txt': 'r' },
    run: { op: 'list', path: '' },
    expect: { list: ['#hash', '.hidden', '100%', 'dots...', 'with space.txt', '🚀.txt'] },
  },
  {
    name: 'list keeps NFC and NFD names distinct',
    tree: { 'caf\u00e9.txt': 'nfc', 'cafe\u0301.txt': 'nfd' },
    run: { op: 'list', path: '' },
    expect: { list: ['cafe\u0301.txt', 'caf\u00e9.txt'] },
  },
];

/** Every scenario, in section order. */
export const SCENARIOS: readonly Scenario[] = [...DELETE, ...MKDIR, ...RENAME, ...COPY, ...STAT, ...EXISTS, ...LIST];

/** The scenarios of one operation family. */
export function scenariosFor(...ops: PosixOpName[]): Scenario[] {
  return SCENARIOS.filter((s) => ops.includes(s.run.op));
}

/** Whether an operation changes the tree (its outcome includes the tree). */
export function isMutation(op: PosixOpName): boolean {
  return op === 'delete' || op === 'mkdir' || op === 'rename' || op === 'copy';
}

/** A tree with every implied parent directory made explicit. */
export function expandTree(tree: Tree): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const path of Object.keys(tree)) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) out[parts.slice(0, i).join('/')] = null;
  }
  for (const [path, value] of Object.entries(tree)) out[path] = value;
  return out;
}

/** The outcome a scenario expects, in the shape the runners observe. */
export function expectedOutcome(s: Scenario): Outcome {
  const e = s.expect;
  const mutation = isMutation(s.run.op);
  if ('error' in e) return mutation ? { error: e.error, tree: expandTree(s.tree) } : { error: e.error };
  if ('unchanged' in e) return { tree: expandTree(s.tree) };
  if ('tree' in e) return { tree: expandTree(e.tree) };
  return e;
}

/** Splits a tree into the seed shape of `FixtureInit`. */
export function fixtureOf(tree: Tree): { files: Record<string, string>; dirs: string[] } {
  const files: Record<string, string> = {};
  const dirs: string[] = [];
  for (const [path, value] of Object.entries(tree)) {
    if (value === null) dirs.push(path);
    else files[path] = value;
  }
  return { files, dirs };
}
