/**
 * Test fixture: links a model may find in a workspace (out of the root, to a
 * file out of it, in a loop) and the check that nothing an adapter answers
 * about them names where they lead or where the workspace lives.
 */

import { dirname } from 'node:path';
import { expect } from 'vitest';
import type { TestWorkspace } from './workspaces.ts';

/** Links made behind the backend's back, named as a caller would name them. */
export const HOSTILE_LINKS: Readonly<Record<string, string>> = { 'sys.lnk': '/etc', 'host.lnk': '/etc/hostname', 'loop.lnk': 'loop.lnk' };

/** Paths through those links a model could send (relative to the workspace root), those below a link before the link itself, which a delete removes. */
export const THROUGH_LINKS = ['sys.lnk/passwd', 'sys.lnk/nope/x.txt', 'loop.lnk/x.txt', 'sys.lnk', 'host.lnk', 'loop.lnk'];

/** Makes {@link HOSTILE_LINKS} in the workspace; `false` where the backend has none. */
export async function makeHostileLinks(ws: TestWorkspace): Promise<boolean> {
  if (ws.link === undefined) return false;
  for (const [name, target] of Object.entries(HOSTILE_LINKS)) await ws.link(target, name);
  return true;
}

/** What an answer says: its value, or the error it threw (message and name). */
export async function answerOf(call: () => unknown): Promise<string> {
  try {
    const value = await call();
    return JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? `<${v.byteLength} bytes>` : v)) ?? 'undefined';
  } catch (err) {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
}

/** Fails when an answer names a link's target out of the root, or the directory holding the root. */
export function expectNoHostPath(ws: TestWorkspace, label: string, answer: string): void {
  for (const target of Object.values(HOSTILE_LINKS).filter((t) => t.startsWith('/'))) expect(answer, label).not.toContain(`'${target}`);
  expect(answer, label).not.toMatch(/\/etc\b/);
  if (ws.hostRoot !== undefined) expect(answer, label).not.toContain(dirname(ws.hostRoot));
}
