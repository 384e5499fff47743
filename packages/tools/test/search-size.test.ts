/**
 * Glob and grep answers a model reads carry no byte that says nothing
 * (issue 13, after listing-size.test.ts did it for list_files): no field
 * every row repeats with the same value, a field only meaningful when set
 * only when set, a prefix every row shares said once. Every entry stays
 * addressable: the directory the header names joined with a row's name is
 * a path the next call takes; truncation notes and counts stay right.
 *
 * On real files: zod's published `src/v3` (83 files, 61 of them in `tests/`),
 * on the memory backend.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { o200kTokenizer } from '@ctxfs/context';
import { beforeAll, describe, expect, test } from 'vitest';
import { type GlobData, type GrepData, TOOLS, type Toolset } from '../src/index.ts';
import { FILES, joined, rows, V3, zodWorkspace } from './support/zod-v3.ts';

const DIR = 'zod/src/v3/tests';
const TESTS = readdirSync(join(V3, 'tests'))
  .filter((n) => n.endsWith('.test.ts'))
  .sort();

const globData = (r: { readonly data: unknown }) => r.data as GlobData;
const grepData = (r: { readonly data: unknown }) => r.data as GrepData;
/** Line `n` of a file of the workspace. */
const lineOf = (path: string, n: number) => (FILES[path] as string).split('\n')[n - 1];
/** What a client that hands the model the structured content makes it read. */
const dataTokens = (r: { readonly data: unknown }) => o200kTokenizer.count(JSON.stringify(r.data));

const toolset = zodWorkspace();
let medium: Toolset;

beforeAll(() => {
  medium = toolset({ agent: 'llm:search-size', profile: 'medium' });
});

describe('glob', () => {
  test('names the directory its matches share once, and each match by its name under it', async () => {
    const r = await medium.run('glob', { pattern: '**/*.test.ts' });
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')[0]).toBe(`glob "**/*.test.ts": 59 files, paths relative to ${DIR}/.`);
    expect(rows(r.text)).toEqual(TESTS);
    expect(r.text).not.toContain(`${DIR}/${TESTS[0]}`);
    // The data says the same: the directory once, a name per match; no kind or sensitive:false on every row.
    const data = globData(r);
    expect(data.dir).toBe(DIR);
    expect(data.items).toEqual(TESTS.map((name) => ({ name })));
    expect(data.tokens).toBe(o200kTokenizer.count(r.text));
    // Before: 704 tokens of text and 1,379 of data (each row the whole path; each item path, kind: "file", sensitive: false).
    expect(o200kTokenizer.count(r.text)).toBeLessThan(400);
    expect(dataTokens(r)).toBeLessThan(500);
  });

  test('every match is a path the next call takes', async () => {
    for (const args of [{ pattern: '**/*.test.ts' }, { pattern: '**/*.ts', cwd: 'zod/src/v3' }, { pattern: '*.ts', cwd: DIR }]) {
      const r = await medium.run('glob', args);
      const data = globData(r);
      expect(rows(r.text)).toEqual(data.items.map((i) => i.name));
      expect(data.items.length).toBe(data.shown);
      for (const item of data.items) {
        const read = await medium.run('read_lines', { path: joined(data.dir, item.name), start_line: 1, end_line: 1 });
        expect(read.isError, `${data.dir} ${item.name}`).toBe(false);
      }
    }
  });

  test('matches in several directories are named below the one they share; one match is named whole', async () => {
    const r = await medium.run('glob', { pattern: '**/index.ts' });
    expect(globData(r)).toMatchObject({ dir: 'zod/src/v3', items: [{ name: 'benchmarks/index.ts' }, { name: 'index.ts' }] });
    const mixed = await medium.run('glob', { pattern: '**/{types,array.test}.ts' });
    expect(globData(mixed)).toMatchObject({ dir: 'zod/src/v3', items: [{ name: 'tests/array.test.ts' }, { name: 'types.ts' }] });
    expect(rows(mixed.text)).toEqual(['tests/array.test.ts', 'types.ts']);
    const one = await medium.run('glob', { pattern: '**/Mocker.ts' });
    expect(globData(one)).toMatchObject({ dir: '', items: [{ name: `${DIR}/Mocker.ts` }] });
    expect(one.text.split('\n')[0]).toBe('glob "**/Mocker.ts": 1 file.');
    expect(rows(one.text)).toEqual([`${DIR}/Mocker.ts`]);
  });

  test('a page says what it left out, and the next page is named as its own rows are', async () => {
    const first = await medium.run('glob', { pattern: '**/*.ts', cwd: 'zod/src/v3', limit: 10 });
    const data = globData(first);
    expect(data).toMatchObject({ shown: 10, total: 83, truncated: true, dir: 'zod/src/v3' });
    expect(first.text).toContain('[… 73 more; narrow with');
    const next = JSON.parse(/^glob\((\{.*\})\)$/.exec(data.next ?? '')?.[1] ?? '{}') as Record<string, unknown>;
    expect(next).toMatchObject({ pattern: '**/*.ts', cwd: 'zod/src/v3', offset: 10 });
    const second = await medium.run('glob', next);
    const more = globData(second);
    expect(more.skipped).toBe(10);
    for (const item of more.items) expect(FILES[joined(more.dir, item.name)], item.name).toBeDefined();
  });

  test('its output schema is its own, and holds the answer', async () => {
    const tool = TOOLS.find((t) => t.name === 'glob');
    const r = await medium.run('glob', { pattern: '**/*.ts' });
    expect(tool?.output.safeParse(r.data).success).toBe(true);
    expect(tool?.output.safeParse({ ...(r.data as object), items: [{ path: 'x' }] }).success).toBe(false);
  });
});

