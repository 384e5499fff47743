/**
 * Symbols for languages without a grammar (Kotlin, Swift, Scala, Lua, Perl,
 * Elixir, Dart...): definition keywords found by regular expression, the end
 * found by brace balance or indentation. Approximate by nature; tree-sitter is
 * used whenever a grammar exists. Markdown's sections are found in
 * `markdown-sections.ts`.
 *
 * @module
 */

import type { CodeSymbol, SymbolKind } from './types.ts';

const DEFINITION =
  /^(\s*)(?:(?:export|public|private|protected|internal|open|override|abstract|final|static|async|pub(?:\([^)]*\))?|inline|data|sealed|suspend|local|default)\s+)*(function|func|fun|fn|def|defp|defmodule|sub|class|struct|interface|trait|protocol|enum|object|module|impl|extension|record)\s+([A-Za-z_$][\w$.]*)/;

const KINDS: Record<string, SymbolKind> = {
  function: 'function',
  func: 'function',
  fun: 'function',
  fn: 'function',
  def: 'function',
  defp: 'function',
  sub: 'function',
  class: 'class',
  struct: 'struct',
  interface: 'interface',
  trait: 'trait',
  protocol: 'interface',
  enum: 'enum',
  object: 'class',
  module: 'module',
  defmodule: 'module',
  impl: 'impl',
  extension: 'impl',
  record: 'class',
};

const CONTAINERS = new Set<SymbolKind>(['class', 'struct', 'interface', 'trait', 'enum', 'module', 'impl']);

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}

/** Last line of a definition starting at `start` (0-based). */
function endOf(lines: readonly string[], start: number, indent: number): number {
  let depth = 0;
  let opened = false;
  for (let i = start; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/(["'])(?:\\.|(?!\1).)*\1/g, '""').replace(/\/\/.*$|#.*$|--.*$/, '');
    for (const ch of line) {
      if (ch === '{') {
        depth++;
        opened = true;
      } else if (ch === '}') depth--;
    }
    if (opened && depth <= 0) return i;
    // No brace on the header line or the next: an indentation or `end` language.
    if (!opened && i > start + 1) break;
  }
  let last = start;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    if (leadingSpaces(line) <= indent) {
      if (/^\s*end\b/.test(line) && leadingSpaces(line) === indent) return i;
      break;
    }
    last = i;
  }
  return last;
}

function docStart(lines: readonly string[], start: number): number {
  let i = start - 1;
  while (i >= 0) {
    const t = (lines[i] as string).trim();
    if (/^(\/\/\/?|#(?!\[)|--|\*|\/\*\*?|\*\/|@)/.test(t) && t !== '') i--;
    else break;
  }
  return i + 1;
}

/**
 * Finds definitions by keyword. Nested definitions become children when they
 * start inside a container's range.
 */
export function regexSymbols(lines: readonly string[]): CodeSymbol[] {
  interface Draft {
    name: string;
    kind: SymbolKind;
    start: number;
    end: number;
    doc: number;
    signature: string;
    children: Draft[];
  }
  const roots: Draft[] = [];
  const stack: Draft[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const m = DEFINITION.exec(line);
    if (!m) continue;
    const indent = (m[1] as string).length;
    const kind = KINDS[m[2] as string] ?? 'function';
    const draft: Draft = {
      name: m[3] as string,
      kind,
      start: i,
      end: endOf(lines, i, indent),
      doc: docStart(lines, i),
      signature: line.trim().replace(/\s*[{:=]\s*$/, ''),
      children: [],
    };
    while (stack.length > 0 && (stack[stack.length - 1] as Draft).end < i) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) {
      if (!CONTAINERS.has(parent.kind)) continue;
      if (draft.kind === 'function') draft.kind = 'method';
      parent.children.push(draft);
    } else roots.push(draft);
    stack.push(draft);
  }
  const finish = (d: Draft, prefix: string): CodeSymbol => ({
    name: d.name,
    qualifiedName: prefix ? `${prefix}.${d.name}` : d.name,
    kind: d.kind,
    startLine: d.start + 1,
    endLine: d.end + 1,
    docStartLine: d.doc + 1,
    signature: d.signature.length > 200 ? `${d.signature.slice(0, 199)}…` : d.signature,
    children: d.children.map((c) => finish(c, prefix ? `${prefix}.${d.name}` : d.name)),
  });
  return roots.map((d) => finish(d, ''));
}
