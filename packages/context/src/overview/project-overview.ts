/**
 * The startup overview a model gets before anything else: the file tree
 * collapsed to fit, the entrypoint documents (AGENTS.md, README.md, ...) each
 * cut to its share, the tools, and the rule that the repository is not in
 * context. Deterministic for a given tree and within budget by the
 * tokenizer's count.
 *
 * @module
 */

import { fsError, isFsError } from '@ctxfs/core';
import { API_CALL_STYLE, callShape, callText } from '../calls/call-text.ts';
import type { FileRecord } from '../registry/file-registry.ts';
import type { Workspace } from '../retrieval/shared.ts';
import { CONTENT_RULE, wrapContent } from '../safety/delimiters.ts';
import { currentCall } from '../safety/safety-layer.ts';
import { proseOf } from './document-prose.ts';
import { resolveEntrypoints } from './entry-documents.ts';
import { renderManifest } from './manifest.ts';

/** A tool as the overview lists it. */
export interface ToolDescription {
  readonly name: string;
  readonly signature: string;
  readonly description: string;
}

/** The read-side tools, as a model should call them. */
export const DEFAULT_TOOLS: readonly ToolDescription[] = [
  { name: 'findSymbol', signature: 'findSymbol(query, {kind, limit})', description: 'where a function/class/type is defined' },
  { name: 'grep', signature: 'grep(pattern, {path, glob, literal, contextLines, output, limit})', description: 'matching lines; output "files"|"count"' },
  { name: 'glob', signature: 'glob(pattern, {cwd, limit})', description: 'files matching a glob' },
  { name: 'listFiles', signature: 'listFiles(path, {glob, depth, limit})', description: 'files with size, language, tags' },
  { name: 'getOutline', signature: 'getOutline(path)', description: 'symbols with line ranges' },
  { name: 'getSymbol', signature: 'getSymbol(path, name)', description: 'one definition (or Markdown section)' },
  { name: 'readLines', signature: 'readLines(path, start, end, {context})', description: 'numbered lines' },
  { name: 'getExcerpt', signature: 'getExcerpt(path, maxLines)', description: 'the first lines' },
  { name: 'readFile', signature: 'readFile(path, {maxTokens, strategy})', description: 'a whole file if it fits; strategy start|end|middle cuts it' },
  { name: 'summarize', signature: 'summarize(path)', description: 'purpose, symbols, imports, size' },
  { name: 'getRelatedFiles', signature: 'getRelatedFiles(path, depth)', description: 'imports and importers' },
];

/** Options of {@link buildOverview}. */
export interface OverviewOptions {
  /** Total token budget. */
  budgetTokens: number;
  /** Entrypoint documents in priority order (those that exist are shown). */
  entrypoints: readonly string[];
  tools?: readonly ToolDescription[];
  /** Share of the budget left after the fixed parts that goes to the tree; default 0.35. */
  treeShare?: number;
  /** Profile name, for the header. */
  profileName?: string;
  perCallTokens?: number;
}

/** One entrypoint document as shown. */
export interface OverviewDocument {
  readonly path: string;
  readonly version: string;
  readonly tokens: number;
  readonly totalTokens: number;
  readonly truncated: boolean;
}

/** The overview and what went into it. */
export interface Overview {
  readonly text: string;
  readonly tokens: number;
  readonly budgetTokens: number;
  readonly files: number;
  readonly directories: number;
  readonly documents: readonly OverviewDocument[];
  /** Directories shown expanded in the tree. */
  readonly expanded: number;
}

interface DirNode {
  readonly name: string;
  readonly path: string;
  readonly dirs: Map<string, DirNode>;
  readonly files: FileRecord[];
  total: number;
  /** The entry documents the overview shows (flagged in the tree whatever the registry's flag says). */
  readonly entries: ReadonlySet<string>;
}

