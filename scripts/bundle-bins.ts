/**
 * Bundles the compiled bins, `ctxfs` (`packages/cli/dist/bin.js`) and
 * `ctxfs-mcp` (`packages/mcp/dist/bin.js`), each into its package's
 * `dist/bundle/`: an entry (`ctxfs.js`, `ctxfs-mcp.js`) and chunks split
 * where the program imports lazily. Each package's `bin` is that entry.
 *
 * Why: unbundled, a budgeted `ctxfs cat` loads 322 module files, and
 * resolving, reading and linking them took about 100 ms of its 240 — more
 * than the command's own work. Bundled it reads about twenty.
 *
 * What keeps a bundle the same program as the compiled bin:
 * - In ctxfs's own modules `import.meta.url` is rewritten to the URL of the
 *   compiled file it came from: found relative to the bundle (in the
 *   monorepo and in an install alike, `@ctxfs/cli` and `@ctxfs/core` are
 *   sibling directories as `packages/cli` and `packages/core` are here),
 *   then through any links to its real path, where its own dependencies
 *   are. Workers, lazily required libraries, the
 *   language tables and the package's version are thereby found where they
 *   always were.
 * - A third-party module that finds files beside itself, loads a native
 *   addon or requires an optional peer is not bundled ({@link EXTERNAL}): the
 *   bundle imports it by name. Each one a bundle imports is therefore a
 *   dependency of the bin's package too, and this script fails when the copy
 *   that package resolves is not the one the package using it resolves. It
 *   fails as well when a bundled third-party module uses `import.meta`,
 *   `__dirname`, `__filename` or `require.resolve`, which would point into
 *   the bundle.
 * - The entry imports nothing but `node:module`, so the bin's Node version
 *   check runs before anything an old Node cannot link.
 *
 * What makes a bundle start faster than its sources would: comments are
 * dropped (but licences and the annotations that mark pure calls) and
 * characters past ASCII are written as escapes. Node decodes each module's
 * source before compiling it, and with its compile cache that decoding is
 * most of what loading costs: a fifth less source, all of it one-byte text,
 * took about 10 ms off a budgeted `ctxfs cat`.
 *
 * And Node's own modules are taken with `process.getBuiltinModule` instead
 * of `import` in every chunk but the entry ({@link builtinsByCall}): an
 * `import` of a built-in builds its ES module face, which reads every export
 * and so runs the lazy ones — `node:fs` loads its promises API and readline
 * with it, `node:crypto` the Web Crypto API, `node:util` worker_threads,
 * `node:child_process` net and dgram — about 15 ms of a budgeted `ctxfs cat`
 * for modules it never calls.
 *
 * `node scripts/bundle-bins.ts` builds both; `--if-stale` builds a bin only
 * when a file its last bundle was made from has changed (what `pnpm build`
 * and the CLI's tests run, so a current bundle costs a few stats). Names of
 * packages (`cli`, `mcp`) limit it to those.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative, sep } from 'node:path';
import { build, type Plugin } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';

const PACKAGES = join(import.meta.dirname, '..', 'packages');

/** A bin to bundle: its package's directory under packages/, and the entry's file name in dist/bundle/. */
interface Bin {
  readonly pkg: string;
  readonly name: string;
}

const BINS: readonly Bin[] = [
  { pkg: 'cli', name: 'ctxfs.js' },
  { pkg: 'mcp', name: 'ctxfs-mcp.js' },
];

const outOf = (bin: Bin): string => join(PACKAGES, bin.pkg, 'dist', 'bundle');

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
      // From dist/bundle/<chunk>.js up to the packages' directory, then down to the compiled file, and
      // through the links to where that file really is: installs that link each package from a store of
      // its own (npm's linked strategy, pnpm without hoisting) keep a package's dependencies beside its
      // real directory, and `createRequire` of the linked path would look among the bin's instead.
      const sibling = `new URL(${JSON.stringify(`../../../${own}`)}, import.meta.url)`;
      const head = [
        "import { realpathSync as __ctxfsRealpath } from 'node:fs';",
        "import { fileURLToPath as __ctxfsToPath, pathToFileURL as __ctxfsToUrl } from 'node:url';",
        // A missing file (a broken install) keeps the linked path: the module's own error then names it.
        `const __ctxfsModuleUrl = (() => { const linked = ${sibling}; try { return __ctxfsToUrl(__ctxfsRealpath(__ctxfsToPath(linked))).href; } catch { return linked.href; } })();`,
      ].join('\n');
      return { code: `${head}\n${code.replaceAll('import.meta.url', '__ctxfsModuleUrl')}`, map: null };
    },
  };
}

