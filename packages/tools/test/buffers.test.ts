/**
 * The buffer tools (open_file, file_status, buffer_diff, reload_file,
 * save_file, close_file) through the dispatcher: a person changes the file
 * on disk while the agent's buffer holds a change to the same words, and
 * every call a result names is made as written and works. Once a file is
 * open, the edit tools change the buffer and the read tools serve it.
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
      // Closing again is done already, not a refusal whose hint (open_file) fails for a file over the buffer limit.
      const gone = await t.run('close_file', { path: 'notes.md' });
      expect(gone).toMatchObject({ isError: false, data: { path: 'notes.md', closed: false } });
      expect(gone.text).toBe('No buffer was open for notes.md: nothing to close; its edits go to the disk.');
    } finally {
      await ws.close();
    }
  });

  it('once a file is open, the edit tools change the buffer and the reads serve it; save_file writes it merged with the person’s change', async () => {
    const ws = await openWorkspace({ 'src/config.ts': 'export const retries = 3;\nexport const delay = 100;\nexport const name = "x";\n', 'b.txt': 'bee\n' });
    try {
      const t = ws.toolset;
      const save = 'save_file({"path":"src/config.ts"})';
      await t.run('open_file', { path: 'src/config.ts' });
      const replaced = await t.run('replace', { path: 'src/config.ts', old_text: 'retries = 3', new_text: 'retries = 5' });
      expect(replaced).toMatchObject({ isError: false, data: { success: true, op: 'replace', next: save } });
      expect(replaced.text).toContain(`not the file on disk: unsaved until ${save}`);
      const lines = await t.run('edit_lines', { path: 'src/config.ts', action: 'insert_after', start_line: 3, text: 'export const debug = false;' });
      expect(lines).toMatchObject({ isError: false, data: { success: true, next: save } });
      const patched = await t.run('apply_patch', {
        patch: '--- a/src/config.ts\n+++ b/src/config.ts\n@@ -2 +2 @@\n-export const delay = 100;\n+export const delay = 250;\n',
      });
      expect(patched).toMatchObject({ isError: false, data: { success: true, path: 'src/config.ts', next: save } });
      // Nothing on disk yet; the reads show the buffer, and say so.
      expect(await ws.text('src/config.ts')).toBe('export const retries = 3;\nexport const delay = 100;\nexport const name = "x";\n');
      const read = await t.run('read_file', { path: 'src/config.ts' });
      expect(read.text).toContain('buffer="open buffer, unsaved changes: not on disk"');
      expect(read.text).toContain('retries = 5;\nexport const delay = 250;\nexport const name = "x";\nexport const debug = false;\n');
      const range = await t.run('read_lines', { path: 'src/config.ts', start_line: 4, end_line: 4 });
      expect(range.text).toContain('4\texport const debug = false;');

      // A person edits another line on disk meanwhile.
      await ws.fs.writeBytes(
        'src/config.ts',
        new TextEncoder().encode('export const retries = 3;\nexport const delay = 100;\nexport const name = "person";\n'),
      );
      const status = await t.run('file_status', { path: 'src/config.ts' });
      expect(status.data).toMatchObject({ buffers: [{ status: 'disk_changed', dirty: true, next: 'buffer_diff({"path":"src/config.ts"})' }] });
      const diff = await t.run('buffer_diff', { path: 'src/config.ts' });
      expect(diff.text).toContain('-export const retries = 3;\n-export const delay = 100;\n+export const retries = 5;\n+export const delay = 250;\n');
      expect(diff.text).not.toContain('-export const name = "person";');
      expect((await t.run('read_file', { path: 'src/config.ts' })).text).toContain('export const name = "person";\nexport const debug = false;');

      const saved = await t.run(...call(save));
      expect(saved).toMatchObject({ isError: false, data: { saved: true, buffer: { status: 'clean' } } });
      expect(await ws.text('src/config.ts')).toBe(
        'export const retries = 5;\nexport const delay = 250;\nexport const name = "person";\nexport const debug = false;\n',
      );
      expect((await t.run('read_file', { path: 'src/config.ts' })).text).toContain('buffer="open buffer, same as disk"');

      // A patch of several files touching the open one is refused whole, naming calls that work.
      const several = await t.run('apply_patch', {
        patch:
          '--- a/src/config.ts\n+++ b/src/config.ts\n@@ -1 +1 @@\n-export const retries = 5;\n+export const retries = 6;\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n',
      });
      expect(several).toMatchObject({ isError: true, data: { success: false, code: 'EBUSY', next: save } });
      const named = findToolCalls(several.text, NAMES).map((f) => f.source);
      expect(named).toContain('close_file({"path":"src/config.ts"})');
      expect(named).toContain('close_file({"path":"src/config.ts","discard":true})');
      expect(await ws.text('b.txt')).toBe('bee\n');

      // Closed, the path's edits go to the disk again, recorded as versions.
      expect((await t.run('close_file', { path: 'src/config.ts' })).isError).toBe(false);
      const onDisk = await t.run('replace', { path: 'src/config.ts', old_text: 'retries = 5', new_text: 'retries = 7' });
      expect(onDisk).toMatchObject({ isError: false, data: { success: true } });
      expect(onDisk.data.seq).toBeGreaterThan(0);
      expect(onDisk.data.next).toBeUndefined();
      expect(await ws.text('src/config.ts')).toContain('retries = 7;');
      expect((await t.run('read_file', { path: 'src/config.ts' })).text).not.toContain('buffer=');
    } finally {
      await ws.close();
    }
  });
});

/** A tool call as written in a result, as the arguments of `Toolset.run`. */
function call(source: string): [string, Record<string, unknown>] {
  const [found] = findToolCalls(source, NAMES);
  if (found?.kind !== 'call') throw new Error(`not a tool call: ${source}`);
  return [found.name, found.args];
}
