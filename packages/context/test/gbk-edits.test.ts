/**
 * An edit of a GBK file stays GBK: real Chinese text (CKEditor 5's zh-cn
 * catalogue from the npm registry, see
 * packages/host/test/support/encoding-corpus.ts) written in GBK, on the
 * memory and host backends. A character GBK has no code for is refused as
 * KOI8-R, windows-1252, Shift_JIS and EUC-KR refuse theirs (it was written
 * as GB18030's four-byte form, `94 39 FC 36` for 😀, and the edit reported
 * success); a file that already holds a four-byte form is GB18030, and
 * takes one.
 */

import { encodeText } from '@ctxfs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEncodingCorpus, CORPUS_SOURCES } from '../../host/test/support/encoding-corpus.ts';
import { createContext } from '../src/index.ts';
import { FILE_BACKENDS, type TestWorkspace } from './support/file-backends.ts';
import { testState } from './support/test-state.ts';

const SOURCE = CORPUS_SOURCES.filter((s) => s.name === '@ckeditor/ckeditor5-table');
const EMOJI_GB18030 = [0x94, 0x39, 0xfc, 0x36];

/** The zh-cn catalogue's text, as the corpus makes it (lines GBK cannot hold left out). */
let chinese = '';
beforeAll(() => {
  const c = buildEncodingCorpus({ sources: SOURCE, fragmentsPerDocument: 0 }).find((k) => k.locale === 'zh-cn' && k.encoding === 'gbk' && k.cls === 'file');
  if (c === undefined) throw new Error('the corpus has no zh-cn GBK document');
  chinese = c.text;
}, 300_000);

const holds = (bytes: Uint8Array, seq: readonly number[]) => Buffer.from(bytes).includes(Buffer.from(seq));

for (const backend of FILE_BACKENDS) {
  describe(`GBK edits (${backend.name})`, () => {
    let ws: TestWorkspace;
    afterAll(async () => {
      await ws?.cleanup();
    });

    it('an emoji into a GBK file is refused naming it and its line, nothing written; GBK text is taken', async () => {
      const gbk = encodeText(chinese, 'gbk');
      ws = await backend.open(new Map([['zh.po', gbk]]));
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
      try {
        const session = ctx.session({ agent: 'llm:gbk' });
        await session.readLines('zh.po', 1, 2);
        const r = await session.editLines('zh.po', { kind: 'insert-after', line: 1, text: 'X 😀 X' });
        expect(r.success, r.message).toBe(false);
        if (r.success) return;
        expect(r.code).toBe('EINVAL');
        expect(r.message).toContain('zh.po is stored as gbk, which has no "😀" (U+1F600, line 2 of the new text)');
        expect(Buffer.from(await ws.fs.readBytes('zh.po')).equals(Buffer.from(gbk))).toBe(true);
        // Characters GBK has are written as GBK, the rest of the file byte for byte.
        const ok = await session.editLines('zh.po', { kind: 'insert-after', line: 1, text: '表格 € 插入' });
        expect(ok.success, ok.message).toBe(true);
        const after = await ws.fs.readBytes('zh.po');
        expect(Buffer.from(after).equals(Buffer.from(encodeText(chinese.replace('\n', '\n表格 € 插入\n'), 'gbk')))).toBe(true);
      } finally {
        await ctx.close();
      }
    });

    it('a file holding a four-byte GB18030 form is GB18030, and takes another', async () => {
      await ws?.cleanup();
      const text = `${chinese}表情 😀\n`;
      const gb18030 = encodeText(text, 'gb18030');
      expect(holds(gb18030, EMOJI_GB18030)).toBe(true);
      ws = await backend.open(new Map([['zh.po', gb18030]]));
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
      try {
        const session = ctx.session({ agent: 'llm:gb18030' });
        await session.readLines('zh.po', 1, 2);
        const r = await session.editLines('zh.po', { kind: 'insert-after', line: 1, text: 'X 😀 X' });
        expect(r.success, r.message).toBe(true);
        expect(Buffer.from(await ws.fs.readBytes('zh.po')).equals(Buffer.from(encodeText(text.replace('\n', '\nX 😀 X\n'), 'gb18030')))).toBe(true);
      } finally {
        await ctx.close();
      }
    });
  });
}
