/**
 * The server's options read from the command line and the config files:
 * which backend, which profile a client gets, what a client's roots let it
 * reach. The end-to-end tests run the same through real clients; these pin
 * the edge cases one by one.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { openBackend, parseBackend } from '../src/backend.ts';
import { parseMcpConfig } from '../src/config-file.ts';
import { profileFor } from '../src/profiles.ts';
import { rootScope, withinRoots } from '../src/roots.ts';

const PROFILES = ['small', 'medium', 'large'];

describe('backend option', () => {
  test('host by default, the client root without --root, memory, containers', () => {
    expect(parseBackend(undefined, '/repo')).toEqual({ kind: 'host', root: '/repo' });
    expect(parseBackend(undefined, undefined)).toEqual({ kind: 'client-root' });
    expect(parseBackend('memory', undefined)).toEqual({ kind: 'memory', seed: undefined });
    expect(parseBackend('memory', '/seed')).toEqual({ kind: 'memory', seed: '/seed' });
    expect(parseBackend('docker:dev', undefined, '/w')).toEqual({ kind: 'container', container: 'dev', workdir: '/w' });
    expect(parseBackend('image:node:24', undefined)).toEqual({ kind: 'image', image: 'node:24', workdir: undefined });
  });

  test('a memory copy of a directory leaves out names no workspace path can spell, as the host walk does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-seed-'));
    try {
      writeFileSync(join(dir, 'a.txt'), 'alpha\n');
      writeFileSync(join(dir, 'bad\nname.txt'), 'x\n');
      writeFileSync(join(dir, 'back\\slash.txt'), 'x\n');
      const fs = await openBackend({ kind: 'memory', seed: dir });
      expect((await fs.list()).map((e) => e.path)).toEqual(['a.txt']);
      await fs.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a wrong backend says which are known', () => {
    expect(() => parseBackend('docker:', undefined)).toThrow(/host, memory, docker:<container> or image:<ref>/);
    expect(() => parseBackend('s3', undefined)).toThrow(/--backend s3/);
  });
});

describe('profiles by client', () => {
  test('the first matching pattern wins, case-insensitive, * for any text', () => {
    const map = { 'ollama*': 'small', 'claude-code': 'large', '*': 'medium' } as const;
    expect(profileFor('Ollama-Qwen2.5', map, 'large')).toBe('small');
    expect(profileFor('claude-code', map, 'small')).toBe('large');
    expect(profileFor('claude-code-2', map, 'small')).toBe('medium');
    expect(profileFor(undefined, map, 'large')).toBe('large');
  });

  test('regex characters in a client name are literal', () => {
    expect(profileFor('a.b', { 'a.b': 'small' }, 'large')).toBe('small');
    expect(profileFor('axb', { 'a.b': 'small' }, 'large')).toBe('large');
    expect(profileFor('x(y', { 'x(y': 'small' }, 'large')).toBe('small');
  });
});

describe('[mcp] in the config files', () => {
  test('reads the profile and the client profiles', async () => {
    const c = await parseMcpConfig('[mcp]\nprofile = "large"\n[mcp.client_profiles]\n"ollama*" = "small"\n', 'c.toml', PROFILES);
    expect(c).toEqual({ profile: 'large', clientProfiles: { 'ollama*': 'small' } });
    expect(await parseMcpConfig('[policy]\nmode = "auto"\n', 'c.toml', PROFILES)).toEqual({ clientProfiles: {} });
  });

  test('an unknown key or profile fails, naming the file and the fix', async () => {
    await expect(parseMcpConfig('[mcp]\nprofiel = "large"\n', 'c.toml', PROFILES)).rejects.toThrow(
      /c\.toml: \[mcp\] has an unknown key "profiel" \(known: profile, client_profiles\)/,
    );
    await expect(parseMcpConfig('[mcp]\nprofile = "huge"\n', 'c.toml', PROFILES)).rejects.toThrow(/profile must be one of small, medium, large, not "huge"/);
    await expect(parseMcpConfig('[mcp.client_profiles]\nx = 3\n', 'c.toml', PROFILES)).rejects.toThrow(/client_profiles\."x" must be one of/);
  });
});

describe('client roots', () => {
  test('a root holding the workspace serves all of it; roots inside serve those directories; others nothing', () => {
    expect(rootScope('/repo', ['file:///'])).toEqual({ kind: 'all' });
    expect(rootScope('/repo', ['file:///repo'])).toEqual({ kind: 'all' });
    expect(rootScope('/repo', ['file:///repo/packages/a', 'file:///elsewhere'])).toMatchObject({ kind: 'some', dirs: ['packages/a'] });
    expect(rootScope('/repo', ['file:///repository'])).toMatchObject({ kind: 'none' });
    expect(rootScope('/repo', ['https://example.com/repo'])).toMatchObject({ kind: 'none' });
  });

  test('paths outside the roots are refused, however spelled', async () => {
    const scope = rootScope('/repo', ['file:///repo/src']);
    expect(await withinRoots(scope, 'read_file', { path: 'src/a.ts' })).toMatchObject({ ok: true });
    expect(await withinRoots(scope, 'read_file', { path: './src/../src/a.ts' })).toMatchObject({ ok: true });
    for (const path of ['README.md', 'src/../README.md', 'srcx/a.ts', './lib\\a.ts']) {
      expect(await withinRoots(scope, 'read_file', { path })).toMatchObject({ ok: false });
    }
    expect(await withinRoots(scope, 'rename_file', { from: 'src/a.ts', to: 'lib/a.ts' })).toMatchObject({ ok: false });
  });

  test('a patch is checked by every file it names', async () => {
    const scope = rootScope('/repo', ['file:///repo/src']);
    const inside = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n';
    const outside = `${inside}--- a/lib/b.ts\n+++ b/lib/b.ts\n@@ -1 +1 @@\n-a\n+b\n`;
    expect(await withinRoots(scope, 'apply_patch', { patch: inside })).toMatchObject({ ok: true });
    expect(await withinRoots(scope, 'apply_patch', { patch: outside })).toMatchObject({ ok: false, message: expect.stringContaining('lib/b.ts') });
    const envelope = '*** Begin Patch\n*** Update File: src/a.ts\n*** Move to: lib/a.ts\n@@\n-a\n+b\n*** End Patch\n';
    expect(await withinRoots(scope, 'apply_patch', { patch: envelope })).toMatchObject({ ok: false });
  });

  test('a search without a path is aimed at the one root, or refused with the roots to choose from', async () => {
    const one = rootScope('/repo', ['file:///repo/src']);
    expect(await withinRoots(one, 'grep', { pattern: 'x' })).toEqual({ ok: true, args: { pattern: 'x', path: 'src' } });
    expect(await withinRoots(one, 'glob', { pattern: '**/*.ts' })).toEqual({ ok: true, args: { pattern: '**/*.ts', cwd: 'src' } });
    const two = rootScope('/repo', ['file:///repo/src', 'file:///repo/test']);
    expect(await withinRoots(two, 'list_files', {})).toMatchObject({ ok: false, message: expect.stringContaining('src, test') });
    expect(await withinRoots(two, 'project_overview', {})).toMatchObject({ ok: false });
    expect(await withinRoots(rootScope('/repo', ['file:///elsewhere']), 'read_file', { path: 'a' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('do not include this workspace'),
    });
    // No roots at all set no bound (the MCP Inspector's CLI lists none): the server's own root is the bound.
    expect(rootScope('/repo', [])).toEqual({ kind: 'all' });
  });
});
