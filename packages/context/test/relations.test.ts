import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext, extractImports } from '../src/index.ts';

const FILES: Record<string, string> = {
  // TypeScript / JavaScript
  'web/src/app.ts':
    "import { a } from './lib/a.js';\nimport b from './lib';\nimport React from 'react';\nexport * from './reexp';\nconst c = require('./c.cjs');\nconst d = await import('./d.mjs');\n",
  'web/src/lib/a.ts': 'export const a = 1;\n',
  'web/src/lib/index.ts': 'export default 1;\n',
  'web/src/reexp.tsx': 'export const x = 1;\n',
  'web/src/c.cjs': 'module.exports = 1;\n',
  'web/src/d.mjs': 'export default 1;\n',
  // Python
  'py/pkg/__init__.py': '',
  'py/pkg/core.py': 'from . import util\nfrom .models import User\nimport os\nimport pkg.helpers as h\n',
  'py/pkg/util.py': 'x = 1\n',
  'py/pkg/models.py': 'class User: pass\n',
  'py/pkg/helpers.py': 'y = 1\n',
  // Go
  'go/go.mod': 'module example.com/shop\n\ngo 1.22\n',
  'go/cmd/main.go': 'package main\n\nimport (\n\t"fmt"\n\t"example.com/shop/internal/cart"\n)\n\nfunc main() { fmt.Println(cart.New()) }\n',
  'go/internal/cart/cart.go': 'package cart\n\nfunc New() int { return 1 }\n',
  'go/internal/cart/cart_test.go': 'package cart\n',
  // Rust
  'rs/Cargo.toml': '[package]\nname = "r"\n',
  'rs/src/main.rs': 'mod config;\nmod net;\nuse crate::net::client::Client;\nuse std::io;\nfn main() {}\n',
  'rs/src/config.rs': 'pub struct C;\n',
  'rs/src/net/mod.rs': 'pub mod client;\n',
  'rs/src/net/client.rs': 'pub struct Client;\n',
  // Java
  'java/src/main/java/com/acme/App.java': 'package com.acme;\n\nimport com.acme.model.User;\nimport java.util.List;\n\npublic class App {}\n',
  'java/src/main/java/com/acme/model/User.java': 'package com.acme.model;\n\npublic class User {}\n',
  // C
  'c/main.c': '#include <stdio.h>\n#include "util.h"\nint main() { return 0; }\n',
  'c/util.h': 'int util(void);\n',
};

describe('import extraction from syntax trees', () => {
  test('TypeScript: static, re-export, require and dynamic import', async () => {
    const specs = await extractImports('typescript', FILES['web/src/app.ts'] as string);
    expect(specs.map((s) => s.specifier)).toEqual(['./lib/a.js', './lib', 'react', './reexp', './c.cjs', './d.mjs']);
    expect(specs[0]?.line).toBe(1);
  });
  test('Python, Go, Rust, Java, C', async () => {
    expect((await extractImports('python', FILES['py/pkg/core.py'] as string)).map((s) => s.specifier)).toEqual(['.util', '.models', 'os', 'pkg.helpers']);
    expect((await extractImports('go', FILES['go/cmd/main.go'] as string)).map((s) => s.specifier)).toEqual(['fmt', 'example.com/shop/internal/cart']);
    expect((await extractImports('rust', FILES['rs/src/main.rs'] as string)).map((s) => `${s.kind}:${s.specifier}`)).toEqual([
      'declares-module:config',
      'declares-module:net',
      'imports:crate::net::client::Client',
      'imports:std::io',
    ]);
    expect((await extractImports('java', FILES['java/src/main/java/com/acme/App.java'] as string)).map((s) => s.specifier)).toEqual([
      'com.acme.model.User',
      'java.util.List',
    ]);
    expect((await extractImports('c', FILES['c/main.c'] as string)).map((s) => `${s.kind}:${s.specifier}`)).toEqual(['includes:stdio.h', 'includes:util.h']);
  });
});

