import { readdirSync, readFileSync } from 'node:fs';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext, leadingDoc, SqliteStateStore, type Summarizer, type SummaryInput } from '../src/index.ts';

const AUTH = `/**
 * Authentication: login, JWT tokens and password hashing.
 */
import { sign } from 'jsonwebtoken';
import { hash } from './crypto.js';

export class AuthManager {
  login(user: string, password: string) { return sign({ user }, 'k'); }
  logout(session: string) {}
}

export function hashPassword(p: string) { return hash(p); }
`;

describe('structural summarizer', () => {
  test('purpose from the leading doc comment; main symbols, imports and size', async () => {
    const fs = new MemoryFilesystem({ files: { 'src/auth.ts': AUTH } });
    const ctx = await createContext({ fs });
    const r = await ctx.summarize('src/auth.ts');
    expect(r.view).toBe('summary');
    expect(r.text).toContain('Purpose: Authentication: login, JWT tokens and password hashing.');
    expect(r.text).toContain('class AuthManager {login, logout} (7-10)');
    expect(r.text).toContain('function hashPassword (12-12)');
    expect(r.text).toContain('Imports: jsonwebtoken, ./crypto.js');
    expect(r.text).toMatch(/Size: 12 lines, \d+ tokens, 0\.\d KB \(typescript\)/);
    await ctx.close();
  });

  test('purpose from a module docstring, a manifest, a markdown paragraph, or a README mention; license headers skipped', async () => {
    expect(leadingDoc('#!/usr/bin/env python\n"""Sync tool for buckets."""\nimport os\n', 'python')).toBe('Sync tool for buckets.');
    expect(leadingDoc('// Copyright 2024 Acme. Licensed under MIT.\n\n// Package cart keeps carts.\npackage cart\n', 'go')).toBe('Package cart keeps carts.');
    expect(leadingDoc('//! Crate docs here.\nuse std::io;\n', 'rust')).toBe('Crate docs here.');
    const fs = new MemoryFilesystem({
      files: {
        'package.json': '{"name":"shop","description":"An online shop."}',
        'docs/guide.md': '# Guide\n\n![badge](x)\n\nHow to run the shop locally.\n',
        'tools/README.md': '# Tools\n\n- `gen.sh` regenerates the API client.\n',
        'tools/gen.sh': 'set -e\necho gen\n',
        // A readme of any case or text format is read for a mention too.
        'util/readme.md': '# Util\n\n- `run.sh` starts the dev server.\n',
        'util/run.sh': 'node server.js\n',
        'lib/README.rst': 'Lib\n===\n\n``pack.py`` packs the release archive.\n',
        'lib/pack.py': 'import tarfile\n',
      },
    });
    const ctx = await createContext({ fs });
    expect((await ctx.summarize('util/run.sh')).text).toContain('Purpose: `run.sh` starts the dev server.');
    expect((await ctx.summarize('lib/pack.py')).text).toContain('Purpose: ``pack.py`` packs the release archive.');
    expect((await ctx.summarize('package.json')).text).toContain('Purpose: shop: An online shop.');
    expect((await ctx.summarize('docs/guide.md')).text).toContain('Purpose: How to run the shop locally.');
    expect((await ctx.summarize('tools/gen.sh')).text).toContain('Purpose: `gen.sh` regenerates the API client.');
    await ctx.close();
  });

  test('deterministic, and within its token budget', async () => {
    const many = Array.from({ length: 200 }, (_, i) => `export function fn${i}() {}`).join('\n');
    const fs = new MemoryFilesystem({ files: { 'a.ts': many } });
    const ctx = await createContext({ fs, profile: 'small' });
    const a = await ctx.summarize('a.ts', { maxTokens: 80 });
    const b = await ctx.summarize('a.ts', { maxTokens: 80 });
    expect(a.text).toBe(b.text);
    expect(a.tokens).toBeLessThanOrEqual(80);
    expect(a.text).toMatch(/function fn0 \(1-1\), .*\(\+\d+ more\)/);
    expect(a.text).toContain('Size: 200 lines');
    await ctx.close();
  });
});

