import { spawnSync } from 'node:child_process';
import { chownSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get_encoding } from 'tiktoken';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { BpeVocabulary } from '../src/tokens/bpe-vocabulary.ts';
import { loadVocabulary } from '../src/tokens/vocabulary-cache.ts';

/** The cache file's header: magic, format, digest, then the counts the tests below read (see vocabulary-cache.ts). */
const HEADER = 72;
const RANK_FILE = createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken');
const tiktoken = get_encoding('o200k_base');

/** Every rank's bytes equal tiktoken's, and the index finds every rank from its bytes: a wrong blob, offset or slot fails one. */
function expectSameAsTiktoken(vocabulary: BpeVocabulary): void {
  expect(vocabulary.size).toBe(readFileSync(RANK_FILE, 'latin1').trimEnd().split('\n').length);
  let lookups = 0;
  for (let rank = 0; rank < vocabulary.size; rank++) {
    const bytes = vocabulary.bytesOf(rank);
    if (bytes === undefined) expect.fail(`rank ${rank} has no bytes`);
    if (vocabulary.rankOf(bytes, 0, bytes.length) !== rank) expect.fail(`the index does not find rank ${rank}`);
    lookups++;
  }
  expect(lookups).toBeGreaterThan(199_000);
  for (let rank = 0; rank < vocabulary.size; rank += 997) {
    expect(vocabulary.bytesOf(rank), `rank ${rank}`).toEqual(new Uint8Array(tiktoken.decode_single_token_bytes(rank)));
  }
}

