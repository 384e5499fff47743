/**
 * Every call a buffer tool's result offers works when made as given, after
 * each step of a realistic session with an open file: edit, save, undo in
 * the buffer, undo on disk, undo in the buffer again, a person's change that
 * overwrites the agent's text, its undo, and the close. Found by the MCP
 * campaign (session 33): once the saved change was undone on disk,
 * undo_buffer_edit with nothing to undo still offered undo of the file on
 * disk, which answered "every recorded change is undone already" (failed
 * before its fix).
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import type { CallResult } from '../src/index.ts';
import { callsIn, follow } from './support/offered-calls.ts';
import { FILES, freshWorkspace, type TestWorkspace } from './workspace.ts';

const PATH = 'src/doc.ts';
const ORIGINAL = FILES[PATH] as string;

/** Runs one step, then makes every call its result offers, as given; each must work. The step's result. */
async function step(w: TestWorkspace, name: string, args: Record<string, unknown>): Promise<CallResult> {
  const r = await w.toolset.run(name, args);
  await follow(w, r);
  return r;
}

describe('the calls buffer tools offer, made after each step', () => {
  const workspace = freshWorkspace();

  it('open, edit, save, undo in the buffer and on disk, a collision, close: every offered call works', async () => {
    const w = workspace();
    expect((await step(w, 'open_file', { path: PATH })).isError).toBe(false);
    // The replace offers the save, which the step makes.
    await step(w, 'replace', { path: PATH, old_text: 'indent = 0;', new_text: 'indent = 1;' });
    expect(await w.text(PATH)).toContain('indent = 1;');
    expect((await step(w, 'undo_buffer_edit', { path: PATH })).isError).toBe(false);
    // Nothing left in the buffer: the saved change is undone on disk, by the call offered.
    const first = await step(w, 'undo_buffer_edit', { path: PATH });
    expect(first.isError).toBe(true);
    expect(callsIn(first.text).map((c) => c.name)).toEqual(['undo']);
    expect(await w.text(PATH)).toBe(ORIGINAL);
    await step(w, 'file_status', { path: PATH });
    // The disk undo is made: none is left of this agent to make, so none is offered.
    const again = await step(w, 'undo_buffer_edit', { path: PATH });
    expect(again.isError).toBe(true);
    expect(callsIn(again.text)).toEqual([]);
    expect(again.text).toContain('undone on disk already');
    expect(await w.text(PATH)).toBe(ORIGINAL);

    // The edit again, saved; another one unsaved, and a person changes the same line and the end of the file.
    expect((await step(w, 'undo_buffer_edit', { path: PATH, redo: true })).isError).toBe(false);
    await step(w, 'save_file', { path: PATH });
    expect(await w.text(PATH)).toContain('indent = 1;');
    expect((await w.toolset.run('replace', { path: PATH, old_text: 'indent = 1;', new_text: 'indent = 3;' })).isError).toBe(false);
    await w.fs.write(PATH, `${ORIGINAL.replace('indent = 0;', 'indent = 2;')}// person\n`);
    // The disk wins the line; the status names the call that brings the agent's text back, which the step makes.
    const status = await step(w, 'file_status', { path: PATH });
    expect(callsIn(status.text)).toContainEqual({ name: 'undo_buffer_edit', args: { path: PATH, overwritten: true } });
    await step(w, 'save_file', { path: PATH });
    expect(await w.text(PATH)).toContain('indent = 3;');
    expect(await w.text(PATH)).toContain('// person\n');
    // The buffer's edits are saved and on disk; its undo reverts them in the buffer, one after another.
    for (let i = 0; i < 4; i++) await step(w, 'undo_buffer_edit', { path: PATH });
    await step(w, 'undo_buffer_edit', { path: PATH, overwritten: true });
    await step(w, 'undo', { path: PATH });
    await step(w, 'undo_buffer_edit', { path: PATH });
    await step(w, 'undo', { path: PATH });
    // The agent's newest change left on disk is under the person's line: its undo would be refused, so it is not offered.
    const refused = await step(w, 'undo_buffer_edit', { path: PATH });
    expect(refused.text).toContain('cannot be undone on its own now');
    expect(callsIn(refused.text).map((c) => c.name)).toEqual(['get_file_history']);
    await step(w, 'file_status', { path: PATH });
    await step(w, 'close_file', { path: PATH });
  });
});
