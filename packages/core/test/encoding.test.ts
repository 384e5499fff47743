import { describe, expect, it } from 'vitest';
import {
  createDecoder,
  DETECTION_SAMPLE_BYTES,
  detectBom,
  detectEncoding,
  encodeText,
  isSupportedEncoding,
  isValidUtf8,
  looksBinary,
  normalizeEncoding,
} from '../src/encoding.ts';

const b = (...bytes: number[]) => new Uint8Array(bytes);
const enc = (s: string) => new TextEncoder().encode(s);

function utf16(text: string, endian: 'le' | 'be'): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[i * 2 + (endian === 'le' ? 0 : 1)] = c & 0xff;
    out[i * 2 + (endian === 'le' ? 1 : 0)] = c >> 8;
  }
  return out;
}

describe('detectBom', () => {
  it.each<[string, Uint8Array, { encoding: string; length: number } | undefined]>([
    ['UTF-8', b(0xef, 0xbb, 0xbf, 0x61), { encoding: 'utf-8', length: 3 }],
    ['UTF-8 alone', b(0xef, 0xbb, 0xbf), { encoding: 'utf-8', length: 3 }],
    ['UTF-16LE', b(0xff, 0xfe, 0x61, 0x00), { encoding: 'utf-16le', length: 2 }],
    ['UTF-16LE alone', b(0xff, 0xfe), { encoding: 'utf-16le', length: 2 }],
    ['UTF-16LE then one NUL', b(0xff, 0xfe, 0x00), { encoding: 'utf-16le', length: 2 }],
    ['UTF-16BE', b(0xfe, 0xff, 0x00, 0x61), { encoding: 'utf-16be', length: 2 }],
    ['UTF-32LE', b(0xff, 0xfe, 0x00, 0x00), { encoding: 'utf-32le', length: 4 }],
    ['UTF-32BE', b(0x00, 0x00, 0xfe, 0xff), { encoding: 'utf-32be', length: 4 }],
    ['none', enc('plain'), undefined],
    ['empty', b(), undefined],
    ['truncated UTF-8 BOM', b(0xef, 0xbb), undefined],
    ['one byte of a UTF-16 BOM', b(0xff), undefined],
  ])('%s', (_name, bytes, expected) => {
    expect(detectBom(bytes)).toEqual(expected);
  });
});

describe('looksBinary', () => {
  it.each<[string, Uint8Array, boolean]>([
    ['empty', b(), false],
    ['plain text', enc('hello world\n'), false],
    ['text with tabs, CR, FF, VT, ESC', enc('a\tb\r\n\f\v\x1b[0m'), false],
    ['a NUL', b(0x61, 0x00, 0x62), true],
    ['a NUL at the very end', enc('text\0'), true],
    ['many control bytes', b(1, 2, 3, 4, 0x61, 0x62), true],
    ['a few control bytes in much text (≤10%)', enc(`${'a'.repeat(95)}\x01\x02\x03\x04\x05`), false],
    ['just over 10% control bytes', enc(`${'a'.repeat(89)}${'\x01'.repeat(11)}`), true],
    ['UTF-8 multibyte text', enc('日本語 😀'), false],
  ])('%s → %s', (_name, bytes, expected) => {
    expect(looksBinary(bytes)).toBe(expected);
  });
});

