/**
 * Incremental line splitting over decoded text chunks, shared by text reads,
 * line paging and grep. A line ends at `\n`; a `\r` just before it belongs to
 * the terminator. A final line without terminator is still a line, and a
 * trailing terminator does not start an empty one: `"a\nb\n"` is `a`, `b`.
 *
 * @module
 */

/**
 * Splits a stream of text chunks into lines, holding only the unfinished one.
 * The unfinished line is kept as its pieces and joined once, when its end
 * arrives: a single giant line (a minified bundle with no newline) streamed
 * in thousands of chunks costs linear time, not a re-copy per chunk.
 */
export class LineSplitter {
  #pieces: string[] = [];
  #length = 0;
  /** Whether the unfinished line holds `needle`, kept up to date as it grows. */
  #seen: { needle: string; found: boolean } | undefined;

  /** Feeds a chunk; returns the lines it completed. */
  push(chunk: string): string[] {
    if (chunk.length === 0) return [];
    if (chunk.indexOf('\n') < 0) {
      this.#append(chunk);
      return [];
    }
    const parts = chunk.split('\n');
    parts[0] = this.#take() + (parts[0] as string);
    this.#restart(parts.pop() ?? '');
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
      this.#append(chunk);
      return 0;
    }
    let n = 0;
    for (let i = chunk.indexOf('\n'); i >= 0 && i <= last; i = chunk.indexOf('\n', i + 1)) n++;
    this.#take();
    this.#restart(chunk.slice(last + 1));
    return n;
  }

  /**
   * Feeds a chunk and builds only the completed lines that hold `needle`
   * (a search's required text), each with its index among the lines the
   * chunk completed; `completed` counts them all. The lines between are
   * counted, never cut out: in a source file most lines lack the needle.
   */
  pushIncluding(chunk: string, needle: string): LinesIncluding {
    if (needle === '' || needle.includes('\n')) {
      const all = this.push(chunk);
      const indexes = all.flatMap((line, i) => (line.includes(needle) ? [i] : []));
      return { lines: indexes.map((i) => all[i] as string), indexes, completed: all.length };
    }
    const last = chunk.lastIndexOf('\n');
    if (last < 0) {
      this.#append(chunk);
      return { lines: [], indexes: [], completed: 0 };
    }
    const lines: string[] = [];
    const indexes: number[] = [];
    const firstEnd = chunk.indexOf('\n');
    const first = withoutCr(this.#take() + chunk.slice(0, firstEnd));
    if (first.includes(needle)) {
      lines.push(first);
      indexes.push(0);
    }
    // `index` is the index of the line that starts at `start`.
    let start = firstEnd + 1;
    let index = 1;
    // A hit before `last` lies in a completed line (the needle holds no newline); one after it, in the unfinished one.
    for (let hit = chunk.indexOf(needle, start); hit >= 0 && hit < last; hit = chunk.indexOf(needle, start)) {
      const lineStart = chunk.lastIndexOf('\n', hit) + 1;
      for (let nl = chunk.indexOf('\n', start); nl >= 0 && nl < lineStart; nl = chunk.indexOf('\n', nl + 1)) index++;
      const lineEnd = chunk.indexOf('\n', hit);
      const line = withoutCr(chunk.slice(lineStart, lineEnd));
      // A hit that took the terminator's CR is not in the line.
      if (line.length === lineEnd - lineStart || line.includes(needle)) {
        lines.push(line);
        indexes.push(index);
      }
      start = lineEnd + 1;
      index++;
    }
    for (let nl = chunk.indexOf('\n', start); nl >= 0 && nl <= last; nl = chunk.indexOf('\n', nl + 1)) index++;
    this.#restart(chunk.slice(last + 1));
    return { lines, indexes, completed: index };
  }

  /** Whether `needle` occurs in the unfinished line followed by `chunk`. */
  pendingIncludes(chunk: string, needle: string): boolean {
    if (chunk.includes(needle)) return true;
    if (this.#length === 0) return false;
    if (this.#seen?.needle !== needle) this.#seen = { needle, found: this.#joined().includes(needle) };
    if (this.#seen.found) return true;
    // Straddling the boundary: only the last needle.length - 1 units can take part.
    return (this.#tail(needle.length - 1) + chunk.slice(0, needle.length - 1)).includes(needle);
  }

  /** Length in UTF-16 units of the line still being assembled. */
  get pendingLength(): number {
    return this.#length;
  }

  /** Ends the stream; returns the last line if it had no terminator. */
  end(): string[] {
    const rest = this.#take();
    if (rest.length === 0) return [];
    return [rest.charCodeAt(rest.length - 1) === 0x0d ? rest.slice(0, -1) : rest];
  }

  #append(piece: string): void {
    if (this.#seen !== undefined && !this.#seen.found) {
      const n = this.#seen.needle.length;
      this.#seen.found = (this.#tail(n - 1) + piece).includes(this.#seen.needle);
    }
    this.#pieces.push(piece);
    this.#length += piece.length;
  }

  /** The unfinished line as one string (joined once, then kept so). */
  #joined(): string {
    if (this.#pieces.length > 1) this.#pieces = [this.#pieces.join('')];
    return this.#pieces[0] ?? '';
  }

  /** Removes and returns the unfinished line. */
  #take(): string {
    const line = this.#joined();
    this.#pieces = [];
    this.#length = 0;
    return line;
  }

  #restart(piece: string): void {
    if (this.#seen !== undefined) this.#seen.found = piece.includes(this.#seen.needle);
    if (piece.length > 0) {
      this.#pieces.push(piece);
      this.#length = piece.length;
    }
  }

  /** The last `n` UTF-16 units of the unfinished line. */
  #tail(n: number): string {
    if (n <= 0) return '';
    let out = '';
    for (let i = this.#pieces.length - 1; i >= 0 && out.length < n; i--) out = (this.#pieces[i] as string) + out;
    return out.length > n ? out.slice(out.length - n) : out;
  }
}

/** What {@link LineSplitter.pushIncluding} returns. */
export interface LinesIncluding {
  /** The completed lines that hold the needle, without terminators. */
  readonly lines: string[];
  /** Each line's index among the lines the chunk completed (0 is the one the chunk finished). */
  readonly indexes: number[];
  /** How many lines the chunk completed. */
  readonly completed: number;
}

function withoutCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 0x0d ? line.slice(0, -1) : line;
}

/** Splits a whole string into lines with the same rules as {@link LineSplitter}. */
export function splitLines(text: string): string[] {
  const splitter = new LineSplitter();
  const lines = splitter.push(text);
  for (const line of splitter.end()) lines.push(line);
  return lines;
}
