/**
 * A tool call names itself for its retries with `_meta["ctxfs/requestId"]`:
 * sent again with the same id (its answer lost to a dropped connection or a
 * timeout), an edit is not applied twice, over the SDK's own client and a
 * server process; the same call without an id applies again (the control).
 * An id that is not one is refused before anything runs.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID_META } from '../src/index.ts';
import { type Connected, connectStdio, textOf } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

describe('request ids over MCP', () => {
  let ws: TempWorkspace;
  let c: Connected;
  beforeAll(async () => {
    ws = tempWorkspace({ 'a.txt': 'one\ntwo\nthree\n' });
    c = await connectStdio(['--root', ws.root]);
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });
  const text = () => ws.read('a.txt');
  // A hunk that still applies after it applied once: a blind retry doubles the line.
  const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -2,1 +2,2 @@\n two\n+added\n';
  const send = async (meta?: Record<string, unknown>) => {
    const result = (await c.client.callTool({ name: 'apply_patch', arguments: { patch }, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
    return { result, text: textOf(result), data: result.structuredContent as Record<string, unknown> | undefined };
  };

  it('a retry with the same id is answered with the change made before and writes nothing', async () => {
    const id = randomUUID();
    const first = await send({ [REQUEST_ID_META]: id });
    expect(first.result.isError, first.text).toBeFalsy();
    expect(text()).toBe('one\ntwo\nadded\nthree\n');
    const retry = await send({ [REQUEST_ID_META]: id });
    expect(retry.result.isError, retry.text).toBeFalsy();
    expect(retry.text).toMatch(/Already applied: request "[0-9a-f-]+" changed a\.txt/);
    expect(retry.data).toMatchObject({ unchanged: true, version: first.data?.version });
    expect(text()).toBe('one\ntwo\nadded\nthree\n');
    // The control: without an id the same call applies again.
    const blind = await send();
    expect(blind.result.isError, blind.text).toBeFalsy();
    expect(text()).toBe('one\ntwo\nadded\nadded\nthree\n');
  });

  it('an id that is not a short string is refused with EINVAL naming the key, nothing run', async () => {
    for (const bad of ['', 42, 'a\nb', 'x'.repeat(201)]) {
      const r = await send({ [REQUEST_ID_META]: bad });
      expect(r.result.isError).toBe(true);
      expect(r.text).toMatch(/^EINVAL: _meta\["ctxfs\/requestId"\] must be a string of 1 to 200 characters/);
    }
    expect(text()).toBe('one\ntwo\nadded\nadded\nthree\n');
  });
});
