/**
 * Text a collision overwrote is named, with a call that brings it back, and
 * that call works as written in the same (small) profile. Found by the MCP
 * campaign (session 33): with read-write, the agent edited a buffer, a
 * person changed the same place on disk, the disk won, save_file had
 * "nothing to save", and the agent's text was gone with no way back.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { callsIn, follow } from './support/offered-calls.ts';
import { FILES, freshWorkspace } from './workspace.ts';

const PATH = 'src/doc.ts';
const ORIGINAL = FILES[PATH] as string;

describe('text a collision with the disk overwrote', () => {
  const workspace = freshWorkspace();
  /** The agent's `indent = 1;` in its open buffer, and a person's `indent = 2;` at the same place on disk. */
  const collided = async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: PATH })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    await w.fs.write(PATH, ORIGINAL.replace('indent = 0;', 'indent = 2;'));
    return w;
  };

  it('read-write: save_file names the place and undo_buffer_edit, which brings the agent’s text back for the next save', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: PATH })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    // A person changes the same place, and the end of the file.
    await w.fs.write(PATH, `${ORIGINAL.replace('indent = 0;', 'indent = 2;')}// person\n`);
    const r = await w.toolset.run('save_file', { path: PATH });
    expect(r.text).toContain('src/doc.ts: nothing to save.');
    expect(r.text).toContain("1 place both changed went to the disk, your text at line 8 was replaced by the disk's; it is kept");
    expect(callsIn(r.text).map((c) => c.name)).toContain('undo_buffer_edit');
    await follow(w, r);
    const saved = await w.toolset.run('save_file', { path: PATH });
    expect(saved).toMatchObject({ isError: false, data: { saved: true } });
    const now = await w.text(PATH);
    expect(now).toContain('indent = 1;');
    expect(now).toContain('// person\n');
  });

  it('read-write: the replace that takes the change in says so, and the call it names brings the text back from behind that edit', async () => {
    const w = await collided();
    const r = await w.toolset.run('replace', { path: PATH, old_text: 'this.indent += 1;', new_text: 'this.indent += 2;' });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/^A change on disk was merged in first: your text at line 8 was replaced by the disk's; it is kept/);
    expect(callsIn(r.text)).toContainEqual({ name: 'undo_buffer_edit', args: { path: PATH, overwritten: true } });
    // The calls in the order given: the text back into the buffer, then the save the result names.
    await follow(w, r);
    const now = await w.text(PATH);
    expect(now).toContain('indent = 1;');
    expect(now).toContain('this.indent += 2;');
    expect(now).not.toContain('indent = 2;');
  });

  it.each([
    ['read_file', { path: PATH }],
    ['read_lines', { path: PATH, start_line: 1, end_line: 12 }],
  ])('read-write: a %s that takes the change in says so, and the call it names brings the text back', async (name, args) => {
    const w = await collided();
    const r = await w.toolset.run(name, args);
    expect(r.isError).toBe(false);
    expect(r.text).toContain('indent = 2;');
    expect(r.text).toContain("A change on disk was merged in first: your text at line 8 was replaced by the disk's; it is kept");
    expect(callsIn(r.text)).toContainEqual({ name: 'undo_buffer_edit', args: { path: PATH, overwritten: true } });
    // Said by the read that took it in; the buffer's state keeps saying it.
    expect((await w.toolset.run(name, args)).text).not.toContain('A change on disk was merged in');
    await follow(w, r);
    expect((await w.toolset.run('save_file', { path: PATH })).isError).toBe(false);
    expect(await w.text(PATH)).toContain('indent = 1;');
  });

  it.each([
    ['read_file', { path: PATH, max_tokens: 200 }],
    ['read_lines', { path: PATH, start_line: 1, end_line: 40, max_tokens: 250 }],
  ])('read-write: a %s whose text fills its budget still says so, within the budget', async (name, args) => {
    const w = await collided();
    const r = await w.toolset.run(name, args);
    expect(r.isError, r.text).toBe(false);
    const data = r.data as { tokens: number; view: string };
    // The file does not fit: what is served is cut to the budget.
    expect(data.view).not.toBe('full');
    expect(data.tokens).toBeLessThanOrEqual(args.max_tokens);
    expect(r.text).toContain("A change on disk was merged in first: your text at line 8 was replaced by the disk's; it is kept");
    expect(callsIn(r.text)).toContainEqual({ name: 'undo_buffer_edit', args: { path: PATH, overwritten: true } });
  });

  it('admin: file_status names the disk’s lost place and get_file_history, which lists the person’s version after the save', async () => {
    const w = workspace();
    expect((await w.toolset.run('open_file', { path: PATH, permission: 'admin' })).isError).toBe(false);
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' })).isError).toBe(false);
    await w.fs.write(PATH, ORIGINAL.replace('indent = 0;', 'indent = 2;'));
    const status = await w.toolset.run('file_status', { path: PATH });
    expect(status.text).toContain("1 place both changed went to the buffer, the disk's text at line 8 was replaced by yours");
    expect((await w.toolset.run('save_file', { path: PATH })).isError).toBe(false);
    const [listed] = await follow(w, status);
    const versions = (listed?.data as { versions?: Array<{ seq: number }> } | undefined)?.versions;
    expect(versions?.length).toBe(2);
    const before = await w.session.getVersion(PATH, versions?.[1]?.seq as number);
    expect(before.text).toContain('indent = 2;');
  });
});
