/**
 * Related files: what a file imports (resolved to workspace paths) and, for
 * files whose relations are indexed, what imports it — breadth first to a
 * depth. Relations are stored per content hash, so they are recomputed only
 * for files that changed.
 *
 * @module
 */

import { type Filesystem, isFsError } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import { type Document, type DocumentLoader, derive } from '../content/document.ts';
import type { FileRegistry } from '../registry/file-registry.ts';
import { extractImports, type ImportSpec, type Relation, type ResolveContext, resolveImport } from '../registry/relations.ts';
import { plural } from '../search/narrowing.ts';
import type { StateStore } from '../state/state-store.ts';
import { hasGrammar } from '../symbols/tree-sitter.ts';
import { type Caller, callBudget, loadDocument, MIN_USEFUL_TOKENS, overBudget, type Served, serve, type Workspace } from './shared.ts';

/** Progress of {@link RelationIndex.indexAll}. */
export interface IndexProgress {
  readonly done: number;
  readonly total: number;
}

/** Relations of the workspace, computed lazily and kept in the state store. */
export class RelationIndex {
  readonly #fs: Filesystem;
  readonly #store: StateStore;
  readonly #registry: FileRegistry;
  readonly #loader: DocumentLoader;
  readonly #ctx: ResolveContext;

  constructor(fs: Filesystem, store: StateStore, registry: FileRegistry, loader: DocumentLoader) {
    this.#fs = fs;
    this.#store = store;
    this.#registry = registry;
    this.#loader = loader;
    this.#ctx = {
      exists: async (path) => {
        if (this.#registry.scanned) return this.#registry.get(path) !== undefined;
        try {
          return (await this.#fs.stat(path)).kind === 'file';
        } catch {
          return false;
        }
      },
      listFiles: async (dir) => {
        try {
          return (await this.#fs.list(dir)).filter((e) => e.kind === 'file').map((e) => e.path);
        } catch {
          return [];
        }
      },
      readText: async (path) => {
        try {
          return (await this.#loader.load(path, 'related')).text;
        } catch (err) {
          if (isFsError(err)) return undefined;
          throw err;
        }
      },
    };
  }

  /** Import specifiers of a document, from its syntax tree. */
  importsOf(doc: Document): Promise<ImportSpec[]> {
    return derive(doc, 'imports', () => (doc.language && hasGrammar(doc.language) ? extractImports(doc.language, doc.text) : Promise.resolve([])));
  }

  /** Resolved relations of a document (stored by content hash). */
  async relationsOf(doc: Document): Promise<Relation[]> {
    // Insertion order: SQLite's rowid, PostgreSQL's identity column (the table has no key of its own).
    const order = this.#store.dialect === 'sqlite' ? 'rowid' : 'id';
    const rows = (await this.#store.all(`SELECT specifier, target, kind, line FROM relations WHERE source = ? AND source_sha256 = ? ORDER BY ${order}`, [
      doc.path,
      doc.sha256,
    ])) as Array<{
      specifier: string;
      target: string | null;
      kind: string;
      line: number;
    }>;
    if (rows.length > 0) {
      return rows
        .filter((r) => r.kind !== 'none')
        .map((r) => ({ source: doc.path, specifier: r.specifier, target: r.target ?? undefined, kind: r.kind as Relation['kind'], line: Number(r.line) }));
    }
    const specs = await this.importsOf(doc);
    const out: Relation[] = [];
    for (const spec of specs) {
      const targets = doc.language ? await resolveImport(this.#ctx, doc.path, doc.language, spec) : [];
      if (targets.length === 0) out.push({ ...spec, source: doc.path, target: undefined });
      for (const target of targets) if (target !== doc.path) out.push({ ...spec, source: doc.path, target });
    }
    await this.#store.transaction(async () => {
      await this.#store.run('DELETE FROM relations WHERE source = ?', [doc.path]);
      const insert = 'INSERT INTO relations (source, source_sha256, specifier, target, kind, line) VALUES (?, ?, ?, ?, ?, ?)';
      for (const r of out) await this.#store.run(insert, [r.source, doc.sha256, r.specifier, r.target ?? null, r.kind, r.line]);
      // A marker row so a file without imports is not parsed again.
      if (out.length === 0) await this.#store.run(insert, [doc.path, doc.sha256, '', null, 'none', 0]);
    });
    return out;
  }

  /** Files known to import `path` (among indexed files). */
  async importers(path: string): Promise<Array<{ source: string; specifier: string; line: number }>> {
    return (await this.#store.all('SELECT DISTINCT source, specifier, line FROM relations WHERE target = ? ORDER BY source', [path])) as Array<{
      source: string;
      specifier: string;
      line: number;
    }>;
  }

