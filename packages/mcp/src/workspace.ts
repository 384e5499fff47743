/**
 * The workspace one server process serves, shared by every client that
 * connects: the backend, the context layer over it, the scan that builds the
 * registry in the background (so the first answer never waits for it), the
 * approver that routes a question to the client whose call asked it, and who
 * subscribed to which file.
 *
 * @module
 */

import type { Approver, ContextLayer, PolicyConfig, ProfileInput, ScanProgress, ScanResult } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { type BackendSpec, describeBackend, openBackend } from './backend.ts';
import { loadMcpConfig } from './config-file.ts';
import { RoutingApprover } from './elicitation.ts';
import { profileFor } from './profiles.ts';

/** Options of an MCP server. */
export interface McpServerOptions {
  /** What to serve. */
  readonly backend: BackendSpec;
  /** The model profile of a client without an entry in `clientProfiles`; default the config files' `[mcp] profile`, else `medium`. */
  readonly profile?: ProfileInput;
  /**
   * Profiles by the client's name as it introduces itself in `initialize`
   * (case-insensitive; `*` matches any run of characters), e.g.
   * `{ 'ollama*': 'small', 'claude-code': 'large' }`. Checked before the
   * config files' `[mcp.client_profiles]`.
   */
  readonly clientProfiles?: Readonly<Record<string, ProfileInput>>;
  /** The state database; default beside a host workspace, in memory otherwise. */
  readonly store?: string;
  /** Policy given in code, over the policy files (see POLICY.md). */
  readonly policy?: PolicyConfig;
  /** `false`: read no config files, neither the policy nor `[mcp]` (tests, embedding). */
  readonly policyFiles?: false;
  /** Asks when the policy says "ask" and the client cannot (no elicitation); without one such a change is denied. */
  readonly fallbackApprover?: Approver;
  /** Offer only the tools that read. */
  readonly readOnly?: boolean;
}

type Listener = (p: ScanProgress) => void;

/** How long the workspace waits for a first call before it loads and scans anyway. */
const START_DELAY_MS = 150;

/**
 * The served workspace. `open` returns at once; the backend, the context
 * layer and the first scan come up in the background, and `ready()` waits
 * for them.
 *
 * @example
 * ```ts
 * const ws = McpWorkspace.open({ backend: { kind: 'host', root: '/repo' } });
 * const ctx = await ws.ready();
 * ```
 */
export class McpWorkspace {
  readonly options: McpServerOptions;
  readonly approver: RoutingApprover;
  /** Connections subscribed to each resource URI. */
  readonly subscribers = new Map<string, Set<(uri: string) => void>>();
  readonly #listeners = new Set<Listener>();
  readonly #ready: Promise<ContextLayer>;
  #go: (() => void) | undefined;
  #fs: Filesystem | undefined;
  #ctx: ContextLayer | undefined;
  #progress: ScanProgress | undefined;
  #scan: ScanResult | undefined;
  #failure: unknown;
  #profiles: { profile: ProfileInput; clientProfiles: Readonly<Record<string, ProfileInput>> } | undefined;
  #backend: Exclude<BackendSpec, { kind: 'client-root' }> | undefined;
  #rootGiven: ((root: string) => void) | undefined;
  readonly #root: Promise<string> | undefined;

