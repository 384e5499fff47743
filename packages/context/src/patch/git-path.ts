/**
 * Paths as git writes them in a diff. With its default `core.quotePath`, git
 * C-quotes a path holding bytes outside printable ASCII, a tab, a newline,
 * a quote or a backslash (`"donn\303\251es/a.txt"`): the octal escapes are
 * the bytes of the UTF-8 name, so they are read as bytes, then decoded.
 *
 * @module
 */

const ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * Reads the C-quoted string at the start of `text` (which starts with `"`):
 * the name it spells and what follows its closing quote; `undefined` when it
 * is not closed or holds an escape git never writes.
 *
 * @example
 * ```ts
 * unquoteAt('"caf\\303\\251.md"\t2024-01-01'); // { name: 'café.md', rest: '\t2024-01-01' }
 * ```
 */
export function unquoteAt(text: string): { name: string; rest: string } | undefined {
  const bytes: number[] = [];
  const utf8 = new TextEncoder();
  for (let i = 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') return { name: new TextDecoder().decode(new Uint8Array(bytes)), rest: text.slice(i + 1) };
    if (c !== '\\') {
      bytes.push(...utf8.encode(c));
      continue;
    }
    const e = text[i + 1] ?? '';
    const octal = /^[0-3][0-7]{2}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else if (ESCAPES[e] !== undefined) {
      bytes.push(ESCAPES[e]);
      i += 1;
    } else {
      return undefined;
    }
  }
  return undefined;
}

/**
 * A path as git wrote it in a `rename from`/`copy to` line or a header,
 * unquoted when quoted (no `a/`/`b/` prefix is taken off here).
 *
 * @example
 * ```ts
 * gitName('"\\303\\274/x\\ty.txt"'); // 'ü/x\ty.txt'
 * gitName('plain name.txt');         // 'plain name.txt'
 * ```
 */
export function gitName(raw: string): string {
  if (raw.startsWith('"')) {
    const q = unquoteAt(raw);
    if (q !== undefined) return q.name;
  }
  return raw;
}

/**
 * The two paths of a `diff --git <old> <new>` line (the text after
 * `diff --git `), each unquoted and without its `a/`/`b/` prefix; `undefined`
 * when they cannot be told apart.
 *
 * @example
 * ```ts
 * gitHeaderPaths('a/a.txt "b/\\303\\274.txt"'); // ['a.txt', 'ü.txt']
 * ```
 */
export function gitHeaderPaths(rest: string): [string, string] | undefined {
  const strip = (p: string, prefix: string) => (p.startsWith(prefix) ? p.slice(prefix.length) : p);
  let old: string | undefined;
  let after: string;
  if (rest.startsWith('"')) {
    const q = unquoteAt(rest);
    if (q === undefined || !q.rest.startsWith(' ')) return undefined;
    old = q.name;
    after = q.rest.slice(1);
  } else if (rest.endsWith('"')) {
    const at = rest.lastIndexOf(' "');
    if (at < 0) return undefined;
    old = rest.slice(0, at);
    after = rest.slice(at + 1);
  } else {
    // Unquoted names may hold spaces; git's own reading takes the first " b/".
    const m = /^(a\/.+?) (b\/.+)$/.exec(rest);
    if (!m) return undefined;
    return [strip(m[1] as string, 'a/'), strip(m[2] as string, 'b/')];
  }
  return [strip(old, 'a/'), strip(gitName(after), 'b/')];
}
