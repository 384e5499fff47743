/**
 * Symbols from tree-sitter syntax trees. Grammars are the prebuilt WASM files
 * of `@vscode/tree-sitter-wasm`, loaded from the installed package (never the
 * network) on first use of each language.
 *
 * @module
 */

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, type Node, Parser, type Tree } from 'web-tree-sitter';
import type { CodeSymbol, SymbolKind } from './types.ts';

const require = createRequire(import.meta.url);

/** Language ids (as in the registry) that have a grammar, mapped to the grammar file. */
const GRAMMARS: Record<string, string> = {
  typescript: 'typescript',
  tsx: 'tsx',
  javascript: 'javascript',
  python: 'python',
  go: 'go',
  rust: 'rust',
  java: 'java',
  'c-sharp': 'c-sharp',
  cpp: 'cpp',
  // C parses well with the C++ grammar for the purpose of finding definitions.
  c: 'cpp',
  ruby: 'ruby',
  php: 'php',
  bash: 'bash',
};

/** Whether `language` is parsed with tree-sitter. */
export function hasGrammar(language: string | undefined): boolean {
  return language !== undefined && language in GRAMMARS;
}

let init: Promise<void> | undefined;
const loaded = new Map<string, Promise<Language>>();

function grammarDir(): string {
  return join(dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm');
}

/** Loads (once) the grammar of `language`. */
export async function loadLanguage(language: string): Promise<Language> {
  const grammar = GRAMMARS[language];
  if (!grammar) throw new Error(`no tree-sitter grammar for ${language}`);
  init ??= Parser.init({ locateFile: () => require.resolve('web-tree-sitter/web-tree-sitter.wasm') });
  await init;
  let lang = loaded.get(grammar);
  if (!lang) {
    lang = readFile(join(grammarDir(), `tree-sitter-${grammar}.wasm`)).then((bytes) => Language.load(bytes));
    loaded.set(grammar, lang);
  }
  return lang;
}

/** Parses `text`; the caller must `delete()` the tree. */
export async function parseText(language: string, text: string): Promise<Tree> {
  const lang = await loadLanguage(language);
  const parser = new Parser();
  try {
    parser.setLanguage(lang);
    const tree = parser.parse(text);
    if (!tree) throw new Error('tree-sitter returned no tree');
    return tree;
  } finally {
    parser.delete();
  }
}

type KindRule = SymbolKind | ((node: Node) => SymbolKind | undefined);

interface LanguageSpec {
  /** Definition node types and their kind. */
  readonly defs: Record<string, KindRule>;
  /** Node types that wrap a definition and belong to its range (export, decorators, templates). */
  readonly wrappers?: ReadonlySet<string>;
  /** Name of a definition node; default: its `name` field. */
  readonly name?: (node: Node) => string | undefined;
  /** Sibling node types before a definition that belong to it (attributes). */
  readonly attached?: ReadonlySet<string>;
}

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);

function jsVariable(node: Node): SymbolKind | undefined {
  const value = node.childForFieldName('value');
  if (value && FUNCTION_VALUES.has(value.type)) return 'function';
  if (value && (value.type === 'class' || value.type === 'class_expression')) return 'class';
  // Plain constants only at module level; locals are not outline material.
  const decl = node.parent;
  const host = decl?.parent?.type === 'export_statement' ? decl.parent.parent : decl?.parent;
  return host?.type === 'program' ? 'variable' : undefined;
}

const JS_SPEC: LanguageSpec = {
  defs: {
    function_declaration: 'function',
    generator_function_declaration: 'function',
    class_declaration: 'class',
    abstract_class_declaration: 'class',
    method_definition: (n) => (n.childForFieldName('name')?.text === 'constructor' ? 'constructor' : 'method'),
    abstract_method_signature: 'method',
    interface_declaration: 'interface',
    type_alias_declaration: 'type',
    enum_declaration: 'enum',
    internal_module: 'namespace',
    module: 'namespace',
    variable_declarator: jsVariable,
    public_field_definition: (n) => {
      const value = n.childForFieldName('value');
      return value && FUNCTION_VALUES.has(value.type) ? 'method' : undefined;
    },
    // CommonJS and prototype style: `exports.parse = function (…) {…}`, `Foo.prototype.run = async () => {…}`.
    assignment_expression: (n) => {
      const right = n.childForFieldName('right');
      const left = n.childForFieldName('left');
      if (!right || !left || !FUNCTION_VALUES.has(right.type)) return undefined;
      if (left.type !== 'member_expression' && left.type !== 'identifier') return undefined;
      return /\.prototype\./.test(left.text) ? 'method' : 'function';
    },
    field_definition: (n) => {
      const value = n.childForFieldName('value');
      return value && FUNCTION_VALUES.has(value.type) ? 'method' : undefined;
    },
  },
  wrappers: new Set(['export_statement', 'lexical_declaration', 'variable_declaration', 'ambient_declaration', 'expression_statement']),
  name: (n) => {
    if (n.type === 'assignment_expression') {
      const left = n.childForFieldName('left');
      return left?.type === 'member_expression' ? left.childForFieldName('property')?.text : left?.text;
    }
    return (n.childForFieldName('name') ?? n.childForFieldName('property'))?.text;
  },
};

