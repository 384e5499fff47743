/**
 * grep's count and files outputs on one file with more matching lines than
 * grep counts (10,000 past the page's start). The count was shown as exact
 * (`app.log: 10001` of 12,000), and the result claimed "at least 1 more
 * file" with a call to page on at offset 1, which, on one file, is past the
 * end: the model was sent to count the whole file again for nothing.
 *
 * @module
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallsIn } from './support/hints.ts';
import { type Connected, call, connectStdio } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const LOG = Array.from({ length: 12_000 }, (_, i) => `request ${i} ok`).join('\n');

let ws: TempWorkspace;
let c: Connected;

beforeAll(async () => {
  ws = tempWorkspace({ 'app.log': LOG, 'src/other.ts': 'export const ok = 1;\n' });
  c = await connectStdio(['--root', ws.root, '--profile', 'small']);
});
afterAll(async () => {
  await c?.close();
  ws?.remove();
});

describe('grep counting past its cap in one file', () => {
  it.each(['count', 'files'] as const)('%s: says the count is a lower bound, and offers no page of files that is not there', async (output) => {
    const r = await call(c.client, 'grep', { pattern: 'ok', path: 'app.log', output });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('at least 10,001 matching lines');
    if (output === 'count') expect(r.text).toContain('app.log: at least 10001');
    expect(r.text).not.toMatch(/more file/);
    for (const hint of toolCallsIn(r.text)) {
      const followed = await call(c.client, hint.name, hint.args);
      expect(followed.isError, hint.text).toBe(false);
      expect(followed.text, hint.text).not.toContain('past the');
    }
  });
});
