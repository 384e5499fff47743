/**
 * An undo with nothing to undo says what is true and offers only a call
 * that works. Found by the campaign through MCP on express's repository:
 * an undo of a path that was never a file said it had "no recorded change
 * after its first version" and offered get_file_history, which answered
 * ENOENT (failed before its fix).
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn, follow } from './support/offered-calls.ts';
import { FILES, freshWorkspace } from './workspace.ts';

describe('undo with nothing recorded', () => {
  const workspace = freshWorkspace();

  it('of a file made behind ctxfs after the scan offers its history, which lists the version first seen', async () => {
    const w = workspace();
    // Made after the scan, behind ctxfs's back: its first look records it, so it has a first version to list.
    await w.fs.write('lib/never-touched.js', FILES['src/doc.ts'] ?? '', { createParents: true });
    const r = await w.toolset.run('undo', { path: 'lib/never-touched.js' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('no recorded change after its first version');
    const [history] = await follow(w, r);
    expect(history?.text).toContain('#1 initial');
    expect(await w.text('lib/never-touched.js')).toBe(FILES['src/doc.ts']);
  });

  it('of a file recorded but never changed offers its history, which works', async () => {
    const w = workspace();
    const r = await w.toolset.run('undo', { path: 'src/doc.ts' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('after its first version');
    const [history] = await follow(w, r);
    expect(history?.text).toContain('#1 initial');
  });

  it('of a path that does not exist says there is no file, and offers calls that work', async () => {
    const w = workspace();
    const r = await w.toolset.run('undo', { path: 'src/dok.ts' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('no file at src/dok.ts');
    expect(r.text).not.toContain('get_file_history');
    await follow(w, r);
  });

  it('of a file whose only change is undone still offers its history, which works', async () => {
    const w = workspace();
    expect((await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    expect((await w.toolset.run('undo', { path: 'src/doc.ts' })).isError).toBe(false);
    const r = await w.toolset.run('undo', { path: 'src/doc.ts' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('undone already');
    expect(callsIn(r.text).map((c) => c.name)).toContain('get_file_history');
    await follow(w, r);
  });
});
