/**
 * How large a message the server takes on stdio. A whole-file write of a
 * file the workspace accepts (up to the 32 MiB convenience limit, as HTTP
 * takes a 32 MiB body) goes through; a larger message is answered with an
 * error that says the limit and what to do, and the session goes on. The
 * SDK's stdio transport alone stops at 10 MiB and closes the connection
 * without a word: the campaign's 13 MB write_file ended the session with
 * "Connection closed" and nothing on stderr.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, connectStdio } from './support/server.ts';
import { libDomPath, type TempWorkspace, tempWorkspace } from './support/workspace.ts';

let ws: TempWorkspace;
beforeAll(() => {
  ws = tempWorkspace();
});
afterAll(() => ws?.remove());

// TypeScript's DOM declarations, about 2.3 MB of real text: 6 copies are over the SDK's 10 MiB, 16 over 32 MiB.
const dom = readFileSync(libDomPath(), 'utf8');

describe('a large message on stdio', () => {
  it('writes a 13 MB file sent whole, and answers one over 32 MiB with the limit, the session still open', async () => {
    const c = await connectStdio(['--root', ws.root], { listTools: false });
    try {
      const content = dom.repeat(6);
      expect(Buffer.byteLength(content)).toBeGreaterThan(10 * 1024 * 1024);
      const written = await call(c.client, 'write_file', { path: 'big/dom6.d.ts', content });
      expect(written.isError, written.text).toBe(false);
      expect(ws.read('big/dom6.d.ts')).toBe(content);

      const refused = call(c.client, 'write_file', { path: 'big/dom16.d.ts', content: dom.repeat(16) });
      await expect(refused).rejects.toThrow(/over the 33554432-byte limit of a message.*send a smaller request/);
      expect(c.stderr.text).toMatch(/a message of \d+ bytes on stdin is over the 33554432-byte limit/);

      const after = await call(c.client, 'read_lines', { path: 'src/config.ts', start_line: 2, end_line: 2 });
      expect(after.isError, after.text).toBe(false);
      expect(after.text).toContain('2\texport const retries = 3;');
    } finally {
      await c.close();
    }
  }, 120_000);
});