describe('grep', () => {
  test('names the directory its files share once, each file once, and each line once', async () => {
    const r = await medium.run('grep', { pattern: 'safeParse', path: DIR });
    expect(r.text.split('\n')[0]).toBe(`grep "safeParse" in ${DIR}: 173 matching lines in 26 files, showing lines 1-50, paths relative to ${DIR}/.`);
    expect(rows(r.text).slice(0, 3)).toEqual(['all-errors.test.ts', `50:\t${lineOf(`${DIR}/all-errors.test.ts`, 50)}`, '--']);
    expect(r.text).not.toContain(`${DIR}/all-errors.test.ts`);
    expect(r.text).toContain(`[… 123 more matching lines; narrow with grep({"pattern":"safeParse","path":"${DIR}/error.test.ts"}) (30 lines)`);
    const data = grepData(r);
    expect(data).toMatchObject({ dir: DIR, shown: 50, total: 173, files: 26, truncated: true });
    // A file's name, count and version once, then its lines: no path, version, count or empty context on every line.
    expect(data.items[0]).toEqual({
      name: 'all-errors.test.ts',
      matches: 2,
      version: expect.stringMatching(/^[0-9a-f]{64}$/),
      lines: [50, 65].map((line) => ({ line, text: lineOf(`${DIR}/all-errors.test.ts`, line) })),
    });
    expect(data.items.flatMap((f) => f.lines ?? []).length).toBe(50);
    expect(data.tokens).toBe(o200kTokenizer.count(r.text));
    // Before: 1,043 tokens of text and 4,265 of data (each line's item repeated path, version, count, and before: [], after: []).
    expect(dataTokens(r)).toBeLessThan(1600);
  });

  test('context lines are the lines around the match, in order, only when there are any', async () => {
    const r = await medium.run('grep', { pattern: 'ZodError', path: 'zod/src/v3', context_lines: 1 });
    const data = grepData(r);
    expect(data.dir).toBe('zod/src/v3');
    let around = 0;
    for (const file of data.items) {
      const path = joined(data.dir, file.name);
      for (const hit of file.lines ?? []) {
        expect(hit.text).toBe(lineOf(path, hit.line));
        const before = hit.before ?? [];
        const after = hit.after ?? [];
        expect(before).toEqual(before.map((_, i) => lineOf(path, hit.line - before.length + i)));
        expect(after).toEqual(after.map((_, i) => lineOf(path, hit.line + 1 + i)));
        expect(hit.before?.length).not.toBe(0);
        expect(hit.after?.length).not.toBe(0);
        around += (hit.before?.length ?? 0) + (hit.after?.length ?? 0);
      }
    }
    expect(around).toBeGreaterThan(50);
    // Before: 5,731 tokens of data for 2,002 of text.
    expect(dataTokens(r)).toBeLessThan(3000);
  });

  test('a list of files, or of counts, names each file under the directory they share', async () => {
    const files = await medium.run('grep', { pattern: 'safeParse', path: DIR, output: 'files' });
    const names = rows(files.text);
    expect(names).toHaveLength(26);
    expect(names[0]).toBe('all-errors.test.ts');
    expect(grepData(files).items[0]).toEqual({ name: 'all-errors.test.ts', matches: 2 });
    expect(grepData(files).items.map((i) => i.name)).toEqual(names);
    // Before: 341 tokens of text and 1,829 of data.
    expect(o200kTokenizer.count(files.text)).toBeLessThan(200);
    expect(dataTokens(files)).toBeLessThan(400);
    const counts = await medium.run('grep', { pattern: 'safeParse', path: DIR, output: 'count' });
    expect(rows(counts.text)[0]).toBe('all-errors.test.ts: 2');
    expect(grepData(counts).items).toEqual(grepData(files).items);
  });

  test('every file is a path the next call takes, at the line it names', async () => {
    for (const args of [
      { pattern: 'safeParse', path: DIR },
      { pattern: 'ZodError', context_lines: 2 },
      { pattern: 'safeParse', output: 'files' },
    ]) {
      const data = grepData(await medium.run('grep', args));
      expect(data.items.length).toBeGreaterThan(1);
      for (const file of data.items) {
        const line = file.lines?.[0]?.line ?? 1;
        const read = await medium.run('read_lines', { path: joined(data.dir, file.name), start_line: line, end_line: line });
        expect(read.isError, `${data.dir} ${file.name}`).toBe(false);
      }
    }
  });

  test('a search of one file names it whole', async () => {
    const r = await medium.run('grep', { pattern: 'safeParse', path: `${DIR}/all-errors.test.ts` });
    expect(grepData(r)).toMatchObject({ dir: '', items: [{ name: `${DIR}/all-errors.test.ts`, matches: 2 }] });
    expect(r.text.split('\n')[0]).not.toContain('relative to');
    expect(rows(r.text)[0]).toBe(`${DIR}/all-errors.test.ts`);
  });

  test('its output schema is its own, and holds the answer', async () => {
    const tool = TOOLS.find((t) => t.name === 'grep');
    const r = await medium.run('grep', { pattern: 'ZodError', context_lines: 1 });
    expect(tool?.output.safeParse(r.data).success).toBe(true);
    expect(tool?.output.safeParse({ ...(r.data as object), items: [{ path: 'x', line: 1 }] }).success).toBe(false);
  });
});