function buildTree(records: readonly FileRecord[], entries: ReadonlySet<string>): { root: DirNode; directories: number } {
  const root: DirNode = { name: '', path: '', dirs: new Map(), files: [], total: 0, entries };
  let directories = 0;
  for (const r of records) {
    const parts = r.path.split('/');
    let node = root;
    node.total++;
    for (let i = 0; i < parts.length - 1; i++) {
      const name = parts[i] as string;
      let child = node.dirs.get(name);
      if (!child) {
        child = { name, path: node.path ? `${node.path}/${name}` : name, dirs: new Map(), files: [], total: 0, entries };
        node.dirs.set(name, child);
        directories++;
      }
      child.total++;
      node = child;
    }
    node.files.push(r);
  }
  return { root, directories };
}

const MAX_FILES_SHOWN = 12;
const MAX_DIRS_SHOWN = 24;
const KEY_FILE =
  /^(README|AGENTS|CLAUDE|ARCHITECTURE|CONTRIBUTING)(\..*)?$|^(package\.json|pyproject\.toml|Cargo\.toml|go\.mod|pom\.xml|build\.gradle|Makefile|Dockerfile|tsconfig\.json)$|^(index|main|mod|lib|app|__init__|__main__)\.[a-z]+$/i;

function byName<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

interface Level {
  /** Directories shown, sorted by name. */
  readonly dirs: readonly DirNode[];
  /** Lines after the directories: the hidden-directory count, files, the more-files count. */
  readonly tail: readonly string[];
}

/** One directory's own entries (children collapsed), capped for very large directories. */
function levelOf(node: DirNode): Level {
  let dirs = [...node.dirs.values()];
  const tail: string[] = [];
  if (dirs.length > MAX_DIRS_SHOWN) {
    const kept = [...dirs].sort((a, b) => b.total - a.total || byName(a, b)).slice(0, MAX_DIRS_SHOWN);
    const keep = new Set(kept);
    const hidden = dirs.filter((d) => !keep.has(d));
    dirs = kept;
    tail.push(
      `… ${plural(hidden.length, 'more directory').replace('directorys', 'directories')} (${plural(
        hidden.reduce((a, d) => a + d.total, 0),
        'file',
      )})`,
    );
  }
  dirs.sort(byName);
  const files = [...node.files].sort(byName);
  let shown = files;
  if (files.length > MAX_FILES_SHOWN) {
    const key = files.filter((f) => KEY_FILE.test(f.path.slice(f.path.lastIndexOf('/') + 1)) || f.entrypoint || node.entries.has(f.path));
    const keySet = new Set(key);
    const rest = files.filter((f) => !keySet.has(f));
    shown = [...key, ...rest].slice(0, MAX_FILES_SHOWN).sort(byName);
  }
  for (const f of shown) {
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    const flags = [f.entrypoint || node.entries.has(f.path) ? 'entrypoint' : '', f.sensitive ? 'sensitive' : '', f.generated ? 'generated' : ''].filter(
      Boolean,
    );
    tail.push(`${name}${flags.length ? ` [${flags.join(', ')}]` : ''}`);
  }
  if (shown.length < files.length) tail.push(`… ${plural(files.length - shown.length, 'more file')}`);
  return { dirs, tail };
}

function dirLine(d: DirNode): string {
  return `${d.name}/ (${plural(d.total, 'file')})`;
}

/** Lines of the tree for a given set of expanded directories. */
function renderTree(root: DirNode, expanded: ReadonlySet<string>, levels: Map<DirNode, Level>): string[] {
  const out: string[] = [];
  const visit = (node: DirNode, indent: string) => {
    let level = levels.get(node);
    if (!level) {
      level = levelOf(node);
      levels.set(node, level);
    }
    for (const d of level.dirs) {
      out.push(indent + dirLine(d));
      if (expanded.has(d.path)) visit(d, `${indent}  `);
    }
    for (const l of level.tail) out.push(indent + l);
  };
  visit(root, '');
  return out;
}

