import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitLines } from '@ctxfs/core';
import { describe, expect, test } from 'vitest';
import { type CodeSymbol, findSymbol, flattenSymbols, markdownSymbols, regexSymbols, renderOutline, treeSitterSymbols } from '../src/index.ts';
import { npmPackage } from './support/npm-package.ts';

function brief(symbols: readonly CodeSymbol[]): string[] {
  return flattenSymbols(symbols).map((s) => `${s.kind} ${s.qualifiedName} ${s.docStartLine}/${s.startLine}-${s.endLine}`);
}

const CASES: Array<{ language: string; source: string; expected: string[] }> = [
  {
    language: 'typescript',
    source: `import { x } from './x.js';
/** Adds. */
export function add(a: number, b: number): number {
  return a + b;
}
export const handler = async (req: Request) => {
  return req;
};
/**
 * A service.
 */
export class Service<T> extends Base {
  /** Builds it. */
  constructor(private readonly t: T) {
    super();
  }
  // Runs.
  async run(): Promise<void> {}
}
export interface Options { a: string }
export type Id = string;
enum Color { Red }
namespace NS { export function inner() {} }
`,
    expected: [
      'function add 2/3-5',
      'function handler 6/6-8',
      'class Service 9/12-19',
      'constructor Service.constructor 13/14-16',
      'method Service.run 17/18-18',
      'interface Options 20/20-20',
      'type Id 21/21-21',
      'enum Color 22/22-22',
      'namespace NS 23/23-23',
      'function NS.inner 23/23-23',
    ],
  },
  {
    language: 'tsx',
    source: `export function App() {\n  return <div>hi</div>;\n}\nconst Button = () => <button />;\n`,
    expected: ['function App 1/1-3', 'function Button 4/4-4'],
  },
  {
    language: 'javascript',
    source: `// Helper.\nfunction helper() {}\nclass A {\n  m() {}\n  static s() {}\n}\nmodule.exports = { helper };\n`,
    expected: ['function helper 1/2-2', 'class A 3/3-6', 'method A.m 4/4-4', 'method A.s 5/5-5'],
  },
  {
    language: 'javascript',
    source: `'use strict';\n/** Parses. */\nexports.parse = function parse(s) {\n  return s;\n};\nmodule.exports.format = (x) => x;\nFoo.prototype.run = async function () {};\nlet counter = 0;\ncounter = 1;\n`,
    expected: ['function parse 2/3-5', 'function format 6/6-6', 'method Foo.run 7/7-7', 'variable counter 8/8-8'],
  },
  {
    language: 'python',
    source: `"""Module doc."""
import os

@decorator
def top(a, b):
    """Doc."""
    return a

class Widget(Base):
    def __init__(self):
        pass

    async def render(self):
        def inner():
            pass
`,
    expected: [
      'function top 4/4-7',
      'class Widget 9/9-15',
      'method Widget.__init__ 10/10-11',
      'method Widget.render 13/13-15',
      'function Widget.render.inner 14/14-15',
    ],
  },
  {
    language: 'go',
    source: `package main

// Router routes requests.
type Router struct {
\troutes map[string]int
}

type Handler interface { Serve() }

// Handle registers a route.
func (r *Router) Handle(path string) error {
\treturn nil
}

func main() {}
`,
    expected: ['struct Router 3/4-6', 'interface Handler 8/8-8', 'method Router.Handle 10/11-13', 'function main 15/15-15'],
  },
  {
    language: 'rust',
    source: `use std::io;

/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }

impl Point {
    /// Makes one.
    pub fn new() -> Self { Point { x: 0 } }
}

pub trait Shape { fn area(&self) -> f64; }

enum E { A }

mod inner { pub fn f() {} }

fn main() {}
`,
    expected: [
      'struct Point 3/4-5',
      'impl Point 7/7-10',
      'method Point.new 8/9-9',
      'trait Shape 12/12-12',
      'method Shape.area 12/12-12',
      'enum E 14/14-14',
      'module inner 16/16-16',
      'function inner.f 16/16-16',
      'function main 18/18-18',
    ],
  },
  {
    language: 'java',
    source: `package com.acme;

import java.util.List;

/** A user service. */
public class UserService {
    /** Finds one. */
    @Override
    public User find(long id) {
        return null;
    }

    public UserService() {}

    interface Listener { void on(); }
}
`,
    expected: [
      'class UserService 5/6-16',
      'method UserService.find 7/8-11',
      'constructor UserService.UserService 13/13-13',
      'interface UserService.Listener 15/15-15',
      'method UserService.Listener.on 15/15-15',
    ],
  },
  {
    language: 'c-sharp',
    source: `namespace Acme {
    /// <summary>Repo.</summary>
    public class Repo {
        public int Count { get; set; }
        public void Save() { }
    }
}
`,
    expected: ['namespace Acme 1/1-7', 'class Acme.Repo 2/3-6', 'property Acme.Repo.Count 4/4-4', 'method Acme.Repo.Save 5/5-5'],
  },
  {
    language: 'cpp',
    source: `#include <vector>
namespace geo {
// Adds.
int add(int a, int b) { return a + b; }
class Shape {
 public:
  virtual double area() const { return 0; }
};
}
double Circle::area() const { return 3.14; }
`,
    expected: ['namespace geo 2/2-9', 'function geo.add 3/4-4', 'class geo.Shape 5/5-8', 'method geo.Shape.area 7/7-7', 'function Circle::area 10/10-10'],
  },
  {
    language: 'ruby',
    source: `module Shop\n  # A cart.\n  class Cart\n    def add(item)\n      @items << item\n    end\n  end\nend\n`,
    expected: ['module Shop 1/1-8', 'class Shop.Cart 2/3-7', 'method Shop.Cart.add 4/4-6'],
  },
  {
    language: 'php',
    source: `<?php\n/** Helper. */\nfunction helper() {}\nclass Controller {\n  public function index() {}\n}\n`,
    expected: ['function helper 2/3-3', 'class Controller 4/4-6', 'method Controller.index 5/5-5'],
  },
  {
    language: 'bash',
    source: `#!/bin/bash\n# Deploys.\ndeploy() {\n  echo hi\n}\nfunction cleanup {\n  rm -rf x\n}\n`,
    expected: ['function deploy 2/3-5', 'function cleanup 6/6-8'],
  },
];

