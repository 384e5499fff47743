/**
 * A Markdown outline's sections are the headings CommonMark finds. The line
 * scan took only ATX headings (`## A`) and a fence of exactly three
 * characters: express's `History.md` (298 releases, each a setext heading
 * underlined with `===`) was outlined as one section, "⚡ Performance",
 * running from line 47 to the end; mime-types' `HISTORY.md`, written the
 * same way, had no section at all; and a fence closed by a longer one, or
 * indented inside a list item, hid every heading after it.
 *
 * The oracle is markdown-it (CommonMark), its top-level headings, on real
 * documents nobody here wrote: every Markdown file npm packages installed
 * here publish at their top (READMEs, changelogs, licences, histories).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, test } from 'vitest';
import { type CodeSymbol, flattenSymbols, markdownSymbols } from '../src/index.ts';

const STORE = join(import.meta.dirname, '../../../node_modules/.pnpm');

/** A directory's entries; none when it is not one (or not readable). */
function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Markdown files at the top of each installed package (`<store>/<id>/node_modules/<name>/*.md`, scoped names too). */
function publishedDocuments(): string[] {
  const found: string[] = [];
  for (const id of readdirSync(STORE)) {
    const modules = join(STORE, id, 'node_modules');
    for (const name of entriesOf(modules)) {
      const dirs = name.startsWith('@') ? entriesOf(join(modules, name)).map((n) => join(modules, name, n)) : [join(modules, name)];
      for (const dir of dirs) {
        for (const e of entriesOf(dir)) {
          const path = join(dir, e);
          if (/\.(md|markdown)$/i.test(e) && statSync(path).isFile()) found.push(path);
        }
      }
    }
  }
  return [...new Set(found)].sort();
}

const commonmark = new MarkdownIt('commonmark');

/** YAML front matter is not CommonMark: both sides read past it. */
function withoutFrontMatter(lines: string[]): string[] {
  if (!/^---[ \t]*$/.test(lines[0] ?? '')) return lines;
  const end = lines.findIndex((l, i) => i > 0 && /^(?:---|\.\.\.)[ \t]*$/.test(l));
  return end < 0 ? lines : lines.map((l, i) => (i <= end ? '' : l));
}

/** Top-level headings as `level line name`, as markdown-it parses them. */
function oracle(lines: string[]): string[] {
  const tokens = commonmark.parse(withoutFrontMatter(lines).join('\n'), {});
  const out: string[] = [];
  tokens.forEach((t, i) => {
    if (t.type !== 'heading_open' || t.level !== 0) return;
    const name = (tokens[i + 1]?.content ?? '').trim().replace(/\s*\n\s*/g, ' ');
    if (name !== '') out.push(`${t.tag.slice(1)} ${(t.map as [number, number])[0] + 1} ${name}`);
  });
  return out;
}

const level = (s: CodeSymbol) => /^#+/.exec(s.signature)?.[0].length;
const ours = (lines: string[]): string[] => flattenSymbols(markdownSymbols(lines)).map((s) => `${level(s)} ${s.startLine} ${s.name}`);

describe('Markdown sections', () => {
  test("mime-types' HISTORY.md: one section a release, each running to the next", () => {
    const lines = readFileSync(join(STORE, 'mime-types@2.1.35/node_modules/mime-types/HISTORY.md'), 'utf8').split('\n');
    const roots = markdownSymbols(lines);
    const releases = roots.filter((s) => /^\d+\.\d+\.\d+ \/ \d{4}-\d\d-\d\d$/.test(s.name));
    expect(releases.length).toBeGreaterThan(50);
    const first = releases[0] as CodeSymbol;
    expect(first.signature).toBe(`# ${first.name}`);
    expect(lines[first.startLine - 1]).toBe(first.name);
    expect(lines[first.startLine]).toMatch(/^=+$/);
    expect(first.endLine).toBeLessThan((releases[1] as CodeSymbol).startLine);
    expect(ours(lines)).toEqual(oracle(lines));
  });

  test('every published document installed here: the headings markdown-it finds, no more, no fewer', () => {
    const documents = publishedDocuments();
    expect(documents.length).toBeGreaterThan(300);
    let setext = 0;
    const differ: string[] = [];
    for (const path of documents) {
      const lines = readFileSync(path, 'utf8').split(/\r?\n/);
      const expected = oracle(lines);
      const got = ours(lines);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        const missing = expected.filter((h) => !got.includes(h));
        const extra = got.filter((h) => !expected.includes(h));
        differ.push(`${path.slice(STORE.length + 1)}: missing ${missing.slice(0, 3).join(' | ')}; extra ${extra.slice(0, 3).join(' | ')}`);
      }
      if (
        markdownSymbols(lines).some(function hasSetext(s: CodeSymbol): boolean {
          return /^[=-]+\s*$/.test(lines[s.startLine] ?? '') || s.children.some(hasSetext);
        })
      )
        setext++;
    }
    expect(differ).toEqual([]);
    // The hard class is in the corpus: documents whose headings are underlined.
    expect(setext).toBeGreaterThan(30);
  });
});
