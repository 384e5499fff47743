/**
 * The detection classes of issue 11 that the old detector got wrong, one
 * mechanism each (the accuracy figures come from the real-text corpus in
 * packages/host/test/encoding-corpus.test.ts and `pnpm eval:encoding`).
 */

import { describe, expect, it } from 'vitest';
import { createByteReader } from '../src/byte-reader.ts';
import { concatBytes } from '../src/bytes.ts';
import { detectEncoding, encodeText } from '../src/encoding.ts';
import { chardetDetector, detectTextFormat } from '../src/legacy-detector.ts';
import { createTextReader } from '../src/text-reader.ts';
import { decodeLikeReader, encodeIso2022Jp, encodeTextExact, firstUnencodable, isLoneSurrogate, unencodableText } from '../src/text-roundtrip.ts';

const JA = '朝早く、小さな港町の市場はもう人でいっぱいだった。漁師たちは夜のうちに取れた魚を並べていた。\n';
const RU = 'Псевдоним для %s не найден. Проверьте имя и попробуйте ещё раз.\n';
const ASCII_LINE = 'const value = compute(input, { retries: 3, timeout: 1000 }); // plain ASCII source\n';
const concat = (...parts: Uint8Array[]) => concatBytes(parts);
const ascii = (bytes: number) => new TextEncoder().encode(ASCII_LINE.repeat(Math.ceil(bytes / ASCII_LINE.length)));