describe('isValidUtf8', () => {
  it.each<[string, Uint8Array, boolean]>([
    ['empty', b(), true],
    ['ASCII', enc('hello'), true],
    ['2-byte é', b(0xc3, 0xa9), true],
    ['3-byte €', b(0xe2, 0x82, 0xac), true],
    ['4-byte 😀', b(0xf0, 0x9f, 0x98, 0x80), true],
    ['U+10FFFF', b(0xf4, 0x8f, 0xbf, 0xbf), true],
    ['U+FFFF', b(0xef, 0xbf, 0xbf), true],
    ['U+D7FF (just below surrogates)', b(0xed, 0x9f, 0xbf), true],
    ['U+E000 (just above surrogates)', b(0xee, 0x80, 0x80), true],
    ['overlong NUL C0 80', b(0xc0, 0x80), false],
    ['overlong C1 BF', b(0xc1, 0xbf), false],
    ['overlong 3-byte E0 80 80', b(0xe0, 0x80, 0x80), false],
    ['overlong 3-byte E0 9F BF', b(0xe0, 0x9f, 0xbf), false],
    ['overlong 4-byte F0 80 80 80', b(0xf0, 0x80, 0x80, 0x80), false],
    ['overlong 4-byte F0 8F BF BF', b(0xf0, 0x8f, 0xbf, 0xbf), false],
    ['surrogate U+D800', b(0xed, 0xa0, 0x80), false],
    ['surrogate U+DFFF', b(0xed, 0xbf, 0xbf), false],
    ['above U+10FFFF', b(0xf4, 0x90, 0x80, 0x80), false],
    ['F5 lead', b(0xf5, 0x80, 0x80, 0x80), false],
    ['FF byte', b(0xff), false],
    ['lone continuation', b(0x80), false],
    ['continuation after ASCII', b(0x61, 0xbf), false],
    ['lead followed by ASCII', b(0xc3, 0x41), false],
    ['3-byte lead with bad second continuation', b(0xe2, 0x82, 0x41), false],
    ['truncated 2-byte at end', b(0x61, 0xc3), false],
    ['truncated 3-byte at end', b(0xe2, 0x82), false],
    ['truncated 4-byte at end', b(0xf0, 0x9f, 0x98), false],
    ['Latin-1 é', b(0x63, 0x61, 0x66, 0xe9), false],
  ])('%s → %s', (_name, bytes, expected) => {
    expect(isValidUtf8(bytes)).toBe(expected);
  });

  it.each<[string, Uint8Array, boolean]>([
    ['truncated 2-byte', b(0x61, 0xc3), true],
    ['truncated 3-byte', b(0xe2, 0x82), true],
    ['truncated 4-byte after one byte', b(0xf0), true],
    ['truncated with a non-continuation inside', b(0xf0, 0x41, 0x80), false],
    ['invalid before the end still fails', b(0x80, 0x61), false],
    ['complete input', b(0xe2, 0x82, 0xac), true],
  ])('allowTruncatedEnd: %s → %s', (_name, bytes, expected) => {
    expect(isValidUtf8(bytes, true)).toBe(expected);
  });
});

