/**
 * Which files of a repository are its entry documents. Names are matched
 * without regard to case (`readme.md`, `Readme.md` and `README.md` are the
 * same document to a reader), and a document is found in any of the usual
 * text formats (`README.rst`, `README.txt`, a bare `README`): a repository
 * whose readme is spelled differently from the configured list must not get
 * an overview made of its manifest alone.
 *
 * @module
 */

/** Extensions of prose documents, a configured `README.md` matching any of them (or none). */
const DOC_EXTENSION = /\.(md|mdx|markdown|mdown|rst|txt|adoc|asciidoc|org|rdoc|textile)$/i;

/** A configured name or a path, as compared: lower case, a document's extension dropped. */
function key(path: string): { stem: string; doc: boolean } {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const doc = DOC_EXTENSION.test(name) || !name.includes('.');
  return { stem: (doc ? path.replace(DOC_EXTENSION, '') : path).toLowerCase(), doc };
}

/** Order of preference among files answering to one entry: the configured spelling, then Markdown, then by name. */
function preference(wanted: string): (a: string, b: string) => number {
  const rank = (p: string) => (p === wanted ? 0 : /\.md$/i.test(p) ? 1 : DOC_EXTENSION.test(p) ? 2 : 3);
  return (a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The registered paths that answer to the configured entrypoints, in the
 * configured order, one file an entry.
 *
 * @example
 * ```ts
 * resolveEntrypoints(['readme.md', 'package.json', 'src/a.ts'], ['README.md', 'package.json']);
 * // ['readme.md', 'package.json']
 * ```
 */
export function resolveEntrypoints(paths: Iterable<string>, entrypoints: readonly string[]): string[] {
  const wanted = entrypoints.map(key);
  const stems = new Set(wanted.map((w) => w.stem));
  // One pass over the registry: only paths whose key is asked for are kept.
  const byStem = new Map<string, string[]>();
  for (const path of paths) {
    const k = key(path);
    if (!stems.has(k.stem)) continue;
    const list = byStem.get(`${k.doc}\0${k.stem}`) ?? [];
    list.push(path);
    byStem.set(`${k.doc}\0${k.stem}`, list);
  }
  const out: string[] = [];
  for (const [i, entry] of entrypoints.entries()) {
    const w = wanted[i] as { stem: string; doc: boolean };
    const found = (byStem.get(`${w.doc}\0${w.stem}`) ?? []).filter((p) => !out.includes(p)).sort(preference(entry));
    if (found[0] !== undefined) out.push(found[0]);
  }
  return out;
}