describe('summary cache', () => {
  test('a pluggable summarizer is called once per content hash, survives a new layer on the same store, and is invalidated by an edit', async () => {
    const calls: string[] = [];
    const counting: Summarizer = {
      id: 'test:v1',
      summarize: async (input: SummaryInput) => {
        calls.push(input.sha256);
        return `summary of ${input.path} with password = "hunter2-Secret-99" inside`;
      },
    };
    const fs = new MemoryFilesystem({ files: { 'a.ts': 'export const a = 1;\n' } });
    const store = await SqliteStateStore.open();
    const ctx = await createContext({ fs, store, summarizer: counting });
    const first = await ctx.summarize('a.ts');
    await ctx.summarize('a.ts');
    expect(calls).toHaveLength(1);
    // Redaction applies to summaries as well.
    expect(first.text).not.toContain('hunter2-Secret-99');
    expect(first.text).toContain('[REDACTED:password-assignment]');

    const again = await createContext({ fs, store, summarizer: counting });
    await again.summarize('a.ts');
    expect(calls).toHaveLength(1);

    await fs.write('a.ts', 'export const a = 2000;\n');
    await again.summarize('a.ts');
    expect(calls).toHaveLength(2);
    expect(calls[0]).not.toBe(calls[1]);
    await ctx.close();
    await again.close();
    await store.close();
  });
});

describe('a Markdown file’s purpose, on published documents', () => {
  const STORE = `${import.meta.dirname}/../../../node_modules/.pnpm`;
  const doc = (path: string) => readFileSync(`${STORE}/${path}`, 'utf8');

  test('a setext title, a tagline and badges run together are left out; the first prose is the purpose', async () => {
    const fs = new MemoryFilesystem({
      files: {
        // agent-base's title is underlined, with its tagline and a badge on the next lines, no blank line between.
        'agent-base.md': doc('agent-base@6.0.2/node_modules/agent-base/README.md'),
        'liblzma.md': doc('node-liblzma@2.2.0/node_modules/node-liblzma/README.md'),
        // A changelog: every paragraph is a heading or a list of changes.
        'HISTORY.md': doc('mime-types@2.1.35/node_modules/mime-types/HISTORY.md'),
      },
    });
    const ctx = await createContext({ fs });
    const purpose = async (path: string) => /^Purpose: (.*)$/m.exec((await ctx.summarize(path)).text)?.[1];
    expect(await purpose('agent-base.md')).toMatch(/^This module provides an `http\.Agent` generator\./);
    const lzma = await purpose('liblzma.md');
    expect(lzma).toBeDefined();
    expect(lzma).not.toMatch(/Node-liblzma ==|\[!\[|={3}/);
    expect(await purpose('HISTORY.md')).toMatch(/^\* deps: mime-db@1\.52\.0/);
    await ctx.close();
  });

  test('YAML front matter is left out as the outline leaves it out, in an LF and a CRLF checkout', async () => {
    // VoltAgent's docs open with front matter (title, slug) before the heading and the first prose.
    const pkg = readdirSync(STORE).find((d) => d.startsWith('@voltagent+core@'));
    expect(pkg).toBeDefined();
    const hooks = doc(`${pkg}/node_modules/@voltagent/core/docs/agents/hooks.md`);
    expect(hooks.startsWith('---\n')).toBe(true);
    const fs = new MemoryFilesystem({ files: { 'lf.md': hooks, 'crlf.md': hooks.replaceAll('\n', '\r\n') } });
    const ctx = await createContext({ fs });
    const purpose = async (path: string) => /^Purpose: (.*)$/m.exec((await ctx.summarize(path)).text)?.[1];
    for (const path of ['lf.md', 'crlf.md']) expect(await purpose(path), path).toMatch(/^Hooks intercept specific points in the agent execution pipeline\./);
    await ctx.close();
  });
});
