/**
 * Manifests as the overview shows them: what a model needs to find its way
 * into a project — its name and purpose, its entry points, the commands it
 * runs — and how many dependencies it has, not their list. A package.json
 * is mostly keywords, dependency versions and tool settings; shown raw, it
 * spends a small profile's share of the overview on none of that.
 * package.json is JSON, pyproject.toml and Cargo.toml are TOML (smol-toml),
 * go.mod is Go's own line format.
 *
 * @module
 */

import { parse as parseToml } from 'smol-toml';

/** Longest value shown on one line; a longer one (a build script, a description) is cut. */
const MAX_VALUE = 160;
/** A command is recognised by its start; its long flag lists are for readFile. */
const MAX_COMMAND = 72;
/** Most entries listed of one kind (scripts, export subpaths, binaries). */
const MAX_ENTRIES = 16;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Table = { readonly [key: string]: unknown };

function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function clip(text: string, width = MAX_VALUE): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= width ? one : `${one.slice(0, width - 1)}…`;
}

function str(v: unknown, width = MAX_VALUE): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? clip(v, width) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

/** `key: value` lines of a table of strings, at most {@link MAX_ENTRIES}, under a heading. */
function entries(heading: string, table: unknown, arrow = ': ', width = MAX_VALUE): string[] {
  if (!isTable(table)) return [];
  const rows = Object.entries(table)
    .map(([k, v]) => [k, str(v, width) ?? (isTable(v) ? targets(v).join(', ') : undefined)] as const)
    .filter((r): r is readonly [string, string] => r[1] !== undefined && r[1] !== '');
  if (rows.length === 0) return [];
  const shown = rows.slice(0, MAX_ENTRIES).map(([k, v]) => `  ${k}${arrow}${v}`);
  if (rows.length > MAX_ENTRIES) shown.push(`  … ${rows.length - MAX_ENTRIES} more`);
  return [`${heading}:`, ...shown];
}

/** Every string inside a value (the files an `exports` condition tree points to), each once. */
function targets(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') {
    if (!out.includes(v)) out.push(v);
  } else if (Array.isArray(v)) for (const x of v) targets(x, out);
  else if (isTable(v)) for (const x of Object.values(v)) targets(x, out);
  return out;
}

