/**
 * Approvals through MCP elicitation. The workspace's .ctxfs/config.toml says
 * every write asks a person; the server asks the client whose call it is
 * (elicitation, with the diff), and applies the change only on an explicit
 * yes. Decline, cancel, a "no" in the form and silence past the policy's
 * timeout all refuse it and leave the file as it was; a client that cannot
 * elicit is refused with how to allow the change.
 *
 * @module
 */

import { type ElicitRequest, ElicitRequestSchema, type ElicitResult, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostOnlyClient } from './support/post-only.ts';
import { type Connected, call, connectStdio, type HttpServer, startHttp } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const FILE = 'src/config.ts';
const ASK_FOR_WRITES = '[[policy.rules]]\neffect = "ask"\npaths = ["**"]\nops = ["write"]\nreason = "every change is reviewed"\n';
const ELICITATION = { elicitation: { form: {} } };

/** A client's elicitation handler whose answer each test sets, keeping every question it was asked. */
class Person {
  readonly asked: ElicitRequest['params'][] = [];
  /** Signals of the questions asked: aborted when the server withdraws one. */
  readonly signals: AbortSignal[] = [];
  answer: () => Promise<ElicitResult> = () => Promise.resolve({ action: 'cancel' });

  listen(client: Connected['client']): void {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      this.asked.push(request.params);
      this.signals.push(extra.signal);
      return this.answer();
    });
  }
}

/** Sets `retries` in src/config.ts, whatever it is now. */
function changeRetries(c: Connected, to: number) {
  return call(c.client, 'replace', { path: FILE, old_text: 'export const retries = \\d+;', new_text: `export const retries = ${to};`, regex: true });
}

describe('approval through elicitation', () => {
  let ws: TempWorkspace;
  let server: HttpServer;
  const person = new Person();
  let asking: Connected;
  let plain: Connected;
  let original: string;
  /** The refusal of the client that cannot elicit, kept for the check of its wording. */
  let unasked = '';

  beforeAll(async () => {
    ws = tempWorkspace();
    ws.write('.ctxfs/config.toml', ASK_FOR_WRITES);
    original = ws.read(FILE);
    server = await startHttp(['--root', ws.root]);
    asking = await server.connect({ name: 'reviewed-agent', capabilities: ELICITATION, before: (c) => person.listen(c) });
    plain = await server.connect({ name: 'plain-agent' });
  });
  afterAll(async () => {
    await server?.stop();
    ws?.remove();
  });

  it('asks with the diff and applies the change when the person accepts', async () => {
    person.answer = () => Promise.resolve({ action: 'accept', content: { approve: true } });
    const r = await call(asking.client, 'replace', { path: FILE, old_text: 'export const retries = 3;', new_text: 'export const retries = 4;' });
    expect(r.isError, r.text).toBe(false);
    expect(ws.read(FILE)).toContain('export const retries = 4;');
    expect(person.asked).toHaveLength(1);
    const question = person.asked[0];
    expect(question?.message).toContain('mcp:reviewed-agent asks to replace src/config.ts');
    expect(question?.message).toContain('every change is reviewed');
    expect(question?.message).toContain('-export const retries = 3;');
    expect(question?.message).toContain('+export const retries = 4;');
    expect(question).toMatchObject({ mode: 'form', requestedSchema: { required: ['approve'] } });
  });

  it.each([
    { answer: { action: 'decline' } as ElicitResult, says: 'declined by the user' },
    { answer: { action: 'cancel' } as ElicitResult, says: 'dismissed' },
    { answer: { action: 'accept', content: { approve: false, note: 'not this release' } } as ElicitResult, says: 'not this release' },
  ])('refuses the change when the person answers $answer.action without approving, leaving the file', async ({ answer, says }) => {
    const before = ws.read(FILE);
    const asked = person.asked.length;
    person.answer = () => Promise.resolve(answer);
    const r = await call(asking.client, 'replace', { path: FILE, old_text: 'export const retries = 4;', new_text: 'export const retries = 9;' });
    expect(r.isError).toBe(true);
    expect(r.data).toMatchObject({ success: false, code: 'EDENIED' });
    expect(r.text).toContain(says);
    expect(person.asked).toHaveLength(asked + 1);
    expect(ws.read(FILE)).toBe(before);
  });

  it('refuses a client that cannot elicit, saying how to allow the change, and asks no one else', async () => {
    const before = ws.read(FILE);
    const asked = person.asked.length;
    const r = await changeRetries(plain, 7);
    expect(r.isError).toBe(true);
    expect(r.data).toMatchObject({ success: false, code: 'EDENIED' });
    expect(r.text).toContain('does not support elicitation');
    expect(r.text).toContain('effect = "allow"');
    expect(r.text).toContain('.ctxfs/config.toml');
    // The question was not sent to the other client, which could have answered it.
    expect(person.asked).toHaveLength(asked);
    expect(ws.read(FILE)).toBe(before);
    expect(ws.read(FILE)).not.toBe(original);
    unasked = r.text;
  });

  // Nobody was asked: the refusal is the policy's, not a person's (so is the audit record).
  it('does not say a person declined when no one was asked', () => {
    expect(unasked).toContain('does not support elicitation');
    expect(unasked).not.toContain('the user declined');
  });

  it('refuses a client that elicits only by URL (no forms) the same way, since it cannot be shown the diff', async () => {
    const urlOnly = await server.connect({ name: 'url-only-agent', capabilities: { elicitation: { url: {} } } });
    const r = await changeRetries(urlOnly, 7);
    expect(r.data).toMatchObject({ success: false, code: 'EDENIED' });
    expect(r.text).toContain('does not support elicitation');
    expect(r.text).toContain('effect = "allow"');
  });

  it('lets reads through without asking', async () => {
    const asked = person.asked.length;
    expect((await call(plain.client, 'read_lines', { path: FILE, start_line: 2, end_line: 2 })).text).toContain('export const retries = 4;');
    expect(person.asked).toHaveLength(asked);
  });
});

