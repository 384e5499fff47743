/**
 * A scripted agent doing a whole task over MCP, on each backend: orient
 * (project_overview), find (grep), read narrowly (read_lines), change
 * (apply_patch); meanwhile someone else changes the same file (on the host
 * disk with node:fs, inside the container with sed, and on memory, which has
 * no outside, through a second client's write_file); the agent's next patch,
 * based on its stale read, is merged; then it looks back (get_diff,
 * get_file_history) and undoes its last change, keeping everyone else's.
 *
 * @module
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends, type BackendKind, type BackendWorkspace, backendWorkspace, removeBackendContainers } from './support/backends.ts';
import { type Connected, call, connectStdio, type HttpServer, readWhole, startHttp } from './support/server.ts';
import { PROJECT } from './support/workspace.ts';

const backends = await availableBackends();
afterAll(removeBackendContainers);

const FILE = 'src/config.ts';
const THEIR_LINE = ["  return 'retries=' + retries + ' timeout=' + timeoutMs;", "  return 'retries=' + retries + ', timeout=' + timeoutMs;"] as const;

/** A unified diff of one line of src/config.ts, with the lines around it as they are. */
function patchLine(lines: readonly string[], line: number, to: string): string {
  const before = lines[line - 2] ?? '';
  const after = lines[line] ?? '';
  return [`--- a/${FILE}`, `+++ b/${FILE}`, `@@ -${line - 1},3 +${line - 1},3 @@`, ` ${before}`, `-${lines[line - 1]}`, `+${to}`, ` ${after}`, ''].join('\n');
}

describe.each(backends)('on %s', (backend: BackendKind) => {
  let ws: BackendWorkspace;
  let agent: Connected;
  let http: HttpServer | undefined;
  /** Someone else changing the file, as that backend allows. */
  let someoneEdits: (from: string, to: string) => Promise<void>;
  /** The file as the backend holds it. */
  let current: () => Promise<string>;

  beforeAll(async () => {
    ws = await backendWorkspace(backend, PROJECT);
    if (ws.editOutside !== undefined && ws.readBack !== undefined) {
      const { editOutside, readBack } = ws;
      agent = await connectStdio(ws.args, { name: 'agent' });
      someoneEdits = (from, to) => editOutside(FILE, from, to);
      current = () => readBack(FILE);
    } else {
      // Memory has no disk anyone else could write: someone else is another client of the same server.
      http = await startHttp(ws.args);
      agent = await http.connect({ name: 'agent' });
      const someone = await http.connect({ name: 'someone' });
      someoneEdits = async (from, to) => {
        const text = await readWhole(someone, FILE);
        const w = await call(someone.client, 'write_file', { path: FILE, content: text.replace(from, to) });
        expect(w.isError, w.text).toBe(false);
      };
      current = () => readWhole(someone, FILE);
    }
  });
  afterAll(async () => {
    await (http?.stop() ?? agent?.close());
    await ws?.remove();
  });

  it('orients, finds, reads, patches, is merged with an outside change, looks back and undoes', async () => {
    const overview = await call(agent.client, 'project_overview', {});
    expect(overview.text).toContain('config.ts');

    const found = await call(agent.client, 'grep', { pattern: 'export const retries', path: 'src' });
    const file = (found.data?.items as Array<{ name: string; lines: Array<{ line: number }> }> | undefined)?.[0];
    expect(`${found.data?.dir === '' ? '' : `${found.data?.dir}/`}${file?.name}`).toBe(FILE);
    const line = file?.lines[0]?.line ?? 0;
    expect(line).toBe(2);

    const read = await call(agent.client, 'read_lines', { path: FILE, start_line: 1, end_line: line + 2 });
    const lines = [...read.text.matchAll(/^\d+\t(.*)$/gm)].map((m) => m[1] ?? '');
    expect(lines[line - 1]).toBe('export const retries = 3;');

    const first = await call(agent.client, 'apply_patch', { patch: patchLine(lines, line, 'export const retries = 4;'), message: 'more retries' });
    expect(first.data, first.text).toMatchObject({ success: true, merged: false });

    // Someone else changes another line of the file the agent is working on.
    await someoneEdits(THEIR_LINE[0], THEIR_LINE[1]);
    expect(await current()).toContain(THEIR_LINE[1]);

    // The agent's next patch is based on what it last saw; the change it did not see is merged in.
    const seen = [...lines];
    seen[line - 1] = 'export const retries = 4;';
    const second = await call(agent.client, 'apply_patch', { patch: patchLine(seen, line + 1, 'export const timeoutMs = 7000;'), message: 'longer timeout' });
    expect(second.isError, second.text).toBe(false);
    expect(second.data).toMatchObject({ success: true, merged: true });
    const merged = await current();
    for (const l of ['export const retries = 4;', 'export const timeoutMs = 7000;', THEIR_LINE[1]]) expect(merged).toContain(`${l}\n`);

    const diff = await call(agent.client, 'get_diff', { path: FILE, from: 1, to: 'current' });
    for (const l of ['-export const retries = 3;', '+export const retries = 4;', '+export const timeoutMs = 7000;', `+${THEIR_LINE[1]}`])
      expect(diff.text).toContain(l);

    const history = await call(agent.client, 'get_file_history', { path: FILE });
    const versions = history.data?.versions as Array<{ seq: number; author: string; message?: string }>;
    expect(versions[0]).toMatchObject({ author: 'mcp:agent', message: 'longer timeout' });
    expect(versions.at(-1)).toMatchObject({ seq: 1, author: 'initial' });
    expect(versions.some((v) => v.author === 'mcp:agent' && v.message === 'more retries')).toBe(true);
    // The outside change is in the history, under who made it: a person outside ctxfs, or the other client.
    expect(versions.some((v) => v.author === (backend === 'memory' ? 'mcp:someone' : 'external'))).toBe(true);

    const undone = await call(agent.client, 'undo', { path: FILE });
    expect(undone.data, undone.text).toMatchObject({ success: true, op: 'undo' });
    const after = await current();
    expect(after).toContain('export const timeoutMs = 5000;\n');
    expect(after).toContain('export const retries = 4;\n');
    expect(after).toContain(`${THEIR_LINE[1]}\n`);
  });
});
