/**
 * `.gitignore` rules, matched as git matches them: each `.gitignore`
 * applies to the directory it sits in and everything below; a pattern with a
 * slash (other than a trailing one) is anchored to that directory, one
 * without matches a name at any depth; a trailing slash matches directories
 * only; `!` re-includes; the last matching rule wins; a file inside an
 * ignored directory stays ignored (the directory is never entered).
 *
 * Patterns are git's wildmatch, translated here rather than handed to a glob
 * library, whose syntax differs where it matters for a deny or allow list:
 * `*` and `?` stop at `/`; `**` spans directories only as a whole segment
 * (`**\/x`, `a/**\/b`, `x/**`); `[a-z]`, `[!a]` and `[^a]`, `[[:digit:]]`
 * are classes; a backslash makes the next character literal; braces,
 * parentheses, `+`, `@` and `|` are plain characters; trailing spaces are
 * dropped unless escaped. Matching is byte by byte over UTF-8 and
 * case-sensitive, as git on Linux (`?` is one byte of `é`). A pattern git
 * cannot complete (an unclosed `[`, a trailing `\`) matches nothing.
 *
 * @module
 */

/** One compiled line of a `.gitignore`. */
export interface IgnoreRule {
  /** Directory (workspace path) of the `.gitignore` the rule comes from. */
  readonly base: string;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  /** Whether the rule's pattern matches `relative` (the path below `base`) or, for a pattern without a slash, `name`. */
  readonly test: (relative: string, name: string) => boolean;
}

const utf8 = new TextEncoder();

/** `text` as its UTF-8 bytes, one character a byte: wildmatch compares bytes. */
function bytesOf(text: string): string {
  // Nearly every path is ASCII: no copy for those.
  if (!/[\u0080-\uffff]/.test(text)) return text;
  let out = '';
  for (const byte of utf8.encode(text)) out += String.fromCharCode(byte);
  return out;
}

const hex = (byte: number): string => `\\x${byte.toString(16).padStart(2, '0')}`;
const literalSource = (ch: string): string => (/[A-Za-z0-9_]/.test(ch) ? ch : hex(ch.charCodeAt(0)));

/** git's `[[:name:]]` classes, ASCII only, from git's own ctype table (`space` is tab, LF, CR and space). */
const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  blank: '\\x20\\x09',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e',
  space: '\\x20\\x09\\x0a\\x0d',
  upper: 'A-Z',
  xdigit: '0-9A-Fa-f',
};

/**
 * The class opening at `open` as a regex for one byte, and the index of its
 * `]`, following wildmatch: the first member may be `]`, a range includes
 * its first end even when reversed (`[z-a]` is `z`), `-` first or last is
 * literal. Undefined when git aborts (unclosed, an unknown `[:name:]`).
 */
function parseClass(p: string, open: number, pathname: boolean): { source: string; end: number } | undefined {
  let i = open + 1;
  const negated = p[i] === '!' || p[i] === '^';
  if (negated) i++;
  let members = '';
  let rangeStart = -1;
  for (let first = true; ; first = false) {
    if (i >= p.length) return undefined;
    const ch = p[i] as string;
    if (ch === ']' && !first) break;
    if (ch === '\\') {
      if (++i >= p.length) return undefined;
      rangeStart = p.charCodeAt(i);
      members += hex(rangeStart);
    } else if (ch === '-' && rangeStart >= 0 && i + 1 < p.length && p[i + 1] !== ']') {
      i++;
      if (p[i] === '\\' && ++i >= p.length) return undefined;
      const end = p.charCodeAt(i);
      if (rangeStart <= end) members += `${hex(rangeStart)}-${hex(end)}`;
      rangeStart = -1;
    } else if (ch === '[' && p[i + 1] === ':') {
      const close = p.indexOf(']', i + 2);
      if (close < 0) return undefined;
      if (close - 1 < i + 2 || p[close - 1] !== ':') {
        // `[:` without a closing `:]` is a plain `[` followed by the rest.
        rangeStart = 0x5b;
        members += hex(rangeStart);
      } else {
        const named = POSIX_CLASSES[p.slice(i + 2, close - 1)];
        if (named === undefined) return undefined;
        members += named;
        rangeStart = -1;
        i = close;
      }
    } else {
      rangeStart = p.charCodeAt(i);
      members += hex(rangeStart);
    }
    i++;
  }
  // With a pathname, git never lets a class match the `/` between segments.
  const source = negated ? `[^${pathname ? '/' : ''}${members}]` : `${pathname ? '(?!/)' : ''}[${members}]`;
  return { source, end: i };
}

