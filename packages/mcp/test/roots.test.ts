/**
 * Client roots, with a real client that has the `roots` capability: the
 * server serves a host workspace only within the directories the client
 * lists, refuses a call outside them as a tool error (EDENIED), aims a search
 * without a path at the one root, and follows the client's list when it
 * changes (notifications/roots/list_changed).
 *
 * @module
 */

import { pathToFileURL } from 'node:url';
import { ListRootsRequestSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, call, connectStdio, type HttpServer, startHttp } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

describe('client roots', () => {
  let ws: TempWorkspace;
  let c: Connected;
  /** What the client answers to roots/list; a test changes it and says so. */
  let roots: Root[] = [];
  const rootAt = (dir: string): Root => ({ uri: pathToFileURL(dir).href, name: dir });
  const setRoots = async (dirs: string[]): Promise<void> => {
    roots = dirs.map(rootAt);
    await c.client.sendRootsListChanged();
  };
  const read = (path: string) => call(c.client, 'read_lines', { path, start_line: 1, end_line: 3 });
  const complete = async (value: string) =>
    (await c.client.complete({ ref: { type: 'ref/resource', uri: 'ctxfs://files/{+path}' }, argument: { name: 'path', value } })).completion.values;

  beforeAll(async () => {
    ws = tempWorkspace();
    roots = [rootAt(`${ws.root}/src`)];
    c = await connectStdio(['--root', ws.root], {
      capabilities: { roots: { listChanged: true } },
      before: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots })),
    });
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });

  it('serves inside a root and refuses outside it, as a tool error', async () => {
    const inside = await read('src/auth.ts');
    expect(inside.isError, inside.text).toBe(false);
    expect(inside.text).toContain("import { retries } from './config.ts';");

    const outside = await read('README.md');
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/^EDENIED: README\.md is outside the client's roots \(src within the workspace\)/);
    // A path that climbs out of the root into the workspace is outside it too.
    expect((await read('src/../README.md')).isError).toBe(true);
    // So is a write, and a patch that names a file outside.
    expect((await call(c.client, 'write_file', { path: 'docs/new.md', content: 'x\n' })).text).toMatch(/^EDENIED: /);
    const patch = '--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# Demo service\n+# Service\n';
    expect((await call(c.client, 'apply_patch', { patch })).text).toMatch(/^EDENIED: /);
    expect(ws.read('README.md')).toContain('# Demo service');
  });

  it('checks the arguments as the tool takes them: a path under an alias is outside the roots all the same', async () => {
    for (const alias of ['file_path', 'filePath', 'file', 'target_file']) {
      const r = await call(c.client, 'read_lines', { [alias]: 'README.md', start_line: 1, end_line: 3 });
      expect(r.text, alias).toMatch(/^EDENIED: README\.md is outside the client's roots/);
    }
    expect((await call(c.client, 'create_file', { target_file: 'docs/new.md', content: 'x\n' })).text).toMatch(/^EDENIED: /);
    expect((await call(c.client, 'rename_file', { source: 'README.md', to: 'src/README.md' })).text).toMatch(/^EDENIED: README\.md is outside/);
    expect(ws.read('README.md')).toContain('# Demo service');
    // Inside the root an alias is taken, and the tool still says what it repaired.
    const inside = await call(c.client, 'read_lines', { file_path: 'src/auth.ts', start_line: 1, end_line: 1 });
    expect(inside.isError, inside.text).toBe(false);
    expect(inside.text).toContain("import { retries } from './config.ts';");
  });

  it('aims a search without a path at the one root, and refuses the overview of everything', async () => {
    const found = await call(c.client, 'grep', { pattern: 'login|Install' });
    expect(found.isError, found.text).toBe(false);
    // docs/guide.md says "Install" and "login" too, but it is outside the root.
    expect(found.data).toMatchObject({ dir: '', items: [{ name: 'src/auth.ts' }] });
    expect(found.data?.items).toHaveLength(1);
    expect((await call(c.client, 'project_overview')).text).toMatch(/^EDENIED: .*Use list_files with one of those paths/);
    await expect(c.client.readResource({ uri: 'ctxfs://files/README.md' })).rejects.toThrow(/outside the client's roots/);
    // Completion offers only what may be read.
    expect(await complete('guide')).toEqual([]);
    expect(await complete('auth')).toEqual(['src/auth.ts']);
  });

  it('follows the roots when the client says they changed', async () => {
    await setRoots([`${ws.root}/docs`]);
    expect((await read('src/auth.ts')).text).toMatch(/^EDENIED: src\/auth\.ts is outside the client's roots \(docs within/);
    expect((await read('docs/guide.md')).text).toContain('# Guide');
    expect(await complete('guide')).toEqual(['docs/guide.md']);

    // A root that holds the workspace serves all of it.
    await setRoots([ws.dir]);
    expect((await read('README.md')).isError).toBe(false);
    expect((await call(c.client, 'project_overview')).isError).toBe(false);

    // A root elsewhere on the disk meets nothing of the workspace: nothing is served.
    await setRoots([`${ws.dir}/elsewhere`]);
    expect((await read('README.md')).text).toMatch(/^EDENIED: The client's roots .* do not include this workspace/);
  });

  it('serves the whole workspace when the client lists no roots', async () => {
    await setRoots([]);
    const r = await read('README.md');
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('# Demo service');
  });
});

// A client over Streamable HTTP may never open its GET stream, and the SDK's
// opens it only after initializing: the roots are asked for within the
// client's first call, on that call's own response stream.
describe('client roots over Streamable HTTP', () => {
  let ws: TempWorkspace;
  let server: HttpServer;
  let asked = 0;

  beforeAll(async () => {
    ws = tempWorkspace();
    server = await startHttp(['--root', ws.root]);
  });
  afterAll(async () => {
    await server?.stop();
    ws?.remove();
  });

  it('holds from the first call, with no wait, and completion offers only what the roots let be read', async () => {
    const c = await server.connect({
      capabilities: { roots: { listChanged: true } },
      before: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, () => {
          asked++;
          return { roots: [{ uri: pathToFileURL(`${ws.root}/docs`).href, name: 'docs' }] };
        }),
    });
    const started = Date.now();
    const outside = await call(c.client, 'read_lines', { path: 'src/auth.ts', start_line: 1, end_line: 3 });
    // The SDK's request timeout is 60 s: an answer well inside it was not a timed-out roots/list.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(outside.text).toMatch(/^EDENIED: src\/auth\.ts is outside the client's roots \(docs within/);
    expect((await call(c.client, 'read_lines', { path: 'docs/guide.md', start_line: 1, end_line: 1 })).text).toContain('# Guide');
    const completed = await c.client.complete({ ref: { type: 'ref/resource', uri: 'ctxfs://files/{+path}' }, argument: { name: 'path', value: 'auth' } });
    expect(completed.completion.values).toEqual([]);
    expect(asked).toBe(1);
  });

  it('asks a client that lists its roots only after initializing, before its first completion', async () => {
    const c = await server.connect({
      capabilities: { roots: {} },
      before: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(`${ws.root}/src`).href, name: 'src' }] })),
    });
    // A completion first: the roots are asked for within it, so nothing outside them is offered.
    const completed = await c.client.complete({ ref: { type: 'ref/resource', uri: 'ctxfs://files/{+path}' }, argument: { name: 'path', value: 'guide' } });
    expect(completed.completion.values).toEqual([]);
    expect((await call(c.client, 'read_lines', { path: 'docs/guide.md', start_line: 1, end_line: 1 })).text).toMatch(/^EDENIED: /);
  });
});
