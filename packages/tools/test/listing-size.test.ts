/**
 * A directory listing a model reads costs few tokens (issue 13): each row
 * names its entry once, relative to the directory listed, with what a
 * model cannot tell from the name (size, line count once known, generated,
 * sensitive), and the structured copy (which some MCP clients hand to the
 * model instead of the text) says the same per entry and no more. Every
 * entry stays addressable: the directory joined with the row's name is a
 * path the next call takes.
 *
 * On real files: zod's published `src/v3` (83 files, 61 of them in `tests/`,
 * the directory the MCP bench lists), on the memory backend.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { o200kTokenizer } from '@ctxfs/context';
import { beforeAll, describe, expect, test } from 'vitest';
import { type ListingData, TOOLS, type Toolset } from '../src/index.ts';
import { FILES, joined, rows, V3, zodWorkspace } from './support/zod-v3.ts';

const DIR = 'zod/src/v3/tests';
const NAMES = readdirSync(join(V3, 'tests')).sort();

/** A listing's data, as its output schema gives it. */
const dataOf = (r: { readonly data: unknown }) => r.data as ListingData;

const toolset = zodWorkspace();
let medium: Toolset;
let small: Toolset;

beforeAll(() => {
  medium = toolset({ agent: 'llm:listing-size', profile: 'medium' });
  small = toolset({ agent: 'llm:listing-size-small', profile: 'small' });
});

describe('list_files of a directory of 61 files', () => {
  test('names each entry once, relative to the directory the header names, with its size', async () => {
    const r = await medium.run('list_files', { path: DIR });
    expect(r.isError).toBe(false);
    const data = dataOf(r);
    expect(r.text.split('\n')[0]).toBe(`list_files ${DIR}: 61 files, paths relative to ${DIR}/.`);
    const listed = rows(r.text);
    expect(listed.map((row) => row.split('  ')[0])).toEqual(NAMES);
    // Size, and nothing the name already says (the language of a .ts file, its code and test tags).
    expect(listed[0]).toBe(`${NAMES[0]}  ${(Buffer.byteLength(FILES[`${DIR}/${NAMES[0]}`] as string) / 1024).toFixed(1)} KB`);
    expect(r.text).not.toContain(`${DIR}/${NAMES[0]}`);
    expect(r.text).not.toMatch(/typescript|code,test/);
    // The data says the same, per entry: the name and the size.
    expect(data.dir).toBe(DIR);
    expect(data.items).toEqual(NAMES.map((name) => ({ name, size: Buffer.byteLength(FILES[`${DIR}/${name}`] as string) })));
    // The budget counts the text the model reads.
    expect(data.tokens).toBe(o200kTokenizer.count(r.text));
  });

  test('every entry is a path the next call takes', async () => {
    const r = await medium.run('list_files', { path: DIR });
    const data = dataOf(r);
    for (const name of rows(r.text).map((row) => row.split('  ')[0] as string)) {
      const one = await medium.run('list_files', { path: joined(DIR, name) });
      expect(one.isError, name).toBe(false);
      expect(dataOf(one).total, name).toBe(1);
    }
    for (const item of data.items) {
      const read = await medium.run('read_lines', { path: joined(data.dir, item.name), start_line: 1, end_line: 1 });
      expect(read.isError, item.name).toBe(false);
    }
  });

  test('costs about what the official server answers, and fits a small model’s call whole', async () => {
    const r = await medium.run('list_files', { path: DIR });
    // The official server's answer for the same directory: a `[FILE] name` row each, as its text and again as its structured content.
    const theirs = NAMES.map((n) => `[FILE] ${n}`).join('\n');
    const theirsTokens = o200kTokenizer.count(theirs) + o200kTokenizer.count(JSON.stringify({ content: theirs }));
    const oursTokens = o200kTokenizer.count(r.text) + o200kTokenizer.count(JSON.stringify(r.data));
    // Before: 1,629 tokens of text and 2,572 of data, 4.5x theirs (the rows repeated the directory, then size, language and
    // tags, and the data every field of every row); now about 680 and 760, 1.56x (the sizes are what theirs does not give).
    expect(oursTokens / theirsTokens).toBeLessThan(1.7);
    expect(o200kTokenizer.count(r.text)).toBeLessThan(750);
    // The small profile's call (1,500 tokens) held 60 of the 61 rows (1,477 tokens); now the whole directory, in 680.
    const s = await small.run('list_files', { path: DIR });
    expect(dataOf(s).truncated).toBe(false);
    expect(dataOf(s).shown).toBe(61);
  });
});

describe('list_files rows of every kind', () => {
  test('a directory row ends in a slash and counts its files; its path lists them', async () => {
    const r = await medium.run('list_files', { path: 'zod/src', depth: 2 });
    const data = dataOf(r);
    expect(data.dir).toBe('zod/src');
    const tests = data.items.find((i) => i.name === 'v3/tests');
    expect(tests).toEqual({ name: 'v3/tests', kind: 'directory', files: 61 });
    expect(rows(r.text)).toContain('v3/tests/  (61 files)');
    const files = data.items.filter((i) => i.kind === undefined);
    expect(files.map((f) => f.name)).toContain('v3/types.ts');
    const below = await medium.run('list_files', { path: joined(data.dir, tests?.name ?? '') });
    expect(dataOf(below).total).toBe(61);
  });

  test('the root lists paths from the root, and a file lists itself by its whole path', async () => {
    const root = await medium.run('list_files', { depth: 1 });
    expect(dataOf(root).dir).toBe('');
    expect(root.text.split('\n')[0]).toBe('list_files the workspace to depth 1: 83 files in 1 row.');
    expect(rows(root.text)).toEqual(['zod/  (83 files)']);
    const file = await medium.run('list_files', { path: `${DIR}/${NAMES[0]}` });
    expect(dataOf(file)).toMatchObject({ dir: '', items: [{ name: `${DIR}/${NAMES[0]}` }] });
    expect(rows(file.text)[0]?.startsWith(`${DIR}/${NAMES[0]}  `)).toBe(true);
  });

  test('its output schema is its own, and holds the answer', async () => {
    const tool = TOOLS.find((t) => t.name === 'list_files');
    const r = await medium.run('list_files', { path: 'zod/src', depth: 2 });
    expect(tool?.output.safeParse(r.data).success).toBe(true);
    expect(tool?.output.safeParse({ ...(r.data as object), items: [{ path: 'x' }] }).success).toBe(false);
  });
});
