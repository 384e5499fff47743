/**
 * The repository's definitions — functions, classes, methods, types — from
 * the same outlines `getOutline` and `getSymbol` use (tree-sitter, regex
 * fallback), kept in the state store by path and content hash. The index
 * follows the registry: built on first use, and on every later use only the
 * files whose hash moved since they were indexed are parsed again (after a
 * scan, after an edit through ctxfs, after a read noticed a change), and
 * files the registry no longer has are dropped.
 *
 * @module
 */

import { isFsError } from '@ctxfs/core';
import type { FileRecord } from '../registry/file-registry.ts';
import type { Workspace } from '../retrieval/shared.ts';
import { inLists, multiRow, multiRowStatements } from '../state/multi-row.ts';
import { symbolTable } from '../symbols/outline.ts';
import { flattenSymbols, SYMBOLS_VERSION, type SymbolKind } from '../symbols/types.ts';

/** Suffix of the stored `source` naming the extractor's version. */
const EXTRACTED_BY = `@${SYMBOLS_VERSION}`;

/** Files larger than this are not parsed for the index (bundles, data tables). */
export const MAX_INDEXED_BYTES = 1024 * 1024;

/** One definition as the index holds it. */
export interface IndexedSymbol {
  readonly path: string;
  readonly name: string;
  readonly qualifiedName: string;
  readonly kind: SymbolKind;
  readonly startLine: number;
  readonly endLine: number;
}

/** What a refresh did. */
export interface IndexRefresh {
  /** Files the index covers. */
  readonly files: number;
  /** Files parsed by this refresh. */
  readonly parsed: number;
  /** Files dropped (gone from the registry, or no longer indexable). */
  readonly dropped: number;
  readonly durationMs: number;
}

/** Rows per INSERT (8 parameters each). */
const SYMBOLS_PER_STATEMENT = 100;
const INSERT_SYMBOLS = multiRow('INSERT INTO symbols (path, sha256, seq, name, qualified_name, kind, start_line, end_line) VALUES', '(?, ?, ?, ?, ?, ?, ?, ?)');
/** Files parsed per transaction. */
const FILES_PER_COMMIT = 200;

/** Whether the index covers a registered file: hand-written code of a size worth parsing. */
export function indexable(record: FileRecord): boolean {
  return record.tags.includes('code') && !record.generated && record.size <= MAX_INDEXED_BYTES && record.sha256 !== '';
}

/**
 * The symbol index of one workspace (see the module comment).
 *
 * @example
 * ```ts
 * const index = symbolIndex(ws);
 * await index.refresh();
 * await index.named(['login']); // [{ path: 'src/auth.ts', qualifiedName: 'AuthManager.login', kind: 'method', … }]
 * ```
 */
export class SymbolIndex {
  readonly #ws: Workspace;
  /** Indexed content hash of each path (loaded from the store once). */
  #indexed: Map<string, string> | undefined;
  /** Every distinct name with the number of definitions carrying it. */
  #names: Map<string, number> | undefined;
  #running: Promise<IndexRefresh> | undefined;

  constructor(ws: Workspace) {
    this.#ws = ws;
  }

  /** Distinct names, each with its number of definitions. */
  names(): Promise<ReadonlyMap<string, number>> {
    return this.#loadNames();
  }

  async #loadIndexed(): Promise<Map<string, string>> {
    if (this.#indexed === undefined) {
      const rows = (await this.#ws.store.all('SELECT path, sha256, source FROM symbol_files')) as Array<{ path: string; sha256: string; source: string }>;
      // A file indexed by another version of the extractor counts as not indexed: parsed again on this refresh.
      this.#indexed = new Map(rows.map((r) => [r.path, r.source === 'unreadable' || r.source.endsWith(EXTRACTED_BY) ? r.sha256 : '']));
    }
    return this.#indexed;
  }

