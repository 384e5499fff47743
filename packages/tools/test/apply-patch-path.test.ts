/**
 * apply_patch's `path` names the file of a patch without `---`/`+++`
 * headers. Given with a patch whose headers name another file, it was
 * ignored: `path: "lib/other.js"` and headers for lib/view.js patched
 * lib/view.js and said nothing (the MCP campaign). A path that disagrees
 * with the headers is refused, naming both, and nothing is written; one
 * that agrees, or a headerless patch, applies.
 */

import { describe, expect, it } from 'vitest';
import { freshWorkspace } from './workspace.ts';

const FILES = { 'lib/view.js': 'export const a = 1;\nexport const b = 2;\n', 'lib/other.js': 'export const a = 1;\n' };
const HEADED = '--- a/lib/view.js\n+++ b/lib/view.js\n@@ -1,2 +1,2 @@\n-export const a = 1;\n+export const a = 10;\n export const b = 2;\n';
const HEADLESS = '@@ -1 +1 @@\n-export const a = 1;\n+export const a = 10;\n';

describe('apply_patch with a path', () => {
  const ws = freshWorkspace();

  async function seed(): Promise<void> {
    for (const [p, t] of Object.entries(FILES)) await ws().toolset.run('write_file', { path: p, content: t });
  }

  it('a path the headers do not name is refused, naming both, and nothing is written', async () => {
    await seed();
    const r = await ws().toolset.run('apply_patch', { patch: HEADED, path: 'lib/other.js' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('lib/view.js');
    expect(r.text).toContain('lib/other.js');
    expect(await ws().text('lib/view.js')).toBe(FILES['lib/view.js']);
    expect(await ws().text('lib/other.js')).toBe(FILES['lib/other.js']);
  });

  it('a path the headers name applies (spelled either way)', async () => {
    await seed();
    const r = await ws().toolset.run('apply_patch', { patch: HEADED, path: './lib/view.js' });
    expect(r.isError, r.text).toBe(false);
    expect(await ws().text('lib/view.js')).toBe('export const a = 10;\nexport const b = 2;\n');
  });

  it('a patch without headers applies to the path', async () => {
    await seed();
    const r = await ws().toolset.run('apply_patch', { patch: HEADLESS, path: 'lib/other.js' });
    expect(r.isError, r.text).toBe(false);
    expect(await ws().text('lib/other.js')).toBe('export const a = 10;\n');
    expect(await ws().text('lib/view.js')).toBe(FILES['lib/view.js']);
  });
});
