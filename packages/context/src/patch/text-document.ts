/**
 * A text split into lines that remembers each line's own terminator, so an
 * edit can change some lines and leave every other byte as it was — CRLF,
 * LF, mixed endings and a missing final newline included.
 *
 * @module
 */

/** Lines with their terminators. */
export interface TextDocument {
  /** Line texts without terminators. */
  readonly lines: string[];
  /** Terminator of each line: `'\n'`, `'\r\n'`, or `''` for a last line without one. */
  readonly eols: string[];
  /** The terminator new lines get: the file's most common one (LF when none). */
  readonly eol: '\n' | '\r\n';
}

/**
 * Splits text into a {@link TextDocument}.
 *
 * @example
 * ```ts
 * const doc = toDocument('a\r\nb');
 * doc.lines; // ['a', 'b']
 * doc.eols;  // ['\r\n', '']
 * ```
 */
export function toDocument(text: string): TextDocument {
  const lines: string[] = [];
  const eols: string[] = [];
  let crlf = 0;
  let lf = 0;
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) {
      lines.push(text.slice(start));
      eols.push('');
      break;
    }
    if (nl > start && text.charCodeAt(nl - 1) === 0x0d) {
      lines.push(text.slice(start, nl - 1));
      eols.push('\r\n');
      crlf++;
    } else {
      lines.push(text.slice(start, nl));
      eols.push('\n');
      lf++;
    }
    start = nl + 1;
  }
  return { lines, eols, eol: crlf > lf ? '\r\n' : '\n' };
}

/** Joins a document back into text. */
export function fromDocument(doc: TextDocument): string {
  let out = '';
  for (let i = 0; i < doc.lines.length; i++) out += doc.lines[i] + (doc.eols[i] ?? '');
  return out;
}

/** True when the document's text ends with a line terminator (or is empty). */
export function hasFinalNewline(doc: TextDocument): boolean {
  return doc.lines.length === 0 || (doc.eols[doc.eols.length - 1] ?? '') !== '';
}
