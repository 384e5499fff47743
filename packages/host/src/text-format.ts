/**
 * Text reads and writes that keep a file's format. Reads detect the encoding
 * with core's `detectTextFormat` (BOM, ISO-2022-JP, UTF-16 without BOM,
 * binary, UTF-8, then the legacy detector). Writes to an existing file reuse
 * its encoding, byte-order mark and line endings, and encode with core's
 * `encodeTextExact`, which writes every U+FFFD that stands for an invalid
 * sequence of the old file back as those bytes: reading a file and writing
 * the same text back is byte-identical.
 *
 * @module
 */

import {
  type ByteReader,
  createTextReader,
  DETECTION_SAMPLE_BYTES,
  detectBom,
  detectTextFormat,
  encodeTextExact,
  fsError,
  type LegacyDetector,
  type LineEnding,
  normalizeEncoding,
  type TextOptions,
  type TextReader,
} from '@ctxfs/core';

/** Extra options of a text write. */
export interface TextWriteOptions {
  /**
   * Encoding of the written bytes. Default: the existing file's (detected),
   * UTF-8 for a new file.
   */
  encoding?: string;
  /** Write a byte-order mark. Default: as the existing file (none for a new file, or with an explicit encoding). */
  bom?: boolean;
  /** Line endings. Default `keep`: an existing CRLF file gets `\n` turned into `\r\n`; otherwise the text is written as given. */
  lineEnding?: 'lf' | 'crlf' | 'keep';
}

const BOMS: Record<string, Uint8Array> = {
  'utf-8': new Uint8Array([0xef, 0xbb, 0xbf]),
  'utf-16le': new Uint8Array([0xff, 0xfe]),
  'utf-16be': new Uint8Array([0xfe, 0xff]),
  'utf-32le': new Uint8Array([0xff, 0xfe, 0x00, 0x00]),
  'utf-32be': new Uint8Array([0x00, 0x00, 0xfe, 0xff]),
};

class FormatTextReader implements TextReader {
  readonly path: string;
  readonly encoding: string;
  readonly bom: boolean;
  readonly #inner: TextReader;
  constructor(inner: TextReader, encoding: string, bom: boolean) {
    this.#inner = inner;
    this.path = inner.path;
    this.encoding = encoding;
    this.bom = bom;
  }
  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this.#inner[Symbol.asyncIterator]();
  }
  lines(): AsyncIterableIterator<string> {
    return this.#inner.lines();
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Opens a text reader with format detection and lossless decoding. With
 * `fatal`, invalid bytes are an `EDECODE` error instead.
 */
export async function openTextDetected(
  open: () => Promise<ByteReader>,
  options: TextOptions,
  legacyDetector: LegacyDetector | undefined,
  relabel: (err: unknown) => unknown,
): Promise<TextReader> {
  let reader: ByteReader;
  try {
    reader = await open();
  } catch (err) {
    throw relabel(err);
  }
  try {
    const sample = await reader.read(DETECTION_SAMPLE_BYTES);
    let encoding: string;
    let bomLength = 0;
    if (options.encoding !== undefined) {
      encoding = normalizeEncoding(options.encoding);
      const bom = detectBom(sample);
      if (bom && bom.encoding === encoding) bomLength = bom.length;
    } else {
      const format = detectTextFormat(sample, { legacyDetector });
      if (format.binary) throw fsError('EBINARY', 'openText', reader.path, { reason: 'file looks binary (NUL or control bytes)' });
      encoding = format.encoding;
      bomLength = format.bomLength;
    }
    reader.seek(bomLength);
    const inner = await createTextReader(reader, { encoding, fatal: options.fatal ?? false });
    return new FormatTextReader(inner, encoding, bomLength > 0);
  } catch (err) {
    await reader.close();
    throw relabel(err);
  }
}

function applyLineEnding(text: string, ending: 'lf' | 'crlf' | 'keep'): string {
  if (ending === 'crlf') return text.includes('\r\n') ? text.replace(/\r?\n/g, '\r\n') : text.replaceAll('\n', '\r\n');
  if (ending === 'lf') return text.replaceAll('\r\n', '\n');
  return text;
}

/** How {@link encodeForFile} sees the file being replaced. */
export interface ExistingFile {
  /** Its first bytes; undefined for a missing file. */
  head(): Promise<Uint8Array | undefined>;
  /** All of its bytes, or undefined when missing or too large to hold. */
  all(): Promise<Uint8Array | undefined>;
}

/** Encodes `text` for writing over `existing`, keeping its format unless told otherwise. */
export async function encodeForFile(
  text: string,
  options: TextWriteOptions & { mode?: string },
  existing: ExistingFile,
  legacyDetector: LegacyDetector | undefined,
): Promise<Uint8Array> {
  let encoding = 'utf-8';
  let bom: Uint8Array = new Uint8Array(0);
  let ending: 'lf' | 'crlf' | 'keep' = options.lineEnding ?? 'keep';
  if (options.encoding !== undefined) {
    encoding = normalizeEncoding(options.encoding);
    if (options.bom) bom = BOMS[encoding] ?? bom;
  } else {
    const sample = await existing.head();
    if (sample !== undefined && sample.byteLength > 0) {
      const format = detectTextFormat(sample, { legacyDetector });
      if (!format.binary) {
        encoding = format.encoding;
        bom = format.bom;
        const fileEnding: LineEnding = format.lineEnding;
        if (options.lineEnding === undefined && fileEnding === 'crlf') ending = 'crlf';
      }
    }
    if (options.bom === false) bom = new Uint8Array(0);
    else if (options.bom === true && bom.byteLength === 0) bom = BOMS[encoding] ?? bom;
  }
  // Appending continues a file that already has its BOM.
  if (options.mode === 'append' && options.bom !== true) bom = new Uint8Array(0);
  const body0 = applyLineEnding(text, ending);
  let previous: Uint8Array | undefined;
  if (body0.includes('\ufffd') && options.mode !== 'append') {
    const old = await existing.all();
    // Only a file in the same format can tell which bytes a U+FFFD stood for.
    if (old !== undefined) previous = old.subarray(detectBom(old)?.length ?? 0);
  }
  const body = encodeTextExact(body0, encoding, previous);
  if (bom.byteLength === 0) return body;
  const out = new Uint8Array(bom.byteLength + body.byteLength);
  out.set(bom, 0);
  out.set(body, bom.byteLength);
  return out;
}
