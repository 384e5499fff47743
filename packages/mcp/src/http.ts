/**
 * The Streamable HTTP transport: one endpoint (`/mcp`), one MCP session per
 * client that initializes, bound to 127.0.0.1 unless told otherwise. A
 * browser page must not drive a local server, so a request with an Origin
 * that is not this server's own (or one allowed) is refused, and so is one
 * whose Host is not an address the server listens as (DNS rebinding). An
 * optional bearer token is required on every request.
 *
 * @module
 */

import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createConnection } from './connection.ts';
import type { McpWorkspace } from './workspace.ts';

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port (read it from the result). */
  readonly port?: number;
  /** Required as `Authorization: Bearer <token>` when set. */
  readonly token?: string;
  /** Origins allowed besides the server's own (`http://127.0.0.1:<port>`, `http://localhost:<port>`). */
  readonly allowedOrigins?: readonly string[];
  /** Largest request body; default 32 MiB (a whole-file write). */
  readonly maxBodyBytes?: number;
}

/** A running HTTP server. */
export interface HttpHandle {
  readonly url: string;
  readonly port: number;
  /** Open MCP sessions. */
  readonly sessions: number;
  close(): Promise<void>;
}

const ENDPOINT = '/mcp';

/** JSON-RPC's code for a body that is not JSON. */
const PARSE_ERROR = -32700;

function reject(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function readBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const over = (): void => {
      fail(new RangeError(`the request body is over ${limit} bytes; send a smaller request (a patch of fewer files, a file in parts)`));
      // Read on and drop the rest: a socket closed mid-upload would reach the client as a reset, not as the 413.
      req.removeAllListeners('data');
      req.removeAllListeners('end');
      req.resume();
    };
    if (Number(req.headers['content-length'] ?? 0) > limit) return over();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over();
      else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(size === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        fail(err);
      }
    });
    req.on('error', fail);
  });
}

/** Why `authorization` does not carry `token`, or `undefined` when it does. The scheme's name is case-insensitive (RFC 9110). */
function tokenRefusal(authorization: string | undefined, token: string): string | undefined {
  const m = authorization === undefined ? null : /^bearer[ \t]+(.*)$/is.exec(authorization.trim());
  if (m === null) return 'a bearer token is required (Authorization: Bearer <token>)';
  const a = Buffer.from(m[1] ?? '');
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b) ? undefined : 'the bearer token is not the one this server was started with';
}

/**
 * Serves `workspace` over Streamable HTTP.
 *
 * @example
 * ```ts
 * const http = await serveHttp(McpWorkspace.open({ backend: { kind: 'host', root: '/repo' } }), { port: 8765, token: process.env.CTXFS_TOKEN });
 * console.log(http.url); // http://127.0.0.1:8765/mcp
 * ```
 */
export async function serveHttp(workspace: McpWorkspace, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? '127.0.0.1';
  const limit = options.maxBodyBytes ?? 32 * 1024 * 1024;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let port = options.port ?? 0;
  const ownHosts = (): Set<string> => new Set([`${host}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const ownOrigins = (): Set<string> => new Set([...[...ownHosts()].map((h) => `http://${h}`), ...(options.allowedOrigins ?? [])]);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== ENDPOINT) return reject(res, 404, `ctxfs serves MCP at ${ENDPOINT}`);
    // Binding to 0.0.0.0 is a choice to be reachable by any name; otherwise only our own names are.
    if (host !== '0.0.0.0' && host !== '::' && !ownHosts().has(req.headers.host ?? ''))
      return reject(res, 403, `Host ${req.headers.host ?? '(none)'} is not this server`);
    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins().has(origin)) return reject(res, 403, `Origin ${origin} is not allowed`);
    const refused = options.token === undefined ? undefined : tokenRefusal(req.headers.authorization, options.token);
    if (refused !== undefined) {
      res.setHeader('www-authenticate', 'Bearer');
      return reject(res, 401, refused);
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = await readBody(req, limit);
      } catch (err) {
        if (err instanceof RangeError) return reject(res, 413, err.message);
        return reject(res, 400, `the body is not a JSON-RPC message: ${(err as Error).message}`, PARSE_ERROR);
      }
      if (existing !== undefined) return existing.handleRequest(req, res, body);
      if (sessionId !== undefined) return reject(res, 404, 'unknown or closed session; initialize a new one');
      if (!isInitializeRequest(body)) return reject(res, 400, 'the first request of a session is initialize');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
      };
      // A client over HTTP need not open the GET stream: the server's own requests go out within the client's calls.
      await createConnection(workspace, { serverRequests: 'within-calls' }).connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (existing === undefined) return reject(res, sessionId === undefined ? 400 : 404, 'a valid mcp-session-id header is required');
      return existing.handleRequest(req, res);
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    return reject(res, 405, `${req.method} is not supported`);
  };

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) reject(res, 500, (err as Error).message);
      else res.end();
    });
  });
  await new Promise<void>((resolve, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${ENDPOINT}`,
    port,
    get sessions() {
      return transports.size;
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
