import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext, DEFAULT_ENTRYPOINTS, o200kTokenizer } from '../src/index.ts';
import { proseOf } from '../src/overview/document-prose.ts';
import { resolveEntrypoints } from '../src/overview/entry-documents.ts';
import { renderManifest } from '../src/overview/manifest.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';

function repo(): Record<string, string> {
  const files: Record<string, string> = {
    'AGENTS.md': `# Agent rules\n\n${'Always run the tests before committing. Keep changes small and focused. '.repeat(40)}\n`,
    'README.md': `# Shop\n\nAn online shop with a cart, payments and an admin UI.\n\n## Install\n\n${'pnpm install and configure the environment variables described below. '.repeat(60)}\n`,
    'CLAUDE.md': '# Notes\n\nPrefer small patches.\n',
    'docs/ARCHITECTURE.md': `# Architecture\n\n${'The web tier talks to the API, which owns the database. '.repeat(50)}\n`,
    'package.json': '{ "name": "shop", "description": "An online shop", "scripts": { "test": "vitest" } }\n',
    '.env': 'STRIPE_SECRET=sk_live_51HqLyjWDarjtT1zdp7dcXq9bGQ4mZ\n',
  };
  for (let i = 0; i < 60; i++) files[`src/components/Component${i}.tsx`] = `export function Component${i}() { return null; }\n`;
  for (let i = 0; i < 30; i++) files[`src/api/route${i}.ts`] = `export const route${i} = ${i};\n`;
  for (let i = 0; i < 40; i++) files[`tests/unit/case${i}.test.ts`] = `test('${i}', () => {});\n`;
  for (let i = 0; i < 10; i++) files[`scripts/tool${i}.sh`] = 'echo hi\n';
  files['src/index.ts'] = "export * from './api/route0.ts';\n";
  files['src/components/index.ts'] = "export * from './Component0.tsx';\n";
  return files;
}

describe('project overview', () => {
  test.each([300, 600, 1500, 4000, 12_000])('fits a budget of %i tokens by the tokenizer, deterministically', async (budget) => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'large' });
    await ctx.scan();
    const a = await ctx.overview({ budgetTokens: budget });
    const b = await ctx.overview({ budgetTokens: budget });
    expect(a.text).toBe(b.text);
    expect(a.tokens).toBe(o200kTokenizer.count(a.text));
    expect(a.tokens).toBeLessThanOrEqual(budget);
    expect(a.text).toContain('The repository is NOT in your context');
    // A small budget lists the tools by name, to leave the top of the tree room.
    expect(a.text).toContain(budget >= 600 ? 'getSymbol(path, name)' : 'getSymbol');
    expect(a.text).toMatch(/^src\/ \(\d+ files\)$/m);
    // .env is withheld by the default policy: listings leave it out, and so does the overview.
    expect(a.files).toBe(Object.keys(repo()).length - 1);
    await ctx.close();
  });

  test("a budget asked above the profile's per-call budget is held to it", async () => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'small' });
    await ctx.scan();
    const o = await ctx.overview({ budgetTokens: 100_000 });
    expect(o.budgetTokens).toBe(ctx.profile.perCallTokens);
    expect(o.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
    await ctx.close();
  });

  test('entrypoints are shown in priority order, each cut to its share with a pointer to the rest; secrets never', async () => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'small' });
    await ctx.scan();
    const o = await ctx.overview();
    expect(o.tokens).toBeLessThanOrEqual(ctx.profile.overviewTokens);
    const docs = o.documents.map((d) => d.path);
    expect(docs.slice(0, 3)).toEqual(['AGENTS.md', 'CLAUDE.md', 'README.md']);
    expect(o.documents.find((d) => d.path === 'CLAUDE.md')?.truncated).toBe(false);
    const readme = o.documents.find((d) => d.path === 'README.md');
    expect(readme?.truncated).toBe(true);
    expect(o.text).toContain('[… truncated: the rest of README.md is not shown');
    expect(o.text).toContain('<file path="AGENTS.md"');
    expect(o.text).not.toContain('sk_live_51HqLyjWDarjtT1zdp7dcXq9bGQ4mZ');
    expect(o.text).not.toMatch(/<file path="\.env"/);
    await ctx.close();
  });

  test('the tree is collapsed to fit: directories with counts, key files named, more detail with more budget', async () => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'large' });
    await ctx.scan();
    const small = await ctx.overview({ budgetTokens: 600 });
    const large = await ctx.overview({ budgetTokens: 12_000 });
    expect(small.text).toContain('src/ (92 files)');
    expect(small.text).toContain('tests/ (40 files)');
    expect(large.expanded).toBeGreaterThan(small.expanded);
    expect(large.text).toContain('  components/ (61 files)');
    expect(large.text).toMatch(/… \d+ more files/);
    expect(large.text).toContain('README.md [entrypoint]');
    expect(large.text).not.toContain('.env');
    // Key files are named even in a directory too long to list.
    expect(large.text).toContain('    index.ts');
    await ctx.close();
  });

  test('the overview is charged to the session budget', async () => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'small' });
    const o = await ctx.overview();
    expect(ctx.sessionContext.tokensServed).toBe(o.tokens);
    await ctx.close();
  });
});

