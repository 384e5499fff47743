/**
 * The stdio transport: one client, the process's stdin and stdout. When the
 * client closes its end, the server goes away with it.
 *
 * A message is one line of JSON. The largest taken is as large as an HTTP
 * request body may be: a whole-file write up to the workspace's convenience
 * limit goes through either transport. A longer line is read to its end and
 * dropped, its request answered with an error that says the limit, and the
 * session goes on (the SDK's transport alone stops at 10 MiB and closes the
 * connection without a word).
 *
 * @module
 */

import { Transform, type TransformCallback } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createConnection } from './connection.ts';
import type { McpWorkspace } from './workspace.ts';

/** The largest message read from stdin, in bytes: HTTP's largest request body. */
export const MAX_STDIO_MESSAGE_BYTES = 32 * 1024 * 1024;

/** JSON-RPC's code for a request that is not a valid one. */
const INVALID_REQUEST = -32600;

/** How much of each end of a dropped line is kept to find its request's id. */
const KEPT = 512;

/** A JSON-RPC id as JSON writes it: a number or a string. */
const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** The id as the message's last member (`{…,"jsonrpc":"2.0","id":7}`: the TypeScript SDK's order). */
const ID_LAST = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);
/** The id as the message's first member, or after "jsonrpc" (`{"jsonrpc":"2.0","id":7,…}`). */
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);

/** The id of the request a line holds, from its two ends (undefined when neither shows one at the top level). */
function requestId(head: string, tail: string): string | number | undefined {
  const m = ID_LAST.exec(tail) ?? ID_FIRST.exec(head);
  return m?.[1] === undefined ? undefined : (JSON.parse(m[1]) as string | number);
}

/**
 * Passes stdin on line by line, each line whole; a line over `limit` bytes
 * is dropped and reported with its size and the ends it had.
 */
class BoundedLines extends Transform {
  readonly #limit: number;
  readonly #over: (size: number, head: string, tail: string) => void;
  #parts: Buffer[] = [];
  #size = 0;
  #dropping = false;
  #head: Buffer = Buffer.alloc(0);
  #tail: Buffer = Buffer.alloc(0);

  constructor(limit: number, over: (size: number, head: string, tail: string) => void) {
    super();
    this.#limit = limit;
    this.#over = over;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      this.#take(chunk.subarray(start, end));
      if (newline !== -1) this.#endLine();
      start = end;
    }
    done();
  }

  #take(piece: Buffer): void {
    this.#size += piece.length;
    if (this.#dropping) {
      this.#tail = lastBytes(Buffer.concat([this.#tail, piece]));
      return;
    }
    this.#parts.push(piece);
    if (this.#size <= this.#limit + 1) return; // + 1: the newline is not part of the message
    const line = Buffer.concat(this.#parts);
    this.#head = line.subarray(0, KEPT);
    this.#tail = lastBytes(line);
    this.#parts = [];
    this.#dropping = true;
  }

  #endLine(): void {
    if (this.#dropping) this.#over(this.#size, this.#head.toString('utf8'), this.#tail.toString('utf8'));
    else this.push(Buffer.concat(this.#parts));
    this.#parts = [];
    this.#size = 0;
    this.#dropping = false;
  }
}

function lastBytes(b: Buffer): Buffer {
  return b.length > KEPT ? b.subarray(b.length - KEPT) : b;
}

/**
 * Serves `workspace` to the client on stdin/stdout; `onClosed` runs when the
 * client hangs up. Returns what closes it.
 *
 * @example
 * ```ts
 * await serveStdio(McpWorkspace.open({ backend: { kind: 'host', root: process.cwd() } }), async () => process.exit(0));
 * ```
 */
export async function serveStdio(workspace: McpWorkspace, onClosed: () => Promise<void>): Promise<() => Promise<void>> {
  const limit = MAX_STDIO_MESSAGE_BYTES;
  const lines = new BoundedLines(limit, (size, head, tail) => {
    const id = requestId(head, tail);
    process.stderr.write(
      `ctxfs-mcp: a message of ${size} bytes on stdin is over the ${limit}-byte limit; it was dropped${id === undefined ? ' (no request id found to answer)' : `, request ${JSON.stringify(id)} answered with an error`}\n`,
    );
    if (id === undefined) return;
    const message = `the request is ${size} bytes, over the ${limit}-byte limit of a message; send a smaller request (a patch of fewer files, a file in parts)`;
    void transport.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } }).catch(() => {});
  });
  process.stdin.pipe(lines);
  // The transport sees whole lines of at most `limit` bytes (and the newline).
  const transport = new StdioServerTransport(lines, process.stdout, { maxBufferSize: limit + 2 });
  const server = createConnection(workspace);
  server.onclose = ((previous) => () => {
    previous?.();
    void onClosed();
  })(server.onclose);
  // stdin ending is the client going away even when it did not close the session first.
  process.stdin.once('end', () => void onClosed());
  await server.connect(transport);
  return () => server.close();
}
