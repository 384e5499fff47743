/**
 * The stdio transport: one client, the process's stdin and stdout. When the
 * client closes its end, the server goes away with it.
 *
 * @module
 */

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createConnection } from './connection.ts';
import type { McpWorkspace } from './workspace.ts';

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
  const transport = new StdioServerTransport();
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