describe('detectEncoding', () => {
  it('a BOM wins', () => {
    expect(detectEncoding(b(0xef, 0xbb, 0xbf, 0x61))).toMatchObject({ encoding: 'utf-8', bomLength: 3, binary: false, source: 'bom', confidence: 1 });
    expect(detectEncoding(b(0xff, 0xfe, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00))).toMatchObject({ encoding: 'utf-32le', bomLength: 4, source: 'bom' });
  });

  it('a UTF-16 BOM followed by what reads as no text is binary; a BOM alone or before punctuation is text', () => {
    // x86 code of Node's executable after FF FE: U+C085, U+0874 …, then a lone surrogate.
    expect(detectEncoding(b(0xff, 0xfe, 0x85, 0xc0, 0x74, 0x08, 0x01, 0xd8, 0x41, 0x00, 0x41, 0x00))).toMatchObject({ binary: true });
    expect(detectEncoding(b(0xfe, 0xff, 0x03, 0x3b, 0x01, 0x84))).toMatchObject({ binary: true });
    expect(detectEncoding(b(0xff, 0xfe))).toMatchObject({ encoding: 'utf-16le', bomLength: 2, binary: false });
    expect(detectEncoding(b(0xfe, 0xff, 0x20, 0x1c, 0x00, 0x7b))).toMatchObject({ encoding: 'utf-16be', binary: false });
    expect(detectEncoding(utf16('\ufeff[section]\r\n"key"=dword:00000001\r\n\f\r\n', 'le'))).toMatchObject({ encoding: 'utf-16le', binary: false });
  });

  it('a file of a few bytes is binary when a control byte or its best legacy reading says so, text otherwise', () => {
    const detect = (bytes: Uint8Array) => detectEncoding(bytes, { legacyDetector: () => ({ encoding: 'windows-1252', confidence: 0.5 }) });
    expect(detect(b(0x7f, 0x45, 0x4c, 0x46))).toMatchObject({ binary: true });
    expect(detect(b(0x53, 0x31, 0x88, 0x8b, 0x87, 0xde, 0x85, 0x91, 0x83, 0x98, 0x92, 0xb8))).toMatchObject({ binary: true });
    expect(detect(b(0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a))).toMatchObject({ encoding: 'windows-1252', binary: false });
    expect(detect(enc('one line of text\r\n\x1a'))).toMatchObject({ binary: false });
  });

  it('a few CJK characters in UTF-16 without BOM or zero byte are UTF-16 when no other reading is text', () => {
    expect(detectEncoding(utf16('识别码。', 'le'))).toMatchObject({ encoding: 'utf-16le', binary: false });
    expect(detectEncoding(utf16('Требуется', 'be'))).toMatchObject({ encoding: 'utf-16be', binary: false });
    // 16-bit integers counting from 0x1000 read as Myanmar letters in a row.
    expect(detectEncoding(b(0x00, 0x10, 0x01, 0x10, 0x02, 0x10, 0x03, 0x10))).toMatchObject({ binary: true });
  });

  it('BOM-less UTF-16LE text is recognized by its zero high bytes', () => {
    expect(detectEncoding(utf16('hello world, plain text\n', 'le'))).toMatchObject({
      encoding: 'utf-16le',
      bomLength: 0,
      binary: false,
      source: 'utf16-heuristic',
    });
  });

  it('BOM-less UTF-16BE text is recognized', () => {
    expect(detectEncoding(utf16('hello world, plain text\n', 'be'))).toMatchObject({ encoding: 'utf-16be', source: 'utf16-heuristic' });
  });

  it('a UTF-16 guess needs at least two code units', () => {
    expect(detectEncoding(b(0x61, 0x00))).toMatchObject({ binary: true });
  });

  it('random bytes with NULs everywhere are binary, not UTF-16', () => {
    expect(detectEncoding(b(0, 0, 0, 0, 1, 0, 0, 2, 0, 0))).toMatchObject({ encoding: 'binary', binary: true, source: 'binary' });
  });

  it('ASCII text with a NUL or two in it is binary, not UTF-16 however short (an edit would have re-encoded it)', () => {
    expect(detectEncoding(enc('first line\nhas a NUL\0 here\nthird line\n'))).toMatchObject({ encoding: 'binary', binary: true });
    expect(detectEncoding(enc('ab\0cd\0efghijklmnop'))).toMatchObject({ encoding: 'binary', binary: true });
    expect(detectEncoding(enc(`${'const x = 1;\n'.repeat(20)}\0${'const y = 2;\n'.repeat(20)}`))).toMatchObject({ binary: true });
  });

  it('BOM-less CJK UTF-16, where zero bytes are few, is still UTF-16', () => {
    const text = '日本語のテキストです。\n二行目もあります。\n三行目、終わり。\n';
    expect(detectEncoding(utf16(text, 'le'))).toMatchObject({ encoding: 'utf-16le', binary: false });
    expect(detectEncoding(utf16(text, 'be'))).toMatchObject({ encoding: 'utf-16be', binary: false });
  });

  it('16-bit integers counting up are binary, though their zero bytes fall like UTF-16 text', () => {
    // 01 00 02 00 … and 00 01 00 02 …: U+0001 to U+0007 read as UTF-16.
    const le = b(1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0);
    expect(detectEncoding(le)).toMatchObject({ encoding: 'binary', binary: true });
    expect(detectEncoding(b(0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7))).toMatchObject({ encoding: 'binary', binary: true });
    expect(detectEncoding(b(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1))).toMatchObject({ binary: true });
    // Whitespace alone is no text to serve.
    expect(detectEncoding(b(9, 0, 10, 0, 11, 0, 12, 0))).toMatchObject({ binary: true });
  });

  it('the 14-byte run 00 01 … 0D is binary', () => {
    expect(detectEncoding(Uint8Array.from({ length: 14 }, (_, i) => i))).toMatchObject({ encoding: 'binary', binary: true });
  });

  it('short binary records whose bytes read as scattered characters are binary', () => {
    // A GIF's first 12 bytes (`䥇㡆愹¯1Õ` as UTF-16LE), WebAssembly (`Ġ -䄅`, `AG∌煅`, `р ⠂屁 `).
    expect(detectEncoding(b(0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0xaf, 0x00, 0x31, 0x00, 0xd5, 0x00))).toMatchObject({ binary: true });
    expect(detectEncoding(b(0x20, 0x01, 0x20, 0x00, 0x2d, 0x00, 0x05, 0x41))).toMatchObject({ binary: true });
    expect(detectEncoding(b(0x00, 0x41, 0x00, 0x47, 0x22, 0x0c, 0x71, 0x45))).toMatchObject({ binary: true });
    expect(detectEncoding(b(0x04, 0x40, 0x20, 0x00, 0x28, 0x02, 0x5c, 0x41, 0x00, 0x20))).toMatchObject({ binary: true });
  });

  it('short UTF-16 text is still UTF-16: a word or two of Latin, Cyrillic or Japanese', () => {
    expect(detectEncoding(utf16('In TypeDef e', 'le')).encoding).toBe('utf-16le');
    expect(detectEncoding(utf16('Hi!\n', 'be')).encoding).toBe('utf-16be');
    expect(detectEncoding(utf16('Требуется идентификатор\n', 'le')).encoding).toBe('utf-16le');
    expect(detectEncoding(utf16('switch ステートメント\n', 'be')).encoding).toBe('utf-16be');
    expect(detectEncoding(utf16('Բարեւ աշխարհ\n', 'le')).encoding).toBe('utf-16le');
    expect(detectEncoding(utf16('Xin chào thế giới\n', 'le')).encoding).toBe('utf-16le');
  });

  it('BOM-less CJK UTF-16 is never read in the wrong byte order', () => {
    // Both orders decode to assigned characters; little-endian's are not writing.
    expect(detectEncoding(utf16('“{0}”选项的参', 'be')).encoding).not.toBe('utf-16le');
    expect(detectEncoding(utf16("需要識別碼。'{0}' 是", 'be')).encoding).toBe('utf-16be');
  });

  it('a whole file of odd length is not BOM-less UTF-16; a prefix of one may be', () => {
    const text = utf16('hello world, plain text\n', 'le');
    const odd = new Uint8Array([...text, 0x21]);
    expect(detectEncoding(odd)).toMatchObject({ binary: true });
    expect(detectEncoding(odd, { partial: true }).encoding).toBe('utf-16le');
  });

  it('UTF-16 text whose sample ends inside a surrogate pair is still UTF-16', () => {
    const lines = '日本語の文です。\n'.repeat(1000);
    const text = utf16(`${lines.slice(0, DETECTION_SAMPLE_BYTES / 2 - 1)}😀\n${lines}`, 'le');
    expect(text[DETECTION_SAMPLE_BYTES - 1]).toBe(0xd8);
    expect(detectEncoding(text).encoding).toBe('utf-16le');
  });

  it('UTF-8 text', () => {
    expect(detectEncoding(enc('héllo 日本 😀'))).toMatchObject({ encoding: 'utf-8', bomLength: 0, binary: false, source: 'utf-8', confidence: 1 });
  });

  it('empty input is UTF-8', () => {
    expect(detectEncoding(b())).toMatchObject({ encoding: 'utf-8', binary: false });
  });

  it('a full-size sample cut inside a character is still UTF-8', () => {
    const sample = new Uint8Array(DETECTION_SAMPLE_BYTES);
    sample.fill(0x61);
    sample[DETECTION_SAMPLE_BYTES - 1] = 0xe2;
    expect(detectEncoding(sample).encoding).toBe('utf-8');
  });

  it('a short (whole-file) sample ending inside a character is not UTF-8', () => {
    expect(detectEncoding(b(0x61, 0x62, 0xe2)).source).toBe('legacy');
  });

  it('non-UTF-8 text falls back to windows-1252', () => {
    expect(detectEncoding(b(0x63, 0x61, 0x66, 0xe9))).toMatchObject({ encoding: 'windows-1252', source: 'legacy', binary: false });
  });

  it('legacyFallback replaces the default', () => {
    expect(detectEncoding(b(0x63, 0xe9), { legacyFallback: 'iso-8859-15' }).encoding).toBe('iso-8859-15');
  });

  it('a legacy detector is asked and its answer normalized', () => {
    const info = detectEncoding(b(0x82, 0xa0), { legacyDetector: () => ({ encoding: 'Shift-JIS', confidence: 0.7 }) });
    expect(info).toMatchObject({ encoding: 'shift_jis', source: 'legacy', confidence: 0.7 });
  });

  it('an unsupported legacy answer is ignored', () => {
    const info = detectEncoding(b(0x63, 0xe9), { legacyDetector: () => ({ encoding: 'klingon', confidence: 0.9 }) });
    expect(info.encoding).toBe('windows-1252');
  });

  it('the legacy detector is not asked for UTF-8', () => {
    let asked = false;
    detectEncoding(enc('ok'), {
      legacyDetector: () => {
        asked = true;
        return undefined;
      },
    });
    expect(asked).toBe(false);
  });
});

