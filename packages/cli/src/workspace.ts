/**
 * What a command works on: the filesystem alone (`doctor`'s checks, `policy
 * show`, snapshots made, listed and dropped), or the context layer over it
 * with the tools bound to this command's session — every command that reads
 * or changes files, a raw read and a snapshot's restore too, so the policy
 * decides it and the audit records it.
 * Heavy parts — SQLite, the tokenizer, tree-sitter — are loaded here, when a
 * command asks for the context layer, never at start-up.
 *
 * State lives where the MCP server keeps it: beside a host workspace, in the
 * user's state directory for a container, in memory for a memory workspace.
 * The audit trail goes beside the state. One process writes it at a time,
 * so a command waits (a few seconds at most) for another that holds it;
 * past that its records are in the state store's table only.
 *
 * @module
 */

import { dirname, join } from 'node:path';
import type { ContextLayer } from '@ctxfs/context';
import type { AuditTrail, GuardedCall, SafetyOptions, StateStore } from '@ctxfs/context/guard';
import { type Filesystem, type FsError, isFsError, resolvePath } from '@ctxfs/core';
import type { Toolset } from '@ctxfs/tools';
import { type CliBackend, openFilesystem, parseBackendOption } from './backend.ts';
import { cliToolCalls, commandPrefix } from './call-text.ts';
import { CliError } from './exit-codes.ts';
import { agentOf, type GlobalOptions, stateOf } from './options.ts';
import { note } from './output.ts';

/** The backend `options` name. */
export function backendOf(options: GlobalOptions): CliBackend {
  return parseBackendOption(options.backend, options.root, options.workdir);
}

/**
 * What a command needs of a container: its files (the default: reads,
 * edits, snapshots), or only the workspace's policy inside it, because what
 * it works on is kept outside (the audit, the snapshots' store) — then the
 * built-in policy alone (`--no-policy-files`) is a way on while it is down.
 */
export type ContainerNeed = 'files' | 'policy';

/**
 * The refusal for a container that is stopped or paused, in place of the
 * backend's error for whichever call met it first (often the read of the
 * workspace's policy, whose path would send a person looking for a
 * missing file): it names the container and the engine's command that
 * brings it back, and `--no-policy-files` where that is enough. The policy
 * is never taken as empty because its file cannot be read: that would let
 * through what the project's policy forbids, so the built-in policy alone
 * is only for a person who asks for it. `undefined` for any other error.
 */
async function containerDown(options: GlobalOptions, spec: CliBackend, err: unknown, need: ContainerNeed): Promise<CliError | undefined> {
  if (spec.kind !== 'container' || !isFsError(err, 'EUNAVAILABLE')) return undefined;
  const { containerUnavailability, resumeCommand } = await import('@ctxfs/container');
  const down = containerUnavailability(err);
  const resume = down === undefined ? undefined : resumeCommand(down);
  if (down === undefined || resume === undefined) return undefined;
  const { PROJECT_CONFIG_PATH } = await import('@ctxfs/context');
  if (need === 'files' || !options.policyFiles || err.path !== PROJECT_CONFIG_PATH) return new CliError('EUNAVAILABLE', err.reason, err.hint);
  const back = down.condition === 'paused' ? 'unpause' : 'start';
  return new CliError(
    'EUNAVAILABLE',
    `the workspace's policy (${PROJECT_CONFIG_PATH}) cannot be read, because ${err.reason}`,
    `${back} the container (${resume}) and retry, or pass --no-policy-files to use the built-in policy alone (neither your config.toml nor the project's is read)`,
  );
}

/** Opens the filesystem `options` names, runs `body` on it and closes it; a stopped or paused container is refused as {@link containerDown} says. */
async function withOpened<T>(options: GlobalOptions, need: ContainerNeed, body: (fs: Filesystem, spec: CliBackend) => Promise<T>): Promise<T> {
  const spec = backendOf(options);
  const fs = await openFilesystem(spec);
  try {
    return await body(fs, spec);
  } catch (err) {
    throw (await containerDown(options, spec, err, need)) ?? err;
  } finally {
    await fs.close();
  }
}

