/**
 * The real server, the real clients: `ctxfs-mcp` (src/bin.ts) as a child
 * process, over stdio (the SDK's StdioClientTransport spawns it) or
 * Streamable HTTP (spawned here, its address read from what it prints), and
 * the official SDK's `Client` on the other end.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, ClientCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/** The server's entry point, run from its TypeScript source. */
export const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
/** How a test runs the bin: this Node, resolving workspace packages to their sources. */
export const NODE_ARGS = ['--conditions=ctxfs-source', BIN];

/**
 * The environment of a spawned server: this one's, with the user's ctxfs
 * config directory pointed where there is none and no token from the shell,
 * so a developer's own ~/.config/ctxfs/config.toml or CTXFS_MCP_TOKEN cannot
 * change what a test sees. (The server only reads that directory.)
 */
const configHome = join(tmpdir(), `ctxfs-mcp-test-no-config-${process.pid}`);
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'CTXFS_MCP_TOKEN') env[k] = v;
  return { ...env, XDG_CONFIG_HOME: configHome, ...extra };
}

/**
 * The SDK's own validator (Ajv), counting what it validates: the tests check
 * that the client really validated a result's structured content against the
 * tool's output schema, not only that the content is there.
 */
export class CountingValidator implements jsonSchemaValidator {
  readonly #ajv = new AjvJsonSchemaValidator();
  /** Every value validated, with the verdict, in order. */
  readonly validated: Array<{ schema: JsonSchemaType; input: unknown; valid: boolean }> = [];

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = this.#ajv.getValidator<T>(schema);
    return (input) => {
      const result = check(input);
      this.validated.push({ schema, input, valid: result.valid });
      return result;
    };
  }
}

/** What a test client is. */
export interface ClientOptions {
  /** The name it gives in `initialize` (profiles are chosen by it). */
  readonly name?: string;
  readonly capabilities?: ClientCapabilities;
}

/** A connected SDK client and what the tests look at besides it. */
export interface Connected {
  readonly client: Client;
  readonly validator: CountingValidator;
  /** The tools as listed (listing them is also what makes the client validate results). */
  readonly tools: Tool[];
  close(): Promise<void>;
}

function newClient(options: ClientOptions): { client: Client; validator: CountingValidator } {
  const validator = new CountingValidator();
  const client = new Client(
    { name: options.name ?? 'ctxfs-test', version: '1.0.0' },
    { capabilities: options.capabilities ?? {}, jsonSchemaValidator: validator },
  );
  return { client, validator };
}

/** Server output kept for failure messages. */
export class Output {
  text = '';
  append(chunk: Buffer | string): void {
    this.text += chunk.toString();
  }
}

/** Lists the tools, which the SDK client needs to validate structured results. */
async function listed(client: Client): Promise<Tool[]> {
  return (await client.listTools()).tools;
}

/**
 * Spawns a server on stdio and connects a client to it. `before` runs after
 * the client is made and before it connects (to set request handlers).
 */
export async function connectStdio(
  args: readonly string[],
  options: ClientOptions & { env?: Record<string, string>; before?: (client: Client) => void; listTools?: boolean } = {},
): Promise<Connected & { stderr: Output }> {
  const { client, validator } = newClient(options);
  const transport = new StdioClientTransport({ command: process.execPath, args: [...NODE_ARGS, ...args], env: serverEnv(options.env), stderr: 'pipe' });
  const stderr = new Output();
  transport.stderr?.on('data', (c: Buffer) => stderr.append(c));
  options.before?.(client);
  await client.connect(transport);
  // Not listing saves a round trip, for a test whose first call must come as early as it can.
  const tools = options.listTools === false ? [] : await listed(client);
  return { client, validator, tools, stderr, close: () => client.close() };
}

/** A server process serving Streamable HTTP. */
export interface HttpServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly stderr: Output;
  /** Connects one more client. */
  connect(options?: ClientOptions & { headers?: Record<string, string>; before?: (client: Client) => void }): Promise<Connected>;
  stop(): Promise<void>;
}

/** Spawns `ctxfs-mcp --http --port 0 …` and waits for the address it prints. */
export async function startHttp(args: readonly string[], env: Record<string, string> = {}): Promise<HttpServer> {
  const child = spawn(process.execPath, [...NODE_ARGS, '--http', '--port', '0', ...args], { env: serverEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr = new Output();
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      stderr.append(c);
      const m = /serving .* at (http:\/\/\S+)/.exec(stderr.text);
      if (m?.[1] !== undefined) {
        child.stderr?.off('data', onData);
        child.stderr?.on('data', (more: Buffer) => stderr.append(more));
        resolve(m[1]);
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`ctxfs-mcp exited (${code}) before serving:\n${stderr.text}`)));
  });
  const clients: Connected[] = [];
  return {
    url,
    child,
    stderr,
    async connect(options = {}) {
      const { client, validator } = newClient(options);
      options.before?.(client);
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: options.headers ?? {} } }));
      const connected: Connected = { client, validator, tools: await listed(client), close: () => client.close() };
      clients.push(connected);
      return connected;
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export type TransportKind = 'stdio' | 'http';

/**
 * One client of a server of its own, over either transport: stdio spawns the
 * server for the client; HTTP spawns it and connects over the network.
 */
export async function serveOne(transport: TransportKind, args: readonly string[], options: ClientOptions = {}): Promise<Connected & { stderr: Output }> {
  if (transport === 'stdio') return connectStdio(args, options);
  const server = await startHttp(args);
  const connected = await server.connect(options);
  return { ...connected, stderr: server.stderr, close: () => server.stop() };
}

/** The text of a tool result's content (its text blocks joined). */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** Calls a tool and returns the result with its text and structured content typed loosely for assertions. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ result: CallToolResult; text: string; data: Record<string, unknown> | undefined; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { result, text: textOf(result), data: result.structuredContent, isError: result.isError === true };
}

/** A file's whole text read through the server (memory has no disk to look at): its numbered lines, unnumbered. */
export async function readWhole(c: Connected, path: string): Promise<string> {
  const r = await call(c.client, 'read_lines', { path, start_line: 1, end_line: 1000 });
  if (r.isError) throw new Error(r.text);
  const lines = [...r.text.matchAll(/^\d+\t(.*)$/gm)].map((m) => m[1]);
  return `${lines.join('\n')}\n`;
}