  /**
   * Brings the index up to date with the registry: every hand-written code
   * file whose current content has no stored relations is parsed, and files
   * the registry no longer holds are forgotten. Incremental, so calling it
   * before every `getRelatedFiles` costs one query once the index is current.
   */
  async indexAll(options: { onProgress?: (p: IndexProgress) => void } = {}): Promise<{ files: number; relations: number; parsed: number }> {
    if (!this.#registry.scanned) await this.#registry.scan();
    const files = this.#registry.list({ tag: 'code' }).filter((r) => hasGrammar(r.language) && !r.generated);
    const stored = new Map(
      ((await this.#store.all('SELECT source, MAX(source_sha256) AS sha FROM relations GROUP BY source')) as Array<{ source: string; sha: string }>).map(
        (r) => [r.source, r.sha],
      ),
    );
    const current = new Set(files.map((f) => f.path));
    const gone = [...stored.keys()].filter((p) => !current.has(p));
    if (gone.length > 0) {
      await this.#store.transaction(async () => {
        for (const p of gone) await this.#store.run('DELETE FROM relations WHERE source = ?', [p]);
      });
    }
    const stale = files.filter((f) => stored.get(f.path) !== f.sha256);
    let done = 0;
    for (const f of stale) {
      try {
        await this.relationsOf(await this.#loader.load(f.path, 'indexRelations'));
      } catch (err) {
        if (!isFsError(err)) throw err;
      }
      done++;
      if (done % 100 === 0 || done === stale.length) options.onProgress?.({ done, total: stale.length });
    }
    const count = (await this.#store.get("SELECT COUNT(*) AS n FROM relations WHERE kind <> 'none'")) as { n: number };
    return { files: files.length, relations: Number(count.n), parsed: stale.length };
  }
}

/** One related file. */
export interface RelatedFile {
  readonly path: string;
  /** `imports`: the start file (or one on the way) imports it; `imported-by`: it imports them. */
  readonly relation: 'imports' | 'imported-by' | 'includes' | 'declares-module';
  readonly depth: number;
  /** The file it was reached from. */
  readonly via: string;
  readonly specifier: string;
}

/** Result of `getRelatedFiles`: the list plus a served text for the model. */
export interface RelatedResult extends Served {
  readonly related: readonly RelatedFile[];
  /** Specifiers that point outside the workspace (packages, standard library). */
  readonly external: readonly string[];
}

/** Files related to `path` up to `depth` hops (default 1). */
export async function getRelatedFiles(ws: Workspace, caller: Caller, path: string, depth = 1): Promise<RelatedResult> {
  const doc = await loadDocument(ws, path, 'getRelatedFiles');
  // Importers are only known for indexed files: index what is missing or stale first, so the answer is complete.
  await ws.relations.indexAll();
  const budget = callBudget(caller, undefined, 'getRelatedFiles', path);
  if (budget < MIN_USEFUL_TOKENS) return { ...overBudget(ws, caller, doc, budget), related: [], external: [] };
  const related: RelatedFile[] = [];
  const external = new Set<string>();
  const seen = new Set([path]);
  let frontier = [path];
  for (let d = 1; d <= Math.max(1, depth) && frontier.length > 0; d++) {
    const next: string[] = [];
    for (const p of frontier) {
      let current: Document;
      try {
        current = p === path ? doc : await ws.loader.load(p, 'getRelatedFiles');
      } catch {
        continue;
      }
      for (const r of await ws.relations.relationsOf(current)) {
        if (!r.target) {
          if (p === path) external.add(r.specifier);
          continue;
        }
        if (seen.has(r.target)) continue;
        seen.add(r.target);
        related.push({ path: r.target, relation: r.kind === 'imports' ? 'imports' : r.kind, depth: d, via: p, specifier: r.specifier });
        next.push(r.target);
      }
      for (const imp of await ws.relations.importers(p)) {
        if (seen.has(imp.source)) continue;
        seen.add(imp.source);
        related.push({ path: imp.source, relation: 'imported-by', depth: d, via: p, specifier: imp.specifier });
        next.push(imp.source);
      }
    }
    frontier = next;
  }
  const rows = related.map((r) => `${r.relation === 'imported-by' ? '←' : '→'} ${r.path}${r.depth > 1 ? ` (depth ${r.depth}, via ${r.via})` : ''}`);
  const ext = [...external].sort();
  let body = [`${path}: ${plural(related.length, 'related file')}`, ...rows, ext.length ? `external: ${ext.join(', ')}` : ''].filter(Boolean).join('\n');
  if (ws.tokenizer.count(body) > budget - 80)
    body = body.slice(0, Math.max(0, (budget - 120) * 3)).replace(/\n[^\n]*$/, `\n[… list cut; call ${callText('getRelatedFiles', [path, 1])} for fewer …]`);
  const served = await serve(ws, caller, 'getRelatedFiles', doc, body, { view: 'related', omitted: [], redactions: 0 });
  return { ...served, related, external: ext };
}
