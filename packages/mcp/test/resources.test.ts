/**
 * Files as MCP resources, through real clients of one HTTP server: the
 * overview and the file template are listed and read, a path is completed
 * from what was typed, and a client subscribed to a file is told when a
 * tool call (its own or another client's) changes it, or someone changes it
 * on disk — once per change, and only then.
 *
 * @module
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ReadResourceResult, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, call, type HttpServer, startHttp } from './support/server.ts';
import { PROJECT, type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const TEMPLATE = 'ctxfs://files/{+path}';

/** Notifications of updated resources one client received, awaitable one by one. */
class Updates {
  readonly #seen: string[] = [];
  readonly #waiting: Array<(uri: string) => void> = [];

  listen(c: Connected): void {
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      const waiter = this.#waiting.shift();
      if (waiter) waiter(n.params.uri);
      else this.#seen.push(n.params.uri);
    });
  }

  /** The next URI reported (in the order the server sent them). */
  next(): Promise<string> {
    const seen = this.#seen.shift();
    return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => this.#waiting.push(resolve));
  }
}

function textOf(r: ReadResourceResult): string {
  const first = r.contents[0];
  return first !== undefined && 'text' in first ? first.text : '';
}

describe('resources', () => {
  let ws: TempWorkspace;
  let server: HttpServer;
  let reader: Connected;
  let writer: Connected;
  const updates = new Updates();

  beforeAll(async () => {
    ws = tempWorkspace({ ...PROJECT, 'docs/release notes.md': '# Release notes\n\n- first release\n' });
    server = await startHttp(['--root', ws.root]);
    reader = await server.connect({ name: 'reader' });
    updates.listen(reader);
    writer = await server.connect({ name: 'writer' });
  });
  afterAll(async () => {
    await server?.stop();
    ws?.remove();
  });

  it('lists the overview and the file template', async () => {
    expect((await reader.client.listResources()).resources.map((r) => r.uri)).toEqual(['ctxfs://overview']);
    expect((await reader.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([TEMPLATE]);
  });

  it('reads the overview', async () => {
    const r = await reader.client.readResource({ uri: 'ctxfs://overview' });
    expect(r.contents[0]).toMatchObject({ uri: 'ctxfs://overview', mimeType: 'text/markdown' });
    expect(textOf(r)).toContain('# Workspace overview');
    expect(textOf(r)).toContain('src/ (3 files)');
  });

  it('reads a file through the template, its path percent-encoded', async () => {
    const auth = await reader.client.readResource({ uri: 'ctxfs://files/src/auth.ts' });
    expect(textOf(auth)).toContain('export class AuthManager {');
    const notes = await reader.client.readResource({ uri: 'ctxfs://files/docs/release%20notes.md' });
    expect(textOf(notes)).toContain('- first release');
  });

  it('answers a file that is not there with an error that says so', async () => {
    await expect(reader.client.readResource({ uri: 'ctxfs://files/src/missing.ts' })).rejects.toThrow(/ENOENT/);
    await expect(reader.client.readResource({ uri: 'ctxfs://elsewhere' })).rejects.toThrow(/Unknown resource/);
  });

  it('completes a path from its start, then from a part of a name', async () => {
    const complete = async (value: string) =>
      (await reader.client.complete({ ref: { type: 'ref/resource', uri: TEMPLATE }, argument: { name: 'path', value } })).completion;
    expect((await complete('src/a')).values).toEqual(['src/auth.ts']);
    expect((await complete('src/')).values).toEqual(['src/auth.ts', 'src/config.ts', 'src/util.ts']);
    // Nothing starts with "config": the file whose path contains it is offered.
    expect((await complete('config')).values).toEqual(['src/config.ts']);
    expect((await complete('nothing-like-this')).values).toEqual([]);
  });

  it('tells a subscriber of a file when another client changes it, and only that file', async () => {
    await reader.client.subscribeResource({ uri: 'ctxfs://files/src/util.ts' });
    // A change to a file nobody subscribed to is not reported; the next report is the subscribed file's.
    expect((await call(writer.client, 'write_file', { path: 'src/config.ts', content: 'export const retries = 1;\n' })).isError).toBe(false);
    expect((await call(writer.client, 'write_file', { path: 'src/util.ts', content: 'export const slugify = (s: string) => s;\n' })).isError).toBe(false);
    expect(await updates.next()).toBe('ctxfs://files/src/util.ts');
  });

  it("reports the subscriber's own changes and a patch's, and stops after unsubscribing", async () => {
    await reader.client.subscribeResource({ uri: 'ctxfs://files/docs/release%20notes.md' });
    const patch = '--- a/docs/release notes.md\n+++ b/docs/release notes.md\n@@ -3 +3,2 @@\n - first release\n+- second release\n';
    const patched = await call(reader.client, 'apply_patch', { patch });
    expect(patched.isError, patched.text).toBe(false);
    expect(await updates.next()).toBe('ctxfs://files/docs/release%20notes.md');

    await reader.client.unsubscribeResource({ uri: 'ctxfs://files/src/util.ts' });
    await call(writer.client, 'replace', { path: 'src/util.ts', old_text: '=> s;', new_text: '=> s.trim();' });
    await call(writer.client, 'replace', { path: 'docs/release notes.md', old_text: '- second release', new_text: '- 2nd release' });
    expect(await updates.next()).toBe('ctxfs://files/docs/release%20notes.md');
  });

  it('tells a subscriber of a change made on disk outside ctxfs, and of a ctxfs change only once', async () => {
    await reader.client.subscribeResource({ uri: 'ctxfs://files/src/auth.ts' });
    // The watch of the file starts with the subscription: give it the moment it takes to be ready.
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(join(ws.root, 'src', 'auth.ts'), 'export class AuthManager {}\n// edited in an editor\n');
    expect(await updates.next()).toBe('ctxfs://files/src/auth.ts');
    // A change through ctxfs is told once, though the watch sees it too; the next report is the next change's.
    await call(writer.client, 'replace', { path: 'src/auth.ts', old_text: 'edited in an editor', new_text: 'edited by an agent' });
    expect(await updates.next()).toBe('ctxfs://files/src/auth.ts');
    await new Promise((r) => setTimeout(r, 1000));
    await call(writer.client, 'replace', { path: 'docs/release notes.md', old_text: '- 2nd release', new_text: '- second release' });
    expect(await updates.next()).toBe('ctxfs://files/docs/release%20notes.md');
  });
});