describe('tree-sitter symbols', () => {
  test.each(CASES)('$language', async ({ language, source, expected }) => {
    const symbols = await treeSitterSymbols(language, source);
    expect(brief(symbols)).toEqual(expected);
  });

  test('signatures drop bodies and keep export', async () => {
    const symbols = await treeSitterSymbols('typescript', CASES[0]?.source as string);
    expect(symbols[0]?.signature).toBe('export function add(a: number, b: number): number');
    expect(symbols[2]?.signature).toBe('export class Service<T> extends Base');
  });
});

describe('regex fallback and markdown', () => {
  test('Kotlin-like brace language', () => {
    const src = `package x\n\n/** Greeter. */\nclass Greeter(val name: String) {\n    fun greet(): String {\n        return "hi {" + name\n    }\n}\n\nfun main() {\n    println(Greeter("a").greet())\n}\n`;
    expect(brief(regexSymbols(splitLines(src)))).toEqual(['class Greeter 3/4-8', 'method Greeter.greet 5/5-7', 'function main 10/10-12']);
  });

  test('Elixir-like `end` language', () => {
    const src = `defmodule Math do\n  # Sums.\n  def sum(a, b) do\n    a + b\n  end\nend\n`;
    expect(brief(regexSymbols(splitLines(src)))).toEqual(['module Math 1/1-6', 'method Math.sum 2/3-5']);
  });

  test('markdown headings are nested sections, fenced code ignored', () => {
    const md = `# Title\n\nIntro.\n\n## Install\n\n\`\`\`sh\n# not a heading\n\`\`\`\n\n## Usage\n\n### CLI\n\ntext\n`;
    expect(brief(markdownSymbols(splitLines(md)))).toEqual([
      'section Title 1/1-15',
      'section Title > Install 5/5-9',
      'section Title > Usage 11/11-15',
      'section Title > Usage > CLI 13/13-15',
    ]);
  });

  test('lookup by qualified name, plain name, case; suggestions when missing', async () => {
    const symbols = await treeSitterSymbols('typescript', CASES[0]?.source as string);
    const table = { source: 'tree-sitter' as const, symbols };
    expect(findSymbol(table, 'Service.run').symbol?.startLine).toBe(18);
    expect(findSymbol(table, 'run').symbol?.qualifiedName).toBe('Service.run');
    expect(findSymbol(table, 'SERVICE').symbol?.name).toBe('Service');
    const miss = findSymbol(table, 'ad');
    expect(miss.symbol).toBeUndefined();
    expect(miss.suggestions).toContain('add');
  });

  test('outline lists ranges and signatures, and respects limits', async () => {
    const symbols = await treeSitterSymbols('typescript', CASES[0]?.source as string);
    const o = renderOutline(symbols);
    expect(o.text.split('\n')[0]).toBe('3-5       export function add(a: number, b: number): number');
    expect(o.text).toContain('  18-18     async run(): Promise<void>');
    const small = renderOutline(symbols, { maxSymbols: 2 });
    expect(small.listed).toBe(2);
    expect(small.text).toContain(`${small.total - 2} more symbols`);
  });
});

