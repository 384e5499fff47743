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
});