/** Runs `body` on the filesystem `options` name, closing it after. */
export function withFilesystem<T>(options: GlobalOptions, body: (fs: Filesystem, spec: CliBackend) => Promise<T>, need: ContainerNeed = 'files'): Promise<T> {
  return withOpened(options, need, body);
}

/** An open workspace: the filesystem, the context layer as this command's session, its tools. */
export interface CliWorkspace {
  readonly spec: CliBackend;
  readonly fs: Filesystem;
  readonly ctx: ContextLayer;
  readonly tools: Toolset;
  /** The tamper-evident audit log, when this process could open it. */
  readonly trail: AuditTrail | undefined;
  /** Why there is no trail, when there is none. */
  readonly trailMissing: string | undefined;
}

/** Where the state of a workspace is, unless `--state` says. */
async function statePath(spec: CliBackend, fs: Filesystem, store: string | undefined): Promise<string> {
  if (store !== undefined) return store;
  const { defaultStatePath, userStatePath } = await import('@ctxfs/context/guard');
  if (spec.kind === 'host') return defaultStatePath(fs.root);
  // A container's root (docker://id/work) names it; its state is the user's, outside the container.
  if (spec.kind === 'container') return userStatePath(fs.root);
  return ':memory:';
}

async function openStore(spec: CliBackend, fs: Filesystem, store: string | undefined): Promise<{ store: StateStore; path: string }> {
  const { openStateStore, userStatePath } = await import('@ctxfs/context/guard');
  const path = await statePath(spec, fs, store);
  try {
    // A command is a process: its exit drops the connection, and the next command reads the log it leaves.
    return { store: await openStateStore(path, { workspace: fs.root, checkpointOnClose: false }), path };
  } catch (err) {
    // A read-only parent beside the workspace: keep the state per user, as the context layer does.
    if (store !== undefined || spec.kind !== 'host') throw err;
    const fallback = userStatePath(fs.root);
    return { store: await openStateStore(fallback, { checkpointOnClose: false }), path: fallback };
  }
}

/**
 * How long a command waits to open the audit trail. Processes share the
 * trail (each append takes its lock for one line), so opening waits only
 * while another process resets the log or is stopped in the middle of an
 * append; a command that gives up is recorded in the state store only.
 */
const TRAIL_WAIT_MS = 30_000;

