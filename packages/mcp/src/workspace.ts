/**
 * The workspace one server process serves, shared by every client that
 * connects: the backend, the context layer over it, the scan that builds the
 * registry in the background (so the first answer never waits for it), the
 * approver that routes a question to the client whose call asked it, and who
 * subscribed to which file.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import type { Approver, ContextLayer, PolicyConfig, ProfileInput, ScanProgress, ScanResult } from '@ctxfs/context';
import type { Filesystem, Watcher } from '@ctxfs/core';
import { type BackendSpec, describeBackend, openBackend } from './backend.ts';
import { loadMcpConfig } from './config-file.ts';
import { filePathOf } from './connection.ts';
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
  /**
   * How long after `open` the context layer loads and scans when no client
   * has listed the tools or called one yet; default 1,000 ms. Until then the
   * event loop is free for a client's first answers.
   */
  readonly startDelayMs?: number;
}

type Listener = (p: ScanProgress) => void;

/** {@link McpServerOptions.startDelayMs}'s default. */
const START_DELAY_MS = 1_000;

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
  /** A watch of each subscribed file, where the backend can watch (settles undefined where it cannot). */
  readonly #watches = new Map<string, Promise<Watcher | undefined>>();
  /** A watched file's content hash when its subscribers were last told (null: absent). */
  readonly #told = new Map<string, string | null>();
  /** Per watched file, the notification being decided: one at a time, in order. */
  readonly #deciding = new Map<string, Promise<void>>();
  readonly #listeners = new Set<Listener>();
  /** Tool calls begun and not yet answered, so a stop can let them finish. */
  readonly #calls = new Set<Promise<unknown>>();
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
    // Loading the context layer holds the event loop for a while, so it waits until a call needs it, a
    // client has listed the tools (initialize and tools/list are answered without it), or a second has passed.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.options.startDelayMs ?? START_DELAY_MS);
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
   * Starts loading the context layer and the first scan now, if they have
   * not started: a client has had its first answers (the tool list) and
   * will call next.
   */
  start(): void {
    this.#go?.();
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

  /**
   * Adds a subscriber of `uri`. A file's first subscriber starts a watch of
   * it where the backend can watch, so a change made outside ctxfs (a person
   * in an editor, a formatter) is notified too, not only ctxfs's own.
   */
  subscribe(uri: string, notify: (uri: string) => void): void {
    const set = this.subscribers.get(uri) ?? new Set();
    this.subscribers.set(uri, set);
    set.add(notify);
    const path = filePathOf(uri);
    if (path !== undefined && !this.#watches.has(uri)) this.#watches.set(uri, this.#watch(uri, path));
  }

  /** Removes a subscriber; the file's watch stops with its last one. */
  unsubscribe(uri: string, notify: (uri: string) => void): void {
    const set = this.subscribers.get(uri);
    set?.delete(notify);
    if (set !== undefined && set.size > 0) return;
    this.subscribers.delete(uri);
    const watch = this.#watches.get(uri);
    this.#watches.delete(uri);
    this.#told.delete(uri);
    this.#deciding.delete(uri);
    void watch?.then((w) => w?.close());
  }

  async #watch(uri: string, path: string): Promise<Watcher | undefined> {
    await this.#ready.catch(() => undefined);
    const fs = this.#fs;
    // Unsubscribed while the workspace was starting, or a backend that cannot watch: ctxfs's own changes are still notified.
    if (fs === undefined || !fs.capabilities.watch || !this.#watches.has(uri)) return undefined;
    let watcher: Watcher;
    try {
      watcher = fs.watch(path);
    } catch {
      return undefined;
    }
    // The first look takes its turn with the decisions below, and does not undo one made while it waited:
    // a change told meanwhile stays the content last told.
    const first = (this.#deciding.get(uri) ?? Promise.resolve()).then(async () => {
      const hash = await this.#hashOf(fs, path);
      if (!this.#told.has(uri)) this.#told.set(uri, hash);
    });
    this.#deciding.set(
      uri,
      first.catch(() => undefined),
    );
    await first.catch(() => undefined);
    void (async () => {
      try {
        for await (const _ of watcher) this.notifyChanged(uri);
      } catch {
        // The watch failed (the file's directory went away): changes made through ctxfs are still notified.
      }
    })();
    return watcher;
  }

  /**
   * Tells every subscriber of `uri` that it changed: after a change through
   * ctxfs, or when the file's watch saw one. A watched file's
   * subscribers are told once per content: the watch also sees the changes
   * ctxfs makes, usually tens of milliseconds later, but on a loaded machine
   * before the call that made them has finished recording them — whichever
   * comes first tells, the other finds that content told.
   */
  notifyChanged(uri: string): void {
    const tell = (): void => {
      for (const notify of this.subscribers.get(uri) ?? []) notify(uri);
    };
    const fs = this.#fs;
    const path = filePathOf(uri);
    if (!this.#watches.has(uri) || fs === undefined || path === undefined) {
      tell();
      return;
    }
    const decided = (this.#deciding.get(uri) ?? Promise.resolve()).then(async () => {
      const hash = await this.#hashOf(fs, path);
      if (this.#told.has(uri) && this.#told.get(uri) === hash) return;
      this.#told.set(uri, hash);
      tell();
    });
    this.#deciding.set(
      uri,
      decided.catch(() => undefined),
    );
  }

  async #hashOf(fs: Filesystem, path: string): Promise<string | null> {
    try {
      return createHash('sha256')
        .update(await fs.readBytes(path))
        .digest('hex');
    } catch {
      // Gone (or unreadable): "absent" is the content to compare.
      return null;
    }
  }

  /**
   * Runs a tool call, counted among those a stop waits for (see {@link settled}).
   *
   * @example
   * ```ts
   * const result = await workspace.calling(() => toolset.run('read_file', { path: 'a.ts' }));
   * ```
   */
  calling<T>(call: () => Promise<T>): Promise<T> {
    const running = call();
    // Settled either way and never rejecting: the caller handles the call's own failure, and a second
    // promise rejecting with it, unobserved until a stop, would end the process as unhandled.
    const counted: Promise<void> = running.then(
      () => undefined,
      () => undefined,
    );
    this.#calls.add(counted);
    void counted.then(() => this.#calls.delete(counted));
    return running;
  }

  /**
   * Settles when every tool call begun so far has been answered, or after
   * `ms`, whichever is first; `true` when none was left running. A server
   * told to stop waits for this before it closes its transport, so an edit
   * under way is finished and its result reaches the client, rather than the
   * client hearing "connection closed" with no way to know whether it applied.
   *
   * @example
   * ```ts
   * if (!(await workspace.settled(10_000))) log('closing with calls still running');
   * ```
   */
  async settled(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      while (this.#calls.size > 0) {
        const done = await Promise.race([Promise.allSettled([...this.#calls]).then(() => true as const), late]);
        if (!done) return false;
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the context layer and the backend (after the start finished, whichever way). */
  async close(): Promise<void> {
    await this.#ready.catch(() => undefined);
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    await Promise.all(watches.map((w) => w.then((watcher) => watcher?.close())));
    await this.#ctx?.close();
    await this.#fs?.close();
  }
}
