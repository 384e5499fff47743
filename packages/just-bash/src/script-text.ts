/**
 * A file's text as a script sees it, and the script's text back into that
 * file's bytes.
 *
 * just-bash's text commands (`sed`, `awk`, `grep`…) read a file as a string
 * (`readFile`) and write strings back (`sed -i`'s `writeFile`). Read as
 * UTF-8, a file in another encoding (KOI8-R, windows-1251, Shift_JIS,
 * latin-1, UTF-16) or with one stray invalid byte turned every byte that is
 * not UTF-8 into U+FFFD, and `sed -i 's/a/b/'` wrote those back: the file
 * was corrupted, lines sed never touched included. Here such a file is
 * decoded as every ctxfs read decodes it (the backend's `decodeText`: BOM,
 * UTF-16, the legacy detector, damaged UTF-8 as UTF-8), and a string
 * written back over it is encoded in that encoding by core's
 * `encodeTextExact`: the lines the script left alone go back as their old
 * bytes, an invalid sequence as the bytes it was, never as U+FFFD. Text
 * the encoding cannot hold is refused (`EINVAL`, nothing written), as the
 * session's edits refuse it. Valid UTF-8 is read and written as before,
 * byte for byte.
 *
 * @module
 */

import { concatBytes, encodeTextExact, type Filesystem, isValidUtf8, unencodableText } from '@ctxfs/core';
import { BashFsError } from './bash-errors.ts';

/** How a file that is not plain UTF-8 was given to a script as text: what a string written back over it is encoded as. */
export interface TextForm {
  /** The WHATWG label the text was decoded from (`koi8-r`, `shift_jis`, `utf-16le`; `utf-8` for damaged UTF-8 and binary bytes). */
  readonly encoding: string;
  /** The byte-order mark the text was decoded after (written back before it); empty when none. */
  readonly bom: Uint8Array;
}

/**
 * How a script was given a file that is not plain UTF-8: as text in a
 * {@link TextForm} (`readFile`), or as its bytes (`readFileBytes`), which
 * just-bash's commands that decode them themselves (`sort`) see as latin-1
 * characters, one a byte (its `decodeBytesToUtf8` falls back so).
 */
export type ReadForm = TextForm | typeof LATIN1_VIEW;

/** The {@link ReadForm} of bytes read as bytes that are not UTF-8. */
export const LATIN1_VIEW = 'latin1-view';

/** The {@link ReadForm} of `bytes` a script read as bytes: `undefined` for valid UTF-8. */
export function bytesForm(bytes: Uint8Array): ReadForm | undefined {
  return isValidUtf8(bytes) ? undefined : LATIN1_VIEW;
}

/**
 * `text` as the bytes it is the latin-1 view of, or `undefined` when a
 * character beyond U+00FF says it is no such view. What `sort -o f f`
 * writes back of a file it read as bytes that are not UTF-8.
 */
export function latin1ViewBytes(text: string): Uint8Array | undefined {
  return BEYOND_LATIN1.test(text) ? undefined : Buffer.from(text, 'latin1');
}

const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** A file's bytes as text for a script, with its {@link TextForm} when they are not plain UTF-8. */
export interface ScriptText {
  readonly text: string;
  /** `undefined` for valid UTF-8, which goes back as UTF-8 unchanged. */
  readonly form: TextForm | undefined;
}

/** UTF-8 as Node's `Buffer.toString` decodes it: a byte-order mark stays U+FEFF, so it is written back. */
const lossyUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * `bytes` of `path` as the text a script reads. Valid UTF-8 as it is (a
 * BOM stays U+FEFF); anything else as `fs`
 * decodes it for every ctxfs read; bytes the backend calls binary as
 * lossy UTF-8, whose invalid sequences {@link scriptTextBytes} restores.
 */
export function scriptText(fs: Filesystem, path: string, bytes: Uint8Array): ScriptText {
  if (isValidUtf8(bytes)) return { text: lossyUtf8.decode(bytes), form: undefined };
  const decoded = fs.decodeText(bytes, { path });
  if (decoded.binary) return { text: lossyUtf8.decode(bytes), form: { encoding: 'utf-8', bom: new Uint8Array() } };
  return { text: decoded.text, form: { encoding: decoded.encoding, bom: bytes.slice(0, decoded.bomLength) } };
}

/**
 * The bytes `text` is stored as in a file of `form`: in its encoding, after
 * its byte-order mark when `whole` (a write of the whole file; an append
 * adds text after it). With the file's `previous` bytes, what `text` left
 * unchanged goes back as those bytes. Text the encoding cannot hold is
 * refused (`EINVAL` naming `vpath`, the script's path, and what to do
 * instead).
 */
export function scriptTextBytes(vpath: string, text: string, form: TextForm, previous: Uint8Array | undefined, whole: boolean): Uint8Array {
  if (form.encoding !== 'utf-8') {
    const reason = unencodableText(vpath, text, form.encoding, 'stored');
    if (reason !== undefined) throw new BashFsError('EINVAL', 'write', vpath, reason);
  }
  const body = encodeTextExact(text, form.encoding, previous?.subarray(form.bom.byteLength));
  return whole && form.bom.byteLength > 0 ? concatBytes([form.bom, body]) : body;
}
