/**
 * undo_buffer_edit with nothing to step offers a call only when that call
 * does something. Found by the campaign through MCP on express's
 * repository: a redo with nothing undone offered undo_buffer_edit, which
 * answered "nothing to undo" (failed before its fix).
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn, follow } from './support/offered-calls.ts';
import { freshWorkspace } from './workspace.ts';

describe('undo_buffer_edit with nothing to step', () => {
  const workspace = freshWorkspace();

  it('redo with nothing undone and nothing to undo offers no call', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: 'src/doc.ts' })).isError).toBe(false);
    const r = await w.toolset.run('undo_buffer_edit', { path: 'src/doc.ts', redo: true });
    expect(r.isError).toBe(true);
    expect(callsIn(r.text)).toEqual([]);
  });

  it('redo after an edit offers the undo, which undoes it', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: 'src/doc.ts' })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    const r = await w.toolset.run('undo_buffer_edit', { path: 'src/doc.ts', redo: true });
    expect(r.isError).toBe(true);
    const [done] = await follow(w, r);
    expect(done).toBeDefined();
    const diff = await w.toolset.run('buffer_diff', { path: 'src/doc.ts' });
    expect(diff.text).not.toContain('indent = 1;');
  });

  it('undo with nothing unsaved and nothing saved offers no call', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: 'src/doc.ts' })).isError).toBe(false);
    const r = await w.toolset.run('undo_buffer_edit', { path: 'src/doc.ts' });
    expect(r.isError).toBe(true);
    await follow(w, r);
  });

  it('undo with nothing unsaved after a save offers the undo on disk, which reverts the saved change', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: 'src/doc.ts' })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    expect((await w.toolset.run('save_file', { path: 'src/doc.ts' })).isError).toBe(false);
    expect((await w.toolset.run('undo_buffer_edit', { path: 'src/doc.ts' })).isError).toBe(false);
    const r = await w.toolset.run('undo_buffer_edit', { path: 'src/doc.ts' });
    expect(r.isError).toBe(true);
    expect(callsIn(r.text).map((c) => c.name)).toEqual(['undo']);
    await follow(w, r);
    expect(await w.text('src/doc.ts')).toContain('indent = 0;');
  });
});