describe('the vocabulary cache', () => {
  let dir: string;
  let rankFile: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxfs-vocab-'));
    rankFile = join(dir, 'o200k_base.tiktoken');
    copyFileSync(RANK_FILE, rankFile);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the first load builds from the rank file and writes the cache; the next reads it, and both serve the same ranks as tiktoken', () => {
    const cache = join(dir, 'cache');
    const first = loadVocabulary(rankFile, cache);
    expect(first.source).toBe('rank-file');
    expect(readdirSync(cache)).toEqual([first.cacheFile?.replace(/^.*\//, '')]);
    const second = loadVocabulary(rankFile, cache);
    expect(second.source).toBe('cache');
    expect(second.vocabulary.size).toBe(first.vocabulary.size);
    expectSameAsTiktoken(second.vocabulary);
  });

  test('an altered, truncated or foreign cache file is a miss: the vocabulary is built again and the file rewritten', () => {
    const cache = join(dir, 'cache');
    const { cacheFile } = loadVocabulary(rankFile, cache);
    if (cacheFile === undefined) throw new Error('no cache file');
    const good = readFileSync(cacheFile);

    // One byte of the offsets changed: the digest catches it.
    const altered = Buffer.from(good);
    altered[200_000] = (altered[200_000] as number) ^ 1;
    writeFileSync(cacheFile, altered);
    expect(loadVocabulary(rankFile, cache).source).toBe('rank-file');
    expect(readFileSync(cacheFile).equals(good)).toBe(true);

    writeFileSync(cacheFile, good.subarray(0, good.length - 1));
    expect(loadVocabulary(rankFile, cache).source).toBe('rank-file');
    writeFileSync(cacheFile, 'not a vocabulary');
    expect(loadVocabulary(rankFile, cache).source).toBe('rank-file');
    expect(loadVocabulary(rankFile, cache).source).toBe('cache');
  });

  test('a byte changed in any part of the file, the file cut anywhere or grown, or its counts changed together, is a miss', () => {
    const cache = join(dir, 'cache');
    const { cacheFile } = loadVocabulary(rankFile, cache);
    if (cacheFile === undefined) throw new Error('no cache file');
    const good = readFileSync(cacheFile);
    const head = new DataView(good.buffer, good.byteOffset, HEADER);
    const ranks = head.getUint32(44, true);
    const slots = head.getUint32(52, true);
    const indexAt = HEADER + (ranks + 1) * 4;
    const blobAt = indexAt + slots * 4;
    expect(blobAt + head.getUint32(48, true)).toBe(good.length);
    // A slot that holds a token: were it unchecked, flipping it would hide that token (a wrong count).
    let slot = 0;
    while (good.readInt32LE(indexAt + slot * 4) === 0) slot++;
    const places: [string, number][] = [
      ['the magic', 3],
      ['the format', 8],
      ['the digest', 20],
      ['the rank count', 44],
      ['the blob size', 48],
      ['the slot count', 52],
      ["the rank file's size", 60],
      ["the rank file's mtime", 66],
      ['the offsets', HEADER + 4 * 1234 + 1],
      ['the index', indexAt + slot * 4],
      ['the blob', blobAt + 4321],
      ['the last byte', good.length - 1],
    ];
    const missesThenHeals = (what: string, bytes: Uint8Array) => {
      writeFileSync(cacheFile, bytes);
      expect(loadVocabulary(rankFile, cache).source, what).toBe('rank-file');
      expect(readFileSync(cacheFile).equals(good), what).toBe(true);
    };
    for (const [what, at] of places) {
      const altered = Buffer.from(good);
      altered[at] = (altered[at] as number) ^ 0x10;
      missesThenHeals(`a byte of ${what}`, altered);
    }
    for (const length of [0, 8, HEADER - 1, HEADER, indexAt + 7, blobAt, good.length - 1]) missesThenHeals(`cut to ${length} bytes`, good.subarray(0, length));
    missesThenHeals('a byte more', Buffer.concat([good, Buffer.from([0])]));
    // One more rank and four bytes less blob: the sizes still add up to the file's, and the arrays would be read askew.
    const askew = Buffer.from(good);
    askew.writeUInt32LE(ranks + 1, 44);
    askew.writeUInt32LE(head.getUint32(48, true) - 4, 48);
    missesThenHeals('the counts changed together', askew);
    expect(loadVocabulary(rankFile, cache).source).toBe('cache');
  });

  test("writing the cache removes the same rank file's cache in an older format, and leaves other files alone", () => {
    const cache = join(dir, 'cache');
    const { cacheFile } = loadVocabulary(rankFile, cache);
    if (cacheFile === undefined) throw new Error('no cache file');
    const name = cacheFile.replace(/^.*\//, '');
    const format = Number(/\.v(\d+)\.bpe$/.exec(name)?.[1]);
    expect(format).toBeGreaterThan(1);
    const older = name.replace(/\.v\d+\.bpe$/, '.v1.bpe');
    const another = name.replace(/^o200k_base-\d+/, 'o200k_base-1');
    writeFileSync(join(cache, older), 'a format-1 cache');
    writeFileSync(join(cache, another), 'the cache of another rank file');
    rmSync(cacheFile);
    expect(loadVocabulary(rankFile, cache).source).toBe('rank-file');
    expect(readdirSync(cache).sort()).toEqual([another, name].sort());
  });

  test.runIf(process.getuid?.() === 0)('a cache file another user owns is not read', () => {
    const cache = join(dir, 'cache');
    const { cacheFile } = loadVocabulary(rankFile, cache);
    if (cacheFile === undefined) throw new Error('no cache file');
    chownSync(cacheFile, 65534, 65534);
    expect(loadVocabulary(rankFile, cache).source).toBe('rank-file');
  });

  test('a changed rank file is another cache entry, never the old one', () => {
    const cache = join(dir, 'cache');
    loadVocabulary(rankFile, cache);
    utimesSync(rankFile, new Date(), new Date(Date.now() + 60_000));
    const after = loadVocabulary(rankFile, cache);
    expect(after.source).toBe('rank-file');
    expect(readdirSync(cache)).toHaveLength(2);
  });

  test('an unwritable cache directory or caching off costs the build, never the count', () => {
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'a file where the directory would be');
    const loaded = loadVocabulary(rankFile, join(blocked, 'ctxfs'));
    expect(loaded.source).toBe('rank-file');
    expect(loaded.vocabulary.size).toBeGreaterThan(199_000);
    expect(loadVocabulary(rankFile, join(blocked, 'ctxfs')).source).toBe('rank-file');

    const off = loadVocabulary(rankFile, null);
    expect(off).toMatchObject({ source: 'rank-file', cacheFile: undefined });
    expect(readdirSync(dir).sort()).toEqual(['blocked', 'o200k_base.tiktoken']);
  });

  // Run in a child with a deadline: a hang here is synchronous and would stop the test runner itself.
  function loadInChild(cacheDir: string): { status: number | null; source?: string; ms: number } {
    const program = `import { loadVocabulary } from ${JSON.stringify(join(import.meta.dirname, '../src/tokens/vocabulary-cache.ts'))};
const { source } = loadVocabulary(${JSON.stringify(rankFile)}, ${JSON.stringify(cacheDir)});
console.log(source);`;
    const started = performance.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, source: r.stdout.trim() || undefined, ms: performance.now() - started };
  }

  test('a cache directory where mkdir cannot succeed (under /proc) costs the build, not a spin', () => {
    // Node's recursive mkdirSync loops forever there; the cache's own is bounded.
    expect(loadInChild('/proc/ctxfs-test-cache/nested')).toMatchObject({ status: 0, source: 'rank-file' });
  });

  test("a FIFO under the cache file's name is a miss, not a read that waits for a writer", () => {
    const cache = join(dir, 'fifo-cache');
    const { cacheFile } = loadVocabulary(rankFile, cache);
    if (cacheFile === undefined) throw new Error('no cache file');
    rmSync(cacheFile);
    const made = spawnSync('mkfifo', [cacheFile]);
    expect(made.status).toBe(0);
    expect(loadInChild(cache)).toMatchObject({ status: 0, source: 'rank-file' });
  });
});
