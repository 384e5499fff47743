/**
 * Which model profile a client gets, by the name it gives in `initialize`:
 * a small local model must not be served a large model's budgets.
 *
 * @module
 */

import type { ProfileInput } from '@ctxfs/context';

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i');
  return re.test(name);
}

/**
 * The profile for `client`: the first pattern of `profiles` that matches its
 * name (case-insensitive, `*` for any text), else `fallback`.
 *
 * @example
 * ```ts
 * profileFor('ollama-qwen', { 'ollama*': 'small' }, 'medium'); // 'small'
 * profileFor(undefined, { 'ollama*': 'small' }, 'medium');     // 'medium'
 * ```
 */
export function profileFor(client: string | undefined, profiles: Readonly<Record<string, ProfileInput>> | undefined, fallback: ProfileInput): ProfileInput {
  if (client !== undefined) for (const [pattern, profile] of Object.entries(profiles ?? {})) if (globMatch(pattern, client)) return profile;
  return fallback;
}
