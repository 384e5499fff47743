/**
 * Bundles the compiled `ctxfs` (`dist/bin.js`, which `tsc -b` writes) into
 * `dist/bundle/`: an entry, `ctxfs.js`, and a few chunks split where the
 * CLI imports lazily. The package's `bin` is that entry.
 *
 * Why: unbundled, a budgeted `ctxfs cat` loads 322 module files, and
 * resolving, reading and linking them took about 100 ms of its 240 — more
 * than the command's own work. Bundled it loads about a dozen.
 *
 * What keeps the bundle the same program as `dist/bin.js`:
 * - In ctxfs's own modules `import.meta.url` is rewritten to the URL of the
 *   compiled file it came from (found relative to the bundle, so it holds in
 *   the monorepo and in an install alike, where `@ctxfs/cli` and
 *   `@ctxfs/core` are sibling directories as `packages/cli` and
 *   `packages/core` are here). Workers, lazily required libraries, the
 *   language tables and the package's version are thereby found where they
 *   always were.
 * - A third-party module that finds files beside itself, loads a native
 *   addon or requires an optional peer is not bundled ({@link EXTERNAL}): the
 *   bundle imports it by name. Each is therefore a dependency of
 *   `@ctxfs/cli` too, and this script fails when the copy the CLI resolves
 *   is not the one the package using it resolves. It fails as well when a
 *   bundled third-party module uses `import.meta`, `__dirname`,
 *   `__filename` or `require.resolve`, which would point into the bundle.
 * - The entry imports nothing but `node:module`, so Node's version check in
 *   `bin.ts` runs before anything an old Node cannot link.
 *
 * `node scripts/bundle.ts` builds; `--if-stale` builds only when a file the
 * last bundle was made from has changed (what `pnpm build` and the CLI's
 * tests run, so a current bundle costs a few stats).
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { build, type Plugin } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';

const CLI = join(import.meta.dirname, '..');
const PACKAGES = dirname(CLI);
const ENTRY = join(CLI, 'dist', 'bin.js');
const OUT = join(CLI, 'dist', 'bundle');
const MANIFEST = join(OUT, 'inputs.json');

/** Imported by name at run time, not bundled (see the module comment). */
const EXTERNAL = [
  // Locates its .wasm beside its own module.
  'web-tree-sitter',
  // pg requires the optional pg-native; ssh2 loads native addons when it can (cpu-features), and dockerode reaches it through docker-modem.
  'pg',
  'dockerode',
  'ssh2',
  // just-bash loads each command's module when first run: hundreds of chunks bundled.
  'just-bash',
];