type Token =
  | { readonly kind: 'atom'; readonly source: string; readonly literal?: string }
  | { readonly kind: 'star' }
  /** `**` spanning directories: at the end, before a `/`, or before an escaped `\/` (git's zero-directory shortcut takes only a plain `/`). */
  | { readonly kind: 'globstar'; readonly before: 'end' | '/' | '\\/' };

/**
 * The tokens of a wildmatch pattern (as bytes). `**` spans directories
 * when it is a whole segment — or, as git has it, when it is the first
 * wildcard of an anchored pattern and ends one (git compares the literal
 * head separately, so `/x**\/y` matches `xq/z/y`).
 */
function tokenize(p: string, pathname: boolean): Token[] | undefined {
  const tokens: Token[] = [];
  const head = p.search(/[*?[\\]/);
  for (let i = 0; i < p.length; i++) {
    const ch = p[i] as string;
    if (ch === '*') {
      const start = i;
      while (p[i + 1] === '*') i++;
      if (pathname && i > start && (start === head || p[start - 1] === '/')) {
        const before = i + 1 === p.length ? 'end' : p[i + 1] === '/' ? '/' : p[i + 1] === '\\' && p[i + 2] === '/' ? '\\/' : undefined;
        if (before !== undefined) {
          i += before.length;
          tokens.push({ kind: 'globstar', before });
          continue;
        }
      }
      tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'atom', source: '[^/]' });
    else if (ch === '[') {
      const cls = parseClass(p, i, pathname);
      if (cls === undefined) return undefined;
      tokens.push({ kind: 'atom', source: cls.source });
      i = cls.end;
    } else if (ch === '\\') {
      if (++i >= p.length) return undefined;
      tokens.push({ kind: 'atom', source: literalSource(p[i] as string), literal: p[i] as string });
    } else tokens.push({ kind: 'atom', source: literalSource(ch), literal: ch });
  }
  return tokens;
}

/**
 * The regex source for a stretch without `**`. A fixed run between two `*`
 * is matched at its first occurrence, made atomic with a lookahead and a
 * backreference: the first occurrence is always as good as a later one (the
 * next `*` takes up the difference), and no backtracking into it keeps the
 * match linear where `*a*a*a*b` would otherwise go polynomial.
 */
function unitSource(tokens: readonly Token[], group: { n: number }): string {
  const pieces: string[] = [''];
  for (const t of tokens) {
    if (t.kind === 'star') pieces.push('');
    else if (t.kind === 'atom') pieces[pieces.length - 1] += t.source;
  }
  if (pieces.length === 1) return pieces[0] as string;
  let source = pieces[0] as string;
  for (let i = 1; i < pieces.length - 1; i++) source += `(?=([^/]*?${pieces[i]}))(?:\\${++group.n})`;
  return `${source}[^/]*${pieces[pieces.length - 1]}`;
}

/** Matches a whole text (a relative path, or a name), as bytes. */
type ByteMatcher = (bytes: string) => boolean;

const NEVER: ByteMatcher = () => false;

/**
 * Compiles one wildmatch pattern (bytes, leading `/` already taken off).
 * `pathname`: the pattern is matched against a path (`*` stops at `/`);
 * else against a name.
 */