function declaratorName(node: Node | null): string | undefined {
  let cur = node;
  for (let i = 0; cur && i < 8; i++) {
    if (['identifier', 'field_identifier', 'qualified_identifier', 'destructor_name', 'operator_name', 'type_identifier'].includes(cur.type)) return cur.text;
    cur = cur.childForFieldName('declarator') ?? cur.childForFieldName('name') ?? null;
  }
  return undefined;
}

const SPECS: Record<string, LanguageSpec> = {
  typescript: JS_SPEC,
  tsx: JS_SPEC,
  javascript: JS_SPEC,
  python: {
    defs: { function_definition: 'function', class_definition: 'class' },
    wrappers: new Set(['decorated_definition']),
  },
  go: {
    defs: {
      function_declaration: 'function',
      method_declaration: 'method',
      type_spec: (n) => {
        const t = n.childForFieldName('type')?.type;
        return t === 'struct_type' ? 'struct' : t === 'interface_type' ? 'interface' : 'type';
      },
    },
    wrappers: new Set(['type_declaration']),
  },
  rust: {
    defs: {
      function_item: 'function',
      function_signature_item: 'function',
      struct_item: 'struct',
      enum_item: 'enum',
      union_item: 'struct',
      trait_item: 'trait',
      impl_item: 'impl',
      mod_item: 'module',
      type_item: 'type',
      macro_definition: 'function',
    },
    attached: new Set(['attribute_item']),
    name: (n) => (n.type === 'impl_item' ? implName(n) : n.childForFieldName('name')?.text),
  },
  java: {
    defs: {
      class_declaration: 'class',
      interface_declaration: 'interface',
      enum_declaration: 'enum',
      record_declaration: 'class',
      annotation_type_declaration: 'interface',
      method_declaration: 'method',
      constructor_declaration: 'constructor',
    },
  },
  'c-sharp': {
    defs: {
      class_declaration: 'class',
      interface_declaration: 'interface',
      struct_declaration: 'struct',
      enum_declaration: 'enum',
      record_declaration: 'class',
      namespace_declaration: 'namespace',
      file_scoped_namespace_declaration: 'namespace',
      method_declaration: 'method',
      constructor_declaration: 'constructor',
      property_declaration: 'property',
    },
  },
  cpp: {
    defs: {
      function_definition: 'function',
      class_specifier: (n) => (n.childForFieldName('body') ? 'class' : undefined),
      struct_specifier: (n) => (n.childForFieldName('body') ? 'struct' : undefined),
      enum_specifier: (n) => (n.childForFieldName('body') ? 'enum' : undefined),
      namespace_definition: 'namespace',
    },
    wrappers: new Set(['template_declaration']),
    name: (n) => (n.type === 'function_definition' ? declaratorName(n.childForFieldName('declarator')) : n.childForFieldName('name')?.text),
  },
  ruby: {
    defs: { method: 'method', singleton_method: 'method', class: 'class', module: 'module' },
  },
  php: {
    defs: {
      function_definition: 'function',
      class_declaration: 'class',
      interface_declaration: 'interface',
      trait_declaration: 'trait',
      enum_declaration: 'enum',
      method_declaration: 'method',
    },
  },
  bash: { defs: { function_definition: 'function' } },
};
SPECS.c = SPECS.cpp as LanguageSpec;

function implName(n: Node): string | undefined {
  const type = n.childForFieldName('type')?.text;
  const trait = n.childForFieldName('trait')?.text;
  return type === undefined ? undefined : trait ? `${trait} for ${type}` : type;
}

/** Kinds whose bodies are not searched for nested definitions. */
const LEAF_KINDS = new Set<SymbolKind>(['function', 'method', 'constructor', 'variable', 'property', 'type']);
const CONTAINER_KINDS = new Set<SymbolKind>(['class', 'interface', 'struct', 'trait', 'impl', 'enum']);

/** Last row holding text of `node` (a line comment may end at column 0 of the next row). */
function lastRow(node: Node): number {
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row - 1 : end.row;
}

const SLASH_COMMENT_LINE = /^\s*(\/\/|\/\*|\*)/;
const HASH_COMMENT_LINE = /^\s*#(?![[!])/;
const HASH_COMMENT_LANGUAGES = new Set(['python', 'ruby', 'bash', 'php']);

