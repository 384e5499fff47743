/**
 * Symbols as every extractor reports them.
 *
 * @module
 */

/** What a symbol is. */
export type SymbolKind =
  | 'function'
  | 'method'
  /** A getter (`get x()`); its setter, when adjacent, is served with it under one name. */
  | 'get'
  /** A setter (`set x(v)`). */
  | 'set'
  | 'constructor'
  | 'class'
  | 'interface'
  | 'struct'
  | 'enum'
  | 'trait'
  | 'impl'
  | 'type'
  | 'module'
  | 'namespace'
  | 'variable'
  | 'property'
  | 'section';

/** Every kind, in the order they are listed to a caller. */
export const SYMBOL_KINDS: readonly SymbolKind[] = [
  'function',
  'method',
  'get',
  'set',
  'constructor',
  'class',
  'interface',
  'struct',
  'enum',
  'trait',
  'impl',
  'type',
  'module',
  'namespace',
  'variable',
  'property',
  'section',
];

/** One definition in a file, with 1-based inclusive line numbers. */
export interface CodeSymbol {
  readonly name: string;
  /** `Outer.inner` for nested symbols; equals `name` at top level. */
  readonly qualifiedName: string;
  readonly kind: SymbolKind;
  /** First line of the definition (decorators, `export` and attributes included). */
  readonly startLine: number;
  readonly endLine: number;
  /** First line of the doc comment before it; `startLine` when there is none. */
  readonly docStartLine: number;
  /** The header without the body, whitespace collapsed. */
  readonly signature: string;
  readonly children: readonly CodeSymbol[];
}

/**
 * Version of what extraction yields for a given content. Stored indexes
 * (the symbol index keys on content hashes) made by another version are
 * rebuilt, so a change of extraction reaches files that did not change.
 * 2: definitions at any depth, accessor kinds, ranges from the first decorator.
 * 3: declarations without a body (TypeScript signatures), overloads in their implementation's range.
 */
export const SYMBOLS_VERSION = 3;

/** Which extractor produced the symbols. */
export type SymbolSource = 'tree-sitter' | 'regex' | 'markdown' | 'none';

/** Symbols of one document. */
export interface SymbolTable {
  readonly source: SymbolSource;
  readonly symbols: readonly CodeSymbol[];
  /** Why a document was not outlined (`minified`), for the outline's header. */
  readonly skipped?: string;
}

/** Every symbol, depth first. */
export function flattenSymbols(symbols: readonly CodeSymbol[]): CodeSymbol[] {
  const out: CodeSymbol[] = [];
  const visit = (list: readonly CodeSymbol[]) => {
    for (const s of list) {
      out.push(s);
      visit(s.children);
    }
  };
  visit(symbols);
  return out;
}

/** Levels of nesting: 1 for a flat list, 0 for none. */
export function nestingDepth(symbols: readonly CodeSymbol[]): number {
  let deepest = 0;
  for (const s of symbols) deepest = Math.max(deepest, 1 + nestingDepth(s.children));
  return deepest;
}
