/**
 * A GBK file is written as GBK: detection names a Chinese file GB18030 only
 * where a four-byte sequence shows it is one (statistics called every GBK
 * file GB18030, the superset that holds all of Unicode, and an emoji put
 * into one was written as `94 39 FC 36`, which GBK readers cannot read),
 * and the GBK writer refuses what GBK cannot hold.
 */

import { describe, expect, it } from 'vitest';
import { encodeText } from '../src/encoding.ts';
import { detectTextFormat } from '../src/legacy-detector.ts';
import { decodeLikeReader, encodeTextExact, firstUnencodable, unencodableText } from '../src/text-roundtrip.ts';

const ZH = '今天早上，小港口的市场已经挤满了人。渔民们把夜里捕到的鱼摆好。\n';

describe('GBK and GB18030', () => {
  it('Chinese without a four-byte sequence is GBK; with one, GB18030', () => {
    expect(detectTextFormat(encodeText(ZH, 'gbk')).encoding).toBe('gbk');
    // Byte for byte the same file: nothing in it is GB18030's own.
    expect(detectTextFormat(encodeText(ZH, 'gb18030')).encoding).toBe('gbk');
    const four = encodeText(`${ZH}表情 😀 在这里。\n${ZH}`, 'gb18030');
    expect(Buffer.from(four).includes(Buffer.from([0x94, 0x39, 0xfc, 0x36]))).toBe(true);
    expect(detectTextFormat(four).encoding).toBe('gb18030');
  });

  it('GBK refuses what it cannot hold, naming it; GB18030 takes it', () => {
    expect(firstUnencodable('X 😀 X', 'gbk')).toEqual({ index: 2, char: '😀' });
    expect(unencodableText('a.html', `${ZH}X 😀 X`, 'gbk', 'stored')).toMatch(
      /^a\.html is stored as gbk, which has no "😀" \(U\+1F600, line 2 of the new text\)/,
    );
    expect(firstUnencodable('X 😀 X', 'gb18030')).toBeUndefined();
    expect([...encodeTextExact('😀', 'gb18030')]).toEqual([0x94, 0x39, 0xfc, 0x36]);
    // Never a four-byte form from the GBK writer, whatever it is given.
    expect([...encodeTextExact('😀', 'gbk')]).toEqual([0x3f]);
  });

  it('the GBK writer writes every character the reader decodes from two bytes back as those bytes, and the euro as 0x80', () => {
    const pairs: number[] = [];
    for (let lead = 0x81; lead <= 0xfe; lead++) for (let trail = 0x40; trail <= 0xfe; trail++) if (trail !== 0x7f) pairs.push(lead, trail);
    const text = decodeLikeReader(Uint8Array.from(pairs), 'gbk');
    expect(firstUnencodable(text, 'gbk')).toBeUndefined();
    // Where two codes read as one character the writer takes the first, so the bytes differ but the text does not.
    expect(decodeLikeReader(encodeTextExact(text, 'gbk'), 'gbk')).toBe(text);
    // U+FE10 (read from A6 D9) is one iconv-lite's GBK table lacks: it wrote '?'.
    expect([...encodeTextExact('\ufe10€', 'gbk')]).toEqual([0xa6, 0xd9, 0x80]);
  });
});
