/**
 * Binary or text where the bytes say little, on real material (see
 * support/binary-corpus.ts), detected as every backend does (chardet's
 * legacy detector): a model must get the file's text or a clear "binary",
 * never mojibake.
 *
 * Measured when this corpus was built, before and after the BOM, short-file
 * and zero-free UTF-16 rules of encoding.ts:
 *
 * - binary data starting with `FF FE` or `FE FF`: 1,351 of 1,351 served as
 *   UTF-16 text before, 67 after (all of 4 to 8 bytes: one to three code
 *   units, such as a full-width letter or a common Han character), and 34
 *   once a BOM'd text of 32 units or more needs no plausible language (mixed
 *   writing, `中文a中文b`, was binary) while a shorter one keeps to common
 *   CJK; UTF-16 text with a BOM: none of 2,944 binary, before or after;
 * - windows of 2 to 17 bytes of binary files: of the 3,101 whose bytes are
 *   no printable text, 488 served as text before, 225 after (ASCII or a
 *   legacy reading as plausible as real text's); the 811 that are printable
 *   text (string tables, SQLite rows) are text before and after, as a file
 *   holding the same bytes is; short real text (4,111 pieces in ASCII,
 *   UTF-8 and 14 legacy encodings): none binary, before or after;
 * - BOM-less UTF-16 of utf16-corpus.ts: 358 of 2,522 texts missed before,
 *   79 after, all Japanese or Chinese fragments of 4 to 40 code units (of
 *   ASCII bytes alone, such as `の` = 6E 30; with a legacy reading as
 *   plausible as text; or with two zero bytes but no line break); none of
 *   3,824 binaries, 3,912 short binary windows or 4,111 short texts called
 *   UTF-16, before or after.
 */
import { readFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectEncoding, type EncodingInfo } from '../src/encoding.ts';
import { chardetDetector } from '../src/legacy-detector.ts';
import { bomBinaries, bomTexts, type Case, shortBinaries, shortTexts } from './support/binary-corpus.ts';
import { binaries, translations, utf16Texts } from './support/utf16-corpus.ts';

const detect = (bytes: Uint8Array): EncodingInfo => detectEncoding(bytes, { legacyDetector: chardetDetector });
const show = (id: string, bytes: Uint8Array, got: EncodingInfo) => `${id} [${Buffer.from(bytes.subarray(0, 24)).toString('hex')}] → ${got.encoding}`;
const served = (cases: readonly Case[], wrong: (c: Case, got: EncodingInfo) => boolean) =>
  cases.flatMap((c) => {
    const got = detect(c.bytes);
    return wrong(c, got) ? [show(c.id, c.bytes, got)] : [];
  });

let bomBinary: Case[] = [];
let bomText: Case[] = [];
let shortBinary: Case[] = [];
let shortText: Case[] = [];

beforeAll(async () => {
  bomBinary = await bomBinaries();
  bomText = bomTexts();
  shortBinary = await shortBinaries();
  shortText = shortTexts();
}, 300_000);

