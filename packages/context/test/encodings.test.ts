/**
 * The context layer serves legacy-encoded files as the backend reads them:
 * real translated text (a CKEditor 5 catalogue from the npm registry, see
 * packages/host/test/support/encoding-corpus.ts) in every legacy encoding
 * its script allows, with and without a long ASCII preamble, on the memory
 * and host backends. What `readFile` and `readLines` serve is the real
 * text; `grep` finds a non-ASCII word wherever the text holds it and shows
 * the real line; a `replace` of a non-ASCII word finds it and changes only
 * its bytes.
 */

import { detectTextFormat, splitLines } from '@ctxfs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEncodingCorpus, CORPUS_SOURCES, type EncodingCase, encodeIn } from '../../host/test/support/encoding-corpus.ts';
import { type ContextLayer, createContext } from '../src/index.ts';
import { FILE_BACKENDS, type TestWorkspace } from './support/file-backends.ts';
import { testState } from './support/test-state.ts';

const SOURCE = CORPUS_SOURCES.filter((s) => s.name === '@ckeditor/ckeditor5-table');

/** A word with a non-ASCII letter that occurs once in `text`. */
function uniqueWord(text: string): string | undefined {
  for (const m of text.matchAll(/\p{L}*[^\p{ASCII}]\p{L}*/gu)) {
    const w = m[0];
    if ([...w].length >= 3 && /^\p{L}+$/u.test(w) && text.split(w).length === 2) return w;
  }
  return undefined;
}

let cases: EncodingCase[] = [];
beforeAll(() => {
  cases = buildEncodingCorpus({ sources: SOURCE, fragmentsPerDocument: 0 }).filter(
    (c) => (c.cls === 'file' || c.cls === 'late') && !c.encoding.startsWith('utf'),
  );
}, 300_000);