describe('doc comments separated by blank lines', () => {
  /**
   * The first line of the `/** … *\/` block a definition's first line
   * follows, with nothing but blank lines between (what TypeScript's
   * getJSDocCommentsAndTags attaches); the definition's own line otherwise.
   */
  function jsdocAbove(lines: readonly string[], row: number): number {
    let r = row - 1;
    while (r >= 0 && (lines[r] ?? '').trim() === '') r--;
    if (r < 0 || !(lines[r] ?? '').trim().endsWith('*/')) return row;
    let top = r;
    while (top > 0 && !(lines[top] ?? '').includes('/*')) top--;
    return /^\s*\/\*\*(?!\/)/.test(lines[top] ?? '') ? top : row;
  }

  test("express's response methods keep their JSDoc, a blank line below it (lib/response.js, express 5.1.0)", async () => {
    const text = readFileSync(join(npmPackage('express', '5.1.0'), 'lib/response.js'), 'utf8');
    const lines = text.split('\n');
    const methods = flattenSymbols(await treeSitterSymbols('javascript', text)).filter((s) => s.qualifiedName.startsWith('res.'));
    const documented = methods.filter((s) => jsdocAbove(lines, s.startLine - 1) < s.startLine - 1);
    expect(documented.length).toBeGreaterThan(15);
    expect(methods.map((s) => `${s.qualifiedName} ${s.docStartLine}`)).toEqual(
      methods.map((s) => `${s.qualifiedName} ${jsdocAbove(lines, s.startLine - 1) + 1}`),
    );
  });

  test("webpack's file-level @typedef runs are no definition's doc comment, nor is a doc comment beyond the nearest (webpack 5.91.0)", async () => {
    const root = npmPackage('webpack', '5.91.0');
    const doc = async (file: string, name: string) => {
      const symbols = flattenSymbols(await treeSitterSymbols('javascript', readFileSync(join(root, file), 'utf8')));
      const s = symbols.find((x) => x.qualifiedName === name);
      return s && `${s.docStartLine}-${s.startLine}`;
    };
    // A run of /** @typedef */ lines, a blank line, then the definition: nothing above it is its doc.
    expect(await doc('lib/Chunk.js', 'ChunkFilesSet')).toBe('38-38');
    // `/** @template T @typedef … */` declares a type too.
    expect(await doc('lib/library/AssignLibraryPlugin.js', 'KEYWORD_REGEX')).toBe('29-29');
    // Its own JSDoc directly above, the typedef run beyond a blank line: only its own.
    expect(await doc('lib/dependencies/WorkerPlugin.js', 'getUrl')).toBe('50-54');
  });

  test('a doc comment crosses blank lines; an ordinary comment, or one with code between, does not', async () => {
    const js = [
      '/*!',
      ' * license',
      ' */',
      '',
      'function licensed() {}',
      '// a note',
      '',
      'function noted() {}',
      '/**',
      ' * Documented.',
      ' */',
      '',
      '',
      'function documented() {}',
      '/** Not about k. */',
      'const x = 1;',
      '',
      'function k() {}',
      '/**/',
      '',
      'function empty() {}',
      '',
    ].join('\n');
    expect(brief(await treeSitterSymbols('javascript', js))).toEqual([
      'function licensed 5/5-5',
      'function noted 8/8-8',
      'function documented 9/14-14',
      'variable x 15/16-16',
      'function k 18/18-18',
      'function empty 21/21-21',
    ]);
    const java = 'class A {\n  /** Runs. */\n\n  void run() {}\n\n  /* plain */\n\n  void stop() {}\n}\n';
    expect(brief(await treeSitterSymbols('java', java))).toEqual(['class A 1/1-9', 'method A.run 2/4-4', 'method A.stop 8/8-8']);
    const rust = '/// A point.\n\npub struct Point { x: i32 }\n// plain\n\nfn f() {}\n';
    expect(brief(await treeSitterSymbols('rust', rust))).toEqual(['struct Point 1/3-3', 'function f 6/6-6']);
  });
});
