import { describe, expect, it } from 'vitest';
import { openWorkspace } from './workspace.ts';

const FILES = { 'src/a.ts': 'const a = 1;\nconst b = 2;\n', 'src/b.ts': 'export {};\n' };

describe('get_diff with no versions named: the newest recorded version against the file on disk', () => {
  it('shows a change made outside ctxfs after one made through it', async () => {
    const ws = await openWorkspace(FILES);
    try {
      expect((await ws.toolset.run('replace', { path: 'src/a.ts', old_text: 'const a = 1;', new_text: 'const a = 10;' })).isError).toBe(false);
      // An editor or a formatter writes the file behind ctxfs's back.
      await ws.fs.writeBytes('src/a.ts', new TextEncoder().encode('const a = 10;\nconst b = 20;\n'));
      const r = await ws.toolset.run('get_diff', { path: 'src/a.ts' });
      expect(r.isError).toBe(false);
      expect(r.data).toMatchObject({ lines_added: 1, lines_removed: 1 });
      expect(r.text).toContain('-const b = 2;\n+const b = 20;');
      // The history lists it afterwards, as an external change.
      const history = await ws.toolset.run('get_file_history', { path: 'src/a.ts' });
      expect(history.text).toMatch(/#3 external by external/);
    } finally {
      await ws.close();
    }
  });

  it('says a file ctxfs never changed has no recorded change, and a missing file is ENOENT', async () => {
    const ws = await openWorkspace(FILES);
    try {
      const r = await ws.toolset.run('get_diff', { path: 'src/b.ts' });
      expect(r).toMatchObject({ isError: false, text: 'src/b.ts: no recorded change; the file is as ctxfs first saw it.' });
      const missing = await ws.toolset.run('get_diff', { path: 'src/nope.ts' });
      expect(missing.isError).toBe(true);
      expect(missing.text).toMatch(/^ENOENT: no file at src\/nope\.ts/);
    } finally {
      await ws.close();
    }
  });
  it('says that a file changed after the scan, before ctxfs kept its content, differs from what ctxfs first saw', async () => {
    const ws = await openWorkspace(FILES);
    try {
      // The scan knew src/b.ts by its hash only; an editor changes it before any read kept its content.
      await ws.fs.writeBytes('src/b.ts', new TextEncoder().encode('export const b = 1;\n'));
      const r = await ws.toolset.run('get_diff', { path: 'src/b.ts' });
      expect(r.isError).toBe(false);
      expect(r.text).toMatch(
        /^src\/b\.ts: no recorded change; it changed outside ctxfs after it was scanned as [0-9a-f]{12}, before ctxfs kept its content: that change cannot be shown or undone\.$/,
      );
      expect(r.text).not.toContain('as ctxfs first saw it');
      // The history's first version says so too, and the disk's content is served.
      expect((await ws.toolset.run('get_file_history', { path: 'src/b.ts' })).text).toContain('changed outside ctxfs after it was scanned as');
      expect((await ws.toolset.run('read_file', { path: 'src/b.ts' })).text).toContain('export const b = 1;');
      const undo = await ws.toolset.run('undo', { path: 'src/b.ts', change: 1 });
      expect(undo.isError).toBe(true);
      expect(undo.text).toContain('#1 is the first version of src/b.ts: it changed outside ctxfs after it was scanned as');
      expect(undo.text).not.toContain('as ctxfs first saw it');
    } finally {
      await ws.close();
    }
  });
});