function treeWithin(ws: Workspace, root: DirNode, budget: number): { lines: string[]; expanded: number } {
  const expanded = new Set<string>();
  const levels = new Map<DirNode, Level>();
  const level = (node: DirNode) => {
    let l = levels.get(node);
    if (!l) {
      l = levelOf(node);
      levels.set(node, l);
    }
    return l;
  };
  const memo = new Map<string, number>();
  const tokens = (line: string) => {
    let c = memo.get(line);
    if (c === undefined) {
      c = ws.tokenizer.count(`${line}\n`);
      memo.set(line, c);
    }
    return c;
  };
  // What expanding a directory adds: its own level, indented; costs are additive.
  const cost = (node: DirNode, indent: string) => {
    const l = level(node);
    let t = 0;
    for (const d of l.dirs) t += tokens(indent + dirLine(d));
    for (const x of l.tail) t += tokens(indent + x);
    return t;
  };
  let used = cost(root, '');
  if (used > budget) {
    // Even the top level does not fit: keep what does.
    const lines = renderTree(root, expanded, levels);
    const kept: string[] = [];
    let t = 0;
    for (const l of lines) {
      const c = tokens(l);
      if (t + c > budget - 12) break;
      t += c;
      kept.push(l);
    }
    if (kept.length < lines.length) kept.push(`… ${lines.length - kept.length} more entries`);
    return { lines: kept, expanded: 0 };
  }
  // Breadth first: every directory of one level before any of the next, so the
  // shape of the whole repository shows before the detail of one corner.
  let frontier = level(root).dirs.map((d) => ({ d, indent: '  ' }));
  while (frontier.length > 0) {
    const next: Array<{ d: DirNode; indent: string }> = [];
    for (const { d, indent } of frontier) {
      const c = cost(d, indent);
      if (used + c > budget) continue;
      used += c;
      expanded.add(d.path);
      for (const child of level(d).dirs) next.push({ d: child, indent: `${indent}  ` });
    }
    frontier = next;
  }
  return { lines: renderTree(root, expanded, levels), expanded: expanded.size };
}

/**
 * The line of `source` where reading on from `shown` starts: `shown` is the
 * first lines of its prose (markup stripped, so lines can differ), each
 * found in order within the lines that follow the one before it.
 *
 * @example
 * ```ts
 * lineAfter('<p><img></p>\n\n# Acme\nIntro.\nMore.', '# Acme\nIntro.'); // 5
 * ```
 */
function lineAfter(source: string, shown: string): number {
  const lines = source.split('\n');
  let at = 0;
  for (const kept of shown.split('\n')) {
    const text = kept.trim();
    if (text === '') continue;
    // A line the redactor or the markup stripping changed is not found: the next one is looked for from the same place.
    for (let i = at; i < Math.min(lines.length, at + 200); i++) {
      if ((lines[i] as string).includes(text)) {
        at = i + 1;
        break;
      }
    }
  }
  return Math.min(at + 1, Math.max(1, lines.length));
}

/**
 * A default tool's line: its API signature, or — when the active call style
 * writes calls another way (a tool set's names) — the tool as that style
 * names it, since the model calls it there.
 */
function defaultSignature(t: ToolDescription): string {
  return callText(t.name, []) === API_CALL_STYLE.format(t.name, [], {}) ? t.signature : callShape(t.name);
}

function cutDocument(ws: Workspace, text: string, budget: number): { text: string; truncated: boolean } {
  if (ws.tokenizer.count(text) <= budget) return { text, truncated: false };
  const lines = text.split('\n');
  const kept: string[] = [];
  let used = 0;
  for (const l of lines) {
    const t = ws.tokenizer.count(`${l}\n`);
    if (used + t > budget) break;
    used += t;
    kept.push(l);
  }
  if (kept.length === 0 && lines[0]) {
    const ids = ws.tokenizer.encode(lines[0]).slice(0, Math.max(0, budget));
    kept.push(ws.tokenizer.decode(ids));
  }
  return { text: kept.join('\n'), truncated: true };
}

