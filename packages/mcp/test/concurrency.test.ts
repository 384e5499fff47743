/**
 * Two clients editing one file: two sessions of one HTTP server, and two
 * stdio servers (two processes) on one directory sharing a state database.
 * Both read; A edits; B edits another region from its stale read and is
 * merged; an edit that overlaps what the other changed since is refused with
 * the conflict; two edits sent at the same moment both land. Nothing is
 * lost: the file ends with every applied edit.
 *
 * @module
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryCallsIn, toolCallsIn } from './support/hints.ts';
import { type Connected, call, connectStdio, startHttp } from './support/server.ts';
import { NUMBERED, type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const FILE = 'shared.txt';

/** Replaces one line, as read by that client (its last read is the edit's base). */
function setLine(c: Connected, line: number, text: string) {
  return call(c.client, 'edit_lines', { path: FILE, action: 'replace', start_line: line, text: `${text}\n` });
}

interface Pair {
  readonly a: Connected;
  readonly b: Connected;
  stop(): Promise<void>;
}

const setups: Record<string, (ws: TempWorkspace) => Promise<Pair>> = {
  'two sessions of one HTTP server': async (ws) => {
    const server = await startHttp(['--root', ws.root]);
    const [a, b] = await Promise.all([server.connect({ name: 'client-a' }), server.connect({ name: 'client-b' })]);
    return { a, b, stop: () => server.stop() };
  },
  'two stdio servers sharing a store': async (ws) => {
    const args = ['--root', ws.root, '--store', join(ws.dir, 'shared-state.db')];
    const [a, b] = await Promise.all([connectStdio(args, { name: 'client-a' }), connectStdio(args, { name: 'client-b' })]);
    return { a, b, stop: async () => void (await Promise.all([a.close(), b.close()])) };
  },
};

describe.each(Object.keys(setups))('%s', (setup) => {
  let ws: TempWorkspace;
  let pair: Pair;
  /** The refused overlapping edit, kept for the check of its hints. */
  let refused: Awaited<ReturnType<typeof setLine>> | undefined;

  beforeAll(async () => {
    ws = tempWorkspace({ [FILE]: NUMBERED });
    pair = await (setups[setup] as (ws: TempWorkspace) => Promise<Pair>)(ws);
  });
  afterAll(async () => {
    await pair?.stop();
    ws?.remove();
  });

  it('merges a stale edit of another region and refuses an overlapping one with the conflict', async () => {
    const { a, b } = pair;
    const [readA, readB] = await Promise.all([call(a.client, 'read_file', { path: FILE }), call(b.client, 'read_file', { path: FILE })]);
    expect(readA.data?.version).toBe(readB.data?.version);

    const first = await setLine(a, 3, 'line 3 (A)');
    expect(first.data).toMatchObject({ success: true, merged: false });

    // B still holds the version before A's edit: its change elsewhere is merged in.
    const second = await setLine(b, 17, 'line 17 (B)');
    expect(second.isError, second.text).toBe(false);
    expect(second.data).toMatchObject({ success: true, merged: true });
    expect(ws.read(FILE)).toContain('line 3 (A)\n');
    expect(ws.read(FILE)).toContain('line 17 (B)\n');

    // A last saw the file before B's edit; changing the same line is a conflict, and nothing is written.
    const before = ws.read(FILE);
    const third = await setLine(a, 17, 'line 17 (A)');
    expect(third.isError).toBe(true);
    expect(third.data).toMatchObject({ success: false, code: 'ECONFLICT' });
    const conflict = third.data?.conflict as { changed_by: string[]; lines: Array<{ start: number; end: number }>; their_diff?: string };
    expect(conflict.changed_by).toContain('mcp:client-b');
    expect(conflict.lines).toContainEqual({ start: 17, end: 17 });
    expect(conflict.their_diff).toContain('+line 17 (B)');
    expect(third.text).toContain('changed since you read it by mcp:client-b');
    expect(third.text).toContain('Nothing was written');
    expect(ws.read(FILE)).toBe(before);
    refused = third;
  });

  it('lands two edits sent at the same moment, one of them merged', async () => {
    const { a, b } = pair;
    await Promise.all([call(a.client, 'read_file', { path: FILE }), call(b.client, 'read_file', { path: FILE })]);
    const results = await Promise.all([setLine(a, 5, 'line 5 (A)'), setLine(b, 15, 'line 15 (B)')]);
    for (const r of results) expect(r.data, r.text).toMatchObject({ success: true });
    // Whichever was second was based on the version before the first.
    expect(results.filter((r) => r.data?.merged === true)).toHaveLength(1);
    const text = ws.read(FILE);
    for (const line of ['line 3 (A)', 'line 5 (A)', 'line 15 (B)', 'line 17 (B)']) expect(text).toContain(`${line}\n`);
    expect(text.split('\n')).toHaveLength(21);
  });

  it("gives the conflict's next step as a call of the tools: re-read the lines the other changed", () => {
    expect(refused).toBeDefined();
    expect(libraryCallsIn(refused?.text ?? '')).toEqual([]);
    const next = toolCallsIn(String(refused?.data?.next ?? ''));
    expect(next).toHaveLength(1);
    expect(next[0]).toMatchObject({ name: 'read_lines', args: { path: FILE, start_line: 17, end_line: 17 } });
  });
});