describe('entrypoint documents', () => {
  // A real README that opens with a logo, badges and HTML (chai's, installed with vitest).
  const pnpmDir = join(fileURLToPath(new URL('../../../node_modules/.pnpm', import.meta.url)));
  const chaiDir = readdirSync(pnpmDir).find((d) => /^chai@\d/.test(d));
  const chaiReadme = chaiDir ? readFileSync(join(pnpmDir, chaiDir, 'node_modules/chai/README.md'), 'utf8') : '';

  test('the small overview spends its README share on text, not on markup that carries none', async () => {
    expect(chaiReadme).toContain('<img');
    const fs = new MemoryFilesystem({ files: { 'README.md': chaiReadme, 'index.js': 'export {};\n' } });
    const ctx = await createContext({ fs, profile: 'small' });
    await ctx.scan();
    const o = await ctx.overview();
    expect(o.text).not.toMatch(/<img|<a href|shields\.io|<p align/);
    expect(o.text).toContain('Chai is a BDD / TDD assertion library');
    expect(o.text).toContain('Chai is an _assertion library_');
    await ctx.close();
  });

  test('fenced code keeps its HTML', () => {
    const md = '<p align="center"><img src="x.svg"\n  alt="logo"></p>\n\n# T\n\n```html\n<img src="a.png">\n```\n<!-- note\nmore -->\nText [![b](c)](d)\n';
    expect(proseOf('README.md', md)).toBe('# T\n\n```html\n<img src="a.png">\n```\n\nText\n');
    expect(proseOf('a.html', md)).toBe(md);
  });
});

