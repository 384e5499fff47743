/**
 * The `[mcp]` table of ctxfs's config files — the same files as the policy
 * (the user's, then the project's `.ctxfs/config.toml`, the later winning) —
 * read as strictly as the policy: an unknown key or a profile that does not
 * exist fails the start with the file and what is wrong.
 *
 * ```toml
 * [mcp]
 * profile = "medium"                 # every client's, unless named below
 *
 * [mcp.client_profiles]              # by the name a client gives in initialize; * matches any text
 * "ollama*" = "small"
 * "claude-code" = "large"
 * ```
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import type { ProfileInput } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';

/** What the config files say about the MCP server. */
export interface McpConfig {
  readonly profile?: ProfileInput | undefined;
  readonly clientProfiles: Readonly<Record<string, ProfileInput>>;
}

/**
 * Reads `[mcp]` from one config file's text.
 *
 * @example
 * ```ts
 * parseMcpConfig('[mcp.client_profiles]\n"ollama*" = "small"\n', 'config.toml', ['small', 'medium', 'large']);
 * // { profile: undefined, clientProfiles: { 'ollama*': 'small' } }
 * ```
 */
export async function parseMcpConfig(text: string, file: string, profiles: readonly string[]): Promise<McpConfig> {
  const { parse } = await import('smol-toml');
  const doc = parse(text) as Record<string, unknown>;
  const mcp = doc.mcp;
  if (mcp === undefined) return { clientProfiles: {} };
  const bad = (what: string): never => {
    throw new Error(`${file}: [mcp] ${what}`);
  };
  if (typeof mcp !== 'object' || mcp === null || Array.isArray(mcp)) return bad('must be a table');
  const table = mcp as Record<string, unknown>;
  for (const key of Object.keys(table))
    if (key !== 'profile' && key !== 'client_profiles') bad(`has an unknown key "${key}" (known: profile, client_profiles)`);
  const profile = (value: unknown, where: string): ProfileInput => {
    if (typeof value !== 'string' || !profiles.includes(value)) bad(`${where} must be one of ${profiles.join(', ')}, not ${JSON.stringify(value)}`);
    return value as ProfileInput;
  };
  const clientProfiles: Record<string, ProfileInput> = {};
  if (table.client_profiles !== undefined) {
    const c = table.client_profiles;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) bad('client_profiles must be a table of client name = profile');
    for (const [client, value] of Object.entries(c as Record<string, unknown>)) clientProfiles[client] = profile(value, `client_profiles."${client}"`);
  }
  return { profile: table.profile === undefined ? undefined : profile(table.profile, 'profile'), clientProfiles };
}

/**
 * The `[mcp]` settings of the user's config file and of the workspace's
 * `.ctxfs/config.toml` (read through the backend, so a container's or a
 * memory workspace's own file counts), the project's over the user's.
 */
export async function loadMcpConfig(fs: Filesystem, userConfig: string | false): Promise<McpConfig> {
  const { MODEL_PROFILES, PROJECT_CONFIG_PATH } = await import('@ctxfs/context');
  const names = Object.keys(MODEL_PROFILES);
  const layers: McpConfig[] = [];
  if (userConfig !== false && existsSync(userConfig)) layers.push(await parseMcpConfig(readFileSync(userConfig, 'utf8'), userConfig, names));
  if (await fs.exists(PROJECT_CONFIG_PATH)) {
    layers.push(await parseMcpConfig(new TextDecoder().decode(await fs.readBytes(PROJECT_CONFIG_PATH)), PROJECT_CONFIG_PATH, names));
  }
  let profile: ProfileInput | undefined;
  const clientProfiles: Record<string, ProfileInput> = {};
  for (const layer of layers) {
    profile = layer.profile ?? profile;
    Object.assign(clientProfiles, layer.clientProfiles);
  }
  return { profile, clientProfiles };
}
