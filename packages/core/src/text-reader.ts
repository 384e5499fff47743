/**
 * Lazy text decoding over a {@link ByteReader}: detects the encoding from the
 * first 64 KiB (unless told), refuses binary data, strips a BOM and decodes
 * chunk by chunk so memory stays bounded by the chunk and the longest line.
 *
 * A file whose first 64 KiB are ASCII has not shown its encoding yet. Its
 * ASCII is yielded as it comes (every encoding detection can answer reads
 * ASCII alike), and at the first non-ASCII byte (or escape) the reader
 * gathers a detection window from there and detects again, so a legacy file
 * with a long ASCII preamble is not decoded as broken UTF-8.
 *
 * @module
 */

import { concatBytes } from './bytes.ts';
import {
  createDecoder,
  DETECTION_WINDOW_BYTES,
  type DetectOptions,
  detectBom,
  detectEncoding,
  type EncodingInfo,
  normalizeEncoding,
  type StreamDecoder,
} from './encoding.ts';
import { fsError } from './errors.ts';
import { LineSplitter } from './lines.ts';
import type { ByteReader, TextOptions, TextReader } from './types.ts';

/** Options of {@link createTextReader}. */
export interface TextReaderOptions extends TextOptions {
  detect?: DetectOptions;
}

interface DecoderSettings {
  readonly fatal: boolean;
  readonly path: string;
  readonly detect: DetectOptions | undefined;
}

function firstSignificant(chunk: Uint8Array): number {
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i] as number;
    if (b >= 0x80 || b === 0x1b) return i;
  }
  return -1;
}

const asciiDecoder = new TextDecoder('utf-8');

/**
 * A decoder for a file seen to be ASCII so far: it passes whole ASCII lines
 * through, then buffers from the start of the line holding the first
 * non-ASCII byte until it holds a detection window (or the end), detects
 * there as `decodeText` would on the whole file (the same window: from that
 * line's start), and decodes the rest with the answer.
 */
class LateDetectingDecoder implements StreamDecoder {
  readonly #settings: DecoderSettings;
  #inner: StreamDecoder | undefined;
  /** The current line's ASCII, held back: the detection window starts where the line does. */
  #line: Uint8Array[] = [];
  #lineBytes = 0;
  #pending: Uint8Array[] | undefined;
  #pendingBytes = 0;

  constructor(settings: DecoderSettings) {
    this.#settings = settings;
  }

  get encoding(): string {
    return this.#inner?.encoding ?? 'utf-8';
  }