function compileWildmatch(pattern: string, pathname: boolean): ByteMatcher {
  const tokens = tokenize(pattern, pathname);
  if (tokens === undefined) return NEVER;
  if (tokens.every((t) => t.kind === 'atom' && t.literal !== undefined)) {
    const literal = tokens.map((t) => (t.kind === 'atom' ? t.literal : '')).join('');
    return (text) => text === literal;
  }
  // Units between `**`; each one after a `**` and before another is matched
  // at its first place (atomic, as in unitSource): it ends with the `/`
  // before that next `**`, which then takes up the rest.
  const units: Token[][] = [[]];
  const globstars: Array<Token & { kind: 'globstar' }> = [];
  for (const t of tokens) {
    if (t.kind === 'globstar') {
      globstars.push(t);
      units.push([]);
    } else (units[units.length - 1] as Token[]).push(t);
  }
  const group = { n: 0 };
  let source = `^${unitSource(units[0] as Token[], group)}`;
  let open = true;
  globstars.forEach((g, i) => {
    const unit = units[i + 1] as Token[];
    if (g.before === 'end') {
      source += '[\\s\\S]*';
      open = false;
    } else if (i < globstars.length - 1) {
      // JavaScript numbers groups as they open: this one before those inside the unit.
      const n = ++group.n;
      const lazy = g.before === '/' ? '(?:[\\s\\S]*?/)??' : '[\\s\\S]*?/';
      source += `(?=(${lazy}${unitSource(unit, group)}))(?:\\${n})`;
    } else source += `${g.before === '/' ? '(?:[\\s\\S]*/)?' : '[\\s\\S]*/'}${unitSource(unit, group)}`;
  });
  const regex = new RegExp(open ? `${source}$` : source);
  return (text) => regex.test(text);
}

/** git's trailing-space rule: spaces at the end go unless the last is escaped. */
function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === ' ') {
      if (lastSpace < 0) lastSpace = i;
    } else {
      if (ch === '\\' && ++i >= line.length) return line;
      lastSpace = -1;
    }
  }
  return lastSpace < 0 ? line : line.slice(0, lastSpace);
}

/** The name a pattern is when it has no wildcard (escapes resolved), else undefined. */
function literalOf(pattern: string): string | undefined {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '*' || ch === '?' || ch === '[') return undefined;
    if (ch === '\\') {
      if (++i >= pattern.length) return undefined;
      out += pattern[i];
    } else out += ch;
  }
  return out;
}

class Rule implements IgnoreRule {
  readonly base: string;
  readonly baseBytes: string;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  /** Matched against the relative path (the pattern has a slash), else against the name. */
  readonly anchored: boolean;
  readonly match: ByteMatcher;
  /** The name this rule is when it is one name without wildcards. */
  readonly literal: string | undefined;
  readonly #pattern: string;
  #lastSegment: ByteMatcher | undefined;

  constructor(base: string, negate: boolean, dirOnly: boolean, pattern: string) {
    this.base = base;
    this.baseBytes = bytesOf(base);
    this.negate = negate;
    this.dirOnly = dirOnly;
    this.anchored = pattern.includes('/');
    // git takes one leading `/` off an anchored pattern.
    this.#pattern = this.anchored && pattern.startsWith('/') ? pattern.slice(1) : pattern;
    this.match = compileWildmatch(bytesOf(this.#pattern), this.anchored);
    this.literal = this.anchored ? undefined : literalOf(pattern);
  }

  readonly test = (relative: string, name: string): boolean => this.match(bytesOf(this.anchored ? relative : name));

  /** Whether some path whose last name is `name` (bytes) may match: conservative, true when unsure. */
  mayEndIn(name: string): boolean {
    if (!this.anchored) return this.match(name);
    // A `**` can reach past segments (and git's first-wildcard `**` past a name's end).
    if (this.#pattern.includes('**')) return true;
    this.#lastSegment ??= (() => {
      const last = bytesOf(this.#pattern.slice(this.#pattern.lastIndexOf('/') + 1));
      // A segment cut out of a class (`[/]`) reads as malformed: unsure, so it may.
      return tokenize(last, false) === undefined ? () => true : compileWildmatch(last, false);
    })();
    return this.#lastSegment(name);
  }
}

/** One line of a `.gitignore` as a rule; undefined for a blank line, a comment, or a pattern that is empty. */
function parseLine(raw: string, base: string): Rule | undefined {
  if (raw === '' || raw.startsWith('#')) return undefined;
  let line = trimTrailingSpaces(raw);
  const negate = line.startsWith('!');
  if (negate) line = line.slice(1);
  const dirOnly = line.endsWith('/');
  if (dirOnly) line = line.slice(0, -1);
  if (line === '') return undefined;
  return new Rule(base, negate, dirOnly, line);
}

/**
 * Compiles the text of a `.gitignore` found in directory `base`.
 *
 * @example
 * ```ts
 * const rules = parseGitignore('dist/\n*.log\n!keep.log\n', '');
 * isIgnored(rules, 'a/b.log', false); // true
 * isIgnored(rules, 'keep.log', false); // false
 * ```
 */
export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const rule = parseLine(raw, base);
    if (rule !== undefined) rules.push(rule);
  }
  return rules;
}