interface AstNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
}
interface ImportNode extends AstNode {
  readonly source: { readonly value: string };
  readonly specifiers: ReadonlyArray<{
    readonly type: 'ImportSpecifier' | 'ImportDefaultSpecifier' | 'ImportNamespaceSpecifier';
    readonly local: { readonly name: string };
    readonly imported?: { readonly name?: string; readonly value?: string };
  }>;
}

/**
 * A chunk's static imports of Node's built-in modules as calls of
 * `process.getBuiltinModule`, which returns the module's own object and
 * builds no ES module face for it (see the module comment). The entry keeps
 * its import: the bin's version check must speak on a Node without
 * `getBuiltinModule`. The bindings differ in one way only, a hoisted
 * function of the chunk called before its body runs would find them unset,
 * and the CLI's and MCP server's tests run the bundles.
 */
/** Built-ins taken whole that load other modules and that a command seldom calls: loaded at their first use. */
const LAZY_WHOLE = new Set(['child_process']);

function builtinsByCall(): Plugin {
  return {
    name: 'ctxfs-builtins-by-call',
    renderChunk(code, chunk) {
      if (chunk.isEntry) return null;
      const body = (parseAst(code, { sourceType: 'module' }, chunk.fileName) as unknown as { body: AstNode[] }).body;
      const edits: Array<{ start: number; end: number; text: string }> = [];
      for (const node of body) {
        const source = (node as Partial<ImportNode>).source?.value;
        if (source === undefined || !isBuiltin(source)) continue;
        if (node.type !== 'ImportDeclaration') throw new Error(`bundle: ${chunk.fileName} re-exports ${source}; take it by getBuiltinModule by hand`);
        const imp = node as ImportNode;
        const call = `process.getBuiltinModule(${JSON.stringify(source.startsWith('node:') ? source : `node:${source}`)})`;
        const whole = imp.specifiers.find((x) => x.type !== 'ImportSpecifier')?.local.name;
        const named = imp.specifiers
          .filter((x) => x.type === 'ImportSpecifier')
          .map((x) => {
            const from = x.imported?.name ?? x.imported?.value ?? x.local.name;
            return from === x.local.name ? from : `${JSON.stringify(from)}: ${x.local.name}`;
          });
        const lines = [];
        // commander takes child_process whole for subcommands run as programs, which ctxfs has none of: loading it
        // (with net and dgram) waits for a first use that never comes.
        if (whole !== undefined && named.length === 0 && LAZY_WHOLE.has(source.replace(/^node:/, ''))) {
          lines.push(`const ${whole} = new Proxy({}, { get: (_, key) => Reflect.get(${call}, key) });`);
        } else if (whole !== undefined) lines.push(`const ${whole} = ${call};`);
        if (named.length > 0) lines.push(`const { ${named.join(', ')} } = ${whole ?? call};`);
        if (lines.length === 0) lines.push(`${call};`);
        edits.push({ start: imp.start, end: imp.end, text: lines.join(' ') });
      }
      if (edits.length === 0) return null;
      let out = code;
      for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
      return { code: out, map: null };
    },
  };
}

/** The realpath of `name` as a dependency of the package at `dir`, or undefined. */
function dependencyDir(dir: string, name: string): string | undefined {
  const at = join(dir, 'node_modules', ...name.split('/'));
  return existsSync(at) ? realpathSync(at) : undefined;
}