const isExternal = (id: string): boolean => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`));

/** The compiled file of a ctxfs package a module id is, as `<dir>/dist/<file>`, else undefined. */
function ownFile(id: string): string | undefined {
  const rel = relative(PACKAGES, id);
  if (rel.startsWith('..') || rel.includes(`${sep}node_modules${sep}`)) return undefined;
  const [dir, dist] = rel.split(sep);
  if (dist !== 'dist') return undefined;
  const name = (JSON.parse(readFileSync(join(PACKAGES, dir as string, 'package.json'), 'utf8')) as { name: string }).name;
  // The rewrite assumes an install keeps the monorepo's sibling layout: @ctxfs/<dir>.
  if (name !== `@ctxfs/${dir}`) throw new Error(`bundle: packages/${dir} is named ${name}, not @ctxfs/${dir}`);
  return rel.split(sep).join('/');
}

const LOCATION_DEPENDENT = /\bimport\.meta\b|\b__dirname\b|\b__filename\b|\brequire\.resolve\b/;

/** Whether code (not its comments or strings) uses `import.meta`, `__dirname`, `__filename` or `require.resolve`. */
function usesLocation(code: string, id: string): boolean {
  if (!LOCATION_DEPENDENT.test(code)) return false;
  let found = false;
  const visit = (node: unknown): void => {
    if (found || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const child of node) visit(child);
      return;
    }
    const n = node as { type?: string; name?: string; meta?: { name?: string }; object?: { type?: string; name?: string }; property?: { name?: string } };
    if (
      (n.type === 'MetaProperty' && n.meta?.name === 'import') ||
      (n.type === 'Identifier' && (n.name === '__dirname' || n.name === '__filename')) ||
      (n.type === 'MemberExpression' && n.object?.type === 'Identifier' && n.object.name === 'require' && n.property?.name === 'resolve')
    ) {
      found = true;
      return;
    }
    for (const value of Object.values(node)) if (value !== null && typeof value === 'object') visit(value);
  };
  visit(parseAst(code, { sourceType: 'unambiguous' }, id));
  return found;
}

function locations(inputs: Set<string>, foreign: string[]): Plugin {
  return {
    name: 'ctxfs-module-locations',
    transform(code, id) {
      if (id.startsWith('\0')) return null;
      inputs.add(id);
      const own = ownFile(id);
      if (own === undefined) {
        if (usesLocation(code, id)) foreign.push(id);
        return null;
      }
      if (!code.includes('import.meta.url')) return null;
      // From dist/bundle/<chunk>.js up to the packages' directory, then down to the compiled file.
      const url = `new URL(${JSON.stringify(`../../../${own}`)}, import.meta.url).href`;
      return { code: code.replaceAll('import.meta.url', url), map: null };
    },
  };
}

/** The realpath of `name` as a dependency of the package at `dir`, or undefined. */
function dependencyDir(dir: string, name: string): string | undefined {
  const at = join(dir, 'node_modules', ...name.split('/'));
  return existsSync(at) ? realpathSync(at) : undefined;
}

function checkExternals(): void {
  const problems: string[] = [];
  for (const name of EXTERNAL) {
    const ours = dependencyDir(CLI, name);
    if (ours === undefined) {
      problems.push(`${name} is imported by the bundle but is not a dependency of @ctxfs/cli: add it, at the version the package using it has`);
      continue;
    }
    for (const dir of readdirNames(PACKAGES)) {
      const theirs = dependencyDir(join(PACKAGES, dir), name);
      if (theirs !== undefined && theirs !== ours)
        problems.push(`${name}: @ctxfs/cli resolves ${ours}, packages/${dir} resolves ${theirs}; make the versions equal`);
    }
  }
  if (problems.length > 0) throw new Error(`bundle:\n  ${problems.join('\n  ')}`);
}

/** Each packages/<dir> holding a package.json. */
function readdirNames(dir: string): string[] {
  return readdirSync(dir).filter((name) => existsSync(join(dir, name, 'package.json')));
}

/** A digest of the files the bundle at OUT was built from, and of this script. */
function inputsDigest(files: readonly string[]): string {
  const h = createHash('sha256');
  for (const file of [...files, import.meta.filename].sort()) {
    const st = statSync(file, { throwIfNoEntry: false });
    h.update(`${file}\0${st?.size ?? -1}\0${st?.mtimeMs ?? -1}\n`);
  }
  return h.digest('hex');
}

function isStale(): boolean {
  if (!existsSync(MANIFEST) || !existsSync(join(OUT, 'ctxfs.js'))) return true;
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as { inputs: string[]; digest: string };
  return inputsDigest(manifest.inputs.map((f) => join(PACKAGES, f))) !== manifest.digest;
}

async function bundle(): Promise<void> {
  if (!existsSync(ENTRY)) throw new Error(`bundle: ${relative(process.cwd(), ENTRY)} is missing; run tsc -b first`);
  checkExternals();
  const inputs = new Set<string>();
  const foreign: string[] = [];
  const staging = `${OUT}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    input: ENTRY,
    platform: 'node',
    external: isExternal,
    plugins: [locations(inputs, foreign)],
    logLevel: 'warn',
    output: { dir: staging, format: 'esm', entryFileNames: 'ctxfs.js', chunkFileNames: '[name]-[hash].js' },
  });
  if (foreign.length > 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`bundle: these third-party modules depend on where their file is; add their packages to EXTERNAL:\n  ${foreign.join('\n  ')}`);
  }
  const entry = result.output.find((o) => o.type === 'chunk' && o.isEntry);
  if (entry === undefined || entry.type !== 'chunk' || entry.imports.some((i) => i !== 'node:module')) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `bundle: the entry must import only node:module, so that bin.ts's Node version check runs first; it imports ${entry?.type === 'chunk' ? entry.imports.join(', ') : '?'}`,
    );
  }
  const files = [...inputs];
  const rel = files.map((f) => relative(PACKAGES, f));
  writeFileSync(join(staging, 'inputs.json'), `${JSON.stringify({ inputs: rel, digest: inputsDigest(files) }, null, 1)}\n`);
  // Swapped in whole: a command started before the swap keeps the chunks it has loaded.
  const old = `${OUT}.${process.pid}.old`;
  if (existsSync(OUT)) renameSync(OUT, old);
  renameSync(staging, OUT);
  rmSync(old, { recursive: true, force: true });
}

if (!process.argv.includes('--if-stale') || isStale()) await bundle();
