/**
 * The buffer tools (open_file, file_status, buffer_diff, reload_file,
 * save_file, close_file) through the dispatcher: a person changes the file
 * on disk while the agent's buffer holds a change to the same words, and
 * every call a result names is made as written and works.
 */
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';
import { openWorkspace } from './workspace.ts';

const FILES = { 'notes.md': '# Notes\n\nretries = 3\n' };
const NAMES = callNames(TOOLS);

describe('buffer tools', () => {
  it('surface a conflict with the person and name calls that settle it', async () => {
    const ws = await openWorkspace(FILES);
    try {
      const t = ws.toolset;
      const opened = await t.run('open_file', { path: 'notes.md', permission: 'human' });
      expect(opened).toMatchObject({ isError: false, data: { status: 'clean', permission: 'human', buffer_version: 1 } });
      // The agent changes its buffer through the API (the tools save it); the person edits the same words on disk.
      await ws.session.buffers.replace('notes.md', 'retries = 3', 'retries = 5');
      await ws.fs.writeBytes('notes.md', new TextEncoder().encode('# Notes\n\nretries = 4\n'));
      const status = await t.run('file_status', { path: 'notes.md' });
      expect(status.data).toMatchObject({ buffers: [{ status: 'conflict', collisions: 1, next: 'buffer_diff({"path":"notes.md"})' }] });
      const diff = await t.run('buffer_diff', { path: 'notes.md' });
      expect(diff.text).toContain('[file:notes.md]\nstatus: conflict\n');
      expect(diff.text).toContain('-retries = 4\n+retries = 5');
      const refused = await t.run('save_file', { path: 'notes.md' });
      expect(refused.isError).toBe(true);
      const calls = findToolCalls(refused.text, NAMES).map((f) => f.source);
      expect(calls).toEqual(['buffer_diff({"path":"notes.md"})', 'save_file({"path":"notes.md","resolve":"disk"})', 'reload_file({"path":"notes.md"})']);
      const saved = await t.run('save_file', { path: 'notes.md', resolve: 'disk' });
      expect(saved).toMatchObject({ isError: false, data: { saved: false, buffer: { status: 'clean', dirty: false } } });
      expect(new TextDecoder().decode(await ws.fs.readBytes('notes.md'))).toBe('# Notes\n\nretries = 4\n');
      await ws.session.buffers.replace('notes.md', '# Notes', '# Notes and more');
      const written = await t.run('save_file', { path: 'notes.md', message: 'heading' });
      expect(written).toMatchObject({ isError: false, data: { saved: true, edit: { success: true } } });
      expect(new TextDecoder().decode(await ws.fs.readBytes('notes.md'))).toBe('# Notes and more\n\nretries = 4\n');
      expect((await t.run('reload_file', { path: 'notes.md' })).data).toMatchObject({ status: 'clean' });
      expect((await t.run('close_file', { path: 'notes.md' })).text).toBe('Closed notes.md.');
      const gone = await t.run('close_file', { path: 'notes.md' });
      expect(gone.isError).toBe(true);
      expect(findToolCalls(gone.text, NAMES).map((f) => f.source)).toEqual(['open_file({"path":"notes.md"})']);
    } finally {
      await ws.close();
    }
  });
});