describe('normalizeEncoding and isSupportedEncoding', () => {
  it.each([
    ['UTF8', 'utf-8'],
    [' utf-8 ', 'utf-8'],
    ['ucs2', 'utf-16le'],
    ['UTF16BE', 'utf-16be'],
    ['utf32le', 'utf-32le'],
    ['latin1', 'iso-8859-1'],
    ['SJIS', 'shift_jis'],
    ['Windows-1252', 'windows-1252'],
  ])('%j → %s', (label, expected) => {
    expect(normalizeEncoding(label)).toBe(expected);
  });

  it.each([
    ['utf-8', true],
    ['utf-16le', true],
    ['shift_jis', true],
    ['utf-32le', true],
    ['windows-1252', true],
    ['klingon', false],
  ])('%s supported: %s', (label, expected) => {
    expect(isSupportedEncoding(label)).toBe(expected);
  });
});

describe('createDecoder', () => {
  it('decodes a multi-byte character split across chunks', () => {
    const d = createDecoder('utf-8');
    const bytes = enc('a€😀b');
    let out = '';
    for (const byte of bytes) out += d.decode(b(byte));
    out += d.end();
    expect(out).toBe('a€😀b');
  });

  it('substitutes U+FFFD for invalid bytes by default', () => {
    const d = createDecoder('utf-8');
    expect(d.decode(b(0x61, 0xff, 0x62)) + d.end()).toBe('a\ufffdb');
  });

  it('an incomplete sequence at the end becomes U+FFFD', () => {
    const d = createDecoder('utf-8');
    expect(d.decode(b(0x61, 0xe2, 0x82)) + d.end()).toBe('a\ufffd');
  });

  it('fatal: invalid bytes are EDECODE with op and path', () => {
    const d = createDecoder('utf-8', { fatal: true, op: 'read', path: 'x.txt' });
    expect(() => d.decode(b(0xff))).toThrow(expect.objectContaining({ code: 'EDECODE', op: 'read', path: 'x.txt' }));
  });

  it('fatal: a truncated end is EDECODE', () => {
    const d = createDecoder('utf-8', { fatal: true });
    d.decode(b(0xe2, 0x82));
    expect(() => d.end()).toThrow(expect.objectContaining({ code: 'EDECODE' }));
  });

  it('does not strip a BOM (callers skip it)', () => {
    const d = createDecoder('utf-8');
    expect(d.decode(b(0xef, 0xbb, 0xbf, 0x61)) + d.end()).toBe('\ufeffa');
  });

  it('decodes UTF-16LE split inside a code unit', () => {
    const d = createDecoder('utf-16le');
    const bytes = utf16('hé😀', 'le');
    let out = '';
    for (const byte of bytes) out += d.decode(b(byte));
    expect(out + d.end()).toBe('hé😀');
    expect(d.encoding).toBe('utf-16le');
  });

  it('decodes UTF-32LE through iconv-lite', () => {
    const d = createDecoder('utf32le');
    expect(d.encoding).toBe('utf-32le');
    expect(d.decode(b(0x61, 0, 0, 0, 0x00, 0xf6, 0x01, 0x00)) + d.end()).toBe('a😀');
  });

  it('decodes windows-1252 and shift_jis', () => {
    expect(createDecoder('windows-1252').decode(b(0x80, 0xe9))).toBe('€é');
    const sj = createDecoder('shift_jis');
    expect(sj.decode(b(0x82, 0xa0)) + sj.end()).toBe('あ');
  });

  it('an unknown encoding is EINVAL with a hint', () => {
    expect(() => createDecoder('klingon')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});

describe('encodeText', () => {
  it('UTF-8 by default', () => {
    expect([...encodeText('é')]).toEqual([0xc3, 0xa9]);
  });

  it.each(['utf-16le', 'shift_jis', 'windows-1252', 'utf-16be'])('round-trips through %s', (label) => {
    const textIn = label === 'shift_jis' ? 'あいう abc' : label === 'windows-1252' ? 'café €' : 'hé 😀';
    const d = createDecoder(label);
    expect(d.decode(encodeText(textIn, label)) + d.end()).toBe(textIn);
  });

  it('an unknown encoding is EINVAL', () => {
    expect(() => encodeText('x', 'klingon')).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});
