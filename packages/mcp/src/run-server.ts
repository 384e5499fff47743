/**
 * Running the server as a program does: one transport (stdio, or
 * Streamable HTTP), closed with the workspace on SIGINT/SIGTERM or when the
 * stdio client hangs up, and the workspace's first scan reported once it is
 * done. `ctxfs-mcp` and `ctxfs serve` are both this, with their own
 * argument parsing and messages.
 *
 * @module
 */

import type { ProfileInput } from '@ctxfs/context';
import type { HttpOptions } from './http.ts';
import { serveStdio } from './stdio.ts';
import type { McpWorkspace } from './workspace.ts';

/** How long a stop waits for the tool calls under way to be answered. */
const SETTLE_MS = 10_000;

/** Options of {@link runServer}. */
export interface RunServerOptions {
  /** Serve Streamable HTTP with these options; stdio when absent. */
  readonly http?: HttpOptions | undefined;
  /** Where the server's few messages go (stderr, for a program: stdout may be the protocol). */
  readonly log: (message: string) => void;
}

/** A running server. */
export interface RunningServer {
  /** The HTTP endpoint, when serving HTTP. */
  readonly url: string | undefined;
  /** Settles once the server and the workspace are closed. */
  readonly stopped: Promise<void>;
  /** Closes the transport, then the workspace. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Serves `workspace` until a signal, a hang-up or `stop()`.
 *
 * @example
 * ```ts
 * const server = await runServer(McpWorkspace.open({ backend: { kind: 'host', root: '/repo' } }), {
 *   log: (m) => process.stderr.write(`${m}\n`),
 * });
 * await server.stopped;
 * ```
 */
export async function runServer(workspace: McpWorkspace, options: RunServerOptions): Promise<RunningServer> {
  const closers: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const stop = (): Promise<void> => {
    // Begun a microtask later, once `stopping` is set: closing the transport calls stop() again from
    // within, and that call must join this one, not start a second that ends the process first.
    stopping ??= Promise.resolve().then(async () => {
      // Calls under way are finished and answered first (an approval still being asked included), within a
      // bound; a second signal closes at once.
      const settled = await Promise.race([workspace.settled(SETTLE_MS), hurried]);
      if (!settled) options.log('closing with tool calls still running');
      for (const close of closers) await close().catch(() => undefined);
      await workspace.close().catch(() => undefined);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stopped();
    });
    return stopping;
  };
  let hurry!: () => void;
  const hurried = new Promise<false>((resolve) => {
    hurry = () => resolve(false);
  });
  const onSignal = (): void => {
    if (stopping !== undefined) hurry();
    void stop();
  };
  // `on`, not `once`: a library's exit hook (proper-lockfile's signal-exit) re-raises a signal
  // when it finds no listener left, which would kill the process before it closed.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let url: string | undefined;
  if (options.http !== undefined) {
    const { serveHttp } = await import('./http.ts');
    const http = await serveHttp(workspace, options.http);
    closers.push(() => http.close());
    url = http.url;
    options.log(`serving ${workspace.description} at ${http.url}`);
  } else closers.push(await serveStdio(workspace, stop));
  workspace.ready({ start: false }).then(
    (ctx) => options.log(`${ctx.registry.size} ${ctx.registry.size === 1 ? 'file' : 'files'} scanned`),
    (err: unknown) => options.log(`could not open ${workspace.description}: ${(err as Error).message}`),
  );
  return { url, stopped: done, stop };
}

/**
 * Reads `client=profile` arguments (`--client-profile 'ollama*=small'`).
 * Throws a `RangeError` naming the entry that is not of that form.
 *
 * @example
 * ```ts
 * parseClientProfiles(['ollama*=small', 'claude-code=large']); // { 'ollama*': 'small', 'claude-code': 'large' }
 * ```
 */
export function parseClientProfiles(entries: readonly string[]): Record<string, ProfileInput> {
  const out: Record<string, ProfileInput> = {};
  for (const entry of entries) {
    const eq = entry.lastIndexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw new RangeError(`--client-profile ${entry}: expected <client>=<profile>`);
    out[entry.slice(0, eq)] = entry.slice(eq + 1) as ProfileInput;
  }
  return out;
}
