/**
 * The TypeScript compiler's own view of a file's definitions, for the
 * symbol oracle eval (TypeScript 5's compiler API: the repository's own
 * TypeScript 7 has no JavaScript API).
 *
 * Definitions, at any depth, qualified by the named definitions around
 * them:
 * - function declarations with a body, classes, interfaces, type aliases,
 *   enums, namespaces;
 * - methods with a body (or abstract), constructors with a body, get and
 *   set accessors, in classes and object literals; class properties whose
 *   value is a function;
 * - variables whose value is a function or a class (any `var`, `let`,
 *   `const`), and plain variables declared at the top of a module (not in
 *   a function, namespace or block);
 * - at the top (no definition around), `exports.x = function …`,
 *   `Foo.prototype.x = …` and `x = function …`.
 * Overload signatures, `declare` functions, `declare global` blocks and
 * anonymous defaults are not definitions. A declaration statement holding one variable spans the
 * whole statement (`export const f = …;`), else the declarator.
 *
 * @module
 */

import ts from 'typescript-5';
import type { OracleDefinition, OracleFile } from './oracle-types.ts';

const FUNCTION_VALUES = new Set([ts.SyntaxKind.ArrowFunction, ts.SyntaxKind.FunctionExpression]);

function isFunctionValue(node: ts.Node | undefined): boolean {
  return node !== undefined && FUNCTION_VALUES.has(unwrap(node).kind);
}

/** `(x as T)`, `x!` and parentheses around a value do not change what it is. */
function unwrap(node: ts.Node): ts.Node {
  let n = node;
  while (ts.isParenthesizedExpression(n) || ts.isAsExpression(n) || ts.isSatisfiesExpression(n) || ts.isNonNullExpression(n)) n = n.expression;
  return n;
}

/** The file's definitions and own-line comments as the compiler parses them. */
export function typescriptOracle(path: string, text: string): OracleFile {
  const kind = path.endsWith('.tsx')
    ? ts.ScriptKind.TSX
    : path.endsWith('.js') || path.endsWith('.mjs') || path.endsWith('.cjs')
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const defs: OracleDefinition[] = [];
  const add = (scope: readonly string[], name: string, kindName: string, span: ts.Node): string[] => {
    const q = [...scope, name];
    defs.push({ q: q.join('.'), name, kind: kindName, start: lineOf(span.getStart(sf)), end: lineOf(span.getEnd() - 1) });
    return q;
  };
  const nameText = (n: ts.PropertyName | ts.BindingName | undefined) => (n === undefined ? undefined : n.getText(sf));
  const inClassLike = (n: ts.Node) => ts.isClassLike(n.parent) || ts.isObjectLiteralExpression(n.parent);

  const visit = (node: ts.Node, scope: readonly string[]): void => {
    let inner = scope;
    if ((ts.isFunctionDeclaration(node) && node.body && node.name) || (ts.isClassDeclaration(node) && node.name)) {
      inner = add(scope, node.name.text, ts.isClassDeclaration(node) ? 'class' : 'function', node);
    } else if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node)) {
      inner = add(scope, node.name.text, ts.isInterfaceDeclaration(node) ? 'interface' : ts.isEnumDeclaration(node) ? 'enum' : 'type', node);
    } else if (
      ts.isModuleDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      !ts.isModuleDeclaration(node.parent) &&
      !(node.flags & ts.NodeFlags.GlobalAugmentation)
    ) {
      // `namespace A.B {}` nests ModuleDeclarations; the outermost spans it all and is named by the whole path.
      let name = node.name.text;
      let body = node.body;
      while (body && ts.isModuleDeclaration(body)) {
        name += `.${body.name.text}`;
        body = body.body;
      }
      inner = add(scope, name, 'namespace', node);
    } else if (
      (ts.isMethodDeclaration(node) && (node.body || ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Abstract)) ||
      ts.isGetAccessor(node) ||
      ts.isSetAccessor(node)
    ) {
      const name = nameText(node.name);
      if (name !== undefined && inClassLike(node)) {
        inner = add(scope, name, ts.isGetAccessor(node) ? 'get' : ts.isSetAccessor(node) ? 'set' : 'method', node);
      }
    } else if (ts.isConstructorDeclaration(node) && node.body) {
      inner = add(scope, 'constructor', 'constructor', node);
    } else if (ts.isPropertyDeclaration(node) && isFunctionValue(node.initializer)) {
      inner = add(scope, nameText(node.name) as string, 'method', node);
    } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
      const list = node.parent;
      const statement = ts.isVariableDeclarationList(list) && ts.isVariableStatement(list.parent) ? list.parent : undefined;
      const value = node.initializer === undefined ? undefined : unwrap(node.initializer);
      const topLevel = statement !== undefined && ts.isSourceFile(statement.parent);
      const kindName = isFunctionValue(value) ? 'function' : value && ts.isClassExpression(value) ? 'class' : topLevel ? 'variable' : undefined;
      if (kindName !== undefined && !(statement && ts.getCombinedModifierFlags(statement as unknown as ts.Declaration) & ts.ModifierFlags.Ambient)) {
        const span = statement !== undefined && (list as ts.VariableDeclarationList).declarations.length === 1 ? statement : node;
        inner = add(scope, node.name.text, kindName, span);
      }
    } else if (
      scope.length === 0 &&
      ts.isExpressionStatement(node) &&
      ts.isBinaryExpression(node.expression) &&
      node.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      isFunctionValue(node.expression.right)
    ) {
      const left = node.expression.left;
      const name = ts.isPropertyAccessExpression(left) ? left.name.text : ts.isIdentifier(left) ? left.text : undefined;
      if (name !== undefined) {
        const q = left
          .getText(sf)
          .replace(/\.prototype\./, '.')
          .replace(/^(module\.)?exports\./, '');
        defs.push({
          q,
          name,
          kind: /\.prototype\./.test(left.getText(sf)) ? 'method' : 'function',
          start: lineOf(node.getStart(sf)),
          end: lineOf(node.getEnd() - 1),
        });
        inner = [q];
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  ts.forEachChild(sf, (child) => visit(child, []));

  // Comments live in the trivia before tokens: collect the trivia of every token once.
  const seen = new Set<number>();
  const comments: Array<[number, number]> = [];
  const lines = text.split('\n');
  const collect = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.JsxText) return;
    for (const range of ts.getLeadingCommentRanges(text, node.pos) ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      const startLine = lineOf(range.pos);
      const endLine = lineOf(range.end - 1);
      const before = (lines[startLine - 1] ?? '').slice(0, sf.getLineAndCharacterOfPosition(range.pos).character);
      const after = text.slice(range.end, text.indexOf('\n', range.end) < 0 ? text.length : text.indexOf('\n', range.end)).trim();
      if (before.trim() === '' && (after === '' || after.startsWith('//') || after.startsWith('/*'))) comments.push([startLine, endLine]);
    }
    for (const child of node.getChildren(sf)) collect(child);
  };
  collect(sf);
  return { path, defs, comments };
}