describe('a UTF-16 byte-order mark does not override what follows it', () => {
  it('binary data that starts with FF FE or FE FF is binary, but for a few code units', () => {
    const wrong = served(bomBinary, (_c, got) => !got.binary);
    console.log(`BOM'd binary: ${bomBinary.length} cases, ${wrong.length} served as text`);
    expect(bomBinary.length).toBeGreaterThan(1000);
    expect(wrong.filter((w) => !/ [4-8]B \[/.test(w))).toEqual([]);
    expect(wrong.length).toBeLessThanOrEqual(34);
  });

  it('UTF-16 text with a BOM is UTF-16: whole, one character, CJK alone, INI lines, form feeds', () => {
    expect(bomText.length).toBeGreaterThan(2500);
    expect(served(bomText, (c, got) => got.encoding !== c.encoding)).toEqual([]);
  });

  it('UTF-16 text with a BOM that mixes scripts and emoji is UTF-16, short or long', () => {
    // Each message of a translation beside its English original and an emoji, as chat logs and code comments mix them.
    const mixed = translations()
      .filter((t) => /^(zh|ja|ko)/.test(t.language))
      .flatMap((t) => t.messages.slice(0, 50).map((m, i) => `${m.slice(0, 12)}${i % 2 === 0 ? ' 😀 ' : ''}${['a', 'ok', 'TS'][i % 3]}${m.slice(12, 30)}`));
    mixed.push('中文a中文b', 'Grüße 世界', `${'😀a中'.repeat(100)}\n`.repeat(30));
    const cases = mixed.flatMap((text, i) => [
      { id: `mixed ${i} le`, bytes: new Uint8Array([0xff, 0xfe, ...Buffer.from(text, 'utf16le')]), kind: 'text' as const, encoding: 'utf-16le' },
    ]);
    expect(cases.length).toBeGreaterThan(100);
    expect(served(cases, (c, got) => got.encoding !== c.encoding)).toEqual([]);
  });
});

describe('a file of a few bytes', () => {
  it('binary windows that hold no printable text are mostly binary', () => {
    const unprintable = shortBinary.filter((c) => c.kind === 'binary');
    const wrong = served(unprintable, (_c, got) => !got.binary);
    console.log(`short binary: ${unprintable.length} cases, ${wrong.length} served as text`);
    expect(unprintable.length).toBeGreaterThan(3000);
    expect(wrong.length).toBeLessThanOrEqual(225);
  });

  it('binary windows that hold printable text are the text a file of those bytes is', () => {
    const printable = shortBinary.filter((c) => c.kind === 'printable-binary');
    expect(printable.length).toBeGreaterThan(500);
    expect(served(printable, (_c, got) => got.binary || got.encoding.startsWith('utf-16'))).toEqual([]);
  });

  it('short real text is never binary nor UTF-16, in ASCII, UTF-8 or a legacy encoding', () => {
    expect(shortText.length).toBeGreaterThan(4000);
    expect(served(shortText, (_c, got) => got.binary || got.encoding.startsWith('utf-16'))).toEqual([]);
  });
});

describe('short UTF-16 without BOM and without zero bytes', () => {
  it('most is UTF-16 in its byte order, and no binary data is', async () => {
    const texts = utf16Texts();
    const missed = texts.filter((c) => detect(c.bytes).encoding !== c.expected);
    console.log(`BOM-less UTF-16 with chardet: ${texts.length} texts, ${missed.length} missed`);
    expect(missed.filter((c) => detect(c.bytes).encoding.startsWith('utf-16')).map((c) => c.id)).toEqual([]);
    expect(missed.length).toBeLessThanOrEqual(79);
    const binary = [...(await binaries()), ...shortBinary];
    const wide = binary.filter((c) => detect(c.bytes).encoding.startsWith('utf-16'));
    expect(wide.map((c) => show(c.id, c.bytes, detect(c.bytes)))).toEqual([]);
  }, 120_000);
});

describe('a UTF-32 byte-order mark does not override what follows it either', () => {
  // `FF FE 00 00` is also the integer 0xFEFF as code that handles byte-order marks stores it: Node's executable holds
  // it, and `00 00 FE FF`, in hundreds of places.
  it("windows of Node's executable starting at those bytes are binary, but for a mark alone or with one unit", () => {
    const exe = readFileSync(process.execPath);
    const cases: Case[] = [];
    for (let i = 0; i + 3 < exe.length; i++) {
      const le = exe[i] === 0xff && exe[i + 1] === 0xfe && exe[i + 2] === 0 && exe[i + 3] === 0;
      const be = exe[i] === 0 && exe[i + 1] === 0 && exe[i + 2] === 0xfe && exe[i + 3] === 0xff;
      if (!le && !be) continue;
      for (const n of [4, 8, 12, 16, 64, 256, 4096]) {
        if (i + n <= exe.length) cases.push({ id: `node executable @${i} ${n}B`, bytes: exe.subarray(i, i + n), kind: 'binary' });
      }
    }
    const wrong = served(cases, (_c, got) => !got.binary);
    console.log(`UTF-32 BOM'd binary: ${cases.length} cases, ${wrong.length} served as text`);
    expect(cases.length).toBeGreaterThan(1000);
    expect(wrong.filter((w) => !/ (4|8|12)B \[/.test(w))).toEqual([]);
    expect(wrong.length).toBeLessThanOrEqual(363);
  });

  it('UTF-32 text with a BOM is UTF-32, in both byte orders: whole translations and single messages', () => {
    const texts = translations().flatMap((t) => [t.file, ...t.messages.slice(0, 20)]);
    const wrong: string[] = [];
    for (const [i, text] of texts.entries()) {
      for (const [encoding, label] of [
        ['utf-32le', 'utf32le'],
        ['utf-32be', 'utf32be'],
      ] as const) {
        const bytes = new Uint8Array(iconv.encode(text, label, { addBOM: true }));
        const got = detect(bytes);
        if (got.encoding !== encoding || iconv.decode(Buffer.from(bytes.subarray(got.bomLength)), label) !== text)
          wrong.push(`${i} ${label} → ${got.encoding}`);
      }
    }
    expect(texts.length).toBeGreaterThan(200);
    expect(wrong).toEqual([]);
  });
});