  async #loadNames(): Promise<Map<string, number>> {
    if (this.#names === undefined) {
      const rows = (await this.#ws.store.all(
        'SELECT s.name AS name, COUNT(*) AS n FROM symbols s JOIN symbol_files f ON f.path = s.path AND f.sha256 = s.sha256 GROUP BY s.name',
      )) as Array<{ name: string; n: number }>;
      this.#names = new Map(rows.map((r) => [r.name, Number(r.n)]));
    }
    return this.#names;
  }

  /**
   * Brings the index up to date with the registry (scanning first when the
   * registry is empty). Concurrent calls share one refresh.
   */
  refresh(): Promise<IndexRefresh> {
    this.#running ??= this.#refresh().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #refresh(): Promise<IndexRefresh> {
    const started = performance.now();
    const registry = this.#ws.registry;
    if (!registry.scanned && registry.size === 0) await registry.scan();
    const indexed = await this.#loadIndexed();
    await this.#loadNames();
    const wanted = new Map<string, FileRecord>();
    for (const r of registry.list({ tag: 'code' })) if (indexable(r)) wanted.set(r.path, r);
    const stale = [...wanted.values()].filter((r) => indexed.get(r.path) !== r.sha256);
    const gone = [...indexed.keys()].filter((p) => !wanted.has(p));
    if (gone.length > 0) {
      await this.#ws.store.transaction(async () => {
        for (const p of gone) await this.#forget(p);
      });
    }
    let parsed = 0;
    for (let i = 0; i < stale.length; i += FILES_PER_COMMIT) {
      const parts = await Promise.all(stale.slice(i, i + FILES_PER_COMMIT).map((r) => this.#parse(r)));
      await this.#ws.store.transaction(async () => {
        for (const part of parts) {
          if (part === undefined) continue;
          await this.#put(part.path, part.sha256, part.lines, part.source, part.symbols);
          parsed++;
        }
      });
    }
    return { files: indexed.size, parsed, dropped: gone.length, durationMs: performance.now() - started };
  }

  /** Reads and outlines one file; `undefined` when it vanished (its next refresh drops it). */
  async #parse(
    record: FileRecord,
  ): Promise<{ path: string; sha256: string; lines: number; source: string; symbols: Omit<IndexedSymbol, 'path'>[] } | undefined> {
    const ws = this.#ws;
    let doc: Awaited<ReturnType<Workspace['loader']['load']>>;
    try {
      doc = await ws.loader.load(record.path, 'findSymbol');
    } catch (err) {
      if (!isFsError(err)) throw err;
      if (err.code === 'ENOENT' || err.code === 'EISDIR' || err.code === 'ENOTDIR') return undefined;
      // Binary, too large, unreadable: indexed as holding nothing until its content changes.
      return { path: record.path, sha256: record.sha256, lines: 0, source: 'unreadable', symbols: [] };
    }
    // A file changed behind the registry's back: the registry learns its new version, and the index keys on it.
    if (doc.sha256 !== record.sha256) {
      await ws.registry.observe(record.path, { sha256: doc.sha256, size: doc.size, mtimeMs: doc.mtimeMs, head: doc.text.slice(0, 1024) });
    }
    const table = await symbolTable(doc);
    const symbols = flattenSymbols(table.symbols).map((s) => ({
      name: s.name,
      qualifiedName: s.qualifiedName,
      kind: s.kind,
      startLine: s.startLine,
      endLine: s.endLine,
    }));
    return { path: record.path, sha256: doc.sha256, lines: doc.lines.length, source: `${table.source}${EXTRACTED_BY}`, symbols };
  }

  async #put(path: string, sha256: string, lines: number, source: string, symbols: readonly Omit<IndexedSymbol, 'path'>[]): Promise<void> {
    await this.#forget(path);
    const store = this.#ws.store;
    await store.run('INSERT INTO symbol_files (path, sha256, source, lines, symbols, indexed_ms) VALUES (?, ?, ?, ?, ?, ?)', [
      path,
      sha256,
      source,
      lines,
      symbols.length,
      Date.now(),
    ]);
    const rows = multiRowStatements(INSERT_SYMBOLS, symbols, (s, seq) => [path, sha256, seq, s.name, s.qualifiedName, s.kind, s.startLine, s.endLine], {
      perStatement: SYMBOLS_PER_STATEMENT,
    });
    for (const st of rows) await store.run(st.sql, st.params);
    (await this.#loadIndexed()).set(path, sha256);
    const names = await this.#loadNames();
    for (const s of symbols) names.set(s.name, (names.get(s.name) ?? 0) + 1);
  }

  /** Drops a path's rows (every content hash of it). */
  async #forget(path: string): Promise<void> {
    const store = this.#ws.store;
    const names = await this.#loadNames();
    for (const { name } of (await store.all('SELECT name FROM symbols WHERE path = ?', [path])) as Array<{ name: string }>) {
      const n = (names.get(name) ?? 0) - 1;
      if (n > 0) names.set(name, n);
      else names.delete(name);
    }
    await store.run('DELETE FROM symbols WHERE path = ?', [path]);
    await store.run('DELETE FROM symbol_files WHERE path = ?', [path]);
    (await this.#loadIndexed()).delete(path);
  }

  /** Every current definition carrying one of `names`. */
  async named(names: readonly string[]): Promise<IndexedSymbol[]> {
    const out: IndexedSymbol[] = [];
    for (const { chunk, marks } of inLists(names)) {
      const rows = (await this.#ws.store.all(
        `SELECT s.path, s.name, s.qualified_name, s.kind, s.start_line, s.end_line FROM symbols s
             JOIN symbol_files f ON f.path = s.path AND f.sha256 = s.sha256
           WHERE s.name IN (${marks})`,
        chunk,
      )) as Array<Record<string, unknown>>;
      for (const r of rows) {
        out.push({
          path: String(r.path),
          name: String(r.name),
          qualifiedName: String(r.qualified_name),
          kind: String(r.kind) as SymbolKind,
          startLine: Number(r.start_line),
          endLine: Number(r.end_line),
        });
      }
    }
    return out;
  }

  /** The line counts of the files the index read at the content given (`sha256`); the others are not in the map. */
  async lines(files: ReadonlyArray<{ readonly path: string; readonly sha256: string }>): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    // One query a chunk, not one a file: a listing asks for every row at once.
    for (const { chunk, marks } of inLists(files)) {
      const rows = (await this.#ws.store.all(
        `SELECT path, sha256, lines FROM symbol_files WHERE source <> 'unreadable' AND path IN (${marks})`,
        chunk.map((f) => f.path),
      )) as Array<{ path: string; sha256: string; lines: number }>;
      const current = new Map(chunk.map((f) => [f.path, f.sha256]));
      for (const r of rows) if (current.get(r.path) === r.sha256) out.set(r.path, Number(r.lines));
    }
    return out;
  }
}

// Keyed by the registry: one per workspace, whichever session asks.
const INDEXES = new WeakMap<Workspace['registry'], SymbolIndex>();

/** The symbol index of a workspace (one per workspace, made on first use). */
export function symbolIndex(ws: Workspace): SymbolIndex {
  let index = INDEXES.get(ws.registry);
  if (index === undefined) {
    index = new SymbolIndex(ws);
    INDEXES.set(ws.registry, index);
  }
  return index;
}