describe('entry documents and manifests of real packages', () => {
  /** A manifest of a pinned npm package as the overview renders it, line by line. */
  const rendered = (pkg: string, path: string) => {
    const [name, version] = pkg.split('@') as [string, string];
    return renderManifest(path, readFileSync(join(npmPackage(name, version), path), 'utf8'))?.split('\n') ?? [];
  };
  const overviewOf = async (files: Record<string, string>, profile: 'small' | 'large' = 'small') => {
    const ctx = await createContext({ fs: new MemoryFilesystem({ files }), profile });
    await ctx.scan();
    const o = await ctx.overview();
    await ctx.close();
    return o;
  };

  test("a readme spelled in lower case is found: chalk's readme.md beside its package.json", async () => {
    const files = packageFiles(npmPackage('chalk', '5.3.0'));
    expect(Object.keys(files)).toContain('readme.md');
    const o = await overviewOf(files);
    expect(o.documents.map((d) => d.path)).toEqual(['readme.md', 'package.json']);
    expect(o.text).toContain('Terminal string styling done right');
    expect(o.text).toContain('readme.md [entrypoint]');
    expect(o.tokens).toBeLessThanOrEqual(1500);
  });

  test('entry documents match without regard to case, in any text format, CONTRIBUTING and docs/index included', async () => {
    expect(resolveEntrypoints(['Readme.rst', 'README.md', 'src/readme.md', 'package.json'], DEFAULT_ENTRYPOINTS)).toEqual(['README.md', 'package.json']);
    expect(resolveEntrypoints(['README', 'Contributing.rst', 'docs/Index.md', 'go.mod'], DEFAULT_ENTRYPOINTS)).toEqual([
      'README',
      'go.mod',
      'Contributing.rst',
      'docs/Index.md',
    ]);
    const o = await overviewOf(
      {
        'readme.rst': 'Acme\n====\n\nAcme turns invoices into ledgers.\n',
        'CONTRIBUTING.md': '# Contributing\n\nRun `make test` before sending a patch.\n',
        'docs/index.md': '# Acme documentation\n\nStart with the tutorial.\n',
        'acme/__init__.py': 'def ledger(): ...\n',
      },
      'large',
    );
    expect(o.documents.map((d) => d.path)).toEqual(['readme.rst', 'CONTRIBUTING.md', 'docs/index.md']);
    expect(o.text).toContain('Acme turns invoices into ledgers.');
    expect(o.text).toContain('Run `make test` before sending a patch.');
  });

  test("package.json is its name, purpose, entry points and scripts, dependencies counted: webpack's and chalk's", async () => {
    const webpack = readFileSync(join(npmPackage('webpack', '5.91.0'), 'package.json'), 'utf8');
    const o = await overviewOf({ 'package.json': webpack }, 'large');
    const shown = o.text.slice(o.text.indexOf('<file path="package.json"'));
    expect(shown).toContain('view="summary"');
    expect(shown).toContain('name: webpack 5.91.0');
    expect(shown).toContain('main: lib/index.js');
    expect(shown).toContain('types: types.d.ts');
    expect(shown).toContain('webpack → bin/webpack.js');
    expect(shown).toContain('engines: node >=10.13.0');
    expect(shown).toContain('dependencies 24, devDependencies 74');
    expect(shown).toMatch(/scripts:\n {2}setup: node \.\/setup\/setup\.js/);
    // No dependency list, no keywords.
    expect(shown).not.toMatch(/acorn|"keywords"|"devDependencies"/);
    expect(o.documents[0]?.totalTokens).toBeLessThan(o200kTokenizer.count(webpack) / 5);

    const chalk = rendered('chalk@5.3.0', 'package.json').join('\n');
    expect(chalk).toContain('name: chalk 5.3.0 (type module)');
    expect(chalk).toContain('exports: ./source/index.js');
    expect(chalk).toContain('  test: xo && c8 ava && tsd');
    expect(chalk).toContain('devDependencies 10');
    expect(chalk).not.toMatch(/yoctodelay|terminal"|unicorn/);
  });

  test("pyproject.toml and Cargo.toml are parsed as TOML: gyp's (node-gyp) and create-tauri-app's", async () => {
    expect(rendered('node-gyp@10.1.0', 'gyp/pyproject.toml')).toEqual([
      '[key fields of pyproject.toml; readFile shows all of it]',
      'name: gyp-next 0.16.1',
      'description: A fork of the GYP build system for use in the Node.js projects',
      'requires-python: >=3.8',
      'readme: README.md',
      'build backend: setuptools.build_meta',
      'scripts:',
      '  gyp → gyp:script_main',
      'packages: gyp, gyp.generator in pylib',
      'dependencies: optional [dev] 3 (counted; the file lists them)',
    ]);
    expect(rendered('create-tauri-app@4.5.9', 'Cargo.toml')).toEqual([
      '[key fields of Cargo.toml; readFile shows all of it]',
      'package: create-tauri-app-node 0.0.0 (edition 2021)',
      'lib: crate-type cdylib',
      'dependencies: dependencies 3, build-dependencies 1 (counted; the file lists them)',
    ]);
    // Through the overview, in a tree that also has the package.json napi builds from.
    const o = await overviewOf(
      packageFiles(npmPackage('create-tauri-app', '4.5.9'), (p) => !p.startsWith('src/')),
      'large',
    );
    expect(o.documents.map((d) => d.path)).toEqual(['README.md', 'package.json', 'Cargo.toml']);
    expect(o.text).not.toContain('napi-derive');
  });

  test('go.mod: module, Go version, requirements counted; a manifest that does not parse is shown as written', () => {
    // Written here in go.mod's format (no package on the npm registry ships one).
    const mod =
      'module example.com/ledger\n\ngo 1.22\n\ntoolchain go1.22.3\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n\tgolang.org/x/text v0.14.0 // indirect\n)\n\nrequire github.com/stretchr/testify v1.9.0\n\nreplace golang.org/x/text => ../text\n';
    expect(renderManifest('go.mod', mod)?.split('\n')).toEqual([
      '[key fields of go.mod; readFile shows all of it]',
      'module: example.com/ledger',
      'go: 1.22 (toolchain go1.22.3)',
      'dependencies: require 3 (1 indirect), replace 1',
    ]);
    expect(renderManifest('pyproject.toml', '[project\nname = "x"\n')).toBeUndefined();
    expect(renderManifest('package.json', '{ "name": ')).toBeUndefined();
    expect(renderManifest('README.md', '# x\n')).toBeUndefined();
  });
});

describe('project overview within small budgets', () => {
  // As the tool set lists its tools (29 of them, each with its arguments): more than a small budget holds.
  const TOOLS = [
    ['project_overview', 'budget_tokens?'],
    ['list_files', 'path?, glob?, depth?, limit?, offset?, include_ignored?'],
    ['glob', 'pattern, cwd?, limit?, offset?, include_ignored?'],
    ['grep', 'pattern, path?, glob?, literal?, ignore_case?, context_lines?, output?, limit?, offset?, include_ignored?'],
    ['find_symbol', 'query, kind?, path?, match?, limit?, offset?'],
    ['read_file', 'path, max_tokens?, strategy?'],
    ['read_lines', 'path, start_line, end_line?, context?, column?, max_tokens?'],
    ['get_excerpt', 'path, max_lines?'],
    ['get_outline', 'path, symbol?, start_line?, end_line?, max_tokens?'],
    ['get_symbol', 'path, name, max_tokens?'],
    ['get_related_files', 'path, depth?'],
    ['summarize_file', 'path, max_tokens?'],
    ['get_file_metadata', 'path'],
    ['write_file', 'path, content, base_version?, message?'],
    ['create_file', 'path, content, message?'],
    ['replace', 'path, old_text, new_text, occurrence?, regex?, base_version?, message?'],
    ['edit_lines', 'path, action, start_line, end_line?, text?, base_version?, message?'],
    ['apply_patch', 'patch, path?, base_version?, message?, dry_run?'],
    ['delete_file', 'path, base_version?, message?'],
    ['rename_file', 'from, to, overwrite?, message?'],
    ['get_diff', 'path, from?, to?'],
    ['get_file_history', 'path, limit?'],
    ['rollback', 'path, to, message?'],
    ['undo', 'path, change?, message?'],
    ['check_conflicts', 'path, base_version?'],
    ['open_file', 'path, permission?, auto_save?'],
    ['file_status', 'path?'],
    ['buffer_diff', 'path'],
    ['reload_file', 'path'],
  ].map(([name, args]) => ({ name: name as string, signature: `${name}(${args})`, description: (name as string).replace(/_/g, ' ') }));

  test('every budget from the smallest the tools allow (200) is kept, the tool list shrinking to names, then to a count', async () => {
    const fs = new MemoryFilesystem({ files: packageFiles(npmPackage('semver', '7.6.0')) });
    const ctx = await createContext({ fs, profile: 'large' });
    await ctx.scan();
    const full = await ctx.overview({ tools: TOOLS, budgetTokens: 4000 });
    expect(full.text).toContain('- read_lines(path, start_line, end_line?, context?, column?, max_tokens?): read lines');
    const seen = new Set<string>();
    for (let budget = 200; budget <= 800; budget += 20) {
      const o = await ctx.overview({ tools: TOOLS, budgetTokens: budget });
      expect(o.tokens, `budget ${budget}`).toBe(o200kTokenizer.count(o.text));
      expect(o.tokens, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(o.text).toContain('The repository is NOT in your context');
      const tools = o.text.slice(o.text.indexOf('## Tools'));
      seen.add(tools.includes('- read_lines(') ? 'signatures' : tools.includes('read_lines') ? 'names' : /29 tools/.test(tools) ? 'count' : 'none');
    }
    expect([...seen].sort()).toEqual(['count', 'names', 'signatures']);
    // Below what the header and the count take, the budget is refused with that minimum.
    await expect(ctx.overview({ tools: TOOLS, budgetTokens: 60 })).rejects.toMatchObject({
      code: 'EINVAL',
      message: expect.stringMatching(/at least \d+ tokens/),
    });
    await ctx.close();
  });
});

describe('project overview under a policy', () => {
  test('names no file the policy withholds from listings, nor counts it', async () => {
    const files = {
      'secrets/prod-db-password.txt': 'x\n',
      'secrets/acme-merger-plan.md': 'y\n',
      '.env.production': 'A=1\n',
      'src/a.ts': 'export const x = 1;\n',
      'README.md': '# App\n',
    };
    const fs = new MemoryFilesystem({ files });
    const ctx = await createContext({
      fs,
      safety: { policyFiles: false, policy: { rules: [{ effect: 'deny', paths: ['secrets/'], reason: 'secrets are never shown to models' }] } },
    });
    await ctx.scan();
    const listed = (await ctx.glob('**')).items.map((i) => i.path);
    const o = await ctx.overview({ budgetTokens: 4000 });
    for (const name of ['prod-db-password', 'acme-merger-plan', '.env.production', 'secrets/']) {
      expect(listed.join('\n')).not.toContain(name);
      expect(o.text).not.toContain(name);
    }
    expect(o.text).toContain('a.ts');
    expect(o.files).toBe(listed.length);
    expect(o.text).toContain(`${listed.length} files in 1 directory`);
    await ctx.close();
    // A sensitive file a rule serves is named, and marked.
    const allowed = await createContext({
      fs,
      safety: { policyFiles: false, policy: { rules: [{ effect: 'allow', paths: ['.env.production'] }] } },
    });
    await allowed.scan();
    expect((await allowed.overview({ budgetTokens: 4000 })).text).toContain('.env.production [sensitive]');
    await allowed.close();
  });
});
