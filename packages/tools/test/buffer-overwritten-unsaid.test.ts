/**
 * The note that a change on disk overwrote the agent's text in its open
 * buffer is said by the first read that serves it, not lost with a read that
 * took the change in and served nothing: a read_file refused for its budget
 * ("cannot hold even one line here") merged the change in and said nothing,
 * and every later read was silent about it.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn } from './support/offered-calls.ts';
import { FILES, freshWorkspace } from './workspace.ts';

const PATH = 'src/doc.ts';
const ORIGINAL = FILES[PATH] as string;
const NOTE = "A change on disk was merged in first: your text at line 8 was replaced by the disk's; it is kept";

describe('the note of overwritten text, after a read that served nothing', () => {
  const workspace = freshWorkspace();

  it.each([60, 120])('a read_file refused for its budget (%i tokens) leaves the note to the next read, which says it once', async (max) => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: PATH })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    await w.fs.write(PATH, ORIGINAL.replace('indent = 0;', 'indent = 2;'));
    const refused = await w.toolset.run('read_file', { path: PATH, max_tokens: max });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^ELIMIT: /);
    const next = await w.toolset.run('read_file', { path: PATH });
    expect(next.isError).toBe(false);
    expect(next.text).toContain(NOTE);
    expect(callsIn(next.text)).toContainEqual({ name: 'undo_buffer_edit', args: { path: PATH, overwritten: true } });
    expect((await w.toolset.run('read_file', { path: PATH })).text).not.toContain('A change on disk was merged in');
  });

  it('an edit after such a read says it in its result, and the read after it does not again', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: PATH })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    await w.fs.write(PATH, ORIGINAL.replace('indent = 0;', 'indent = 2;'));
    expect((await w.toolset.run('read_file', { path: PATH, max_tokens: 60 })).isError).toBe(true);
    const edit = await w.toolset.run('replace', { path: PATH, old_text: 'this.indent += 1;', new_text: 'this.indent += 2;' });
    expect(edit.isError).toBe(false);
    expect(edit.text).toContain(NOTE);
    expect((await w.toolset.run('read_file', { path: PATH })).text).not.toContain('A change on disk was merged in');
  });
});
