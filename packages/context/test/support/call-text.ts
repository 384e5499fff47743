/**
 * The calls a model is told to make, found in what ctxfs hands it: a
 * result's `next`, an error's message and hint, an edit refusal's message,
 * and the markers inside served `text` (`[… lines 41-80 omitted (300
 * tokens); readLines("src/a.ts", 41, 80) shows them …]`).
 *
 * A model acts on these as written, so each one is either a concrete call —
 * a method a model can call on its session, with literal arguments it can
 * copy (`readLines("a.ts", 41, 80)`, `grep("x", {path: "src", literal:
 * true})`) — or not concrete: a template with placeholders (`readLines(path,
 * start, end)`), a union of choices (`{ strategy: 'start' | 'end' }`), or
 * too few arguments (`readLines()`), which a model cannot execute without
 * guessing. The parser says which, and keeps the source text of each so a
 * failure can quote it.
 *
 * @module
 */

/** A literal argument value as a model would copy it. */
export type CallArg = string | number | boolean | null | readonly CallArg[] | { readonly [key: string]: CallArg };

/**
 * The methods a model is given: the session's retrieval, search, edit and
 * history calls, and the layer's `scan` and `indexRelations` (hints name
 * them too). The number is how many leading arguments the method needs.
 */
export const SESSION_METHODS: Readonly<Record<string, number>> = {
  readFile: 1,
  readLines: 2,
  getExcerpt: 1,
  getSymbol: 2,
  getOutline: 1,
  getRelatedFiles: 1,
  summarize: 1,
  listFiles: 0,
  glob: 1,
  grep: 1,
  findSymbol: 1,
  writeFile: 2,
  createFile: 2,
  replace: 3,
  editLines: 2,
  deleteFile: 1,
  renameFile: 2,
  applyPatch: 1,
  checkConflicts: 1,
  history: 1,
  getVersion: 2,
  getDiff: 1,
  rollback: 2,
  undo: 1,
  overview: 0,
  scan: 0,
  indexRelations: 0,
};

/** A call written with literal arguments only. */
export interface ConcreteCall {
  readonly kind: 'call';
  readonly op: string;
  readonly args: readonly CallArg[];
  /** The call as it appears in the text. */
  readonly source: string;
}

/** A call-shaped mention a model cannot execute as written. */
export interface NotConcrete {
  readonly kind: 'not-concrete';
  readonly op: string;
  readonly source: string;
  /** What makes it not executable (the first argument that is not a literal, or the missing ones). */
  readonly reason: string;
}

export type CallFinding = ConcreteCall | NotConcrete;

/** Thrown inside the argument parser at the first thing that is not a literal. */
class NotLiteral extends Error {}

/** A recursive-descent reader of JSON-like literals (JS spelling: single quotes, unquoted keys, trailing commas). */
class LiteralReader {
  readonly #s: string;
  pos: number;

  constructor(s: string, pos: number) {
    this.#s = s;
    this.pos = pos;
  }