/** Tokens of the first lines of the tree's top level: the least of the files an overview should show. */
function topLevelTokens(ws: Workspace, root: DirNode): number {
  const level = levelOf(root);
  const lines = [...level.dirs.map(dirLine), ...level.tail].slice(0, 3);
  return lines.length === 0 ? 0 : ws.tokenizer.count(lines.join('\n'));
}

/**
 * The tool section that fits the budget with room for the top of the tree:
 * each tool with its signature and description, else their names, else
 * how many there are (a model has their definitions besides); and the
 * tokens of the parts that do not shrink. `EINVAL` when not even the
 * header and the count fit, naming the smallest budget that does.
 */
function toolsWithin(
  ws: Workspace,
  header: string,
  tools: readonly ToolDescription[],
  defaults: boolean,
  budget: number,
  tree: number,
): { toolText: string; fixed: number } {
  const tiers = [
    ['## Tools', ...tools.map((t) => `- ${defaults ? defaultSignature(t) : t.signature}: ${t.description}`)].join('\n'),
    `## Tools\n${tools.map((t) => (defaults ? callShape(t.name) : t.name)).join(', ')}`,
    `## Tools\n${plural(tools.length, 'tool')}; your tool definitions list them with their arguments.`,
  ];
  const fixedOf = (toolText: string) => ws.tokenizer.count(`${header}\n\n${toolText}\n\n## Files\n\n## Key documents\n`) + 8;
  const sized = tiers.map((toolText) => ({ toolText, fixed: fixedOf(toolText) }));
  const fits = sized.find((t) => t.fixed + tree <= budget) ?? sized.find((t) => t.fixed <= budget);
  if (fits !== undefined) return fits;
  const least = Math.min(...sized.map((t) => t.fixed));
  throw fsError('EINVAL', 'overview', undefined, {
    reason: `a budget of ${budget} tokens cannot hold the overview's header and tools (${least} tokens at the least)`,
    hint: `ask for at least ${least} tokens, or leave the budget out for the profile's overview budget`,
  });
}

/**
 * Builds the overview from the registry (scan first).
 *
 * @example
 * ```ts
 * const o = await buildOverview(ws, { budgetTokens: 1500, entrypoints: DEFAULT_ENTRYPOINTS });
 * o.tokens <= 1500; // always
 * ```
 */
