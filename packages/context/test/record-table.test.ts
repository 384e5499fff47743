import { describe, expect, test } from 'vitest';
import type { FileRecord } from '../src/index.ts';
import { type FileTag, maskOfTags, tagsOfMask } from '../src/registry/classify.ts';
import { RecordTable } from '../src/registry/record-table.ts';

const tagsFromList = (tags: FileTag[]) => tagsOfMask(maskOfTags(tags));

function record(path: string, over: Partial<FileRecord> = {}): FileRecord {
  return {
    path,
    language: 'typescript',
    tags: tagsFromList(['code']),
    size: 120,
    mtimeMs: 1_700_000_000_123.5,
    sha256: 'ab'.repeat(32),
    version: 1,
    versionMs: 1_700_000_000_999,
    accessCount: 0,
    lastAccessedMs: undefined,
    entrypoint: false,
    sensitive: false,
    generated: false,
    ...over,
  };
}

describe('RecordTable', () => {
  test('gives back every field it was given', () => {
    const table = new RecordTable();
    const rows = [
      record('src/a.ts'),
      record('README.md', { language: 'markdown', tags: tagsFromList(['doc']), entrypoint: true, accessCount: 7, lastAccessedMs: 1_700_000_111_000 }),
      record('.env', { language: undefined, tags: tagsFromList([]), sensitive: true, sha256: '' }),
      record('gen/x.ts', { tags: tagsFromList(['generated', 'code']), generated: true, size: 2 ** 40, version: 9, sha256: '0f'.repeat(32) }),
      record('src/a.test.ts', { tags: tagsFromList(['test', 'code']), mtimeMs: -12.25 }),
    ];
    for (const r of rows) table.set(r);
    expect(table.size).toBe(rows.length);
    for (const r of rows) expect(table.get(r.path)).toEqual(r);
    expect(table.get('missing')).toBeUndefined();
    // Tags come back in the order tagsOf gives them, whatever order they were set in.
    expect(table.get('gen/x.ts')?.tags).toEqual(['code', 'generated']);
  });

  test('replaces, counts accesses, deletes and reuses slots; grows past its first capacity', () => {
    const table = new RecordTable();
    for (let i = 0; i < 3000; i++) table.set(record(`f/${i}.ts`, { size: i, sha256: i.toString(16).padStart(64, '0') }));
    expect(table.size).toBe(3000);
    expect(table.get('f/2999.ts')).toMatchObject({ size: 2999, sha256: (2999).toString(16).padStart(64, '0') });

    table.set(record('f/5.ts', { size: 55, version: 2 }));
    expect(table.get('f/5.ts')).toMatchObject({ size: 55, version: 2 });
    expect(table.size).toBe(3000);

    expect(table.touch('f/5.ts', 42)).toBe(true);
    expect(table.touch('f/5.ts', 43)).toBe(true);
    expect(table.get('f/5.ts')).toMatchObject({ accessCount: 2, lastAccessedMs: 43 });
    expect(table.touch('nope', 1)).toBe(false);

    expect(table.delete('f/7.ts')).toBe(true);
    expect(table.delete('f/7.ts')).toBe(false);
    expect(table.has('f/7.ts')).toBe(false);
    // The freed slot serves the next record, which must not inherit anything from the old one.
    table.set(record('new.md', { language: 'markdown', tags: tagsFromList(['doc']), sha256: '' }));
    expect(table.get('new.md')).toEqual(record('new.md', { language: 'markdown', tags: tagsFromList(['doc']), sha256: '' }));
    expect(table.get('f/8.ts')?.size).toBe(8);
    expect(table.size).toBe(3000);
    expect(new Set(table.paths()).size).toBe(3000);
  });

  test('answers the scan’s question without making a record, and selects by tag and prefix', () => {
    const table = new RecordTable();
    table.set(record('src/a.ts'));
    table.set(record('src/b.md', { language: 'markdown', tags: tagsFromList(['doc']) }));
    table.set(record('lib/c.ts', { sha256: '' }));
    expect(table.compare('src/a.ts', 120, 1_700_000_000_123.5)).toBe('unchanged');
    expect(table.compare('src/a.ts', 121, 1_700_000_000_123.5)).toBe('changed');
    expect(table.compare('src/a.ts', 120, 1_700_000_000_123)).toBe('changed');
    // A record without a hash is never unchanged: it still has to be hashed.
    expect(table.compare('lib/c.ts', 120, 1_700_000_000_123.5)).toBe('changed');
    expect(table.compare('nope', 120, 1_700_000_000_123.5)).toBe('absent');

    const paths = (prefix: string, tag?: 'code' | 'doc') => [...table.select(prefix, tag)].map((r) => r.path).sort();
    expect(paths('')).toEqual(['lib/c.ts', 'src/a.ts', 'src/b.md']);
    expect(paths('src/')).toEqual(['src/a.ts', 'src/b.md']);
    expect(paths('', 'code')).toEqual(['lib/c.ts', 'src/a.ts']);
    expect(paths('src/', 'doc')).toEqual(['src/b.md']);
  });

  test('shared tags arrays are frozen, so no record can change another', () => {
    const tags = tagsFromList(['code', 'test']);
    expect(Object.isFrozen(tags)).toBe(true);
    expect(tagsFromList(['test', 'code'])).toBe(tags);
  });
});