describe('approval timeout', () => {
  let ws: TempWorkspace;
  let c: Connected;
  const person = new Person();

  beforeAll(async () => {
    ws = tempWorkspace();
    ws.write('.ctxfs/config.toml', `[policy]\napproval_timeout_seconds = 1\n\n${ASK_FOR_WRITES}`);
    c = await connectStdio(['--root', ws.root], {
      name: 'unattended-agent',
      // Elicitation declared as before the spec had modes (2025-06-18): a bare object, which means forms.
      // Roots too, so that the server's first request is roots/list (id 0), not the question: the SDK client
      // ignores the withdrawal of a request whose id is 0 (Protocol._oncancel tests the id for truthiness;
      // typescript-sdk issue #2283).
      capabilities: { elicitation: {}, roots: {} },
      before: (client) => {
        person.listen(client);
        client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
      },
    });
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });

  it('refuses the change when no one answers in time, withdraws the question and leaves the file', async () => {
    const before = ws.read(FILE);
    // Nobody at the keyboard: the question is never answered.
    person.answer = () => new Promise<ElicitResult>(() => undefined);
    const r = await changeRetries(c, 8);
    expect(r.isError).toBe(true);
    expect(r.data).toMatchObject({ success: false, code: 'EDENIED' });
    expect(r.text).toContain('no one approved it in time');
    expect(r.text).toContain('no answer within 1 s');
    expect(person.asked).toHaveLength(1);
    expect(person.asked[0]?.message).toContain('+export const retries = 8;');
    // The server withdrew the question it gave up on (notifications/cancelled).
    expect(person.signals[0]?.aborted).toBe(true);
    expect(ws.read(FILE)).toBe(before);
  });
});

describe('approval asked of a client that only POSTs', () => {
  let ws: TempWorkspace;
  let server: HttpServer;
  let client: PostOnlyClient;

  beforeAll(async () => {
    ws = tempWorkspace();
    ws.write('.ctxfs/config.toml', `[policy]\napproval_timeout_seconds = 5\n\n${ASK_FOR_WRITES}`);
    server = await startHttp(['--root', ws.root]);
    client = await PostOnlyClient.open(server.url, ELICITATION);
  });
  afterAll(async () => {
    await server?.stop();
    ws?.remove();
  });

  // MCP leaves the GET stream to the client: the question about a call's change comes on the call's own stream.
  it("asks on the call's own response stream, and applies the change approved there", async () => {
    const args = { path: FILE, old_text: 'export const retries = 3;', new_text: 'export const retries = 2;' };
    const messages = await client.call(2, 'tools/call', { name: 'replace', arguments: args }, async (request) => {
      expect(request.method).toBe('elicitation/create');
      return { action: 'accept', content: { approve: true } };
    });
    expect(messages.map((m) => m.method)).toContain('elicitation/create');
    expect(messages.at(-1)).toMatchObject({ id: 2, result: { isError: false } });
    expect(ws.read(FILE)).toContain('export const retries = 2;');
  });
});

describe('without policy files', () => {
  let ws: TempWorkspace;
  let c: Connected;

  beforeAll(async () => {
    ws = tempWorkspace();
    ws.write('.ctxfs/config.toml', ASK_FOR_WRITES);
    c = await connectStdio(['--root', ws.root, '--no-policy-files'], { name: 'trusted-agent' });
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });

  it('ignores the workspace config that would ask, and applies the change (the defaults allow it)', async () => {
    const r = await changeRetries(c, 11);
    expect(r.isError, r.text).toBe(false);
    expect(ws.read(FILE)).toContain('export const retries = 11;');
  });
});
