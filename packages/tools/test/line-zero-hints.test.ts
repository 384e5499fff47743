/**
 * Line 0 is refused with the call to make instead. That call is followed as
 * written, so it must do what the model meant and must work: the campaign
 * through MCP on express's sources found hints that deleted line 1 when the
 * model asked for lines 3-0, inserted after line 1 when it asked for "after
 * line 0" (the top), kept another invalid argument, or named a file that is
 * not there.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import type { CallResult } from '../src/index.ts';
import { editLines, prepareArguments, readCommandOutput, readLines, TOOLS } from '../src/index.ts';
import { callNames, findToolCalls } from './support/tool-call-text.ts';
import { FILES, freshWorkspace } from './workspace.ts';

function refusal(...args: Parameters<typeof prepareArguments>): string {
  const p = prepareArguments(...args);
  if (p.ok) throw new Error(`accepted: ${JSON.stringify(p.value)}`);
  return p.message;
}

/** The one call a refusal offers. */
function offered(message: string): { name: string; args: Record<string, unknown> } {
  const calls = toolCallsIn(message);
  expect(calls, message).toHaveLength(1);
  const [call] = calls;
  if (call === undefined) throw new Error(message);
  return call;
}

const NAMES = callNames(TOOLS);
/** The tool calls written in a text, each as name and arguments; a call of the library's API fails the test. */
function toolCallsIn(text: string): Array<{ name: string; args: Record<string, unknown> }> {
  return findToolCalls(text, NAMES).flatMap((f) => {
    if (f.kind === 'api-style') throw new Error(`a call of the library, which no tool runs: ${f.source}`);
    // A signature (`read_lines(path, start_line, …)`) describes the tool; it is not a call to make.
    return f.kind === 'call' ? [{ name: f.name, args: { ...f.args } }] : [];
  });
}

const lines = (FILES['src/doc.ts'] ?? '').split('\n');

describe('the call offered for line 0', () => {
  const workspace = freshWorkspace();

  it('keeps a start_line that was right when only end_line is 0', () => {
    const read = offered(refusal(readLines, { path: 'src/doc.ts', start_line: 5, end_line: 0 }));
    expect(read.args).toEqual({ path: 'src/doc.ts', start_line: 5 });
    const del = offered(refusal(editLines, { path: 'src/doc.ts', action: 'delete', start_line: 3, end_line: 0 }));
    expect(del.args).toEqual({ path: 'src/doc.ts', action: 'delete', start_line: 3 });
  });

  it('deletes the line the model named, not line 1, when followed', async () => {
    const w = workspace();
    const first: CallResult = await w.toolset.run('edit_lines', { path: 'src/doc.ts', action: 'delete', start_line: 3, end_line: 0 });
    expect(first.isError).toBe(true);
    const hint = offered(first.text);
    const done = await w.toolset.run(hint.name, hint.args);
    expect(done.isError, done.text).toBe(false);
    expect(done.text).toContain(`-${lines[2]}`);
    expect(done.text).not.toContain(`-${lines[0]}`);
  });

  it('puts "after line 0" at the top of the file, before line 1', async () => {
    const w = workspace();
    const first = await w.toolset.run('edit_lines', { path: 'src/doc.ts', action: 'insert_after', start_line: 0, text: '// top' });
    expect(first.isError).toBe(true);
    const hint = offered(first.text);
    expect(hint.args).toEqual({ path: 'src/doc.ts', action: 'insert_before', start_line: 1, text: '// top' });
    expect((await w.toolset.run(hint.name, hint.args)).isError).toBe(false);
    const read = await w.toolset.run('read_lines', { path: 'src/doc.ts', start_line: 1, end_line: 2 });
    expect(read.text).toContain(`1\t// top\n2\t${lines[0]}\n`);
  });

  it('offers no call that another argument makes fail, and says what else is wrong', () => {
    const message = refusal(readCommandOutput, { id: 'nope', start_line: 0 });
    expect(message).toContain('start_line 0 is not a line');
    expect(message).toContain('id: ');
    expect(toolCallsIn(message)).toEqual([]);
  });

  it('names a file that is not there as missing, not with a call that fails on it', async () => {
    const w = workspace();
    const r = await w.toolset.run('read_lines', { path: 'src/nope.ts', start_line: 0 });
    expect(r.text).toMatch(/^ENOENT: /);
    for (const call of toolCallsIn(r.text)) expect(call.args.path).not.toBe('src/nope.ts');
    for (const call of toolCallsIn(r.text)) expect((await w.toolset.run(call.name, call.args)).isError, JSON.stringify(call)).toBe(false);
  });
});
