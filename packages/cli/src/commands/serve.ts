/**
 * `ctxfs serve`: the MCP server of `@ctxfs/mcp` on this command line's
 * backend, profile and store — stdio by default, Streamable HTTP with
 * `--http`. Stdout carries the protocol on stdio, so every message goes to
 * stderr; the command ends when the client hangs up or on SIGINT/SIGTERM.
 *
 * @module
 */

import { CliError, EXIT } from '../exit-codes.ts';
import { stateOf } from '../options.ts';
import { note, outJson } from '../output.ts';
import type { Action } from '../program.ts';
import { backendOf } from '../workspace.ts';

/** `ctxfs serve [--http]`. */
export const serve: Action = async (g, _args, o) => {
  if (g.json && o.http !== true) throw new CliError('EINVAL', 'serve --json: stdout is the MCP protocol on stdio; --json goes with --http');
  const port = o.port as number;
  if (port < 0 || port > 65535) throw new CliError('EINVAL', `--port ${port}: expected 0-65535`);
  const spec = backendOf(g);
  const { McpWorkspace, describeBackend, parseClientProfiles, runServer } = await import('@ctxfs/mcp');
  let clientProfiles: ReturnType<typeof parseClientProfiles>;
  try {
    clientProfiles = parseClientProfiles((o.clientProfile as string[] | undefined) ?? []);
  } catch (err) {
    throw new CliError('EINVAL', (err as Error).message);
  }
  const workspace = McpWorkspace.open({
    backend: spec,
    ...(g.profile === undefined ? {} : { profile: g.profile }),
    clientProfiles,
    ...(stateOf(g) === undefined ? {} : { store: stateOf(g) as string }),
    readOnly: o.readOnly === true,
    ...(g.policyFiles ? {} : { policyFiles: false as const }),
  });
  const http =
    o.http === true
      ? { host: o.host as string, port, token: o.token as string | undefined, allowedOrigins: (o.allowOrigin as string[] | undefined) ?? [] }
      : undefined;
  // With --json the address is the one line on stdout; the rest are notes on stderr.
  const server = await runServer(workspace, { http, log: (message) => void (g.json && message.startsWith('serving ') ? undefined : note(message)) });
  if (g.json && server.url !== undefined) await outJson({ transport: 'http', url: server.url, backend: describeBackend(spec) });
  await server.stopped;
  return EXIT.ok;
};