export async function buildOverview(ws: Workspace, options: OverviewOptions): Promise<Overview> {
  const budget = options.budgetTokens;
  // What the policy keeps from this caller is neither named nor counted, as listFiles and glob leave it out.
  const withheld = currentCall()?.withheld ?? (() => false);
  const records = ws.registry.list().filter((r) => !withheld(r.path));
  const entries = resolveEntrypoints(
    records.map((r) => r.path),
    options.entrypoints,
  );
  const { root, directories } = buildTree(records, new Set(entries));
  const tools = options.tools ?? DEFAULT_TOOLS;
  const header = [
    '# Workspace overview',
    `${plural(records.length, 'file')} in ${plural(directories, 'directory').replace('directorys', 'directories')}${options.profileName ? `; profile ${options.profileName}, at most ${options.perCallTokens} tokens per call` : ''}.`,
    'The repository is NOT in your context: only what this overview shows is. Do not assume the content of any other file — request files, symbols or line ranges with the tools below, as narrowly as the task allows.',
    CONTENT_RULE,
  ].join('\n');
  const { toolText, fixed } = toolsWithin(ws, header, tools, options.tools === undefined, budget, topLevelTokens(ws, root));
  const available = Math.max(0, budget - fixed);

  // Entrypoints that exist, in priority order, whatever the case of their names.
  const docs: Array<{ path: string; text: string; source: string; version: string; total: number; view: string }> = [];
  for (const path of entries) {
    const rec = ws.registry.get(path);
    if (!rec || rec.sensitive) continue;
    try {
      const doc = await ws.loader.load(path, 'overview');
      // A manifest is shown as its key fields (name, entry points, scripts, dependencies counted), not as written.
      const manifest = renderManifest(path, doc.text);
      const text = ws.redactor.redact(manifest ?? proseOf(path, doc.text)).text;
      docs.push({ path, text, source: doc.text, version: doc.sha256, total: ws.tokenizer.count(text), view: manifest === undefined ? 'full' : 'summary' });
    } catch (err) {
      if (!isFsError(err)) throw err;
    }
  }

  const treeShare = docs.length === 0 ? 1 : (options.treeShare ?? 0.35);
  let room = available;
  for (let attempt = 0; attempt < 8; attempt++) {
    const treeBudget = Math.floor(room * treeShare);
    const tree = treeWithin(ws, root, treeBudget);
    const treeTokens = ws.tokenizer.count(tree.lines.join('\n'));
    let docBudget = room - treeTokens;
    // Water-filling: small documents take what they need, the rest share the remainder.
    const shares = new Map<string, number>();
    let pending = docs.map((d) => ({ d, cost: d.total + ws.tokenizer.count(wrapContent('', { path: d.path, version: d.version, view: 'excerpt' })) + 24 }));
    while (pending.length > 0) {
      const fair = Math.floor(docBudget / pending.length);
      const small = pending.filter((p) => p.cost <= fair);
      if (small.length === 0) {
        for (const p of pending) shares.set(p.d.path, fair);
        break;
      }
      for (const p of small) {
        shares.set(p.d.path, p.cost);
        docBudget -= p.cost;
      }
      pending = pending.filter((p) => p.cost > fair);
    }
    const shown: OverviewDocument[] = [];
    const blocks: string[] = [];
    for (const d of docs) {
      const share = shares.get(d.path) ?? 0;
      const wrapperCost = ws.tokenizer.count(wrapContent('', { path: d.path, version: d.version, view: 'excerpt' })) + 24;
      const room = share - wrapperCost;
      if (room <= 0 || room < Math.min(24, d.total)) continue;
      const cut = cutDocument(ws, d.text, room);
      // A rendered manifest's lines are not the file's: the rest is read whole.
      const rest =
        d.view === 'summary'
          ? callText('readFile', [d.path])
          : `${callText('readLines', [d.path, lineAfter(d.source, cut.text)])} or ${callText('getOutline', [d.path])}`;
      const note = cut.truncated ? `\n[… truncated: the rest of ${d.path} is not shown — ${rest} for more …]` : '';
      const block = wrapContent(cut.text + note, { path: d.path, version: d.version, view: cut.truncated ? 'excerpt' : d.view });
      blocks.push(block);
      shown.push({ path: d.path, version: d.version, tokens: ws.tokenizer.count(block), totalTokens: d.total, truncated: cut.truncated });
    }
    const text = [header, '## Files', tree.lines.join('\n'), blocks.length ? `## Key documents\n${blocks.join('\n')}` : '', toolText]
      .filter(Boolean)
      .join('\n\n');
    const tokens = ws.tokenizer.count(text);
    if (tokens <= budget || attempt === 7) {
      if (tokens > budget) {
        // Last resort: header and tools only, still within budget if anything is.
        const minimal = `${header}\n\n${toolText}`;
        return { text: minimal, tokens: ws.tokenizer.count(minimal), budgetTokens: budget, files: records.length, directories, documents: [], expanded: 0 };
      }
      return { text, tokens, budgetTokens: budget, files: records.length, directories, documents: shown, expanded: tree.expanded };
    }
    // Estimates were short (line-wise counts, wrapper attributes): retry smaller.
    room = Math.floor(room * 0.9);
  }
  throw new Error('unreachable');
}
