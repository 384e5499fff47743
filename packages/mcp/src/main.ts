/**
 * `ctxfs-mcp`, started by bin.ts once the Node version is checked: serves
 * a workspace over MCP, on stdio (the default) or Streamable HTTP
 * (`--http`). Stdout carries the protocol, so everything
 * else goes to stderr.
 *
 * @module
 */

import { parseArgs } from 'node:util';
import type { ProfileInput } from '@ctxfs/context';
import { parseBackend } from './backend.ts';
import { SERVER_INFO } from './connection.ts';
import { parseClientProfiles, runServer } from './run-server.ts';
import { McpWorkspace } from './workspace.ts';

const USAGE = `Usage: ctxfs-mcp [--root <dir>] [options]

Serves a workspace to MCP clients: every ctxfs tool, the overview and files
as resources, approvals through the client.

  --root <dir>              the workspace directory (host backend; the seed of memory);
                            without it, the client's first root (or the current directory)
  --backend <kind>          host (default) | memory | docker:<container> | image:<ref>
  --workdir <path>          the workspace inside a container (default /work)
  --profile <name>          small | medium | large: budgets of every client (default: [mcp] profile
                            in the config files, else medium)...
  --client-profile <c=p>    ...except clients named c (as they say in initialize; * matches any text), e.g. 'ollama*=small'; repeatable
  --state <location>        where the state lives: a SQLite file (default beside the workspace, or in
                            memory) or a postgres:// URL many hosts share (default $CTXFS_STATE; --store: former name)
  --read-only               offer only the tools that read
  --no-policy-files         ignore .ctxfs/config.toml and the user's config
  --http                    serve Streamable HTTP instead of stdio
  --host <addr>             HTTP address (default 127.0.0.1)
  --port <n>                HTTP port (default 8765; 0 for any free port)
  --token <t>               require Authorization: Bearer <t> (default $CTXFS_MCP_TOKEN)
  --allow-origin <o>        an Origin allowed besides the server's own; repeatable
  -h, --help | -v, --version
`;

function fail(message: string): never {
  process.stderr.write(`ctxfs-mcp: ${message}\n\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      options: {
        root: { type: 'string' },
        backend: { type: 'string' },
        workdir: { type: 'string' },
        profile: { type: 'string' },
        'client-profile': { type: 'string', multiple: true },
        state: { type: 'string' },
        store: { type: 'string' },
        'read-only': { type: 'boolean' },
        'no-policy-files': { type: 'boolean' },
        http: { type: 'boolean' },
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    });
  }
  try {
    parsed = parse();
  } catch (err) {
    fail((err as Error).message);
  }
  const o = parsed.values;
  if (o.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (o.version) {
    process.stdout.write(`${SERVER_INFO.version}\n`);
    return;
  }
  let backend: ReturnType<typeof parseBackend>;
  try {
    backend = parseBackend(o.backend, o.root, o.workdir);
  } catch (err) {
    fail((err as Error).message);
  }
  let clientProfiles: Record<string, ProfileInput>;
  try {
    clientProfiles = parseClientProfiles(o['client-profile'] ?? []);
  } catch (err) {
    fail((err as Error).message);
  }
  let http: { host: string | undefined; port: number; token: string | undefined; allowedOrigins: string[] } | undefined;
  if (o.http) {
    const port = o.port === undefined ? 8765 : Number(o.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port ${o.port}: expected 0-65535`);
    http = { host: o.host, port, token: o.token ?? process.env.CTXFS_MCP_TOKEN, allowedOrigins: o['allow-origin'] ?? [] };
  }
  const workspace = McpWorkspace.open({
    backend,
    profile: o.profile as ProfileInput | undefined,
    clientProfiles,
    store: o.state ?? o.store ?? process.env.CTXFS_STATE,
    readOnly: o['read-only'] ?? false,
    ...(o['no-policy-files'] ? { policyFiles: false as const } : {}),
  });
  const server = await runServer(workspace, { http, log: (message) => process.stderr.write(`ctxfs-mcp: ${message}\n`) });
  await server.stopped;
  process.exit(0);
}

await main();
