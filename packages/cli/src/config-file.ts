/**
 * The `[cli]` table of ctxfs's config files — the user's
 * (`$XDG_CONFIG_HOME/ctxfs/config.toml`, else `~/.config/ctxfs/config.toml`),
 * then the project's `.ctxfs/config.toml` in `--root` — the later winning,
 * both under any flag or environment variable. Read as strictly as the
 * policy: an unknown key or a value of the wrong type stops the command
 * (exit 2) with the file and the key.
 *
 * ```toml
 * [cli]
 * backend = "docker:sandbox"   # host | memory | docker:<container> | docker-image:<image>
 * workdir = "/work"
 * profile = "medium"           # small | medium | large
 * agent = "llm:claude"
 * store = "/var/lib/ctxfs/sandbox.db"
 * ```
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './exit-codes.ts';
import { PROFILES } from './options.ts';

/** The settings `[cli]` may hold: the global options of the same names. */
export const CONFIG_KEYS = ['backend', 'workdir', 'profile', 'agent', 'store'] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];
export type CliConfig = Partial<Record<ConfigKey, string>>;

/** The user's config file (the policy's too). */
export function userConfigFile(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'ctxfs', 'config.toml');
}

/**
 * Reads `[cli]` from one file's text.
 *
 * @example
 * ```ts
 * await parseCliConfig('[cli]\nprofile = "small"\n', 'config.toml'); // { profile: 'small' }
 * ```
 */
export async function parseCliConfig(text: string, file: string): Promise<CliConfig> {
  const { parse } = await import('smol-toml');
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new CliError('EINVAL', `${file}: ${(err as Error).message}`);
  }
  const table = doc.cli;
  if (table === undefined) return {};
  const bad = (what: string): never => {
    throw new CliError('EINVAL', `${file}: [cli] ${what}`);
  };
  if (typeof table !== 'object' || table === null || Array.isArray(table)) return bad('must be a table');
  const config: CliConfig = {};
  for (const [key, value] of Object.entries(table)) {
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) bad(`has an unknown key "${key}" (known: ${CONFIG_KEYS.join(', ')})`);
    if (typeof value !== 'string' || value === '') bad(`${key} must be a non-empty string`);
    if (key === 'profile' && !(PROFILES as readonly string[]).includes(value as string)) bad(`profile must be one of ${PROFILES.join(', ')}`);
    config[key as ConfigKey] = value as string;
  }
  return config;
}

/** `[cli]` of the user's file, then of the project's in `root` (the project's winning). */
export async function loadCliConfig(root: string): Promise<CliConfig> {
  let config: CliConfig = {};
  for (const file of [userConfigFile(), join(root, '.ctxfs', 'config.toml')]) {
    if (existsSync(file)) config = { ...config, ...(await parseCliConfig(readFileSync(file, 'utf8'), file)) };
  }
  return config;
}