  private constructor(options: McpServerOptions) {
    this.options = options;
    this.approver = new RoutingApprover(options.fallbackApprover);
    if (options.backend.kind === 'client-root') {
      this.#root = new Promise((resolve) => {
        this.#rootGiven = resolve;
      });
    } else this.#backend = options.backend;
    this.#ready = this.#start();
    // A failed start is reported to each call that waits for it, not as an unhandled rejection.
    this.#ready.catch((err: unknown) => {
      this.#failure = err;
    });
  }

  /** Starts serving `options.backend` in the background. */
  static open(options: McpServerOptions): McpWorkspace {
    return new McpWorkspace(options);
  }

  async #start(): Promise<ContextLayer> {
    // Loading the context layer holds the event loop for a while, so it waits until a call needs it or
    // until a client has had the moment it takes to initialize and list the tools (both answered without it).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, START_DELAY_MS);
      this.#go = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    // Loaded here, not at startup, so that the first answer does not wait for the context layer.
    const { createContext } = await import('@ctxfs/context');
    this.#backend ??= { kind: 'host', root: await (this.#root as Promise<string>) };
    this.#fs = await openBackend(this.#backend);
    const config =
      this.options.policyFiles === false ? { clientProfiles: {} } : await loadMcpConfig(this.#fs, (await import('@ctxfs/context')).userConfigPath());
    this.#profiles = {
      profile: this.options.profile ?? config.profile ?? 'medium',
      // Patterns are tried in order, the options' first.
      clientProfiles: {
        ...this.options.clientProfiles,
        ...Object.fromEntries(Object.entries(config.clientProfiles).filter(([k]) => !(k in (this.options.clientProfiles ?? {})))),
      },
    };
    this.#ctx = await createContext({
      fs: this.#fs,
      store: this.options.store,
      safety: { approver: this.approver, policy: this.options.policy, ...(this.options.policyFiles === false ? { policyFiles: false as const } : {}) },
    });
    this.#scan = await this.#ctx.scan({
      onProgress: (p) => {
        this.#progress = p;
        for (const l of this.#listeners) l(p);
      },
    });
    return this.#ctx;
  }

  /** What is served, in a few words. */
  get description(): string {
    return describeBackend(this.#backend ?? this.options.backend);
  }

  /** The profile of a client, by the name it gave in `initialize` (options first, then the config files). */
  profileOf(client: string | undefined): ProfileInput {
    const p = this.#profiles ?? { profile: this.options.profile ?? 'medium', clientProfiles: this.options.clientProfiles ?? {} };
    return profileFor(client, p.clientProfiles, p.profile);
  }

  /** The host directory served, once known (`undefined` for the other backends). */
  get hostRoot(): string | undefined {
    return this.#backend?.kind === 'host' ? this.#backend.root : undefined;
  }

  /** Whether the workspace waits for a client to name its directory. */
  get awaitingRoot(): boolean {
    return this.#backend === undefined;
  }

  /** Names the directory of a `client-root` workspace (the first client to connect does); later calls change nothing. */
  provideRoot(root: string): void {
    this.#rootGiven?.(root);
    this.#rootGiven = undefined;
  }

  /** The context layer once the first scan is done. */
  get context(): ContextLayer | undefined {
    return this.#scan === undefined ? undefined : this.#ctx;
  }

  /** The last scan progress, while scanning. */
  get progress(): ScanProgress | undefined {
    return this.#progress;
  }

  /** Why the workspace could not start, if it could not. */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * Waits for the context layer and the first scan, reporting progress;
   * rejects when `signal` aborts (the wait ends, the scan goes on). Starts
   * them now unless `start` is false (a watcher that only waits).
   */
  ready(options: { signal?: AbortSignal | undefined; onProgress?: Listener | undefined; start?: boolean } = {}): Promise<ContextLayer> {
    const { signal, onProgress } = options;
    if (this.context !== undefined) return Promise.resolve(this.context);
    if (options.start !== false) this.#go?.();
    if (onProgress) this.#listeners.add(onProgress);
    return new Promise<ContextLayer>((resolve, reject) => {
      const aborted = (): void => reject(signal?.reason ?? new Error('cancelled'));
      signal?.addEventListener('abort', aborted, { once: true });
      this.#ready.then(resolve, reject).finally(() => {
        signal?.removeEventListener('abort', aborted);
        if (onProgress) this.#listeners.delete(onProgress);
      });
    });
  }

  /** Tells every subscriber of `uri` that it changed. */
  notifyChanged(uri: string): void {
    for (const notify of this.subscribers.get(uri) ?? []) notify(uri);
  }

  /** Closes the context layer and the backend (after the start finished, whichever way). */
  async close(): Promise<void> {
    await this.#ready.catch(() => undefined);
    this.#ctx?.close();
    await this.#fs?.close();
  }
}
