/**
 * Lazy text decoding over a {@link ByteReader}: detects the encoding from the
 * first chunk (unless told), refuses binary data, strips a BOM and decodes
 * chunk by chunk so memory stays bounded by the chunk and the longest line.
 *
 * @module
 */

import { createDecoder, DETECTION_SAMPLE_BYTES, type DetectOptions, detectBom, detectEncoding, normalizeEncoding } from './encoding.ts';
import { fsError } from './errors.ts';
import { LineSplitter } from './lines.ts';
import type { ByteReader, TextOptions, TextReader } from './types.ts';

/** Options of {@link createTextReader}. */
export interface TextReaderOptions extends TextOptions {
  detect?: DetectOptions;
}

class DecodingTextReader implements TextReader {
  readonly path: string;
  readonly encoding: string;
  readonly bom: boolean;
  readonly #reader: ByteReader;
  readonly #first: Uint8Array;
  readonly #fatal: boolean;
  #started = false;

  constructor(reader: ByteReader, first: Uint8Array, encoding: string, bom: boolean, fatal: boolean) {
    this.#reader = reader;
    this.#first = first;
    this.path = reader.path;
    this.encoding = encoding;
    this.bom = bom;
    this.#fatal = fatal;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    if (this.#started) throw fsError('EINVAL', 'openText', this.path, { reason: 'a TextReader can be iterated once', hint: 'open a new TextReader' });
    this.#started = true;
    const decoder = createDecoder(this.encoding, { fatal: this.#fatal, op: 'openText', path: this.path });
    const head = decoder.decode(this.#first);
    if (head) yield head;
    for await (const chunk of this.#reader) {
      const text = decoder.decode(chunk);
      if (text) yield text;
    }
    const tail = decoder.end();
    if (tail) yield tail;
  }

  async *lines(): AsyncIterableIterator<string> {
    const splitter = new LineSplitter();
    for await (const text of this) {
      yield* splitter.push(text);
    }
    yield* splitter.end();
  }

  close(): Promise<void> {
    return this.#reader.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Wraps a reader positioned at the start of a file as a {@link TextReader}.
 * Throws `EBINARY` (and closes the reader) when no encoding is given and the
 * file looks binary.
 *
 * @example
 * ```ts
 * const text = await createTextReader(await fs.openRead('notes.txt'));
 * for await (const line of text.lines()) console.log(line);
 * ```
 */
export async function createTextReader(reader: ByteReader, options: TextReaderOptions = {}): Promise<TextReader> {
  try {
    let first = await reader.read(Math.max(DETECTION_SAMPLE_BYTES, 4));
    let encoding: string;
    let bom = false;
    if (options.encoding !== undefined) {
      encoding = normalizeEncoding(options.encoding);
      const found = detectBom(first);
      if (found && found.encoding === encoding) {
        first = first.subarray(found.length);
        bom = true;
      }
    } else {
      const info = detectEncoding(first, options.detect);
      if (info.binary) {
        throw fsError('EBINARY', 'openText', reader.path, { reason: 'file looks binary (NUL or control bytes)' });
      }
      encoding = info.encoding;
      bom = info.bomLength > 0;
      first = first.subarray(info.bomLength);
    }
    // Validate the label now so a bad one fails at open, not mid-iteration.
    createDecoder(encoding, { op: 'openText', path: reader.path });
    return new DecodingTextReader(reader, first, encoding, bom, options.fatal ?? false);
  } catch (err) {
    await reader.close();
    throw err;
  }
}
