/**
 * A server told to stop while a tool call is under way finishes the call
 * and answers it before it closes: a client must never be left with
 * "connection closed" and no way to know whether its edit applied. The call
 * is held deterministically by an approval the person answers only after
 * the signal was sent; a second signal closes at once.
 *
 * @module
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type Connected, call, connectStdio, startHttp } from './support/server.ts';
import { tempWorkspace } from './support/workspace.ts';

const ASK_FOR_WRITES = '[[policy.rules]]\neffect = "ask"\npaths = ["**"]\nops = ["write"]\nreason = "every change is reviewed"\n';
const ELICITATION = { elicitation: { form: {} } };
const FILES = { 'a.ts': 'export const retries = 3;\n', '.ctxfs/config.toml': ASK_FOR_WRITES };
const EDIT = { path: 'a.ts', old_text: 'retries = 3', new_text: 'retries = 4' };

/** An elicitation handler that sends the server `signal` when asked, then, `after` ms later, approves. */
function approveAfterSignal(kill: () => void, after: number, answered?: () => void) {
  return (client: Connected['client']): void => {
    client.setRequestHandler(ElicitRequestSchema, async (): Promise<ElicitResult> => {
      kill();
      await sleep(after);
      answered?.();
      return { action: 'accept', content: { approve: true } };
    });
  };
}

function exitOf(child: NodeJS.Process | import('node:child_process').ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code: number | null) => resolve(code)));
}

describe('stopping with a call under way', () => {
  it('over HTTP: SIGTERM while an edit waits for approval; the edit applies, the client gets its result, exit 0', async () => {
    const ws = tempWorkspace(FILES);
    const server = await startHttp(['--root', ws.root]);
    try {
      const exited = exitOf(server.child);
      const { client } = await server.connect({ capabilities: ELICITATION, before: approveAfterSignal(() => server.child.kill('SIGTERM'), 300) });
      const r = await call(client, 'replace', EDIT);
      expect(r.isError, r.text).toBe(false);
      expect(ws.read('a.ts')).toBe('export const retries = 4;\n');
      expect(await exited).toBe(0);
    } finally {
      await server.stop().catch(() => undefined);
      ws.remove();
    }
  });

  it('over stdio: the same, the result sent before the server goes', async () => {
    const ws = tempWorkspace(FILES);
    let pid: number | undefined;
    const c = await connectStdio(['--root', ws.root], {
      capabilities: ELICITATION,
      before: approveAfterSignal(() => process.kill(pid as number, 'SIGTERM'), 300),
    });
    try {
      pid = (c.client.transport as StdioClientTransport).pid ?? undefined;
      expect(pid).toBeTypeOf('number');
      const r = await call(c.client, 'replace', EDIT);
      expect(r.isError, r.text).toBe(false);
      expect(ws.read('a.ts')).toBe('export const retries = 4;\n');
    } finally {
      await c.close();
      ws.remove();
    }
  });

  it('a second signal closes at once, the call unanswered and the file as it was', async () => {
    const ws = tempWorkspace(FILES);
    const server = await startHttp(['--root', ws.root]);
    try {
      const exited = exitOf(server.child);
      const twice = () => {
        server.child.kill('SIGTERM');
        setTimeout(() => server.child.kill('SIGTERM'), 100);
      };
      let answered = false;
      const { client } = await server.connect({
        capabilities: ELICITATION,
        before: approveAfterSignal(twice, 3_000, () => {
          answered = true;
        }),
      });
      const edit = call(client, 'replace', EDIT).catch((err: unknown) => err);
      expect(await exited).toBe(0);
      // Gone before the person answered: the second signal did not wait for the call.
      expect(answered).toBe(false);
      // The SDK's HTTP client would wait to reconnect until its request timeout; closing it ends the call.
      await client.close();
      expect(await edit).toBeInstanceOf(Error);
      expect(ws.read('a.ts')).toBe('export const retries = 3;\n');
    } finally {
      await server.stop().catch(() => undefined);
      ws.remove();
    }
  });
});