/** True when the last rule matching `path` ignores it. */
export function isIgnored(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean {
  return lastMatchIgnores(rules, path, bytesOf(path), isDirectory);
}

/** `path` and `bytes` are the same path; rules of this module read the bytes. */
function lastMatchIgnores(rules: readonly IgnoreRule[], path: string, bytes: string, isDirectory: boolean): boolean {
  const name = bytes.slice(bytes.lastIndexOf('/') + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i] as IgnoreRule;
    if (r.dirOnly && !isDirectory) continue;
    if (r instanceof Rule) {
      if (r.baseBytes !== '' && !bytes.startsWith(`${r.baseBytes}/`)) continue;
      if (r.match(r.anchored ? (r.baseBytes === '' ? bytes : bytes.slice(r.baseBytes.length + 1)) : name)) return !r.negate;
    } else {
      if (r.base !== '' && !path.startsWith(`${r.base}/`)) continue;
      if (r.test(r.base === '' ? path : path.slice(r.base.length + 1), path.slice(path.lastIndexOf('/') + 1))) return !r.negate;
    }
  }
  return false;
}

/**
 * The names `rules` ignore wherever they occur, with no later `!` rule that
 * could bring one back: rules that are a bare name (no wildcard, no slash
 * but a trailing one). A walk can leave these out without asking per path.
 * A `name/` rule is listed too, so a walk that skips the name skips a file
 * of that name as well, which git would keep.
 *
 * @example
 * ```ts
 * ignoredNames(parseGitignore('dist\n*.log\n!keep.log\nbuild/\n', '')); // ['dist', 'build']
 * ```
 */
export function ignoredNames(rules: readonly IgnoreRule[]): string[] {
  const names: string[] = [];
  rules.forEach((r, i) => {
    if (!(r instanceof Rule) || r.negate || r.literal === undefined) return;
    const name = bytesOf(r.literal);
    const reIncluded = rules.slice(i + 1).some((later) => later.negate && (!(later instanceof Rule) || later.mayEndIn(name)));
    if (!reIncluded) names.push(r.literal);
  });
  return names;
}

/**
 * A matcher for a list of gitignore-style patterns (one rule each, as lines
 * of a `.gitignore` at the root), answering for a path the way git answers:
 * a path is matched when the last rule matching it, or a directory above
 * it, says so — a file inside a matched directory stays matched, whatever a
 * later `!` says of the file alone.
 *
 * The predicate's `isDirectory` (default `false`) says that `path` itself is
 * a directory: a directory-only rule (`secrets/`) matches the directory
 * `secrets` only when told so, as git matches it only when it finds a
 * directory there; everything below `secrets/` is matched either way. A
 * caller that does not know the kind gets git's answer for a file.
 *
 * @example
 * ```ts
 * const m = compilePathPatterns(['secrets/', '*.pem', '!public.pem', '/build', '\\!draft.md']);
 * m('secrets/db/pass.txt'); // true (inside a matched directory)
 * m('secrets');             // false: a file named secrets
 * m('secrets', true);       // true: the directory
 * m('certs/public.pem');    // false (re-included)
 * m('src/build');           // false (anchored to the root)
 * m('!draft.md');           // true: `\!` is a literal `!`
 * ```
 */
export function compilePathPatterns(patterns: readonly string[]): (path: string, isDirectory?: boolean) => boolean {
  const rules: Rule[] = [];
  for (const pattern of patterns) {
    const rule = parseLine(pattern, '');
    if (rule !== undefined) rules.push(rule);
  }
  if (rules.length === 0) return () => false;
  return (path, isDirectory = false) => {
    const bytes = bytesOf(path);
    // Every directory above the path first: a matched one settles it.
    for (let slash = bytes.indexOf('/'); slash >= 0; slash = bytes.indexOf('/', slash + 1)) {
      const dir = bytes.slice(0, slash);
      if (lastMatchIgnores(rules, dir, dir, true)) return true;
    }
    return lastMatchIgnores(rules, path, bytes, isDirectory);
  };
}
