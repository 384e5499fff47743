/**
 * A Streamable HTTP client that only POSTs: it never opens the GET stream,
 * which MCP leaves to the client ("MAY"), so whatever the server sends for a
 * call must come on that call's own response stream. Raw fetch, since the
 * SDK client always opens the GET stream.
 *
 * @module
 */

import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

type Message = Record<string, unknown>;

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Answers a request the server sends on a call's stream (elicitation/create, …) with its result. */
export type RequestAnswerer = (request: Message) => Promise<Message>;

/**
 * The JSON-RPC messages of a response (an event stream or one JSON body), up
 * to the one with `id`; a request of the server among them is answered.
 */
async function messagesUntil(res: Response, id: number, answer: (request: Message) => Promise<void>): Promise<Message[]> {
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return [(await res.json()) as Message];
  const messages: Message[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body ?? []) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const data = buffered
        .slice(0, end)
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      buffered = buffered.slice(end + 2);
      if (data === '') continue;
      const message = JSON.parse(data) as Message;
      messages.push(message);
      if (message.id === id && message.method === undefined) return messages;
      if (message.method !== undefined && message.id !== undefined) await answer(message);
    }
  }
  return messages;
}

export class PostOnlyClient {
  readonly url: string;
  readonly session: string;

  private constructor(url: string, session: string) {
    this.url = url;
    this.session = session;
  }

  /** Initializes a session (and says it is initialized). */
  static async open(url: string, capabilities: ClientCapabilities): Promise<PostOnlyClient> {
    const init = await fetch(url, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'post-only', version: '1.0.0' } },
      }),
    });
    const session = init.headers.get('mcp-session-id');
    await init.body?.cancel();
    if (session === null) throw new Error(`initialize answered ${init.status} without a session`);
    const client = new PostOnlyClient(url, session);
    const initialized = await client.#post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
    return client;
  }

  #post(body: Message): Promise<Response> {
    return fetch(this.url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': this.session }, body: JSON.stringify(body) });
  }

  /**
   * Sends a request and returns every message of its response stream, the
   * response last; `answerer` answers the server's requests on that stream
   * (without one they go unanswered).
   */
  async call(id: number, method: string, params: Message, answerer?: RequestAnswerer): Promise<Message[]> {
    const answer = async (request: Message): Promise<void> => {
      if (answerer === undefined) return;
      const res = await this.#post({ jsonrpc: '2.0', id: request.id, result: await answerer(request) });
      await res.body?.cancel();
    };
    return messagesUntil(await this.#post({ jsonrpc: '2.0', id, method, params }), id, answer);
  }
}