/** Names of a dependency table, counted: `dependencies 5, devDependencies 30`. */
function counts(fields: ReadonlyArray<readonly [string, unknown]>): string | undefined {
  const parts = fields
    .map(([name, v]) => [name, isTable(v) ? Object.keys(v).length : Array.isArray(v) ? v.length : 0] as const)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${n}`);
  return parts.length === 0 ? undefined : `${parts.join(', ')} (counted; the file lists them)`;
}

function line(label: string, value: string | undefined): string[] {
  return value === undefined ? [] : [`${label}: ${value}`];
}

/** package.json: name, purpose, entry points (main, module, types, exports, bin), engines, workspaces, scripts. */
function packageJson(text: string): string[] | undefined {
  let pkg: Json;
  try {
    pkg = JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
  if (!isTable(pkg)) return undefined;
  const name = str(pkg.name);
  const out: string[] = [];
  const flags = [pkg.private === true ? 'private' : '', str(pkg.type) ? `type ${str(pkg.type)}` : ''].filter(Boolean);
  out.push(...line('name', name && `${name}${str(pkg.version) ? ` ${str(pkg.version)}` : ''}${flags.length ? ` (${flags.join(', ')})` : ''}`));
  out.push(...line('description', str(pkg.description)));
  for (const field of ['main', 'module', 'browser', 'types', 'typings']) out.push(...line(field, str(pkg[field])));
  const exp = pkg.exports;
  if (typeof exp === 'string') out.push(`exports: ${clip(exp)}`);
  else if (isTable(exp) || Array.isArray(exp)) {
    // Subpath keys start with "."; anything else is a condition of the package root.
    const subpaths = isTable(exp) && Object.keys(exp).some((k) => k.startsWith('.')) ? exp : { '.': exp };
    out.push(...entries('exports', Object.fromEntries(Object.entries(subpaths).map(([k, v]) => [k, targets(v).join(', ')])), ' → '));
  }
  const bin = pkg.bin;
  if (typeof bin === 'string') out.push(`bin: ${(name ?? 'bin').replace(/^@[^/]+\//, '')} → ${clip(bin)}`);
  else out.push(...entries('bin', bin, ' → '));
  if (isTable(pkg.engines))
    out.push(
      `engines: ${Object.entries(pkg.engines)
        .map(([k, v]) => `${k} ${str(v) ?? ''}`.trim())
        .join(', ')}`,
    );
  const ws = Array.isArray(pkg.workspaces) ? pkg.workspaces : isTable(pkg.workspaces) ? pkg.workspaces.packages : undefined;
  if (Array.isArray(ws)) out.push(`workspaces: ${clip(ws.filter((w) => typeof w === 'string').join(', '))}`);
  out.push(...line('packageManager', str(pkg.packageManager)));
  out.push(
    ...line(
      'dependencies',
      counts([
        ['dependencies', pkg.dependencies],
        ['devDependencies', pkg.devDependencies],
        ['peerDependencies', pkg.peerDependencies],
        ['optionalDependencies', pkg.optionalDependencies],
      ]),
    ),
  );
  // Last: the longest part, so a share too small for all of it still keeps everything above.
  out.push(...entries('scripts', pkg.scripts, ': ', MAX_COMMAND));
  return out;
}

/** pyproject.toml: [project] (PEP 621) or [tool.poetry]; build backend; scripts and entry points. */
function pyproject(text: string): string[] | undefined {
  const doc = parseToml(text) as Table;
  const project = isTable(doc.project) ? doc.project : undefined;
  const poetry = isTable(doc.tool) && isTable(doc.tool.poetry) ? doc.tool.poetry : undefined;
  const meta = project ?? poetry ?? {};
  const out: string[] = [];
  out.push(...line('name', str(meta.name) && `${str(meta.name)}${str(meta.version) ? ` ${str(meta.version)}` : ''}`));
  out.push(...line('description', str(meta.description)));
  out.push(...line('requires-python', str(project?.['requires-python'])));
  out.push(...line('readme', str(meta.readme)));
  const build = isTable(doc['build-system']) ? doc['build-system'] : undefined;
  out.push(...line('build backend', str(build?.['build-backend'])));
  out.push(...entries('scripts', meta.scripts, ' → '));
  out.push(...entries('gui-scripts', project?.['gui-scripts'], ' → '));
  const groups = project?.['entry-points'] ?? poetry?.plugins;
  if (isTable(groups)) for (const [group, table] of Object.entries(groups)) out.push(...entries(`entry points ${group}`, table, ' → '));
  // Where the code is: setuptools' package list and directory, or poetry's packages.
  const setuptools = isTable(doc.tool) && isTable(doc.tool.setuptools) ? doc.tool.setuptools : undefined;
  const packages = poetry?.packages ?? setuptools?.packages;
  const dirs = isTable(setuptools?.['package-dir']) ? Object.values(setuptools['package-dir']).filter((d) => typeof d === 'string' && d !== '') : [];
  if (Array.isArray(packages) || isTable(packages) || dirs.length > 0) {
    const names = Array.isArray(packages) ? packages.map((p) => (isTable(p) ? str(p.include) : str(p))).filter(Boolean) : [];
    out.push(`packages: ${clip(names.join(', ') || '(found by the build backend)')}${dirs.length > 0 ? ` in ${dirs.join(', ')}` : ''}`);
  }
  const optional = isTable(project?.['optional-dependencies']) ? project['optional-dependencies'] : undefined;
  out.push(
    ...line(
      'dependencies',
      counts([
        ['dependencies', project?.dependencies ?? poetry?.dependencies],
        ['dev-dependencies', poetry?.['dev-dependencies']],
        ...Object.entries(optional ?? {}).map(([extra, list]) => [`optional [${extra}]`, list] as const),
      ]),
    ),
  );
  return out;
}

/** Cargo.toml: [package], the library and binaries, workspace members, features by name. */
function cargoToml(text: string): string[] | undefined {
  const doc = parseToml(text) as Table;
  const pkg = isTable(doc.package) ? doc.package : undefined;
  const out: string[] = [];
  const version = str(pkg?.version);
  const edition = str(pkg?.edition);
  out.push(...line('package', str(pkg?.name) && `${str(pkg?.name)}${version ? ` ${version}` : ''}${edition ? ` (edition ${edition})` : ''}`));
  out.push(...line('description', str(pkg?.description)));
  if (isTable(doc.lib)) {
    const parts = [str(doc.lib.name), str(doc.lib.path), Array.isArray(doc.lib['crate-type']) ? `crate-type ${doc.lib['crate-type'].join(', ')}` : undefined];
    out.push(`lib: ${parts.filter(Boolean).join(', ') || 'src/lib.rs'}`);
  }
  if (Array.isArray(doc.bin)) {
    const bins = Object.fromEntries(doc.bin.filter(isTable).map((b, i) => [str(b.name) ?? `#${i + 1}`, str(b.path) ?? 'src/main.rs']));
    out.push(...entries('bin', bins, ' → '));
  }
  const workspace = isTable(doc.workspace) ? doc.workspace : undefined;
  if (Array.isArray(workspace?.members)) out.push(`workspace members: ${clip(workspace.members.join(', '))}`);
  if (isTable(doc.features)) out.push(`features: ${clip(Object.keys(doc.features).join(', '))}`);
  out.push(
    ...line(
      'dependencies',
      counts([
        ['dependencies', doc.dependencies],
        ['dev-dependencies', doc['dev-dependencies']],
        ['build-dependencies', doc['build-dependencies']],
        ['workspace dependencies', workspace?.dependencies],
      ]),
    ),
  );
  return out;
}

/** go.mod: the module path, Go version and toolchain; requirements counted (direct and indirect), replacements counted. */
function goMod(text: string): string[] | undefined {
  let module: string | undefined;
  let go: string | undefined;
  let toolchain: string | undefined;
  let direct = 0;
  let indirect = 0;
  let replace = 0;
  let block: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const comment = raw.indexOf('//');
    const l = (comment < 0 ? raw : raw.slice(0, comment)).trim();
    // `// indirect` after a requirement marks one the module does not import itself.
    const indirectMark =
      comment >= 0 &&
      raw
        .slice(comment + 2)
        .trim()
        .startsWith('indirect');
    if (l === '') continue;
    if (block !== undefined) {
      if (l === ')') block = undefined;
      else if (block === 'require') indirectMark ? indirect++ : direct++;
      else if (block === 'replace') replace++;
      continue;
    }
    const [word, ...rest] = l.split(/\s+/);
    const arg = rest.join(' ');
    if (arg === '(') block = word;
    else if (word === 'module') module = arg.replace(/^"|"$/g, '');
    else if (word === 'go') go = arg;
    else if (word === 'toolchain') toolchain = arg;
    else if (word === 'require') indirectMark ? indirect++ : direct++;
    else if (word === 'replace') replace++;
  }
  if (module === undefined) return undefined;
  const req = direct + indirect > 0 ? `require ${direct + indirect}${indirect > 0 ? ` (${indirect} indirect)` : ''}` : undefined;
  return [
    `module: ${module}`,
    ...line('go', go && `${go}${toolchain ? ` (toolchain ${toolchain})` : ''}`),
    ...line('dependencies', [req, replace > 0 ? `replace ${replace}` : undefined].filter(Boolean).join(', ') || undefined),
  ];
}

const RENDERERS: ReadonlyArray<readonly [RegExp, (text: string) => string[] | undefined]> = [
  [/(^|\/)package\.json$/i, packageJson],
  [/(^|\/)pyproject\.toml$/i, pyproject],
  [/(^|\/)cargo\.toml$/i, cargoToml],
  [/(^|\/)go\.mod$/i, goMod],
];

/** Whether the overview renders `path` as a manifest rather than showing its text. */
export function isManifest(path: string): boolean {
  return RENDERERS.some(([name]) => name.test(path));
}

/**
 * A manifest's key fields as lines of text, with a first line saying it is
 * a rendering; `undefined` for other files and for a manifest that does not
 * parse (the overview then shows its text as it is).
 *
 * @example
 * ```ts
 * renderManifest('package.json', '{"name":"a","main":"./i.js","devDependencies":{"x":"1"}}');
 * // '[key fields of package.json; readFile shows all of it]\nname: a\nmain: ./i.js\ndependencies: devDependencies 1 (counted; the file lists them)'
 * ```
 */
export function renderManifest(path: string, text: string): string | undefined {
  const render = RENDERERS.find(([name]) => name.test(path))?.[1];
  if (render === undefined) return undefined;
  let lines: string[] | undefined;
  try {
    lines = render(text);
  } catch {
    // Not valid TOML: shown as written, which is what a model would see reading it.
    return undefined;
  }
  if (lines === undefined || lines.length === 0) return undefined;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return [`[key fields of ${name}; readFile shows all of it]`, ...lines].join('\n');
}