for (const backend of FILE_BACKENDS) {
  describe(`legacy encodings through the context layer (${backend.name})`, () => {
    let ws: TestWorkspace;
    let ctx: ContextLayer;
    const fileOf = (i: number) => `f${i}.po`;

    beforeAll(async () => {
      ws = await backend.open(new Map(cases.map((c, i) => [fileOf(i), c.bytes])));
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    }, 300_000);

    afterAll(async () => {
      ctx?.close();
      await ws?.cleanup();
    });

    it('covers every legacy encoding of the catalogue', () => {
      expect(new Set(cases.map((c) => c.encoding)).size).toBeGreaterThanOrEqual(20);
    });

    it('readFile and readLines serve the real text, as fs.read does', async () => {
      const wrong: string[] = [];
      for (const [i, c] of cases.entries()) {
        const session = ctx.session({ agent: `llm:read-${i}` });
        const lines = splitLines(c.text);
        // The translated lines: where a wrong decoding shows.
        const at = lines.findIndex((l) => /[^\p{ASCII}]/u.test(l));
        const end = Math.min(lines.length, at + 40);
        const range = await session.readLines(fileOf(i), at + 1, end);
        const numbered = lines.slice(at, end).map((l, k) => `${at + k + 1}\t${l}`);
        if (!range.text.includes(numbered.join('\n'))) wrong.push(`${c.id} (readLines)`);
        const page = await ws.fs.read(fileOf(i), { offset: at, limit: end - at });
        if (page.lines.join('\n') !== lines.slice(at, end).join('\n')) wrong.push(`${c.id} (fs.read)`);
        if (c.cls === 'file') {
          const whole = await session.readFile(fileOf(i));
          if (whole.view !== 'full' || !whole.text.includes(lines.join('\n'))) wrong.push(`${c.id} (readFile ${whole.view})`);
        }
      }
      expect(wrong).toEqual([]);
    }, 300_000);

    it("names the encoding a file was decoded from in the block's tag, and none for UTF-8", async () => {
      const session = ctx.session({ agent: 'llm:tag' });
      const wrong: string[] = [];
      for (const [i, c] of cases.entries()) {
        const decodedAs = ws.fs.decodeText(c.bytes, { path: fileOf(i) }).encoding;
        const served = await session.readLines(fileOf(i), 1, 2);
        const tag = served.text.slice(0, served.text.indexOf('>'));
        if (!tag.includes(` encoding="${decodedAs}"`)) wrong.push(`${c.id}: ${tag}`);
      }
      expect(wrong).toEqual([]);
      await ws.fs.write('plain.txt', 'caf\u00e9\n');
      const plain = await session.readFile('plain.txt');
      expect(plain.text).not.toContain('encoding=');
    }, 300_000);

    it('grep finds a non-ASCII word in every file whose text holds it, and shows the real line', async () => {
      const wrong: string[] = [];
      const session = ctx.session({ agent: 'llm:grep' });
      // One document per encoding (every search reads every file that holds the word), the two classes taking turns.
      const encodings = [...new Set(cases.map((c) => c.encoding))];
      const picked = encodings.map((encoding, k) => {
        const of = cases.filter((c) => c.encoding === encoding);
        return of.find((c) => c.cls === (k % 2 === 0 ? 'file' : 'late')) ?? (of[0] as EncodingCase);
      });
      expect(new Set(picked.map((c) => c.cls))).toEqual(new Set(['file', 'late']));
      for (const c of picked) {
        const i = cases.indexOf(c);
        const word = uniqueWord(c.text);
        if (word === undefined) {
          wrong.push(`${c.id}: no word to search for`);
          continue;
        }
        const result = await session.grep(word, { literal: true, limit: 1000 });
        const found = [...new Set(result.items.map((h) => h.path))].sort();
        const holding = cases.flatMap((other, j) => (other.text.includes(word) ? [fileOf(j)] : [])).sort();
        if (found.join() !== holding.join()) wrong.push(`${c.id} ${word}: found in ${found.length} files, held by ${holding.length}`);
        const lines = splitLines(c.text);
        const line = lines.findIndex((l) => l.includes(word)) + 1;
        const hits = result.items.filter((h) => h.path === fileOf(i));
        if (hits.length !== 1 || hits[0]?.line !== line || hits[0].text !== lines[line - 1]?.slice(0, 240)) {
          wrong.push(`${c.id} ${word}: line ${hits[0]?.line} ${JSON.stringify(hits[0]?.text)}`);
        }
      }
      expect(wrong).toEqual([]);
    }, 300_000);

    it('replace finds a non-ASCII word and changes only its bytes', async () => {
      const wrong: string[] = [];
      for (const [i, c] of cases.entries()) {
        const word = uniqueWord(c.text);
        if (word === undefined) continue;
        const session = ctx.session({ agent: `llm:edit-${i}` });
        await session.readLines(fileOf(i), 1, 1);
        const r = await session.replace(fileOf(i), word, `${word}${word}`);
        const expected = encodeIn(c.text.replace(word, `${word}${word}`), c.encoding);
        const after = await ws.fs.readBytes(fileOf(i));
        if (!r.success) wrong.push(`${c.id}: ${r.message}`);
        else if (!Buffer.from(after).equals(Buffer.from(expected))) wrong.push(`${c.id}: bytes differ`);
      }
      expect(wrong).toEqual([]);
    }, 300_000);

    it("refuses a character the file's encoding cannot hold, writing nothing, and takes it where the encoding holds all of Unicode", async () => {
      const wrong: string[] = [];
      let refused = 0;
      for (const [i, c] of cases.entries()) {
        const word = uniqueWord(c.text);
        if (word === undefined) continue;
        const session = ctx.session({ agent: `llm:emoji-${i}` });
        await session.readLines(fileOf(i), 1, 1);
        const before = await ws.fs.readBytes(fileOf(i));
        // The test before doubled the word in each file: the first of them.
        const r = await session.replace(fileOf(i), word, `${word} ✅`, { occurrence: 'first' });
        const after = await ws.fs.readBytes(fileOf(i));
        // GBK text, and GB18030 text without a four-byte form (the same bytes), is GBK, which has no emoji
        // (gbk-edits.test.ts); a file whose four-byte forms show it is GB18030 holds all of Unicode.
        const unicode = /^utf-/i.test(c.encoding) || detectTextFormat(c.bytes).encoding === 'gb18030';
        if (unicode) {
          if (!r.success || new TextDecoder(c.encoding).decode(after).includes('✅') === false) wrong.push(`${c.id}: ${r.message}`);
          continue;
        }
        refused++;
        if (r.success || r.code !== 'EINVAL' || !r.message.includes('is stored as ') || !r.message.includes('U+2705')) {
          wrong.push(`${c.id} (${c.encoding}): ${r.success ? 'written' : r.message}`);
        }
        if (!Buffer.from(after).equals(Buffer.from(before))) wrong.push(`${c.id}: bytes changed`);
      }
      expect(wrong).toEqual([]);
      expect(refused).toBeGreaterThan(5);
    }, 300_000);
  });
}
