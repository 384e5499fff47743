import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext, o200kTokenizer } from '../src/index.ts';
import { proseOf } from '../src/overview/document-prose.ts';

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
    expect(a.text).toContain('getSymbol(path, name)');
    expect(a.files).toBe(Object.keys(repo()).length);
    ctx.close();
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
    ctx.close();
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
    expect(large.text).toContain('.env [sensitive]');
    // Key files are named even in a directory too long to list.
    expect(large.text).toContain('    index.ts');
    ctx.close();
  });

  test('the overview is charged to the session budget', async () => {
    const fs = new MemoryFilesystem({ files: repo() });
    const ctx = await createContext({ fs, profile: 'small' });
    const o = await ctx.overview();
    expect(ctx.sessionContext.tokensServed).toBe(o.tokens);
    ctx.close();
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
    ctx.close();
  });

  test('fenced code keeps its HTML', () => {
    const md = '<p align="center"><img src="x.svg"\n  alt="logo"></p>\n\n# T\n\n```html\n<img src="a.png">\n```\n<!-- note\nmore -->\nText [![b](c)](d)\n';
    expect(proseOf('README.md', md)).toBe('# T\n\n```html\n<img src="a.png">\n```\n\nText\n');
    expect(proseOf('a.html', md)).toBe(md);
  });
});
