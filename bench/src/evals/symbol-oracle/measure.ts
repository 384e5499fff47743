/**
 * The symbol oracle: ctxfs's definitions checked against each language's
 * own parser (see `bench/README.md`, "Symbols against the languages' own
 * parsers").
 *
 * The exact range of a definition runs from its first line — the first
 * line of the doc comment directly above it, else its first decorator,
 * annotation, attribute or modifier, else the definition's own first line
 * — to its last line. A doc comment is the run of comments standing on
 * their own lines (nothing but white space before them, nothing but other
 * comments after them) directly above the definition, with no blank line
 * between; a comment ending a line of code never is.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createContext, flattenSymbols, symbolTable } from '@ctxfs/context';
import { isFsError } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { random } from '../../../../packages/context/test/support/search-economy.ts';
import { corpusFiles, type OracleCorpus, readUtf8 } from './corpora.ts';
import type { OracleDefinition, OracleFile } from './oracle-types.ts';
import { typescriptOracle } from './typescript-oracle.ts';

const HERE = import.meta.dirname;

/** Runs a line-per-path oracle program and parses its JSON lines. */
function runOracle(command: string, args: readonly string[], paths: readonly string[]): OracleFile[] {
  const r = spawnSync(command, args, { input: `${paths.join('\n')}\n`, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr || r.error?.message}`);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as OracleFile);
}

/** Whether the oracle of `language` can run here (its toolchain is installed). */
export function oracleAvailable(language: string): boolean {
  const probe = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8' }).status === 0;
  if (language === 'python') return probe('python3', ['-c', 'import ast; ast.parse("x", type_comments=False).body[0].end_lineno']);
  if (language === 'go') return probe('go', ['version']);
  if (language === 'java') return probe('java', ['-version']);
  return language === 'typescript' || language === 'javascript';
}

/** The oracle's view of `paths` (absolute), in the same order. */
export function oracleFiles(language: string, paths: readonly string[]): OracleFile[] {
  if (paths.length === 0) return [];
  if (language === 'python') return runOracle('python3', [join(HERE, 'oracle.py')], paths);
  if (language === 'java') return runOracle('java', [join(HERE, 'Oracle.java')], paths);
  if (language === 'go') {
    const bin = join(homedir(), '.cache', 'ctxfs-bench', 'oracles', 'go-oracle');
    mkdirSync(join(bin, '..'), { recursive: true });
    const build = spawnSync('go', ['build', '-o', bin, join(HERE, 'oracle.go')], { encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`go build oracle.go failed: ${build.stderr}`);
    return runOracle(bin, [], paths);
  }
  if (language === 'typescript' || language === 'javascript') {
    return paths.map((p) => {
      const text = readUtf8(p);
      return text === undefined ? { path: p, error: 'not UTF-8' } : typescriptOracle(p, text);
    });
  }
  throw new Error(`no oracle for ${language}`);
}

/** A definition of the oracle with its exact range and where it lives. */
export interface ExpectedDefinition extends OracleDefinition {
  readonly path: string;
  /** First line of the exact range (doc comment, else `start`). */
  readonly from: number;
}

/** Adds the exact range's first line to each definition: the own-line comments directly above. */
export function withDocComments(file: OracleFile, path: string): ExpectedDefinition[] {
  const commentLines = new Set<number>();
  for (const [a, b] of file.comments ?? []) for (let l = a; l <= b; l++) commentLines.add(l);
  return (file.defs ?? []).map((d) => {
    let from = d.start;
    while (commentLines.has(from - 1)) from--;
    return { ...d, path, from };
  });
}

/** How one drawn definition was served. */
export type Outcome =
  /** The first getSymbol call served the exact range. */
  | 'exact'
  /** The name matched several definitions; the call listed this one with the selector that serves it exactly. */
  | 'exact-by-selector'
  /** The name matched several definitions; the answer listed this one's lines but offered no call that serves it alone. */
  | 'listed'
  /** The name matched more definitions than one answer lists: this one was among those counted, with the outline named as where they are. */
  | 'counted'
  /** The right definition, a different range (a doc comment or decorator missed or taken wrongly). */
  | 'inexact'
  /** ENOENT: no definition of that name (not silent, but a miss). */
  | 'missing'
  /** Another definition served with no word of this one: the failure that must never happen. */
  | 'silent-wrong';

export interface DrawnResult {
  readonly path: string;
  readonly query: string;
  readonly kind: string;
  readonly expected: readonly [number, number];
  readonly served: readonly [number, number] | undefined;
  readonly outcome: Outcome;
  /** Asked by its plain name (`inner`, not `outer.inner`). */
  readonly plainOutcome: Outcome;
}

export interface LanguageReport {
  readonly language: string;
  readonly corpora: ReadonlyArray<{ name: string; source: string; files: number; refused: number; definitions: number }>;
  readonly definitions: number;
  readonly drawn: readonly DrawnResult[];
  readonly exactRate: number;
  readonly counts: Readonly<Record<Outcome, number>>;
  /** The same definitions asked for by their plain names. */
  readonly plainCounts: Readonly<Record<Outcome, number>>;
  /** Symbol table (every depth) against the oracle: share of oracle definitions found with their range, share of ctxfs's that are oracle definitions. */
  readonly tableRecall: number;
  readonly tablePrecision: number;
  /** The same for the outline served in the large profile. */
  readonly outlineRecall: number;
  readonly outlinePrecision: number;
  readonly misses: ReadonlyArray<{ path: string; q: string; start: number; end: number }>;
  readonly extras: ReadonlyArray<{ path: string; q: string; start: number; end: number }>;
}

/** The name asked for: the qualified name, with the accessor selector for a getter or setter. */
export function queryOf(d: OracleDefinition): string {
  return d.kind === 'get' || d.kind === 'set' ? `${d.q}:${d.kind}` : d.q;
}

const key = (path: string, name: string, start: number, end: number) => `${path}\u0000${name}\u0000${start}\u0000${end}`;

function countMatches(expected: readonly string[], actual: readonly string[]): number {
  const pool = new Map<string, number>();
  for (const k of actual) pool.set(k, (pool.get(k) ?? 0) + 1);
  let n = 0;
  for (const k of expected) {
    const left = pool.get(k) ?? 0;
    if (left > 0) {
      n++;
      pool.set(k, left - 1);
    }
  }
  return n;
}

/**
 * Selectors a getSymbol answer offers for the other definitions of a name,
 * from its `[also named …]` note: `"sel" (a-b)` entries, and
 * `"Name@<first line>" for lines a-b, c-d` for overloads.
 */
function offeredSelectors(text: string): Array<{ selector: string; start: number; end: number }> {
  const out: Array<{ selector: string; start: number; end: number }> = [];
  const note = text.slice(text.lastIndexOf('[also named '));
  for (const m of note.matchAll(/"((?:[^"\\]|\\.)*)" \((\d+)-(\d+)\)/g)) {
    out.push({ selector: JSON.parse(`"${m[1]}"`) as string, start: Number(m[2]), end: Number(m[3]) });
  }
  for (const m of note.matchAll(/"((?:[^"\\]|\\.)*)@<first line>" for lines ((?:\d+-\d+(?:, )?)+)/g)) {
    const base = JSON.parse(`"${m[1]}"`) as string;
    for (const r of (m[2] as string).matchAll(/(\d+)-(\d+)/g)) out.push({ selector: `${base}@${r[1]}`, start: Number(r[1]), end: Number(r[2]) });
  }
  return out;
}

/**
 * Measures one language: every file of its corpora through the oracle and
 * through ctxfs (symbol table and large-profile outline), then `count`
 * definitions drawn (seeded) and asked for with getSymbol.
 */
export async function measureLanguage(
  language: string,
  corpora: readonly OracleCorpus[],
  count: number,
  seed = 19,
  limitFiles?: (path: string) => boolean,
): Promise<LanguageReport> {
  const files: Record<string, string> = {};
  const expected: ExpectedDefinition[] = [];
  const corpusRows: Array<{ name: string; source: string; files: number; refused: number; definitions: number }> = [];
  for (const corpus of corpora) {
    const root = corpus.root();
    const rels = corpusFiles(corpus, root).filter((p) => limitFiles === undefined || limitFiles(`${corpus.name}/${p}`));
    const results = oracleFiles(
      language,
      rels.map((p) => join(root, p)),
    );
    let refused = 0;
    let defs = 0;
    for (const [i, r] of results.entries()) {
      const rel = rels[i] as string;
      const text = readUtf8(join(root, rel));
      if (r.error !== undefined || text === undefined) {
        refused++;
        continue;
      }
      const path = `${corpus.name}/${rel}`;
      files[path] = text;
      const list = withDocComments(r, path);
      defs += list.length;
      expected.push(...list);
    }
    corpusRows.push({ name: corpus.name, source: corpus.source, files: rels.length - refused, refused, definitions: defs });
  }

  const fs = new MemoryFilesystem({ files });
  const ctx = await createContext({ fs, store: ':memory:', profile: 'large', agent: 'eval' });
  try {
    await ctx.scan();
    // Symbol table and served outline of every file against the oracle.
    const byPath = new Map<string, ExpectedDefinition[]>();
    for (const d of expected) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
    let tableFound = 0;
    let tableTotal = 0;
    let outlineFound = 0;
    let outlineRows = 0;
    let outlineRight = 0;
    const misses: Array<{ path: string; q: string; start: number; end: number }> = [];
    const extras: Array<{ path: string; q: string; start: number; end: number }> = [];
    const outliner = ctx.session({ agent: 'eval:outline', profile: { base: 'large', sessionTokens: 1e12 } });
    for (const path of Object.keys(files)) {
      const want = byPath.get(path) ?? [];
      const doc = await ctx.loader.load(path);
      const table = flattenSymbols((await symbolTable(doc)).symbols);
      const wantKeys = want.map((d) => key(path, d.q, d.start, d.end));
      const haveKeys = table.map((s) => key(path, s.qualifiedName, s.startLine, s.endLine));
      const found = countMatches(wantKeys, haveKeys);
      tableFound += found;
      tableTotal += table.length;
      const have = new Set(haveKeys);
      const wanted = new Set(wantKeys);
      for (const d of want) if (!have.has(key(path, d.q, d.start, d.end))) misses.push({ path, q: d.q, start: d.start, end: d.end });
      for (const s of table)
        if (!wanted.has(key(path, s.qualifiedName, s.startLine, s.endLine))) extras.push({ path, q: s.qualifiedName, start: s.startLine, end: s.endLine });
      // The outline shows ranges and signatures: a row is right when an oracle definition has its range and its name is in the row.
      // Scoped to the whole file, so a small file is outlined too (unscoped, it may be served whole as the cheaper answer).
      const outline = await outliner.getOutline(path, { startLine: 1 });
      const rows = [...outline.text.matchAll(/^\s*(\d+)-(\d+)\s+(.*)$/gm)].map((m) => ({ start: Number(m[1]), end: Number(m[2]), text: m[3] as string }));
      const rowKeys = rows.map((r) => `${r.start}-${r.end}`);
      outlineRows += rows.length;
      const ranges = want.map((d) => `${d.start}-${d.end}`);
      outlineFound += countMatches(ranges, rowKeys);
      const rangeSet = new Map<string, string[]>();
      for (const d of want) rangeSet.set(`${d.start}-${d.end}`, [...(rangeSet.get(`${d.start}-${d.end}`) ?? []), d.name]);
      for (const r of rows) if ((rangeSet.get(`${r.start}-${r.end}`) ?? []).some((n) => r.text.includes(n.replace(/^['"]|['"]$/g, '')))) outlineRight++;
    }

    // The draw: seeded, without replacement.
    const next = random(seed);
    const pool = [...expected];
    const drawn: ExpectedDefinition[] = [];
    while (drawn.length < count && pool.length > 0) drawn.push(pool.splice(Math.floor(next() * pool.length), 1)[0] as ExpectedDefinition);
    const reader = ctx.session({ agent: 'eval:symbols', profile: { base: 'large', perCallTokens: 10_000_000, sessionTokens: 1e12 } });
    const results: DrawnResult[] = [];
    // One question and how it was answered, following the selector the answer offers for this definition.
    const ask = async (d: ExpectedDefinition, query: string): Promise<{ served: readonly [number, number] | undefined; outcome: Outcome }> => {
      let s: Awaited<ReturnType<typeof reader.getSymbol>>;
      try {
        s = await reader.getSymbol(d.path, query);
      } catch (e) {
        if (!isFsError(e) || e.code !== 'ENOENT') throw e;
        return { served: undefined, outcome: 'missing' };
      }
      let served: readonly [number, number] = [s.startLine ?? 0, s.endLine ?? 0];
      // The file served whole (it cost no more than the definition's view) holds the definition exactly as it is: nothing cut, nothing else passed off as it.
      if (s.view === 'full') return { served, outcome: 'exact' };
      if (served[0] === d.from && served[1] === d.end) return { served, outcome: 'exact' };
      const offer = offeredSelectors(s.text).find((o) => o.start === d.start && o.end === d.end);
      if (offer !== undefined) {
        const again = await reader.getSymbol(d.path, offer.selector);
        served = [again.startLine ?? 0, again.endLine ?? 0];
      }
      if (served[0] === d.from && served[1] === d.end) return { served, outcome: 'exact-by-selector' };
      // Listed beside another: not silent, but not served.
      if (s.text.includes(`${d.start}-${d.end}`)) return { served, outcome: 'listed' };
      if (/\[also named .* more, getOutline\(/.test(s.text)) return { served, outcome: 'counted' };
      // The same definition, cut wrongly: it ends where the definition ends, or starts within its doc comment and decorators.
      if ((served[1] === d.end && served[0] <= d.end) || (served[0] >= d.from && served[0] <= d.start && served[1] >= d.start))
        return { served, outcome: 'inexact' };
      return { served, outcome: 'silent-wrong' };
    };
    for (const d of drawn) {
      const query = queryOf(d);
      const { served, outcome } = await ask(d, query);
      // The plain name too, as a model that has not seen the outline asks: another definition of that name must never come back without this one named.
      const plain = await ask(d, d.kind === 'get' || d.kind === 'set' ? `${d.name}:${d.kind}` : d.name);
      results.push({ path: d.path, query, kind: d.kind, expected: [d.from, d.end], served, outcome, plainOutcome: plain.outcome });
    }
    const counts: Record<Outcome, number> = { exact: 0, 'exact-by-selector': 0, listed: 0, counted: 0, inexact: 0, missing: 0, 'silent-wrong': 0 };
    const plainCounts: Record<Outcome, number> = { exact: 0, 'exact-by-selector': 0, listed: 0, counted: 0, inexact: 0, missing: 0, 'silent-wrong': 0 };
    for (const r of results) {
      counts[r.outcome]++;
      plainCounts[r.plainOutcome]++;
    }
    return {
      language,
      corpora: corpusRows,
      definitions: expected.length,
      drawn: results,
      exactRate: (counts.exact + counts['exact-by-selector']) / Math.max(1, results.length),
      counts,
      plainCounts,
      tableRecall: tableFound / Math.max(1, expected.length),
      tablePrecision: tableFound / Math.max(1, tableTotal),
      outlineRecall: outlineFound / Math.max(1, expected.length),
      outlinePrecision: outlineRight / Math.max(1, outlineRows),
      misses,
      extras,
    };
  } finally {
    await ctx.close();
    await fs.close();
  }
}
