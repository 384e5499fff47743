/**
 * `ctxfs serve`: the MCP server of `@ctxfs/mcp` on this command line's
 * backend, profile and store — stdio by default, Streamable HTTP with
 * `--http`. Stdout carries the protocol on stdio, so every message goes to
 * stderr; the command ends when the client hangs up or on SIGINT/SIGTERM.
 *
 * @module
 */

import type { ProfileInput } from '@ctxfs/context';
import { CliError, EXIT, type ExitCode } from '../exit-codes.ts';
import { note, outJson } from '../output.ts';
import type { Action } from '../program.ts';
import { backendOf } from '../workspace.ts';

function clientProfiles(entries: readonly string[]): Record<string, ProfileInput> {
  const out: Record<string, ProfileInput> = {};
  for (const entry of entries) {
    const eq = entry.lastIndexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw new CliError('EINVAL', `--client-profile ${entry}: expected <client>=<profile>`);
    out[entry.slice(0, eq)] = entry.slice(eq + 1) as ProfileInput;
  }
  return out;
}

/** `ctxfs serve [--http]`. */
export const serve: Action = async (g, _args, o) => {
  if (g.json && o.http !== true) throw new CliError('EINVAL', 'serve --json: stdout is the MCP protocol on stdio; --json goes with --http');
  const port = o.port as number;
  if (port < 0 || port > 65535) throw new CliError('EINVAL', `--port ${port}: expected 0-65535`);
  const spec = backendOf(g);
  const { McpWorkspace, describeBackend, serveHttp, serveStdio } = await import('@ctxfs/mcp');
  const workspace = McpWorkspace.open({
    backend: spec,
    ...(g.profile === undefined ? {} : { profile: g.profile }),
    clientProfiles: clientProfiles((o.clientProfile as string[] | undefined) ?? []),
    ...(g.store === undefined ? {} : { store: g.store }),
    readOnly: o.readOnly === true,
    ...(g.policyFiles ? {} : { policyFiles: false as const }),
  });
  return new Promise<ExitCode>((resolve, reject) => {
    const closers: Array<() => Promise<void>> = [];
    let stopping = false;
    const stop = async (): Promise<void> => {
      if (stopping) return;
      stopping = true;
      for (const close of closers) await close().catch(() => undefined);
      await workspace.close().catch(() => undefined);
      resolve(EXIT.ok);
    };
    // `on`, not `once`: a library's exit hook re-raises a signal when it finds itself the only listener left.
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
    const start = async (): Promise<void> => {
      if (o.http === true) {
        const http = await serveHttp(workspace, {
          host: o.host as string,
          port,
          token: o.token as string | undefined,
          allowedOrigins: (o.allowOrigin as string[] | undefined) ?? [],
        });
        closers.push(() => http.close());
        if (g.json) await outJson({ transport: 'http', url: http.url, backend: describeBackend(spec) });
        else await note(`serving ${describeBackend(spec)} at ${http.url}`);
      } else closers.push(await serveStdio(workspace, stop));
      workspace.ready({ start: false }).then(
        (ctx) => note(`${ctx.registry.size} files scanned`),
        (err: unknown) => note(`could not open ${describeBackend(spec)}: ${(err as Error).message}`),
      );
    };
    start().catch(reject);
  });
};