  #peek(): string {
    return this.#s[this.pos] ?? '';
  }

  skipSpace(): void {
    while (/\s/.test(this.#peek())) this.pos++;
  }

  /** Reads `,`-separated values up to `close`, and the `close`. */
  list(close: string): CallArg[] {
    const out: CallArg[] = [];
    this.skipSpace();
    if (this.#peek() === close) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.skipSpace();
      const c = this.#peek();
      this.pos++;
      if (c === close) return out;
      if (c !== ',') throw new NotLiteral(`expected ',' or '${close}' after an argument, found ${describeAt(this.#s, this.pos - 1)}`);
      this.skipSpace();
      if (this.#peek() === close) {
        this.pos++;
        return out;
      }
    }
  }

  value(): CallArg {
    this.skipSpace();
    const c = this.#peek();
    if (c === '"' || c === "'") return this.#string(c);
    if (c === '{') {
      this.pos++;
      return this.#object();
    }
    if (c === '[') {
      this.pos++;
      return this.list(']');
    }
    const rest = this.#s.slice(this.pos);
    const num = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?(?![\w$])/.exec(rest);
    if (num) {
      this.pos += num[0].length;
      return Number(num[0]);
    }
    const word = /^(true|false|null)(?![\w$])/.exec(rest);
    if (word) {
      this.pos += word[0].length;
      return word[1] === 'null' ? null : word[1] === 'true';
    }
    throw new NotLiteral(`${describeAt(this.#s, this.pos)} is not a literal`);
  }

  #object(): { [key: string]: CallArg } {
    const out: { [key: string]: CallArg } = {};
    this.skipSpace();
    if (this.#peek() === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      const c = this.#peek();
      let key: string;
      if (c === '"' || c === "'") key = this.#string(c);
      else {
        const id = /^[A-Za-z_$][\w$]*/.exec(this.#s.slice(this.pos));
        if (!id) throw new NotLiteral(`${describeAt(this.#s, this.pos)} is not an object key`);
        key = id[0];
        this.pos += key.length;
      }
      this.skipSpace();
      if (this.#peek() !== ':') throw new NotLiteral(`key '${key}' has no ':' value (shorthand names a variable)`);
      this.pos++;
      out[key] = this.value();
      this.skipSpace();
      const sep = this.#peek();
      this.pos++;
      if (sep === '}') return out;
      if (sep !== ',') throw new NotLiteral(`expected ',' or '}' after option '${key}', found ${describeAt(this.#s, this.pos - 1)}`);
      this.skipSpace();
      if (this.#peek() === '}') {
        this.pos++;
        return out;
      }
    }
  }

  /** A quoted string; double-quoted ones are JSON (ctxfs writes paths with JSON.stringify), single-quoted ones JS. */
  #string(quote: string): string {
    let out = '';
    this.pos++;
    for (;;) {
      const c = this.#peek();
      if (c === '' || c === '\n') throw new NotLiteral('unterminated string');
      this.pos++;
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.#peek();
      this.pos++;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case '0':
          out += '\0';
          break;
        case 'u': {
          const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(this.#s.slice(this.pos));
          const plain = /^[0-9a-fA-F]{4}/.exec(this.#s.slice(this.pos));
          if (braced?.[1] !== undefined) {
            out += String.fromCodePoint(Number.parseInt(braced[1], 16));
            this.pos += braced[0].length;
          } else if (plain) {
            out += String.fromCharCode(Number.parseInt(plain[0], 16));
            this.pos += 4;
          } else throw new NotLiteral('bad \\u escape');
          break;
        }
        case '':
          throw new NotLiteral('unterminated string');
        default:
          // `\"`, `\'`, `\\`, `\/` and JS's identity escapes.
          out += e;
      }
    }
  }
}

function describeAt(s: string, pos: number): string {
  const piece = s.slice(pos, pos + 24).split('\n')[0] ?? '';
  return piece === '' ? 'the end of the text' : `'${piece}'`;
}

/**
 * Where the call starting at `open` (the index of its `(`) ends: the index
 * after its matching `)`, skipping strings and nested brackets; the end of
 * the line when it never closes.
 */
export function callEnd(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '\n') return i;
    if (c === '"' || c === "'") {
      for (i++; i < s.length && s[i] !== c && s[i] !== '\n'; i++) if (s[i] === '\\') i++;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return s.length;
}

const CALL_START = new RegExp(`(?<![\\w$])((?:ctx|session)\\.)?(${Object.keys(SESSION_METHODS).join('|')})\\(`, 'g');

/**
 * Every call of a session method in `text`, in order. A name is a call
 * when `(` follows it directly (`grep for a pattern` is prose, `grep(`
 * is a call); a method of another object (`fs.readBytes()`) is not a
 * session call and is left out, while `ctx.` and `session.` are read as
 * the session.
 *
 * @example
 * ```ts
 * findCalls('continue with readLines("a.ts", 41, 80) …');
 * // [{ kind: 'call', op: 'readLines', args: ['a.ts', 41, 80], source: 'readLines("a.ts", 41, 80)' }]
 * findCalls('getSymbol("a.ts", name) for one definition');
 * // [{ kind: 'not-concrete', op: 'getSymbol', source: 'getSymbol("a.ts", name)', reason: "…name… is not a literal" }]
 * ```
 */
export function findCalls(text: string): CallFinding[] {
  const out: CallFinding[] = [];
  for (const m of text.matchAll(CALL_START)) {
    const before = m.index === 0 ? '' : (text[m.index - 1] ?? '');
    // `fs.grep(` or `registry.list(`: another object's method, not a session tool.
    if (before === '.') continue;
    const op = m[2] as string;
    const open = m.index + m[0].length - 1;
    const end = callEnd(text, open);
    const source = text.slice(m.index + (m[1]?.length ?? 0), end);
    const reader = new LiteralReader(text, open + 1);
    try {
      const args = reader.list(')');
      const needed = SESSION_METHODS[op] ?? 0;
      if (args.length < needed) {
        out.push({ kind: 'not-concrete', op, source, reason: `${op} needs ${needed} argument(s), ${args.length} given` });
      } else out.push({ kind: 'call', op, args, source });
    } catch (err) {
      if (!(err instanceof NotLiteral)) throw err;
      out.push({ kind: 'not-concrete', op, source, reason: err.message });
    }
  }
  return out;
}

/** How to read the lines of a listing between `<file …>` delimiters. */
export type ListingLines =
  /** File content (reads, grep matches): only ctxfs's `[… …]` markers are instructions. */
  | 'content'
  /** Rows ctxfs wrote that are calls themselves (findSymbol's `getSymbol("a.ts", "X")  method 12-40`). */
  | 'calls';

/** A piece of a served `text`: what ctxfs wrote around the `<file …>` delimiters, or the body between an opening one and its closing one. */
export interface ServedPart {
  readonly delimited: boolean;
  readonly text: string;
}

/**
 * A served `text` cut at its `<file … nonce="…">` … `</file nonce="…">`
 * delimiters, in order; a body whose closing delimiter is missing runs to
 * the end.
 */
export function servedParts(text: string): ServedPart[] {
  const out: ServedPart[] = [];
  const open = /<file [^\n]*?nonce="([0-9a-f]+)"[^\n]*>\n/g;
  let cursor = 0;
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    out.push({ delimited: false, text: text.slice(cursor, m.index) });
    const close = `</file nonce="${m[1]}">`;
    const closeAt = text.indexOf(close, open.lastIndex);
    out.push({ delimited: true, text: text.slice(open.lastIndex, closeAt < 0 ? text.length : closeAt) });
    cursor = closeAt < 0 ? text.length : closeAt + close.length;
    open.lastIndex = cursor;
  }
  out.push({ delimited: false, text: text.slice(cursor) });
  return out;
}

/**
 * The calls in a served `text`: everything outside the `<file …>` …
 * `</file nonce=…>` delimiters (a search's header and notes), and inside
 * them only what ctxfs wrote, never the file's own content — a README that
 * shows `glob("**\/*.js")` is data, not an instruction. Inside, ctxfs
 * writes markers as whole lines (`[… lines 41-80 omitted …]`, `[also
 * named …]`) and, in a findSymbol listing, one call per row.
 */
export function findCallsInServed(text: string, listing: ListingLines = 'content'): CallFinding[] {
  const out: CallFinding[] = [];
  for (const part of servedParts(text)) {
    if (!part.delimited) {
      out.push(...findCalls(part.text));
      continue;
    }
    for (const line of part.text.split('\n')) {
      if (/^\[(?:…|also named )/.test(line)) out.push(...findCalls(line));
      else if (listing === 'calls') {
        // A row is `getSymbol("a.ts", "X")  method 12-40`, tagged `[exact] ` with `match: 'all'`.
        const row = line.replace(/^\[\w+\] /, '');
        out.push(...findCalls(row).filter((c) => row.startsWith(c.source)));
      }
    }
  }
  return out;
}

function argText(a: CallArg): string {
  if (a === null || typeof a !== 'object') return JSON.stringify(a);
  if (Array.isArray(a)) return `[${a.map(argText).join(', ')}]`;
  const entries = Object.entries(a as { readonly [key: string]: CallArg });
  return `{${entries.map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${argText(v)}`).join(', ')}}`;
}

/** A concrete call written back out, the same way every time (a key for deduplication, and for reports). */
export function callKey(call: { readonly op: string; readonly args: readonly CallArg[] }): string {
  return `${call.op}(${call.args.map(argText).join(', ')})`;
}
