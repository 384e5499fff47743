/**
 * Relationships between files — imports, includes, module declarations —
 * read from the syntax tree (TypeScript/JavaScript, Python, Go, Rust, Java,
 * C/C++), then resolved to workspace files where they point inside the
 * workspace. Specifiers that resolve nowhere (packages, the standard
 * library) are kept as external.
 *
 * @module
 */

import type { Node } from 'web-tree-sitter';
import { hasGrammar, parseText } from '../symbols/tree-sitter.ts';

/** How one file refers to another. */
export type RelationKind = 'imports' | 'includes' | 'declares-module';

/** One reference found in a file. */
export interface ImportSpec {
  readonly specifier: string;
  readonly kind: RelationKind;
  /** 1-based line of the reference. */
  readonly line: number;
}

/** A reference resolved against the workspace. */
export interface Relation extends ImportSpec {
  readonly source: string;
  /** Workspace path of the target, or `undefined` for a package or an unresolved path. */
  readonly target: string | undefined;
}

function unquote(text: string): string {
  return text.replace(/^[`'"<]|[`'">]$/g, '');
}

function visit(node: Node, fn: (n: Node) => boolean | undefined): void {
  if (fn(node) === false) return;
  for (const child of node.namedChildren) if (child) visit(child, fn);
}

/** Extracts references from a file's syntax tree. */
export async function extractImports(language: string, text: string): Promise<ImportSpec[]> {
  if (!hasGrammar(language)) return [];
  const tree = await parseText(language, text);
  const out: ImportSpec[] = [];
  const add = (specifier: string, node: Node, kind: RelationKind = 'imports') => {
    if (specifier.length > 0) out.push({ specifier, kind, line: node.startPosition.row + 1 });
  };
  try {
    visit(tree.rootNode, (n) => {
      switch (language) {
        case 'typescript':
        case 'tsx':
        case 'javascript': {
          if (n.type === 'import_statement' || n.type === 'export_statement') {
            const src = n.childForFieldName('source');
            if (src) add(unquote(src.text), n);
            return n.type === 'export_statement';
          }
          if (n.type === 'call_expression') {
            const fn = n.childForFieldName('function');
            const arg = n.childForFieldName('arguments')?.namedChildren[0];
            if (fn && (fn.text === 'require' || fn.type === 'import') && arg?.type === 'string') add(unquote(arg.text), n);
          }
          return true;
        }
        case 'python': {
          if (n.type === 'import_statement') {
            for (const c of n.namedChildren) {
              if (c?.type === 'dotted_name') add(c.text, n);
              else if (c?.type === 'aliased_import') add(c.childForFieldName('name')?.text ?? '', n);
            }
            return false;
          }
          if (n.type === 'import_from_statement') {
            const mod = n.childForFieldName('module_name')?.text ?? '';
            const names = n.namedChildren.filter(
              (c) => c && c !== n.childForFieldName('module_name') && (c.type === 'dotted_name' || c.type === 'aliased_import'),
            );
            // `from . import x` names modules; `from .m import f` names a module and a member.
            if (/^\.+$/.test(mod))
              for (const c of names) add(mod + (c?.type === 'aliased_import' ? (c.childForFieldName('name')?.text ?? '') : (c?.text ?? '')), n);
            else add(mod, n);
            return false;
          }
          return true;
        }
        case 'go': {
          if (n.type === 'import_spec') {
            const p = n.childForFieldName('path');
            if (p) add(unquote(p.text), n);
            return false;
          }
          return true;
        }
        case 'rust': {
          if (n.type === 'use_declaration') {
            const arg = n.childForFieldName('argument');
            if (arg) add(arg.text.replace(/\s+/g, ''), n);
            return false;
          }
          if (n.type === 'mod_item' && !n.childForFieldName('body')) {
            add(n.childForFieldName('name')?.text ?? '', n, 'declares-module');
            return false;
          }
          if (n.type === 'extern_crate_declaration') {
            add(n.childForFieldName('name')?.text ?? '', n);
            return false;
          }
          return true;
        }
        case 'java': {
          if (n.type === 'import_declaration') {
            add(
              n.text
                .replace(/^import\s+(static\s+)?/, '')
                .replace(/;\s*$/, '')
                .replace(/\s+/g, ''),
              n,
            );
            return false;
          }
          return n.type === 'program' || n.type.endsWith('_declaration') === false;
        }
        case 'cpp':
        case 'c': {
          if (n.type === 'preproc_include') {
            const p = n.childForFieldName('path');
            if (p) add(unquote(p.text), n, 'includes');
            return false;
          }
          return true;
        }
        default:
          return false;
      }
    });
  } finally {
    tree.delete();
  }
  return out;
}

/** What resolution may ask of the workspace. */
export interface ResolveContext {
  exists(path: string): Promise<boolean>;
  /** Files directly in a directory (Go packages). */
  listFiles(dir: string): Promise<string[]>;
  /** Text of a small file (go.mod), or undefined. */
  readText(path: string): Promise<string | undefined>;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i === -1 ? '' : path.slice(0, i);
}

function join(...parts: string[]): string {
  const out: string[] = [];
  for (const seg of parts.join('/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return '\0';
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}

function ancestors(path: string): string[] {
  const out: string[] = [];
  let d = dirOf(path);
  for (;;) {
    out.push(d);
    if (d === '') break;
    d = dirOf(d);
  }
  return out;
}

async function firstExisting(ctx: ResolveContext, candidates: string[]): Promise<string | undefined> {
  for (const c of candidates) if (!c.includes('\0') && c !== '' && (await ctx.exists(c))) return c;
  return undefined;
}

const JS_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.d.ts', '.json'];

/** Files a specifier resolved to `base` may name, as a file. */
function asFile(base: string): string[] {
  // TypeScript ESM writes `./x.js` for `./x.ts`.
  const stem = base.replace(/\.(m|c)?jsx?$/, '');
  return [base, ...JS_EXTENSIONS.map((e) => stem + e)];
}

/** Files a specifier resolved to the directory `base` may name: its package.json's `main`, then its index. */
async function asDirectory(ctx: ResolveContext, base: string): Promise<string[]> {
  const index = JS_EXTENSIONS.map((e) => join(base, `index${e}`));
  const manifest = join(base, 'package.json');
  const text = (await ctx.exists(manifest)) ? await ctx.readText(manifest) : undefined;
  let main: unknown;
  try {
    main = text === undefined ? undefined : (JSON.parse(text) as { main?: unknown }).main;
  } catch {
    // A manifest that does not parse names no main: Node would refuse it, the index is the best guess.
    main = undefined;
  }
  if (typeof main !== 'string' || main === '') return index;
  const target = join(base, main);
  return [...asFile(target), ...JS_EXTENSIONS.map((e) => join(target, `index${e}`)), ...index];
}

/** Resolves one reference of `source` to workspace files (none, one, or a Go package's files). */
export async function resolveImport(ctx: ResolveContext, source: string, language: string, spec: ImportSpec): Promise<string[]> {
  const dir = dirOf(source);
  const s = spec.specifier;
  switch (language) {
    case 'typescript':
    case 'tsx':
    case 'javascript': {
      if (!s.startsWith('.') && !s.startsWith('/')) return [];
      const base = join(dir, s);
      // As Node resolves it: `../`, `..` and `.` name a directory only, and the workspace root (base '') has no file of its own name.
      const directoryOnly = base === '' || /(^|\/)\.{0,2}$/.test(s);
      const found = (directoryOnly ? undefined : await firstExisting(ctx, asFile(base))) ?? (await firstExisting(ctx, await asDirectory(ctx, base)));
      return found ? [found] : [];
    }
    case 'python': {
      const dots = /^\.*/.exec(s)?.[0].length ?? 0;
      const rest = s.slice(dots).split('.').filter(Boolean).join('/');
      const roots = dots > 0 ? [join(dir, ...Array(dots - 1).fill('..'))] : [...ancestors(source), 'src'];
      for (const root of roots) {
        const base = rest ? join(root, rest) : root;
        const found = await firstExisting(ctx, [`${base}.py`, `${base}/__init__.py`, `${base}.pyi`]);
        if (found) return [found];
      }
      return [];
    }
    case 'go': {
      for (const d of ancestors(source)) {
        const gomod = await ctx.readText(join(d, 'go.mod'));
        if (gomod === undefined) continue;
        const module = /^module\s+(\S+)/m.exec(gomod)?.[1];
        if (!module || (s !== module && !s.startsWith(`${module}/`))) return [];
        const pkgDir = join(d, s.slice(module.length));
        return (await ctx.listFiles(pkgDir)).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
      }
      return [];
    }
    case 'rust': {
      const stem = source.slice(dir.length + (dir ? 1 : 0)).replace(/\.rs$/, '');
      const modDir = ['mod', 'lib', 'main'].includes(stem) ? dir : join(dir, stem);
      if (spec.kind === 'declares-module') {
        const found = await firstExisting(ctx, [join(modDir, `${s}.rs`), join(modDir, s, 'mod.rs')]);
        return found ? [found] : [];
      }
      const path = s.replace(/::\{.*$/, '').split('::');
      let base: string | undefined;
      if (path[0] === 'crate') {
        for (const d of ancestors(source)) {
          if (await ctx.exists(join(d, 'Cargo.toml'))) {
            base = join(d, 'src');
            break;
          }
        }
      } else if (path[0] === 'super') base = dirOf(modDir) === modDir ? modDir : dir;
      else if (path[0] === 'self') base = modDir;
      if (base === undefined) return [];
      const segs = path.slice(1);
      for (let n = segs.length; n > 0; n--) {
        const p = join(base, ...segs.slice(0, n));
        const found = await firstExisting(ctx, [`${p}.rs`, join(p, 'mod.rs')]);
        if (found) return [found];
      }
      return [];
    }
    case 'java': {
      const text = await ctx.readText(source);
      const pkg = text ? /^\s*package\s+([\w.]+)\s*;/m.exec(text)?.[1] : undefined;
      const pkgPath = pkg ? pkg.split('.').join('/') : '';
      const root = pkgPath && dir.endsWith(pkgPath) ? dir.slice(0, dir.length - pkgPath.length).replace(/\/$/, '') : dir;
      const parts = s.replace(/\.\*$/, '').split('.');
      for (let n = parts.length; n > 0; n--) {
        const found = await firstExisting(ctx, [`${join(root, ...parts.slice(0, n))}.java`]);
        if (found) return [found];
      }
      return [];
    }
    case 'cpp':
    case 'c': {
      const found = await firstExisting(ctx, [join(dir, s), join('include', s), join('src', s), s]);
      return found ? [found] : [];
    }
    default:
      return [];
  }
}