function isShebang(node: Node): boolean {
  return node.startPosition.row === 0 && node.text.startsWith('#!');
}

function isComment(node: Node): boolean {
  return node.type.includes('comment');
}

function signatureOf(outer: Node, def: Node): string {
  const body = def.childForFieldName('body');
  let text = body && body.startIndex > def.startIndex ? def.text.slice(0, body.startIndex - def.startIndex) : (def.text.split('\n')[0] ?? '');
  // `export`, `pub` and the like sit in the wrapper on the same line.
  if (outer !== def && outer.startPosition.row === def.startPosition.row) text = outer.text.slice(0, def.startIndex - outer.startIndex) + text;
  text = text
    .split('\n')
    .map((line) => line.replace(/\s(\/\/|#).*$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s*[{=:]$/, '')
    .replace(/\s*=>$/, ' =>')
    .trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * Extracts definitions from a parsed tree.
 *
 * @param language a language id with a grammar (see {@link hasGrammar})
 */
export function symbolsFromTree(language: string, tree: Tree): CodeSymbol[] {
  const spec = SPECS[language];
  if (!spec) return [];
  const nameOf = spec.name ?? ((n: Node) => n.childForFieldName('name')?.text);
  const lines = tree.rootNode.text.split('\n');

  const walk = (node: Node, parent: CodeSymbol | undefined, out: CodeSymbol[]): void => {
    for (const child of node.namedChildren) {
      if (!child) continue;
      const rule = spec.defs[child.type];
      const kind0 = rule === undefined ? undefined : typeof rule === 'function' ? rule(child) : rule;
      const name = kind0 ? nameOf(child) : undefined;
      if (!kind0 || !name) {
        walk(child, parent, out);
        continue;
      }
      let kind = kind0;
      if (kind === 'function' && parent && CONTAINER_KINDS.has(parent.kind)) kind = 'method';
      // Grow the range over wrappers that hold only this definition.
      let outer: Node = child;
      while (outer.parent && spec.wrappers?.has(outer.parent.type) && outer.parent.namedChildren.filter((c) => c && !isComment(c)).length <= 2) {
        outer = outer.parent;
      }
      let startRow = outer.startPosition.row;
      let prev = outer.previousNamedSibling;
      while (prev && spec.attached?.has(prev.type) && prev.endPosition.row >= startRow - 1) {
        startRow = prev.startPosition.row;
        prev = prev.previousNamedSibling;
      }
      let docRow = startRow;
      while (prev && isComment(prev) && lastRow(prev) >= docRow - 1 && lastRow(prev) < docRow && !isShebang(prev)) {
        docRow = prev.startPosition.row;
        prev = prev.previousNamedSibling;
      }
      // Some grammars hang comments on an outer node; fall back to the lines above.
      if (docRow === startRow) {
        const commentLine = HASH_COMMENT_LANGUAGES.has(language) ? HASH_COMMENT_LINE : SLASH_COMMENT_LINE;
        while (docRow > 0 && commentLine.test(lines[docRow - 1] ?? '')) docRow--;
      }
      const children: CodeSymbol[] = [];
      const symbol: CodeSymbol = {
        name,
        qualifiedName: parent ? `${parent.qualifiedName}.${name}` : name,
        kind,
        startLine: startRow + 1,
        endLine: outer.endPosition.row + 1 - (outer.endPosition.column === 0 && outer.endPosition.row > outer.startPosition.row ? 1 : 0),
        docStartLine: docRow + 1,
        signature: signatureOf(outer, child),
        children,
      };
      if (child.type === 'assignment_expression' && !parent) {
        const left = child
          .childForFieldName('left')
          ?.text.replace(/\.prototype\./, '.')
          .replace(/^(module\.)?exports\./, '');
        if (left) (symbol as { qualifiedName: string }).qualifiedName = left;
      }
      if (language === 'go' && child.type === 'method_declaration') {
        const receiver = child.childForFieldName('receiver')?.text.match(/([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*\)$/)?.[1];
        if (receiver) (symbol as { qualifiedName: string }).qualifiedName = `${receiver}.${name}`;
      }
      out.push(symbol);
      if (!LEAF_KINDS.has(kind)) walk(child, symbol, children);
    }
  };
  const out: CodeSymbol[] = [];
  walk(tree.rootNode, undefined, out);
  return out;
}

/** Parses and extracts in one step. */
export async function treeSitterSymbols(language: string, text: string): Promise<CodeSymbol[]> {
  const tree = await parseText(language, text);
  try {
    return symbolsFromTree(language, tree);
  } finally {
    tree.delete();
  }
}