  decode(chunk: Uint8Array): string {
    if (this.#inner) return this.#inner.decode(chunk);
    let out = '';
    if (this.#pending === undefined) {
      const k = firstSignificant(chunk);
      const ascii = k < 0 ? chunk : chunk.subarray(0, k);
      const nl = ascii.lastIndexOf(0x0a);
      if (nl >= 0) {
        out = this.#flushLine() + asciiDecoder.decode(ascii.subarray(0, nl + 1));
        this.#hold(ascii.subarray(nl + 1));
      } else this.#hold(ascii);
      // A line longer than a window is not worth holding: its start is far behind.
      if (this.#lineBytes > DETECTION_WINDOW_BYTES) out += this.#flushLine();
      if (k < 0) return out;
      this.#pending = this.#line;
      this.#pendingBytes = this.#lineBytes;
      this.#line = [];
      this.#lineBytes = 0;
      chunk = chunk.subarray(k);
    }
    this.#pending.push(chunk.slice());
    this.#pendingBytes += chunk.byteLength;
    if (this.#pendingBytes >= DETECTION_WINDOW_BYTES) out += this.#decide(true);
    return out;
  }

  end(): string {
    if (this.#pending !== undefined) this.#flushTo(this.#decide(false));
    if (this.#inner) return this.#take() + this.#inner.end();
    return this.#flushLine();
  }

  /** Text decided at the end, handed out by {@link end}. */
  #tail = '';

  #flushTo(text: string): void {
    this.#tail += text;
  }

  #take(): string {
    const t = this.#tail;
    this.#tail = '';
    return t;
  }

  #hold(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.#line.push(bytes.slice());
    this.#lineBytes += bytes.byteLength;
  }

  #flushLine(): string {
    const text = this.#line.map((b) => asciiDecoder.decode(b)).join('');
    this.#line = [];
    this.#lineBytes = 0;
    return text;
  }

  #decide(partial: boolean): string {
    const bytes = concatBytes(this.#pending ?? [], this.#pendingBytes);
    this.#pending = undefined;
    const info = detectEncoding(bytes, { ...this.#settings.detect, partial });
    // The text so far was read as ASCII: only an ASCII-compatible answer can continue it.
    const encoding = info.binary || info.bomLength > 0 || /^utf-(16|32)/.test(info.encoding) ? 'utf-8' : info.encoding;
    this.#inner = createDecoder(encoding, { fatal: this.#settings.fatal, op: 'openText', path: this.#settings.path });
    return this.#inner.decode(bytes);
  }
}

/**
 * The decoder of a file whose first detection window (up to
 * {@link DETECTION_WINDOW_BYTES}, all of it when `ended`) detected as
 * `info`: a window of ASCII that is not the whole file is decoded as ASCII
 * until its first non-ASCII byte and detected again from there. Every text
 * read, and grep's scanner, decode through it, so a file reads as the same
 * text wherever it is searched or served.
 *
 * @example
 * ```ts
 * const info = detectEncoding(window, { partial: !ended });
 * const decoder = detectedDecoder(info, ended, { path: 'notes.txt' });
 * const text = decoder.decode(window.subarray(info.bomLength)) + decoder.end();
 * ```
 */
export function detectedDecoder(
  info: EncodingInfo,
  ended: boolean,
  settings: { path: string; fatal?: boolean; detect?: DetectOptions | undefined },
): StreamDecoder {
  const fatal = settings.fatal ?? false;
  if (info.source === 'ascii' && !ended) return new LateDetectingDecoder({ fatal, path: settings.path, detect: settings.detect });
  return createDecoder(info.encoding, { fatal, op: 'openText', path: settings.path });
}

class DecodingTextReader implements TextReader {
  readonly path: string;
  readonly bom: boolean;
  readonly #reader: ByteReader;
  readonly #first: Uint8Array;
  readonly #decoder: StreamDecoder;
  #started = false;

  constructor(reader: ByteReader, first: Uint8Array, decoder: StreamDecoder, bom: boolean) {
    this.#reader = reader;
    this.#first = first;
    this.path = reader.path;
    this.#decoder = decoder;
    this.bom = bom;
  }

  get encoding(): string {
    return this.#decoder.encoding;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    if (this.#started) throw fsError('EINVAL', 'openText', this.path, { reason: 'a TextReader can be iterated once', hint: 'open a new TextReader' });
    this.#started = true;
    const decoder = this.#decoder;
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

/** Reads up to `n` bytes (several reads if the reader returns less); `ended` when the file ended first. */
async function readWindow(reader: ByteReader, n: number): Promise<{ bytes: Uint8Array; ended: boolean }> {
  const parts: Uint8Array[] = [];
  let total = 0;
  while (total < n) {
    const chunk = await reader.read(n - total);
    if (chunk.byteLength === 0) break;
    parts.push(chunk);
    total += chunk.byteLength;
  }
  const bytes = parts.length === 1 ? (parts[0] as Uint8Array) : concatBytes(parts, total);
  return { bytes, ended: total < n };
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
    const { bytes, ended } = await readWindow(reader, DETECTION_WINDOW_BYTES);
    let first = bytes;
    const fatal = options.fatal ?? false;
    let decoder: StreamDecoder;
    let bom = false;
    if (options.encoding !== undefined) {
      const encoding = normalizeEncoding(options.encoding);
      const found = detectBom(first);
      if (found && found.encoding === encoding) {
        first = first.subarray(found.length);
        bom = true;
      }
      decoder = createDecoder(encoding, { fatal, op: 'openText', path: reader.path });
    } else {
      const info = detectEncoding(first, { ...options.detect, partial: !ended });
      if (info.binary) {
        throw fsError('EBINARY', 'openText', reader.path, {
          reason: 'file looks binary (NUL or control bytes)',
          hint: 'read it with readBytes(), or pass { encoding } to decode it as text anyway',
        });
      }
      bom = info.bomLength > 0;
      first = first.subarray(info.bomLength);
      decoder = detectedDecoder(info, ended, { fatal, path: reader.path, detect: options.detect });
    }
    return new DecodingTextReader(reader, first, decoder, bom);
  } catch (err) {
    await reader.close();
    throw err;
  }
}
