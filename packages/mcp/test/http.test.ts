/**
 * Streamable HTTP safety, against the real server process: it listens on
 * 127.0.0.1 only; a request from a foreign web page (Origin) or for another
 * host name (DNS rebinding) is refused with 403; with a token configured, a
 * request without it or with a wrong one gets 401, and the SDK client with
 * the right one works.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type HttpServer, startHttp } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const TOKEN = 'test-token-5f1c';
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-http', version: '1.0.0' } },
});

/** One raw POST (node:http, so that Host can be anything), answered with its status, headers and body. */
function post(url: string, headers: Record<string, string>, body = INITIALIZE): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        // An accepted initialize answers on an event stream that stays open: the status is all a test needs of it.
        if ((res.statusCode ?? 0) < 300) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
        } else res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The addresses a TCP port is listened on, from the kernel's own tables (hex "0100007F" is 127.0.0.1). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const row of text.split('\n').slice(1)) {
      const [, local, , state] = row.trim().split(/\s+/);
      // State 0A is LISTEN.
      if (state === '0A' && local?.endsWith(`:${hexPort}`)) found.push(local.slice(0, -5));
    }
  }
  return found;
}

describe('Streamable HTTP safety', () => {
  let ws: TempWorkspace;
  let server: HttpServer;
  let port: number;

  beforeAll(async () => {
    ws = tempWorkspace();
    server = await startHttp(['--root', ws.root, '--token', TOKEN, '--allow-origin', 'https://ide.example']);
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    await server?.stop();
    ws?.remove();
  });

  it('listens on 127.0.0.1 only, by default', () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    expect(new URL(server.url).pathname).toBe('/mcp');
    expect(listeners(port)).toEqual(['0100007F']);
  });

  it('refuses a request without the token, or with a wrong one, with 401', async () => {
    const none = await post(server.url, {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.body).toContain('a bearer token is required');
    const wrong = await post(server.url, { authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('the bearer token is not the one this server was started with');
    expect((await post(server.url, { authorization: TOKEN })).status).toBe(401);
    // The scheme's name is case-insensitive (RFC 9110); the token is not.
    expect((await post(server.url, { authorization: `bearer ${TOKEN}` })).status).toBe(200);
    expect((await post(server.url, { authorization: `BEARER ${TOKEN}` })).status).toBe(200);
    expect((await post(server.url, { authorization: `Bearer ${TOKEN.toUpperCase()}x` })).status).toBe(401);
  });

  it('answers a body over its limit with 413 and the limit, and a body that is not JSON with a parse error', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const huge = await post(server.url, auth, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(33 * 1024 * 1024)}"}}`);
    expect(huge.status).toBe(413);
    expect(huge.body).toMatch(/the request body is over 33554432 bytes/);
    const broken = await post(server.url, auth, '{"jsonrpc": "2.0", ');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body).error.code).toBe(-32700);
    // The server goes on serving.
    expect((await post(server.url, auth)).status).toBe(200);
  });

  it('serves the SDK client that sends the token', async () => {
    const c = await server.connect({ headers: { authorization: `Bearer ${TOKEN}` } });
    const r = await call(c.client, 'read_lines', { path: 'README.md', start_line: 1 });
    expect(r.text).toContain('# Demo service');
    await c.close();
    // And the SDK client without it cannot even initialize.
    await expect(server.connect()).rejects.toThrow(/a bearer token is required/);
  });

  it('refuses a foreign Origin with 403, even with the token, and accepts its own and allowed ones', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const foreign = await post(server.url, { ...auth, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain('Origin https://evil.example is not allowed');
    expect((await post(server.url, { ...auth, origin: `http://localhost:${port + 1}` })).status).toBe(403);
    expect((await post(server.url, { ...auth, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await post(server.url, { ...auth, origin: 'https://ide.example' })).status).toBe(200);
  });

  it('refuses a request for another host name (DNS rebinding) with 403', async () => {
    const rebound = await post(server.url, { authorization: `Bearer ${TOKEN}`, host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain(`Host attacker.example:${port} is not this server`);
    expect((await post(server.url, { authorization: `Bearer ${TOKEN}`, host: `localhost:${port}` })).status).toBe(200);
  });

  it('takes the token from CTXFS_MCP_TOKEN when no --token is given', async () => {
    const fromEnv = await startHttp(['--root', ws.root], { CTXFS_MCP_TOKEN: 'from-the-environment' });
    try {
      expect((await post(fromEnv.url, {})).status).toBe(401);
      expect((await post(fromEnv.url, { authorization: 'Bearer from-the-environment' })).status).toBe(200);
    } finally {
      await fromEnv.stop();
    }
  });
});

describe('shutdown', () => {
  it('closes cleanly, exit 0, on SIGTERM and on SIGINT, with clients connected', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const ws = tempWorkspace({ 'a.ts': 'export const a = 1;\n' });
      const server = await startHttp(['--root', ws.root, '--no-policy-files']);
      const { client } = await server.connect();
      expect((await call(client, 'read_lines', { path: 'a.ts', start_line: 1 })).isError).toBeFalsy();
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill(signal);
      // A once-listener left proper-lockfile's exit hook to re-raise the signal: the process died with 143 or 130.
      expect(await exited).toBe(0);
      ws.remove();
    }
  });
});
