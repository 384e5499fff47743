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
import { type GlobData, TOOLS, type Toolset } from '../src/index.ts';
import { FILES, joined, rows, V3, zodWorkspace } from './support/zod-v3.ts';

const DIR = 'zod/src/v3/tests';
const TESTS = readdirSync(join(V3, 'tests'))
  .filter((n) => n.endsWith('.test.ts'))
  .sort();

const globData = (r: { readonly data: unknown }) => r.data as GlobData;
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