async function openTrail(
  options: GlobalOptions,
  spec: CliBackend,
  fs: Filesystem,
  storePath: string,
  store: StateStore,
): Promise<{ trail?: AuditTrail; missing?: string }> {
  if (storePath === ':memory:') return { missing: 'a workspace whose state is in memory keeps no audit trail' };
  const { AuditTrail, defaultAuditKeyFile, isPostgresUrl } = await import('@ctxfs/context/guard');
  // The trail is a file of this host: beside the state file, or, when the state is in PostgreSQL, where a local state file would be.
  const local = isPostgresUrl(storePath) ? await statePath(spec, fs, undefined) : storePath;
  if (local === ':memory:') return { missing: 'a workspace that is not a host directory keeps its audit trail only beside a local state file' };
  // The trail's hints name this command line's own audit commands, with the options that reach this trail.
  const program = await commandPrefix(options);
  const trailOptions = {
    dir: join(dirname(local), 'audit'),
    key: { keyFile: defaultAuditKeyFile() },
    index: store,
    remedies: { verify: `\`${program} audit verify\``, reindex: `\`${program} audit reindex\`` },
  };
  const until = Date.now() + TRAIL_WAIT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    try {
      return { trail: AuditTrail.open(trailOptions) };
    } catch (err) {
      // The log is being reset, or another process is stopped holding its lock: wait a while.
      if ((err as { code?: string }).code !== 'EBUSY') return { missing: (err as Error).message };
      if (Date.now() >= until) {
        await note('the audit trail is held by another ctxfs process; this command is recorded in the state store only');
        return { missing: (err as Error).message };
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** What every command with a session opens: the filesystem, its state store and audit trail. */
interface OpenedState {
  readonly spec: CliBackend;
  readonly fs: Filesystem;
  readonly store: StateStore;
  readonly trail: AuditTrail | undefined;
  readonly trailMissing: string | undefined;
}

/**
 * Opens the filesystem `options` names with its state store and trail,
 * runs `body`, and closes all three after (`body` closes what it opens on
 * them first).
 */
async function withState<T>(options: GlobalOptions, need: ContainerNeed, body: (state: OpenedState) => Promise<T>): Promise<T> {
  return withOpened(options, need, async (fs, spec) => {
    let store: StateStore | undefined;
    let trail: AuditTrail | undefined;
    try {
      const opened = await openStore(spec, fs, stateOf(options));
      store = opened.store;
      const t = await openTrail(options, spec, fs, opened.path, store);
      trail = t.trail;
      return await body({ spec, fs, store, trail, trailMissing: t.missing });
    } finally {
      trail?.close();
      if (store !== undefined && !store.closed) await store.close();
    }
  });
}

/** The safety options of a command's session: the terminal approver, the trail, the policy files unless `--no-policy-files`. */
async function safetyOf(options: GlobalOptions, trail: AuditTrail | undefined): Promise<SafetyOptions> {
  const { TerminalApprover } = await import('@ctxfs/context/guard');
  return {
    approver: new TerminalApprover(),
    ...(trail === undefined ? {} : { auditTrail: trail }),
    ...(options.policyFiles ? {} : { policyFiles: false as const }),
  };
}

/** The session `--session`, `--profile` and `--agent` name. */
function sessionOf(options: GlobalOptions): { profile: NonNullable<GlobalOptions['profile']>; agent: string; sessionId?: string } {
  return { profile: options.profile ?? 'large', agent: agentOf(options), ...(options.session === undefined ? {} : { sessionId: options.session }) };
}

/**
 * Runs `body` on the context layer of the workspace `options` name, as the
 * session `--session` names (or a new one), with the terminal approver for
 * what the policy asks about; closes everything after.
 */
export function withContext<T>(options: GlobalOptions, body: (ws: CliWorkspace) => Promise<T>, need: ContainerNeed = 'files'): Promise<T> {
  return withState(options, need, async ({ spec, fs, store, trail, trailMissing }) => {
    // The tool set's own entry: the package's index would also build the shared result shapes, which a command never reads.
    const [{ createContext }, { Toolset }] = await Promise.all([import('@ctxfs/context'), import('@ctxfs/tools/toolset')]);
    const ctx = await createContext({ fs, store, ...sessionOf(options), safety: await safetyOf(options, trail) });
    try {
      return await body({ spec, fs, ctx, tools: new Toolset(ctx, { writer: cliToolCalls(await commandPrefix(options)) }), trail, trailMissing });
    } finally {
      await ctx.close();
    }
  });
}

/** A guarded call of the command's session on one path, as the CLI makes it: the path as given, normalized here (a bad one is recorded, then thrown). */
export interface GuardedCommand extends Omit<GuardedCall, 'paths' | 'invalid'> {
  readonly path: string;
}

/**
 * Runs `body` on the backend as one call of this command's session on one
 * path, through the safety layer: the policy decides it (asking a person on
 * a terminal where it says so) and the audit records it — for what no tool
 * does, such as `cat --raw`. A guarded session, not the context layer: the
 * same decision and record without loading retrieval or the tokenizer.
 */
export function withGuard<T>(options: GlobalOptions, command: GuardedCommand, body: (fs: Filesystem, path: string) => Promise<T>): Promise<T> {
  return withState(options, 'files', async ({ fs, store, trail }) => {
    const { openGuardedSession } = await import('@ctxfs/context/guard');
    const session = await openGuardedSession({ fs, store, ...sessionOf(options), safety: await safetyOf(options, trail) });
    try {
      let path = '';
      let dirOnly = false;
      let invalid: FsError | undefined;
      try {
        ({ path, dirOnly } = resolvePath(command.path, command.op));
      } catch (err) {
        if (!isFsError(err)) throw err;
        invalid = err;
      }
      const { path: _given, ...call } = command;
      return await session.guarded(
        { ...call, paths: invalid ? [] : [path], invalid },
        // With its slash: the backend refuses a file named as a directory (`cat --raw a.txt/`), as the tools do.
        () => body(fs, dirOnly ? `${path}/` : path),
        () => ({ result: 'ok' }),
      );
    } finally {
      await session.close();
    }
  });
}
