/**
 * The options every command takes, before or after its name: which
 * workspace (`--root`, `--backend`), as whom (`--agent`, `--session`,
 * `--profile`), where its state is (`--state`), and how to answer
 * (`--json`, `--no-color`). Each has an environment variable, so a shell or
 * an agent's harness can set it once.
 *
 * @module
 */

import type { ProfileInput } from '@ctxfs/context';

/** The global options, as commander parses them. */
export interface GlobalOptions {
  /** The workspace directory: the host backend's root, the memory backend's seed. */
  readonly root: string;
  readonly backend?: string | undefined;
  /** The workspace inside a container. */
  readonly workdir?: string | undefined;
  readonly profile?: ProfileInput | undefined;
  /** Who acts (default `cli`); in `audit` commands, whose records. */
  readonly agent?: string | undefined;
  /** A session to resume, so reads and edits of several commands are one session; in `audit` commands, whose records. */
  readonly session?: string | undefined;
  /** `--state`: a SQLite file or a `postgres://` URL. */
  readonly state?: string | undefined;
  /** `--store`, the former name of `--state`. */
  readonly store?: string | undefined;
  /** `--request-id`: the command's key for its retries (see `RunOptions.requestId` in `@ctxfs/tools`). */
  readonly requestId?: string | undefined;
  /** `false` with `--no-policy-files`: read neither the user's nor the project's config.toml. */
  readonly policyFiles: boolean;
  /** `--json`: one JSON document on stdout. */
  readonly json?: boolean | undefined;
  /** `false` with `--no-color`. */
  readonly color: boolean;
  /**
   * The global options typed on this command line (not those a variable or
   * a config file set, which the next command reads again): the ones a hint
   * repeats, so the command it names runs where this one ran.
   */
  readonly typed?: ReadonlySet<string> | undefined;
}

/** Profiles `--profile` accepts. */
export const PROFILES = ['small', 'medium', 'large'] as const;

/** Where the workspace's state lives, when an option says (`--state`, or its former name `--store`). */
export function stateOf(options: GlobalOptions): string | undefined {
  return options.state ?? options.store;
}

/** The agent a command acts as. */
export function agentOf(options: GlobalOptions): string {
  return options.agent ?? 'cli';
}