describe('detection classes', () => {
  it('7-bit ISO-2022-JP is not taken for UTF-8', () => {
    const bytes = encodeIso2022Jp(JA);
    expect(bytes.every((x) => x < 0x80)).toBe(true);
    expect(detectEncoding(bytes)).toMatchObject({ encoding: 'iso-2022-jp', source: 'legacy' });
  });

  it('non-ASCII text after the detection sample is detected where it starts, not guessed from the ASCII', () => {
    const bytes = concat(ascii(20_000), encodeText(RU, 'koi8-r'));
    const info = detectEncoding(bytes, { legacyDetector: chardetDetector });
    expect(info.encoding).toBe('koi8-r');
    expect(decodeLikeReader(bytes, info.encoding).endsWith(RU)).toBe(true);
  });

  it('a streaming reader re-detects when the first non-ASCII byte comes after its first window', async () => {
    const bytes = concat(ascii(100_000), encodeText(RU, 'koi8-r'));
    const reader = createByteReader({ size: bytes.length, readAt: (p, n) => bytes.subarray(p, p + n) }, { path: 'late.txt', chunkSize: 16_384 });
    const text = await createTextReader(reader, { detect: { legacyDetector: chardetDetector } });
    let out = '';
    for await (const t of text) out += t;
    expect(out.endsWith(RU)).toBe(true);
    expect(out.length).toBe(bytes.length - encodeText(RU, 'koi8-r').length + RU.length);
    expect(text.encoding).toBe('koi8-r');
  });

  it.each([
    ['a stray 0xFF', concat(new TextEncoder().encode(RU), Uint8Array.of(0xff), new TextEncoder().encode(RU))],
    ['a pasted windows-1252 line', concat(new TextEncoder().encode(RU), encodeText('Déjà vu à côté du café.\n', 'windows-1252'), new TextEncoder().encode(RU))],
    ['a cut last character', new TextEncoder().encode(`${RU}${RU}ещё`).slice(0, -1)],
  ])('UTF-8 with %s is UTF-8, and writes back byte for byte', (_name, bytes) => {
    const info = detectEncoding(bytes, { legacyDetector: chardetDetector });
    expect(info.encoding).toBe('utf-8');
    const text = decodeLikeReader(bytes, 'utf-8');
    expect(text).toContain('\ufffd');
    expect(Buffer.from(encodeTextExact(text, 'utf-8', bytes)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('short Latin-1 text is windows-1252 unless only ISO-8859-15 makes sense of it', () => {
    expect(detectTextFormat(encodeText('Crème brûlée à la carte\n', 'windows-1252')).encoding).toBe('windows-1252');
    expect(detectTextFormat(encodeText('Le prix est de 5 € pour une œuvre\n', 'iso-8859-15')).encoding).toBe('iso-8859-15');
  });

  it('Japanese in EUC-JP is not read as GB18030, nor Chinese in GB18030 as EUC-JP', () => {
    expect(detectTextFormat(encodeText(JA, 'euc-jp')).encoding).toBe('euc-jp');
    // Without a four-byte sequence the GB18030 bytes are GBK's, and named so (gbk-strict.test.ts).
    expect(detectTextFormat(encodeText('今天早上，小港口的市场已经挤满了人。渔民们把夜里捕到的鱼摆好。\n', 'gb18030')).encoding).toBe('gbk');
  });

  it('an unchanged line keeps its old bytes even where the encoder would write others', () => {
    // Big5 (as WHATWG decodes it) has characters iconv-lite encodes to other codes.
    const bytes = Uint8Array.of(0x61, 0x0a, 0xf9, 0xfe, 0x0a, 0x62, 0x0a);
    const text = decodeLikeReader(bytes, 'big5');
    expect(Buffer.from(encodeTextExact(text, 'big5', bytes)).equals(Buffer.from(bytes))).toBe(true);
    const edited = encodeTextExact(text.replace('a', 'c'), 'big5', bytes);
    expect([...edited.subarray(1)]).toEqual([...bytes.subarray(1)]);
  });
});

describe('detection of short and damaged text', () => {
  it.each([
    ['Usuń kolumnę', 'windows-1250'],
    ['Uložit změny', 'windows-1250'],
    ['Dosyayı kaydet', 'windows-1254'],
    ['Įrašyti failą', 'windows-1257'],
    ['Άνοιγμα αρχείου σε νέα καρτέλα', 'windows-1253'],
  ])('a short string whose accented letters several languages use reads in its own language: %s (%s)', (text, encoding) => {
    const bytes = encodeText(text, encoding);
    expect(decodeLikeReader(bytes, detectTextFormat(bytes).encoding)).toBe(text);
  });

  it('English with one CJK dash or quote reads in the CJK encoding, not as ¡ glued between letters', () => {
    for (const encoding of ['big5', 'gb18030']) {
      const text = 'Toggle the “upper–roman” list style';
      const bytes = encodeText(text, encoding);
      expect(decodeLikeReader(bytes, detectTextFormat(bytes).encoding)).toBe(text);
    }
  });

  it('UTF-8 with few multi-byte characters and a pasted windows-1252 line stays UTF-8', () => {
    const bytes = concat(
      new TextEncoder().encode('title: “Report”\n'),
      encodeText('Déjà vu à côté du café\n', 'windows-1252'),
      new TextEncoder().encode('end\n'),
    );
    expect(detectEncoding(bytes, { legacyDetector: chardetDetector }).encoding).toBe('utf-8');
  });

  it('a whole file cut inside its only multi-byte character is UTF-8; a legacy file ending on a plausible letter is not', () => {
    const whole = new TextEncoder().encode('msgid "Insert code block"\nmsgstr "Insérer');
    expect(detectTextFormat(whole.slice(0, whole.indexOf(0xc3) + 1)).encoding).toBe('utf-8');
    const legacy = encodeText('msgstr "Wstaw tabelę', 'windows-1250');
    expect(detectTextFormat(legacy).encoding).toBe('windows-1250');
  });
});

describe('what an encoding cannot hold', () => {
  it('half of a UTF-16 pair, in every encoding; a whole pair only where the encoding lacks the character', () => {
    for (const encoding of ['utf-8', 'utf-16le', 'gb18030', 'windows-1252', 'koi8-r', 'shift_jis']) {
      expect(firstUnencodable('ab \ud83d cd', encoding), encoding).toEqual({ index: 3, char: '\ud83d' });
      expect(firstUnencodable('a\udc00', encoding), encoding).toEqual({ index: 1, char: '\udc00' });
    }
    expect(isLoneSurrogate('\ud83d')).toBe(true);
    expect(isLoneSurrogate('😀')).toBe(false);
    expect(firstUnencodable('ok 😀', 'utf-8')).toBeUndefined();
    expect(firstUnencodable('ok 😀', 'windows-1252')).toEqual({ index: 3, char: '😀' });
    expect(firstUnencodable('привет ✅', 'koi8-r')).toEqual({ index: 7, char: '✅' });
  });

  it('the refusal names the character, its code point and line, says nothing was written, and what to send instead', () => {
    expect(unencodableText('a.txt', 'Привет\n', 'koi8-r', 'stored')).toBeUndefined();
    expect(unencodableText('a.txt', 'Привет\nмир 日本', 'koi8-r', 'stored')).toBe(
      'a.txt is stored as koi8-r, which has no "日" (U+65E5, line 2 of the new text): written, it would turn into another character. Nothing was written. Use characters koi8-r has (an ASCII spelling, or the word in the file\'s own script), or ask the user to convert the file to UTF-8 first.',
    );
    expect(unencodableText('b.txt', 'café Привет', 'latin1', 'chose')).toMatch(
      /^b\.txt is to be written as latin1, which has no "П" \(U\+041F, line 1 .* or write it as UTF-8\.$/,
    );
    // Half of a pair is no character at all: the same sentence whatever the encoding or where the text goes.
    const lone = unencodableText('c.txt', 'ok\nx \ud83d\n', 'utf-8', 'chose');
    expect(lone).toBe(
      "The new text holds U+D83D (line 2), half of a character's UTF-16 pair without the other half: no encoding holds one, and written it would turn into U+FFFD. Nothing was written. Send the whole character (both halves of the pair), or leave it out.",
    );
    expect(unencodableText('c.txt', 'ok\nx \ud83d\n', 'koi8-r', 'stored')).toBe(lone);
  });
});
