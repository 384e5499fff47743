/**
 * Text writes that keep a file's format. The existing file's format is
 * detected with core's `detectTextFormat` and the backend's legacy detector
 * as every read of it is (core's `openText` and `decodeText` use the same):
 * on the head for a Unicode file, on the whole file when the head is ASCII
 * (its text may start later) or legacy, so the encoding a write keeps is the
 * one the text was read in. Writes to an existing file reuse its encoding,
 * byte-order mark and line endings, and encode with core's
 * `encodeTextExact`, which writes every U+FFFD that stands for an invalid
 * sequence of the old file back as those bytes: reading a file and writing
 * the same text back is byte-identical.
 *
 * @module
 */

import { DETECTION_WINDOW_BYTES, detectBom, detectTextFormat, encodeTextExact, type LegacyDetector, type LineEnding, normalizeEncoding } from '@ctxfs/core';

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

function applyLineEnding(text: string, ending: 'lf' | 'crlf' | 'keep'): string {
  if (ending === 'crlf') return text.includes('\r\n') ? text.replace(/\r?\n/g, '\r\n') : text.replaceAll('\n', '\r\n');
  if (ending === 'lf') return text.replaceAll('\r\n', '\n');
  return text;
}

/** How {@link encodeForFile} sees the file being replaced. */
export interface ExistingFile {
  /** Its first bytes: a detection window and one byte more (to tell a whole file); undefined for a missing file. */
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
  let whole: Uint8Array | undefined;
  if (options.encoding !== undefined) {
    encoding = normalizeEncoding(options.encoding);
    if (options.bom) bom = BOMS[encoding] ?? bom;
  } else {
    // The head tells a Unicode file. A file that is ASCII there (its text may
    // start later) or in a legacy encoding (whose unchanged lines should keep
    // their bytes) is read whole, as a read would detect it.
    const head = await existing.head();
    if (head !== undefined && head.byteLength <= DETECTION_WINDOW_BYTES) whole = head;
    let sample = head;
    if (head !== undefined && whole === undefined) {
      const source = detectTextFormat(head, { legacyDetector, partial: true }).source;
      if (source === 'ascii' || source === 'legacy') {
        whole = await existing.all();
        sample = whole ?? head;
      }
    }
    if (sample !== undefined && sample.byteLength > 0) {
      const format = detectTextFormat(sample, { legacyDetector, partial: whole === undefined });
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
  if (options.mode !== 'append') {
    // The old bytes give unchanged lines back as they were, and each U+FFFD the bytes it stood for.
    const old = whole ?? (body0.includes('\ufffd') ? await existing.all() : undefined);
    if (old !== undefined) previous = old.subarray(detectBom(old)?.length ?? 0);
  }
  const body = encodeTextExact(body0, encoding, previous);
  if (bom.byteLength === 0) return body;
  const out = new Uint8Array(bom.byteLength + body.byteLength);
  out.set(bom, 0);
  out.set(body, bom.byteLength);
  return out;
}
