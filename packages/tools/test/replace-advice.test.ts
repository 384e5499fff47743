/**
 * A replace refused for its options names the whole call to make, with the
 * caller's own texts and the option that makes it work, on the disk and in
 * an open buffer; made as written, it replaces. eca86de taught replaceText
 * to write that call when it knows the path, and left the session's two
 * callers without it: through the tools the advice was the call's shape,
 * "replace with your path and your old_text…", which a model cannot run
 * (failed before).
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn, follow } from './support/offered-calls.ts';
import { freshWorkspace } from './workspace.ts';

describe('a replace refused for its options', () => {
  const workspace = freshWorkspace();

  it.each([false, true])('names the call that works, which replaces every match (buffer open: %s)', async (buffer) => {
    const w = workspace();
    if (buffer) expect((await w.toolset.run('open_file', { path: 'src/doc.ts' })).isError).toBe(false);
    const before = (await w.text('src/doc.ts')).split('this.indent').length - 1;
    expect(before).toBeGreaterThan(1);
    const r = await w.toolset.run('replace', { path: 'src/doc.ts', old_text: 'this.indent', new_text: 'this.depth' });
    expect(r.isError).toBe(true);
    const replace = callsIn(r.text).filter((c) => c.name === 'replace');
    expect(replace, r.text).toEqual([{ name: 'replace', args: { path: 'src/doc.ts', old_text: 'this.indent', new_text: 'this.depth', occurrence: 'all' } }]);
    await follow(w, r);
    if (buffer) expect((await w.toolset.run('save_file', { path: 'src/doc.ts' })).isError).toBe(false);
    const after = await w.text('src/doc.ts');
    expect(after).not.toContain('this.indent');
    expect(after.split('this.depth').length - 1).toBe(before);
  });
});
