/**
 * Declarations without a body are definitions too: `declare function`,
 * functions of a `declare namespace`, method signatures of a class (a
 * `declare class`, overloads). Checked on TypeScript's own lib declarations
 * (typescript@5.9.3 from the npm registry), and overloads are served with
 * the implementation they declare.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { beforeAll, describe, expect, test } from 'vitest';
import { createContext, flattenSymbols, treeSitterSymbols } from '../src/index.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';
import { testState } from './support/test-state.ts';

let LIB: Record<string, string>;
beforeAll(() => {
  LIB = packageFiles(npmPackage('typescript', '5.9.3'), (p) => ['lib/lib.dom.d.ts', 'lib/lib.es5.d.ts', 'lib/typescript.d.ts'].includes(p), 8 * 1024 * 1024);
});

/**
 * The functions the lib files declare, by their layout (the files are
 * generated, one declaration a line): `declare function f(` at the top,
 * `function f(` four spaces into a top-level `declare namespace N {`.
 */
function declaredFunctions(text: string): Set<string> {
  const out = new Set<string>();
  let namespace: string | undefined;
  for (const line of text.split('\n')) {
    const open = /^declare namespace ([\w$]+) \{/.exec(line);
    if (open) namespace = open[1];
    else if (line.startsWith('}')) namespace = undefined;
    const top = /^declare function ([\w$]+)\s*[<(]/.exec(line);
    if (top) out.add(top[1] as string);
    const member = namespace === undefined ? null : /^ {4}function ([\w$]+)\s*[<(]/.exec(line);
    if (member) out.add(`${namespace}.${member[1]}`);
  }
  return out;
}

describe('declarations without a body', () => {
  test("every function TypeScript's lib files declare is a symbol, ambient or in a namespace", { timeout: 120_000 }, async () => {
    let declared = 0;
    for (const [path, text] of Object.entries(LIB)) {
      const want = declaredFunctions(text);
      declared += want.size;
      const got = new Set(
        flattenSymbols(await treeSitterSymbols('typescript', text))
          .filter((s) => s.kind === 'function')
          .map((s) => s.qualifiedName),
      );
      expect(
        [...want].filter((q) => !got.has(q)),
        path,
      ).toEqual([]);
    }
    // lib.dom.d.ts alone declares CSS.escape and ~60 other CSS functions, fetch, alert…; typescript.d.ts the ts namespace's API.
    expect(declared).toBeGreaterThan(600);
  });

  test('getSymbol serves a declared function, a namespace member, and overloads together with the doc comment above the first', async () => {
    const fs = new MemoryFilesystem({ files: { 'lib.dom.d.ts': LIB['lib/lib.dom.d.ts'] as string } });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    try {
      const fetched = await ctx.getSymbol('lib.dom.d.ts', 'fetch');
      expect(fetched.text).toContain('/** [MDN Reference](https://developer.mozilla.org/docs/Web/API/Window/fetch) */');
      expect(fetched.text).toMatch(/\tdeclare function fetch\(input: RequestInfo \| URL, init\?: RequestInit\): Promise<Response>;\n/);
      const cssEscape = await ctx.getSymbol('lib.dom.d.ts', 'CSS.escape');
      expect(cssEscape.text).toContain('The **`CSS.escape()`** static method');
      expect(cssEscape.text).toMatch(/\n\d+\t {4}function escape\(ident: string\): string;\n<\/file/);
      // Two declarations of one function, one after the other: one symbol, both lines, the doc above the first.
      const bitmap = await ctx.getSymbol('lib.dom.d.ts', 'createImageBitmap');
      expect(bitmap.text).toContain('Window/createImageBitmap) */');
      expect(bitmap.text.match(/declare function createImageBitmap\(/g)).toHaveLength(2);
      expect(bitmap.text).not.toContain('also named');
    } finally {
      await ctx.close();
      await fs.close();
    }
  });

  test('overload signatures are served with their implementation; method signatures of declared classes are members, of interfaces not', async () => {
    const source = [
      'export function parse(input: string): number;',
      'export function parse(input: number): string;',
      'export function parse(input: string | number): string | number {',
      "  return typeof input === 'string' ? Number(input) : String(input);",
      '}',
      '',
      'export declare class Client {',
      '  connect(url: string): Promise<void>;',
      '  close(): void;',
      '}',
      '',
      'export abstract class Base {',
      '  /** Runs. */',
      '  run(): void;',
      '  run(x?: number): void {',
      '    console.log(x);',
      '  }',
      '}',
      '',
      'export interface Store {',
      '  get(key: string): string | undefined;',
      '  readonly size: number;',
      '}',
      '',
    ].join('\n');
    const symbols = flattenSymbols(await treeSitterSymbols('typescript', source));
    // The outline shows the first overload: the signature a caller of the declarations reads first.
    expect(symbols[0]?.signature).toBe('export function parse(input: string): number');
    expect(symbols.find((s) => s.qualifiedName === 'Client.connect')?.signature).toBe('connect(url: string): Promise<void>');
    expect(symbols.map((s) => `${s.kind} ${s.qualifiedName} ${s.docStartLine}/${s.startLine}-${s.endLine}`)).toEqual([
      'function parse 1/1-5',
      'class Client 7/7-10',
      'method Client.connect 8/8-8',
      'method Client.close 9/9-9',
      'class Base 12/12-18',
      'method Base.run 13/14-17',
      // A member of a type, as the compiler counts it: not a definition.
      'interface Store 20/20-23',
    ]);
    const fs = new MemoryFilesystem({ files: { 'overloads.ts': source } });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    try {
      const parse = await ctx.getSymbol('overloads.ts', 'parse');
      expect([parse.startLine, parse.endLine]).toEqual([1, 5]);
      const run = await ctx.getSymbol('overloads.ts', 'Base.run');
      expect([run.startLine, run.endLine]).toEqual([13, 17]);
      const connect = await ctx.getSymbol('overloads.ts', 'Client.connect');
      expect([connect.startLine, connect.endLine]).toEqual([8, 8]);
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});

/** The files of findSymbol's hits, in order (each hit is the getSymbol call that serves it). */
const hitPaths = (text: string): string[] => [...text.matchAll(/getSymbol\("([^"]+)"/g)].map((m) => m[1] as string);

describe('declarations beside the code they declare', () => {
  test("findSymbol puts a JavaScript package's code before its types.d.ts (webpack 5.91.0), and still finds what only the declarations have", {
    timeout: 120_000,
  }, async () => {
    const files = packageFiles(
      npmPackage('webpack', '5.91.0'),
      (p) => ['types.d.ts', 'lib/Compilation.js', 'lib/EnvironmentPlugin.js'].includes(p),
      8 * 1024 * 1024,
    );
    expect(Object.keys(files).sort()).toEqual(['lib/Compilation.js', 'lib/EnvironmentPlugin.js', 'types.d.ts']);
    const fs = new MemoryFilesystem({ files });
    const ctx = await createContext({ fs, store: testState(), profile: 'small' });
    try {
      await ctx.registry.scan();
      // Each name is defined in lib/ and declared in types.d.ts, one directory higher: the code is the first hit.
      for (const [query, path] of [
        ['Compilation.addModuleTree', 'lib/Compilation.js'],
        ['EnvironmentPlugin', 'lib/EnvironmentPlugin.js'],
      ] as const) {
        const found = (await ctx.findSymbol(query)).text;
        expect(hitPaths(found), found).toEqual([path, 'types.d.ts']);
      }
      // A type only the declarations have is still found there.
      expect(hitPaths((await ctx.findSymbol('WebpackOptionsNormalized')).text)).toEqual(['types.d.ts']);
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
