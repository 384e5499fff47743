/**
 * Incremental line splitting over decoded text chunks, shared by text reads,
 * line paging and grep. A line ends at `\n`; a `\r` just before it belongs to
 * the terminator. A final line without terminator is still a line, and a
 * trailing terminator does not start an empty one: `"a\nb\n"` is `a`, `b`.
 *
 * @module
 */

/** Splits a stream of text chunks into lines, holding only the unfinished one. */
export class LineSplitter {
  #partial = '';

  /** Feeds a chunk; returns the lines it completed. */
  push(chunk: string): string[] {
    if (chunk.length === 0) return [];
    const text = this.#partial + chunk;
    const parts = text.split('\n');
    this.#partial = parts.pop() ?? '';
    for (let i = 0; i < parts.length; i++) {
      const line = parts[i] as string;
      if (line.charCodeAt(line.length - 1) === 0x0d) parts[i] = line.slice(0, -1);
    }
    return parts;
  }

  /**
   * Feeds a chunk without building its lines (a search knows none of them
   * matches); returns how many lines it completed.
   */
  skip(chunk: string): number {
    const last = chunk.lastIndexOf('\n');
    if (last < 0) {
      this.#partial += chunk;
      return 0;
    }
    let n = 0;
    for (let i = chunk.indexOf('\n'); i >= 0 && i <= last; i = chunk.indexOf('\n', i + 1)) n++;
    this.#partial = chunk.slice(last + 1);
    return n;
  }

  /** Whether `needle` occurs in the unfinished line followed by `chunk`. */
  pendingIncludes(chunk: string, needle: string): boolean {
    if (chunk.includes(needle)) return true;
    if (this.#partial.length === 0) return false;
    // In the unfinished line itself, or straddling the boundary.
    return (this.#partial + chunk.slice(0, needle.length - 1)).includes(needle);
  }

  /** Length in UTF-16 units of the line still being assembled. */
  get pendingLength(): number {
    return this.#partial.length;
  }

  /** Ends the stream; returns the last line if it had no terminator. */
  end(): string[] {
    const rest = this.#partial;
    this.#partial = '';
    if (rest.length === 0) return [];
    return [rest.charCodeAt(rest.length - 1) === 0x0d ? rest.slice(0, -1) : rest];
  }
}

/** Splits a whole string into lines with the same rules as {@link LineSplitter}. */
export function splitLines(text: string): string[] {
  const splitter = new LineSplitter();
  const lines = splitter.push(text);
  for (const line of splitter.end()) lines.push(line);
  return lines;
}