describe('resolution to workspace files', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['web/src/app.ts', ['web/src/c.cjs', 'web/src/d.mjs', 'web/src/lib/a.ts', 'web/src/lib/index.ts', 'web/src/reexp.tsx'], ['react']],
    ['py/pkg/core.py', ['py/pkg/helpers.py', 'py/pkg/models.py', 'py/pkg/util.py'], ['os']],
    ['go/cmd/main.go', ['go/internal/cart/cart.go'], ['fmt']],
    ['rs/src/main.rs', ['rs/src/config.rs', 'rs/src/net/client.rs', 'rs/src/net/mod.rs'], ['std::io']],
    ['java/src/main/java/com/acme/App.java', ['java/src/main/java/com/acme/model/User.java'], ['java.util.List']],
    ['c/main.c', ['c/util.h'], ['stdio.h']],
  ];
  test.each(cases)('%s', async (path, targets, external) => {
    const fs = new MemoryFilesystem({ files: FILES });
    const ctx = await createContext({ fs });
    await ctx.scan();
    const r = await ctx.getRelatedFiles(path);
    expect(
      r.related
        .filter((x) => x.relation !== 'imported-by')
        .map((x) => x.path)
        .sort(),
    ).toEqual(targets);
    expect(r.external).toEqual(external);
    await ctx.close();
  });

  test('depth 2 follows imports of imports; importers appear once indexed', async () => {
    const fs = new MemoryFilesystem({ files: FILES });
    const ctx = await createContext({ fs });
    await ctx.scan();
    const one = await ctx.getRelatedFiles('rs/src/main.rs', 1);
    expect(one.related.every((r) => r.depth === 1)).toBe(true);
    const indexed = await ctx.indexRelations();
    expect(indexed.files).toBeGreaterThan(10);
    const back = await ctx.getRelatedFiles('web/src/lib/a.ts', 2);
    expect(back.related[0]).toMatchObject({ path: 'web/src/app.ts', relation: 'imported-by', depth: 1 });
    expect(back.related.filter((r) => r.depth === 2).map((r) => r.path)).toContain('web/src/lib/index.ts');
    await ctx.close();
  });

  test('without indexRelations() or a scan, importers are found (the index is brought up to date lazily)', async () => {
    const fs = new MemoryFilesystem({ files: FILES });
    const ctx = await createContext({ fs });
    const r = await ctx.getRelatedFiles('web/src/lib/a.ts');
    expect(r.related).toContainEqual(expect.objectContaining({ path: 'web/src/app.ts', relation: 'imported-by' }));
    // A file that starts importing it later is found on the next call; only the changed file is parsed again.
    await fs.write('web/src/extra.ts', "import { a } from './lib/a';\nexport const b = a;\n");
    await ctx.scan();
    const again = await ctx.getRelatedFiles('web/src/lib/a.ts');
    expect(again.related.map((x) => x.path)).toContain('web/src/extra.ts');
    expect((await ctx.indexRelations()).parsed).toBe(0);
    await ctx.close();
  });
});

describe('a require of a directory', () => {
  // As express lays it out: its tests and examples require the package root, whose index.js is the package.
  const files: Record<string, string> = {
    'index.js': "'use strict';\n\nmodule.exports = require('./lib/express');\n",
    'lib/express.js': "'use strict';\n\nexports = module.exports = createApplication;\nfunction createApplication() {}\n",
    'test/app.router.js': "'use strict'\n\nvar after = require('after');\nvar express = require('../')\n  , request = require('supertest');\n",
    'examples/hello-world/index.js': "'use strict'\n\nvar express = require('../../');\n",
    'examples/mvc/index.js': "'use strict'\n\nvar express = require('../..');\n",
    // A directory with a manifest resolves to its main, as Node resolves it; `..` never to a file named like the directory.
    'pkg/package.json': '{ "name": "pkg", "main": "lib/main.js" }\n',
    'pkg/lib/main.js': 'module.exports = 1;\n',
    'pkg/index.js': 'module.exports = 2;\n',
    'pkg/test/t.js': "require('..');\n",
    'pkg/test.js': 'module.exports = 3;\n',
    'pkg/test/t2.js': "require('../test');\n",
  };

  test('resolves to the directory index (the workspace root included), and the index lists its importers', async () => {
    const fs = new MemoryFilesystem({ files });
    const ctx = await createContext({ fs });
    await ctx.scan();
    await ctx.indexRelations();
    const router = await ctx.getRelatedFiles('test/app.router.js');
    expect(router.related.filter((r) => r.relation === 'imports').map((r) => r.path)).toEqual(['index.js']);
    expect(router.external).toEqual(['after', 'supertest']);
    expect((await ctx.getRelatedFiles('examples/hello-world/index.js')).related.map((r) => r.path)).toEqual(['index.js']);
    const root = await ctx.getRelatedFiles('index.js');
    expect(root.related.map((r) => `${r.relation} ${r.path}`).sort()).toEqual([
      'imported-by examples/hello-world/index.js',
      'imported-by examples/mvc/index.js',
      'imported-by test/app.router.js',
      'imports lib/express.js',
    ]);
    expect((await ctx.getRelatedFiles('pkg/test/t.js')).related.map((r) => r.path)).toEqual(['pkg/lib/main.js']);
    expect((await ctx.getRelatedFiles('pkg/test/t2.js')).related.map((r) => r.path)).toEqual(['pkg/test.js']);
    await ctx.close();
  });
});
