/**
 * A file as an edit sees it: its exact bytes and hash (the version), the
 * encoding and byte-order mark it was written with, and its text. Writing
 * back encodes the new text the same way, so an edit changes the lines it
 * meant to and no other byte — BOM, encoding, invalid sequences and line
 * endings included.
 *
 * @module
 */

import { type DecodedText, encodeTextExact, type Filesystem, type FsOperation, fsError, isFsError } from '@ctxfs/core';
import { sha256Hex } from '../history/version-store.ts';

/** A file loaded for editing. */
export interface FileText {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly encoding: string;
  /** The byte-order mark, kept verbatim. */
  readonly bom: Uint8Array;
  /** The decoded text; empty for a binary file loaded whole (see {@link binary}). */
  readonly text: string;
  /**
   * A binary file, loaded for an operation on the whole file (delete,
   * rename, undo, rollback), which moves bytes and never edits text.
   */
  readonly binary?: boolean;
}

/** The last decoding of each backend (see {@link decodeBytes}). */
const lastDecoded = new WeakMap<Filesystem, { readonly sha256: string; readonly decoded: DecodedText }>();
/** Contents up to this size are remembered decoded. */
const DECODED_MAX_BYTES = 1024 * 1024;

/**
 * `fs.decodeText(bytes)`, the last one remembered by the bytes' hash for
 * the backend's next call with the same content: an adapter's edit reads
 * and decodes the file (to count what it replaces, or to serve the read an
 * edit starts from), then the editor loads it under its lock and would
 * decode the same bytes again. The decoding is a function of the bytes and
 * the backend alone (its detector is fixed when it opens); the bytes are
 * always read and hashed, so a changed file is never served an old text.
 * One content is remembered, the last: what a read hands the edit after it.
 *
 * @example
 * ```ts
 * const bytes = await fs.readBytes('a.ts');
 * const sha256 = sha256Hex(bytes);
 * decodeBytes(fs, 'a.ts', bytes, sha256).text; // as fs.read serves it; decoded once for both calls
 * ```
 */
export function decodeBytes(fs: Filesystem, path: string, bytes: Uint8Array, sha256: string): DecodedText {
  const last = lastDecoded.get(fs);
  if (last?.sha256 === sha256) return last.decoded;
  const decoded = Object.freeze(fs.decodeText(bytes, { path }));
  if (bytes.byteLength <= DECODED_MAX_BYTES) lastDecoded.set(fs, { sha256, decoded });
  return decoded;
}

/**
 * Decodes bytes through the backend (`fs.decodeText`), so an edit sees
 * exactly the text `fs.read` serves: the backend's detection (its legacy
 * detector included) and decoder.
 *
 * @example
 * ```ts
 * const file = decodeFile(fs, 'po/ru.po', await fs.readBytes('po/ru.po')); // file.encoding: 'koi8-r'
 * ```
 */
export function decodeFile(fs: Filesystem, path: string, bytes: Uint8Array, op: FsOperation = 'edit', wholeFile = false): FileText {
  const sha256 = sha256Hex(bytes);
  const decoded = decodeBytes(fs, path, bytes, sha256);
  if (decoded.binary && wholeFile) return { path, bytes, sha256, encoding: 'binary', bom: new Uint8Array(0), text: '', binary: true };
  if (decoded.binary) {
    throw fsError('EBINARY', op, path, {
      reason: 'the file looks binary, so it cannot be edited as text',
      hint: 'text edits apply to text files only; a binary file is replaced whole by the program that makes it',
    });
  }
  return { path, bytes, sha256, encoding: decoded.encoding, bom: bytes.slice(0, decoded.bomLength), text: decoded.text };
}

/** Encodes `text` the way `previous` was stored (UTF-8 without BOM for a new file). */
export function encodeLike(text: string, previous: FileText | undefined): Uint8Array {
  if (previous === undefined) return new TextEncoder().encode(text);
  const body = encodeTextExact(text, previous.encoding, previous.bytes.subarray(previous.bom.byteLength));
  if (previous.bom.byteLength === 0) return body;
  const out = new Uint8Array(previous.bom.byteLength + body.byteLength);
  out.set(previous.bom, 0);
  out.set(body, previous.bom.byteLength);
  return out;
}

/** Reads `path` for editing (a binary file too when `wholeFile`, see {@link FileText.binary}); `undefined` when it does not exist. */
export async function loadFileText(fs: Filesystem, path: string, op: FsOperation = 'edit', wholeFile = false): Promise<FileText | undefined> {
  let bytes: Uint8Array;
  try {
    // The read refuses a directory itself: no stat first, which was a second open of the file on the host.
    bytes = await fs.readBytes(path);
  } catch (err) {
    if (isFsError(err, 'ENOENT')) return undefined;
    if (isFsError(err, 'EISDIR')) throw fsError('EISDIR', op, path, { hint: 'name a file, not a directory' });
    throw err;
  }
  return decodeFile(fs, path, bytes, op, wholeFile);
}

/** The hash of what is on disk now, `undefined` when the file is absent. */
export async function diskHash(fs: Filesystem, path: string): Promise<string | undefined> {
  try {
    return sha256Hex(await fs.readBytes(path));
  } catch (err) {
    if (isFsError(err, 'ENOENT') || isFsError(err, 'EISDIR')) return undefined;
    throw err;
  }
}
