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
 *   units, such as a full-width letter or a common Han character); UTF-16
 *   text with a BOM: none of 2,944 binary, before or after;
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
import { beforeAll, describe, expect, it } from 'vitest';
import { detectEncoding, type EncodingInfo } from '../src/encoding.ts';
import { chardetDetector } from '../src/legacy-detector.ts';
import { bomBinaries, bomTexts, type Case, shortBinaries, shortTexts } from './support/binary-corpus.ts';
import { binaries, utf16Texts } from './support/utf16-corpus.ts';

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
    expect(wrong.length).toBeLessThanOrEqual(67);
  });

  it('UTF-16 text with a BOM is UTF-16: whole, one character, CJK alone, INI lines, form feeds', () => {
    expect(bomText.length).toBeGreaterThan(2500);
    expect(served(bomText, (c, got) => got.encoding !== c.encoding)).toEqual([]);
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
