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
import type { Language, Node, Tree } from 'web-tree-sitter';
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

// web-tree-sitter is imported on first parse: its module costs a few ms to
// evaluate, and a process that only reads, searches or edits text never parses.
let runtime: Promise<typeof import('web-tree-sitter')> | undefined;
const loaded = new Map<string, Promise<Language>>();

function treeSitter(): Promise<typeof import('web-tree-sitter')> {
  runtime ??= import('web-tree-sitter').then(async (module) => {
    await module.Parser.init({ locateFile: () => require.resolve('web-tree-sitter/web-tree-sitter.wasm') });
    return module;
  });
  return runtime;
}

function grammarDir(): string {
  return join(dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm');
}

/** Loads (once) the grammar of `language`. */
export async function loadLanguage(language: string): Promise<Language> {
  const grammar = GRAMMARS[language];
  if (!grammar) throw new Error(`no tree-sitter grammar for ${language}`);
  const { Language } = await treeSitter();
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
  const { Parser } = await treeSitter();
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

/** `(x as T)`, `x!`, `x satisfies T` and parentheses do not change what a value is. */
function unwrapValue(node: Node | null): Node | null {
  let n = node;
  while (n && ['parenthesized_expression', 'as_expression', 'satisfies_expression', 'non_null_expression'].includes(n.type)) n = n.namedChildren[0] ?? null;
  return n;
}

function jsVariable(node: Node): SymbolKind | undefined {
  // `const { a, b } = x` binds names, not a definition.
  if (node.childForFieldName('name')?.type !== 'identifier') return undefined;
  const value = unwrapValue(node.childForFieldName('value'));
  if (value && FUNCTION_VALUES.has(value.type)) return 'function';
  if (value && (value.type === 'class' || value.type === 'class_expression')) return 'class';
  // Plain constants only at module level (a file that does not parse whole has an ERROR root); locals are not outline material.
  const decl = node.parent;
  const host = decl?.parent?.type === 'export_statement' ? decl.parent.parent : decl?.parent;
  return host !== null && host !== undefined && host.parent === null ? 'variable' : undefined;
}

/** `get x()` and `set x(v)` are accessors: the keyword comes before the name (a method named `get` has none). */
function jsMethodKind(node: Node): SymbolKind {
  const name = node.childForFieldName('name');
  for (const c of node.children) {
    if (!c || c.id === name?.id) break;
    if (c.type === 'get' || c.type === 'set') return c.type;
  }
  return name?.text === 'constructor' ? 'constructor' : 'method';
}

/**
 * A method signature is a class's method (an overload, or a member of a
 * `declare class`), as TypeScript's MethodDeclaration; in an interface or a
 * type it is a member of a type, which is no definition of its own (as the
 * compiler and the symbol oracle count them).
 */
function jsMethodSignature(node: Node): SymbolKind | undefined {
  return node.parent?.type === 'class_body' ? jsMethodKind(node) : undefined;
}

/** Definitions that declare without a body: overloads, ambient (`declare`) functions, members of declared classes and interfaces. */
const BODILESS = new Set(['function_signature', 'method_signature', 'abstract_method_signature']);

const JS_SPEC: LanguageSpec = {
  defs: {
    function_declaration: 'function',
    generator_function_declaration: 'function',
    function_signature: 'function',
    method_signature: jsMethodSignature,
    class_declaration: 'class',
    abstract_class_declaration: 'class',
    method_definition: jsMethodKind,
    abstract_method_signature: 'method',
    interface_declaration: 'interface',
    type_alias_declaration: 'type',
    enum_declaration: 'enum',
    internal_module: 'namespace',
    module: 'namespace',
    variable_declarator: jsVariable,
    public_field_definition: (n) => (FUNCTION_VALUES.has(unwrapValue(n.childForFieldName('value'))?.type ?? '') ? 'method' : undefined),
    // CommonJS and prototype style: `exports.parse = function (…) {…}`, `Foo.prototype.run = async () => {…}`.
    assignment_expression: (n) => {
      const right = unwrapValue(n.childForFieldName('right'));
      const left = n.childForFieldName('left');
      if (!right || !left || !FUNCTION_VALUES.has(right.type)) return undefined;
      // A dotted name only: error recovery can glue a call on the line above to the left side.
      if ((left.type !== 'member_expression' && left.type !== 'identifier') || !/^[\w$.]+$/.test(left.text)) return undefined;
      return /\.prototype\./.test(left.text) ? 'method' : 'function';
    },
    field_definition: (n) => (FUNCTION_VALUES.has(unwrapValue(n.childForFieldName('value'))?.type ?? '') ? 'method' : undefined),
  },
  wrappers: new Set(['export_statement', 'lexical_declaration', 'variable_declaration', 'ambient_declaration', 'expression_statement']),
  // A class member's decorators are its siblings in the class body.
  attached: new Set(['decorator']),
  name: (n) => {
    if (n.type === 'assignment_expression') {
      const left = n.childForFieldName('left');
      return left?.type === 'member_expression' ? left.childForFieldName('property')?.text : left?.text;
    }
    return (n.childForFieldName('name') ?? n.childForFieldName('property'))?.text;
  },
};

/**
 * A Python property's getter (`@property`, `@functools.cached_property`)
 * and setter (`@x.setter`) are accessors, as `get x()` and `set x(v)` are
 * in JavaScript: one name, two definitions, each selectable.
 */
function pythonFunctionKind(node: Node): SymbolKind {
  const decorated = node.parent?.type === 'decorated_definition' ? node.parent : undefined;
  const name = node.childForFieldName('name')?.text;
  for (const d of decorated?.namedChildren ?? []) {
    if (d?.type !== 'decorator') continue;
    const text = d.text.replace(/^@\s*/, '');
    if (/^(\w+\.)?(cached_)?property$/.test(text)) return 'get';
    if (text === `${name}.setter`) return 'set';
  }
  return 'function';
}

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
    defs: { function_definition: pythonFunctionKind, class_definition: 'class' },
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
      type_alias: 'type',
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
      compact_constructor_declaration: 'constructor',
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
      // A function declared inside a method body.
      local_function_statement: 'function',
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

/** A documentation comment (`/** … *\/`, `///`), which documents what follows it even across blank lines: JSDoc, Javadoc, PHPDoc, rustdoc, C# XML docs. */
const DOC_COMMENT = /^(\/\*\*(?!\/)|\/\/\/(?!\/))/;

function isDocComment(node: Node): boolean {
  return DOC_COMMENT.test(node.text);
}

/**
 * A JSDoc that declares a type (`@typedef`, `@callback`, `@import`, after
 * any `@template`): a
 * declaration of its own, never the documentation of the code after it.
 * webpack opens most files with a run of them, then a blank line, then the
 * first definition.
 */
const TYPE_DECLARATION_DOC = /^\/\*\*(?:[\s*]|@template\b[^@]*)*@(?:typedef|callback|import)\b/;

/** Whether rows `from`..`to` (inclusive; none when `from > to`) hold nothing but white space. */
function blankRows(lines: readonly string[], from: number, to: number): boolean {
  for (let r = from; r <= to; r++) if ((lines[r] ?? '').trim() !== '') return false;
  return true;
}

/**
 * Last row of a definition's code: comments after its last statement
 * (which Python's grammar keeps inside the indented block) are not part of
 * it, as the language's own parser says.
 */
function contentEndRow(node: Node): number {
  let n = node;
  for (;;) {
    let last: Node | null = null;
    for (let i = n.childCount - 1; i >= 0 && !last; i--) {
      const c = n.child(i);
      if (c && !isComment(c) && c.endIndex > c.startIndex) last = c;
    }
    if (!last) return lastRow(n);
    n = last;
  }
}

/**
 * Children of a wrapper that go with the one definition it wraps: its
 * decorators, attributes and template parameters. A wrapper holding
 * anything else (a second declarator, a second spec) is not part of the
 * definition's range.
 */
const WRAPPER_COMPANIONS = new Set(['decorator', 'attribute_item', 'attribute_list', 'template_parameter_list']);

/**
 * Whether a comment stands on its own lines: nothing but white space before
 * it, nothing but white space or another comment after it. A comment ending
 * a line of code (`x = 1; // eslint-disable-line`) belongs to that line, not
 * to the definition below.
 */
function standsAlone(node: Node, lines: readonly string[]): boolean {
  const start = node.startPosition;
  const before = (lines[start.row] ?? '').slice(0, start.column);
  if (before.trim() !== '') return false;
  const row = lastRow(node);
  const after = row === node.endPosition.row ? (lines[row] ?? '').slice(node.endPosition.column).trim() : '';
  return after === '' || /^(\/\/|\/\*|#)/.test(after);
}

/**
 * First row of the comment lines directly above `row` found by looking at
 * the text (for grammars that hang comments on an outer node): whole-line
 * comments only, and a block comment only from the line that opens it.
 */
function commentLinesAbove(lines: readonly string[], row: number, hash: boolean): number {
  let top = row;
  if (hash) {
    while (top > 0 && HASH_COMMENT_LINE.test(lines[top - 1] ?? '')) top--;
    return top;
  }
  let i = row;
  while (i > 0 && SLASH_COMMENT_LINE.test(lines[i - 1] ?? '') && !/\*\/\s*[^\s/]/.test(lines[i - 1] ?? '')) {
    i--;
    // A run of `//` lines, or a `/*` opener, is a comment from here down; `*` continuation lines count only once their opener is found.
    if (/^\s*(\/\/|\/\*)/.test(lines[i] ?? '')) top = i;
  }
  return top;
}

function signatureOf(outer: Node, def: Node): string {
  const body = def.childForFieldName('body');
  // A declaration without a body is all signature, however many lines its parameters take.
  let text =
    body && body.startIndex > def.startIndex
      ? def.text.slice(0, body.startIndex - def.startIndex)
      : BODILESS.has(def.type)
        ? def.text.replace(/;\s*$/, '')
        : (def.text.split('\n')[0] ?? '');
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
export function symbolsFromTree(language: string, tree: Tree, topLevel: (node: Node) => boolean = () => true, strict = false): CodeSymbol[] {
  const spec = SPECS[language];
  if (!spec) return [];
  const nameOf = spec.name ?? ((n: Node) => n.childForFieldName('name')?.text);
  const lines = tree.rootNode.text.split('\n');

  const hashComments = HASH_COMMENT_LANGUAGES.has(language);
  /**
   * The last definition of each list that declared without a body, by the
   * node that spans it: the next definition of the same name right after it
   * (an overload's implementation, another overload) takes it into its range.
   */
  const declared = new WeakMap<CodeSymbol[], { outer: number; symbol: CodeSymbol }>();

  // Every definition at any depth: a def inside a function body is a child of that function, `outer.inner`.
  // One cursor walks the whole tree: a Node object is made only for definition candidates, which keeps a walk of every depth cheap.
  const cursor = tree.walk();
  const walk = (parent: CodeSymbol | undefined, out: CodeSymbol[], atRoot: boolean): void => {
    if (!cursor.gotoFirstChild()) return;
    do {
      if (!cursor.nodeIsNamed) continue;
      const type = cursor.nodeType;
      const rule = spec.defs[type];
      if (atRoot && !topLevel(cursor.currentNode)) continue;
      // Strict: what error recovery produced (an ERROR node, a definition holding one) is left out rather than served with a guessed range.
      if (strict && type === 'ERROR') continue;
      if (rule === undefined) {
        walk(parent, out, false);
        continue;
      }
      const child = cursor.currentNode;
      if (strict && child.hasError) continue;
      let kind0 = typeof rule === 'function' ? rule(child) : rule;
      // `exports.x = function` and `Foo.prototype.x = …` define at the top; inside a definition an assignment is a statement.
      if (type === 'assignment_expression' && parent) kind0 = undefined;
      const name = kind0 ? nameOf(child) : undefined;
      if (!kind0 || !name) {
        walk(parent, out, false);
        continue;
      }
      let kind = kind0;
      if (kind === 'function' && parent && CONTAINER_KINDS.has(parent.kind)) kind = 'method';
      // Grow the range over wrappers that hold only this definition (and its decorators, however many).
      let outer: Node = child;
      while (outer.parent && spec.wrappers?.has(outer.parent.type)) {
        const inner = outer;
        const others = outer.parent.namedChildren.filter((c) => c && c.id !== inner.id && !isComment(c) && !WRAPPER_COMPANIONS.has(c.type));
        if (others.length > 0) break;
        outer = outer.parent;
      }
      let startRow = outer.startPosition.row;
      let prev = outer.previousNamedSibling;
      while (prev && spec.attached?.has(prev.type) && prev.endPosition.row >= startRow - 1) {
        startRow = prev.startPosition.row;
        prev = prev.previousNamedSibling;
      }
      let docRow = startRow;
      // Comments directly above; the nearest doc comment also across blank lines (TypeScript attaches a JSDoc so, and
      // express writes its API that way), but not a further block beyond it, nor a JSDoc that declares a type.
      const attaches = (c: Node) =>
        lastRow(c) < docRow &&
        !TYPE_DECLARATION_DOC.test(c.text) &&
        (lastRow(c) >= docRow - 1 || (docRow === startRow && isDocComment(c) && blankRows(lines, lastRow(c) + 1, docRow - 1)));
      while (prev && isComment(prev) && attaches(prev) && !isShebang(prev) && standsAlone(prev, lines)) {
        docRow = prev.startPosition.row;
        prev = prev.previousNamedSibling;
      }
      // Some grammars hang comments on an outer node; fall back to the lines above.
      if (docRow === startRow) docRow = commentLinesAbove(lines, startRow, hashComments);
      // Overload signatures right above (comments between them aside) belong to this definition: TypeScript reads them as one.
      let before = outer.previousNamedSibling;
      while (before && isComment(before)) before = before.previousNamedSibling;
      const overloads = declared.get(out);
      const folded = overloads !== undefined && before?.id === overloads.outer && overloads.symbol.name === name && out.at(-1) === overloads.symbol;
      if (folded) {
        out.pop();
        startRow = overloads.symbol.startLine - 1;
        docRow = overloads.symbol.docStartLine - 1;
      }
      const children: CodeSymbol[] = [];
      const symbol: CodeSymbol = {
        name,
        qualifiedName: parent ? `${parent.qualifiedName}.${name}` : name,
        kind,
        startLine: startRow + 1,
        endLine: contentEndRow(outer) + 1,
        docStartLine: docRow + 1,
        // The first overload's: what a reader of the declarations meets first.
        signature: folded ? overloads.symbol.signature : signatureOf(outer, child),
        children,
      };
      if (child.type === 'assignment_expression') {
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
      if (BODILESS.has(type)) declared.set(out, { outer: outer.id, symbol });
      walk(symbol, children, false);
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  };
  const out: CodeSymbol[] = [];
  try {
    walk(undefined, out, true);
  } finally {
    cursor.delete();
  }
  return out;
}

/** Languages whose top-level statements start at column 0 with a keyword, so a file the grammar fails on can be parsed again by parts. */
const RECOVERABLE = new Set(['typescript', 'tsx', 'javascript']);
const TOP_STATEMENT = /^(export|import|function|async|class|abstract|const|let|var|interface|type|enum|namespace|module|declare|@)\b/;

/** A top-level node that parsed whole: a statement without errors (not a token left loose by error recovery). */
function parsedWhole(node: Node): boolean {
  return !node.hasError && node.type !== 'ERROR' && (/(statement|declaration|module)$/.test(node.type) || node.type === 'internal_module');
}

/**
 * Symbols of a JavaScript or TypeScript file the grammar could not parse
 * whole (tree-sitter's TypeScript fails, for one, on generic call
 * signatures on consecutive lines of an interface): the statements that
 * parsed keep their symbols; the lines around an error are cut where a
 * top-level statement starts (a keyword at column 0, with the comments
 * above it) and each part is parsed alone, at its own line numbers, so one
 * error costs the definition that holds it and not the rest of the file.
 */
async function recoverSymbols(language: string, text: string, tree: Tree): Promise<CodeSymbol[]> {
  const kids = tree.rootNode.namedChildren.filter((c): c is Node => c !== null && !isComment(c));
  // Whole statements, less those sharing a row with broken code (the row is parsed again with it).
  const whole = new Set(kids.filter(parsedWhole).map((c) => c.id));
  let lastBad = -1;
  for (const c of kids) {
    if (!whole.has(c.id)) lastBad = Math.max(lastBad, lastRow(c));
    else if (c.startPosition.row <= lastBad) whole.delete(c.id);
  }
  let firstBad = Number.POSITIVE_INFINITY;
  for (const c of [...kids].reverse()) {
    if (!whole.has(c.id)) firstBad = Math.min(firstBad, c.startPosition.row);
    else if (lastRow(c) >= firstBad) whole.delete(c.id);
  }
  const out = symbolsFromTree(language, tree, (c) => whole.has(c.id));
  const lines = text.split('\n');
  // Rows no whole statement covers, as [first, last] runs.
  const covered = new Uint8Array(lines.length);
  for (const c of kids) if (whole.has(c.id)) covered.fill(1, c.startPosition.row, lastRow(c) + 1);
  for (let row = 0; row < lines.length; ) {
    if (covered[row] || (lines[row] ?? '').trim() === '') {
      row++;
      continue;
    }
    let end = row;
    while (end + 1 < lines.length && !covered[end + 1]) end++;
    const starts = [row];
    for (let r = row + 1; r <= end; r++) {
      if (!TOP_STATEMENT.test(lines[r] ?? '') || /^@/.test((lines[r - 1] ?? '').trim())) continue;
      const from = commentLinesAbove(lines, r, false);
      if (from > (starts[starts.length - 1] as number)) starts.push(from);
    }
    for (const [i, first] of starts.entries()) {
      const last = i + 1 < starts.length ? (starts[i + 1] as number) - 1 : end;
      // Blank lines before the part keep its line numbers.
      const part = await parseText(language, '\n'.repeat(first) + lines.slice(first, last + 1).join('\n'));
      try {
        out.push(...symbolsFromTree(language, part, undefined, part.rootNode.hasError));
      } finally {
        part.delete();
      }
    }
    row = end + 1;
  }
  return out.sort((a, b) => a.startLine - b.startLine);
}

/** Parses and extracts in one step. */
export async function treeSitterSymbols(language: string, text: string): Promise<CodeSymbol[]> {
  const tree = await parseText(language, text);
  try {
    if (tree.rootNode.hasError && RECOVERABLE.has(language)) return await recoverSymbols(language, text, tree);
    return symbolsFromTree(language, tree);
  } finally {
    tree.delete();
  }
}
