/**
 * A model given the workspace's host path (an agent's system prompt often
 * names it) writes absolute paths. Refused with only "use a path relative
 * to the workspace root, e.g. src/index.ts", it had to guess the relative
 * one; the refusal of a path inside the root names it, on reads and edits
 * alike, and in the buffer tools too, and the path it names works. A path
 * outside is refused as before, naming nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Toolset } from '../src/index.ts';

const GENERIC = 'use a path relative to the workspace root, e.g. "src/index.ts"';

describe('an absolute path inside the workspace root', () => {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-abs-'));
  let fs: HostFilesystem;
  let ctx: Awaited<ReturnType<typeof createContext>>;
  let tools: Toolset;
  beforeAll(async () => {
    mkdirSync(join(base, 'lib'));
    writeFileSync(join(base, 'lib/view.js'), 'module.exports = 1;\n');
    fs = await HostFilesystem.open({ root: base });
    ctx = await createContext({ fs, safety: { policyFiles: false } });
    tools = new Toolset(ctx.session({ agent: 'llm:test', profile: 'small' }));
  });
  afterAll(async () => {
    await ctx.close();
    await fs.close();
    rmSync(base, { recursive: true, force: true });
  });

  it.each([
    ['read_file', (p: string) => ({ path: p })],
    ['list_files', (p: string) => ({ path: p.replace(/\/view\.js$/, '') })],
    ['replace', (p: string) => ({ path: p, old_text: '= 1', new_text: '= 2' })],
  ])('%s is refused naming the relative path, which works', async (name, args) => {
    const r = await tools.run(name, args(`${fs.root}/lib/view.js`));
    expect(r.isError).toBe(true);
    const named = /use the path relative to the workspace root: "([^"]+)"/.exec(r.text)?.[1];
    expect(named, r.text).toBe(name === 'list_files' ? 'lib' : 'lib/view.js');
    const again = await tools.run(name, { ...args(`${fs.root}/lib/view.js`), path: named });
    expect(again.isError, again.text).toBe(false);
  });

  // The buffer tools resolved paths without the root's spellings: they said only GENERIC (failed before).
  it.each([
    ['open_file', {}],
    ['file_status', {}],
    ['buffer_diff', {}],
    ['reload_file', {}],
    ['undo_buffer_edit', {}],
    ['save_file', {}],
    ['close_file', {}],
  ])('buffer tool %s is refused naming the relative path, which works', async (name, extra) => {
    expect((await tools.run('open_file', { path: 'lib/view.js' })).isError).toBe(false);
    // An edit in the buffer for the undo to revert.
    if (name === 'undo_buffer_edit')
      expect((await tools.run('replace', { path: 'lib/view.js', old_text: 'module', new_text: 'module /* buffer */' })).isError).toBe(false);
    const r = await tools.run(name, { path: `${fs.root}/lib/view.js`, ...extra });
    expect(r.isError).toBe(true);
    const named = /use the path relative to the workspace root: "([^"]+)"/.exec(r.text)?.[1];
    expect(named, r.text).toBe('lib/view.js');
    const again = await tools.run(name, { path: named, ...extra });
    expect(again.isError, again.text).toBe(false);
  });

  it('a path outside the root, or one that climbs out of it, is refused as before', async () => {
    for (const path of ['/etc/passwd', `${fs.root}/../x`, `${fs.root}2/lib/view.js`]) {
      const r = await tools.run('read_file', { path });
      expect(r.isError).toBe(true);
      expect(r.text, path).toContain(GENERIC);
    }
  });
});