/** Problems with the externals a bundle of `bin` imports: each must be its package's dependency, the same copy its users resolve. */
function externalProblems(bin: Bin, imported: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const home = join(PACKAGES, bin.pkg);
  const packages = packageDirs(PACKAGES);
  for (const name of EXTERNAL.filter((n) => [...imported].some((id) => id === n || id.startsWith(`${n}/`)))) {
    const ours = dependencyDir(home, name);
    if (ours === undefined) {
      problems.push(`${name} is imported by the bundle but is not a dependency of @ctxfs/${bin.pkg}: add it, at the version the package using it has`);
      continue;
    }
    for (const dir of packages) {
      const theirs = dependencyDir(join(PACKAGES, dir), name);
      if (theirs !== undefined && theirs !== ours)
        problems.push(`${name}: @ctxfs/${bin.pkg} resolves ${ours}, packages/${dir} resolves ${theirs}; make the versions equal`);
    }
  }
  for (const id of imported) {
    if (!id.startsWith('node:') && !isExternal(id)) problems.push(`the bundle imports ${id}, which is neither bundled nor in EXTERNAL`);
  }
  return problems;
}

/** Each packages/<dir> holding a package.json. */
function packageDirs(dir: string): string[] {
  return readdirSync(dir).filter((name) => existsSync(join(dir, name, 'package.json')));
}

/** A digest of the files a bundle was built from, and of this script. */
function inputsDigest(files: readonly string[]): string {
  const h = createHash('sha256');
  for (const file of [...files, import.meta.filename].sort()) {
    const st = statSync(file, { throwIfNoEntry: false });
    h.update(`${file}\0${st?.size ?? -1}\0${st?.mtimeMs ?? -1}\n`);
  }
  return h.digest('hex');
}

function isStale(bin: Bin): boolean {
  const out = outOf(bin);
  const manifest = join(out, 'inputs.json');
  if (!existsSync(manifest) || !existsSync(join(out, bin.name))) return true;
  const { inputs, digest } = JSON.parse(readFileSync(manifest, 'utf8')) as { inputs: string[]; digest: string };
  return inputsDigest(inputs.map((f) => join(PACKAGES, f))) !== digest;
}

async function bundle(bin: Bin): Promise<void> {
  const entryFile = join(PACKAGES, bin.pkg, 'dist', 'bin.js');
  const out = outOf(bin);
  if (!existsSync(entryFile)) throw new Error(`bundle: ${relative(process.cwd(), entryFile)} is missing; run tsc -b first`);
  const inputs = new Set<string>();
  const foreign: string[] = [];
  const staging = `${out}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    input: entryFile,
    platform: 'node',
    external: isExternal,
    plugins: [locations(inputs, foreign), builtinsByCall()],
    logLevel: 'warn',
    output: {
      dir: staging,
      format: 'esm',
      entryFileNames: bin.name,
      chunkFileNames: '[name]-[hash].js',
      comments: { legal: true, annotation: true, jsdoc: false },
      charset: 'ascii',
    },
  });
  const fail = (message: string): never => {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`bundle of ${bin.pkg}: ${message}`);
  };
  if (foreign.length > 0) fail(`these third-party modules depend on where their file is; add their packages to EXTERNAL:\n  ${foreign.join('\n  ')}`);
  const chunks = result.output.filter((o) => o.type === 'chunk');
  const entry = chunks.find((c) => c.isEntry);
  if (entry === undefined || entry.imports.some((i) => i !== 'node:module')) {
    fail(`the entry must import only node:module, so that bin.ts's Node version check runs first; it imports ${entry?.imports.join(', ') ?? '?'}`);
  }
  const own = new Set(chunks.map((c) => c.fileName));
  const imported = new Set(chunks.flatMap((c) => [...c.imports, ...c.dynamicImports]).filter((id) => !own.has(id)));
  const problems = externalProblems(bin, imported);
  if (problems.length > 0) fail(problems.join('\n  '));
  const files = [...inputs];
  writeFileSync(join(staging, 'inputs.json'), `${JSON.stringify({ inputs: files.map((f) => relative(PACKAGES, f)), digest: inputsDigest(files) }, null, 1)}\n`);
  // Swapped in whole: a command started before the swap keeps the chunks it has loaded.
  const old = `${out}.${process.pid}.old`;
  if (existsSync(out)) renameSync(out, old);
  renameSync(staging, out);
  rmSync(old, { recursive: true, force: true });
}

const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ifStale = process.argv.includes('--if-stale');
for (const bin of BINS.filter((b) => only.length === 0 || only.includes(b.pkg))) {
  if (!ifStale || isStale(bin)) await bundle(bin);
}
