/**
 * Every tool over MCP, for real: the SDK's own Client talks to the server
 * process over stdio and over Streamable HTTP, on memory, a host directory
 * and a container. Each tool is called with valid arguments; the client
 * validates each structured result against the tool's published output
 * schema (counted, so a result that skipped validation fails the test), and
 * the text a model reads is checked too. Failures — a missing file, a path
 * that climbs out, an unknown tool, arguments of the wrong type — come back
 * as tool results with isError, never as JSON-RPC errors.
 *
 * @module
 */

import { READ_TOOLS, TOOLS } from '@ctxfs/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends, type BackendWorkspace, backendWorkspace, removeBackendContainers } from './support/backends.ts';
import { libraryCallsIn } from './support/hints.ts';
import { type Connected, call, readWhole, serveOne, type TransportKind } from './support/server.ts';
import { PROJECT, type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const backends = await availableBackends();
const matrix = (['stdio', 'http'] as const).flatMap((transport) => backends.map((backend) => ({ transport, backend })));

afterAll(removeBackendContainers);

type Data = Record<string, unknown>;
/** One call of the script: a tool, valid arguments, and what its text and data must say. */
interface Step {
  readonly tool: string;
  readonly args: Data;
  readonly check: (text: string, data: Data) => void;
}

const CONFIG = PROJECT['src/config.ts'] ?? '';
const PATCH = [
  '--- a/src/util.ts',
  '+++ b/src/util.ts',
  '@@ -1,3 +1,3 @@',
  ' export function slugify(text: string): string {',
  "-  return text.toLowerCase().replace(/\\s+/g, '-');",
  "+  return text.trim().toLowerCase().replace(/\\s+/g, '-');",
  ' }',
  '',
].join('\n');

/** Every tool once, in the order an agent would: orient, find, read, change, look back. */
/** The arguments of read_command_output: the id is the one the run_command step before it was given. */
const KEPT: Data = { id: '', start_line: 150, end_line: 152 };

const SCRIPT: readonly Step[] = [
  {
    tool: 'project_overview',
    args: {},
    check: (text, data) => {
      expect(text).toContain('src/ (3 files)');
      expect(text).toContain('# Demo service');
      expect(data.files).toBe(6);
    },
  },
  {
    tool: 'list_files',
    args: { path: 'src' },
    check: (text, data) => {
      expect(text).toMatch(/paths relative to src\/\.\n<file path="src"[^\n]*>[^<]*\nauth\.ts {2}346 B\n/);
      expect(data.total).toBe(3);
      expect(data.dir).toBe('src');
      expect(data.items).toContainEqual({ name: 'auth.ts', size: 346 });
    },
  },
  {
    tool: 'glob',
    args: { pattern: '**/*.ts' },
    check: (text, data) => {
      expect(text).toMatch(/: 3 files, paths relative to src\/\.\n<file [^\n]*>\nauth\.ts\nconfig\.ts\nutil\.ts\n/);
      expect(data.dir).toBe('src');
      expect(data.items).toEqual([{ name: 'auth.ts' }, { name: 'config.ts' }, { name: 'util.ts' }]);
    },
  },
  {
    tool: 'grep',
    args: { pattern: 'retries', path: 'src' },
    check: (text, data) => {
      expect(text).toContain('2:\texport const retries = 3;');
      expect(data.total).toBe(4);
      expect(data.files).toBe(2);
    },
  },
  {
    tool: 'find_symbol',
    args: { query: 'login' },
    check: (text, data) => {
      // The hint is a call of the tools this client has, not of the library's API.
      expect(text).toContain('get_symbol({"path":"src/auth.ts","name":"AuthManager.login"})');
      expect((data.items as Data[])[0]).toMatchObject({ path: 'src/auth.ts', kind: 'method', startLine: 7, endLine: 11 });
    },
  },
  {
    tool: 'read_file',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain("    return user === 'admin' && password === 'secret';");
      expect(data).toMatchObject({ path: 'src/auth.ts', view: 'full', total_lines: 16 });
    },
  },
  {
    tool: 'read_lines',
    args: { path: 'src/auth.ts', start_line: 7, end_line: 9 },
    check: (text, data) => {
      expect(text).toContain('7\t  login(user: string, password: string): boolean {');
      expect(text).toContain('9\t    if (this.attempts > retries) return false;');
      expect(text).not.toContain("10\t    return user === 'admin'");
      expect(data).toMatchObject({ view: 'lines', start_line: 7, end_line: 9 });
    },
  },
  {
    tool: 'get_excerpt',
    args: { path: 'src/config.ts', max_lines: 2 },
    check: (text, data) => {
      expect(text).toContain('2\texport const retries = 3;');
      expect(text).not.toContain('export const timeoutMs');
      expect(data).toMatchObject({ view: 'excerpt', start_line: 1, end_line: 2 });
    },
  },
  {
    tool: 'get_outline',
    args: { path: 'docs/guide.md' },
    check: (text, data) => {
      expect(text).toContain('## Install');
      expect(text).toContain('## Use');
      expect(data.path).toBe('docs/guide.md');
    },
  },
  {
    tool: 'get_symbol',
    args: { path: 'src/auth.ts', name: 'AuthManager.logout' },
    check: (text, data) => {
      expect(text).toContain('13\t  logout(): void {');
      expect(text).not.toContain('login(');
      expect(data).toMatchObject({ view: 'symbol', start_line: 13, end_line: 15 });
    },
  },
  {
    tool: 'get_related_files',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain('src/config.ts');
      expect(data.related).toEqual([{ path: 'src/config.ts', relation: 'imports', depth: 1, via: 'src/auth.ts', specifier: './config.ts' }]);
    },
  },
  {
    tool: 'summarize_file',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain('class AuthManager {login, logout}');
      expect(data.view).toBe('summary');
    },
  },
  {
    tool: 'get_file_metadata',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain('16 lines');
      expect(data).toMatchObject({ path: 'src/auth.ts', kind: 'file', lines: 16, language: 'typescript', versions: 1 });
    },
  },
  {
    tool: 'write_file',
    args: { path: 'notes/todo.md', content: '# TODO\n\n- ship\n' },
    check: (text, data) => {
      expect(text).toContain('+- ship');
      expect(data).toMatchObject({ success: true, path: 'notes/todo.md', lines_added: 3 });
    },
  },
  {
    tool: 'create_file',
    args: { path: 'src/slug.ts', content: 'export const slug = (s: string) => s.toLowerCase();\n' },
    check: (text, data) => {
      expect(text).toContain('Created src/slug.ts');
      expect(data).toMatchObject({ success: true, op: 'create' });
    },
  },
  {
    tool: 'replace',
    args: { path: 'src/config.ts', old_text: 'export const retries = 3;', new_text: 'export const retries = 5;' },
    check: (text, data) => {
      expect(text).toContain('-export const retries = 3;\n+export const retries = 5;');
      expect(data).toMatchObject({ success: true, op: 'replace', seq: 2, lines_added: 1, lines_removed: 1 });
    },
  },
  {
    tool: 'edit_lines',
    args: { path: 'src/config.ts', action: 'replace', start_line: 3, text: 'export const timeoutMs = 9000;\n' },
    check: (text, data) => {
      expect(text).toContain('+export const timeoutMs = 9000;');
      expect(data).toMatchObject({ success: true, seq: 3 });
    },
  },
  {
    tool: 'apply_patch',
    args: { patch: PATCH },
    check: (text, data) => {
      expect(text).toContain("+  return text.trim().toLowerCase().replace(/\\s+/g, '-');");
      expect(data).toMatchObject({ success: true, path: 'src/util.ts', merged: false });
    },
  },
  {
    tool: 'rename_file',
    args: { from: 'src/slug.ts', to: 'src/lib/slug.ts' },
    check: (text, data) => {
      expect(text).toContain('rename to src/lib/slug.ts');
      expect(data).toMatchObject({ success: true, op: 'rename', path: 'src/lib/slug.ts' });
    },
  },
  {
    tool: 'delete_file',
    args: { path: 'src/lib/slug.ts' },
    check: (text, data) => {
      expect(text).toContain('-export const slug');
      expect(data).toMatchObject({ success: true, op: 'delete' });
    },
  },
  {
    tool: 'get_diff',
    args: { path: 'src/config.ts', from: 1, to: 'current' },
    check: (text, data) => {
      expect(text).toContain('-export const retries = 3;');
      expect(text).toContain('+export const timeoutMs = 9000;');
      expect(data).toMatchObject({ lines_added: 2, lines_removed: 2, truncated: false });
    },
  },
  {
    tool: 'get_file_history',
    args: { path: 'src/config.ts' },
    check: (text, data) => {
      expect(text).toContain('3 versions, newest first');
      expect((data.versions as Data[]).map((v) => [v.seq, v.op])).toEqual([
        [3, 'edit-lines'],
        [2, 'replace'],
        [1, 'initial'],
      ]);
    },
  },
  {
    tool: 'check_conflicts',
    args: { path: 'src/config.ts' },
    check: (text, data) => {
      expect(text).toContain('no conflict');
      expect(data).toMatchObject({ conflict: false });
    },
  },
  {
    tool: 'rollback',
    args: { path: 'src/config.ts', to: 1 },
    check: (text, data) => {
      expect(text).toContain('+export const retries = 3;');
      expect(data).toMatchObject({ success: true, op: 'rollback', seq: 4 });
    },
  },
  {
    tool: 'undo',
    args: { path: 'src/config.ts' },
    check: (text, data) => {
      expect(text).toContain('+export const retries = 5;');
      expect(data).toMatchObject({ success: true, op: 'undo', seq: 5 });
    },
  },
  {
    tool: 'run_command',
    // A budget the output is over: the result keeps it, and names the call that reads the rest.
    args: { command: 'seq 1 300', max_tokens: 200 },
    check: (text, data) => {
      expect(text).toContain('exit 0 (');
      expect(data).toMatchObject({ exit_code: 0, total_lines: 300, limits: [] });
      expect(data.output_id).toMatch(/^[0-9a-f]{12}$/);
      KEPT.id = data.output_id;
    },
  },
  {
    tool: 'read_command_output',
    args: KEPT,
    check: (text, data) => {
      expect(text).toContain('150\t150');
      expect(data).toMatchObject({ start_line: 150, end_line: 152, total_lines: 300 });
    },
  },
  {
    tool: 'open_file',
    args: { path: 'src/auth.ts', permission: 'human' },
    check: (text, data) => {
      expect(text).toMatch(/^src\/auth\.ts: clean, human, buffer version 1/);
      expect(data).toMatchObject({ path: 'src/auth.ts', status: 'clean', permission: 'human', on_disk: true });
    },
  },
  {
    tool: 'file_status',
    args: {},
    check: (_text, data) => {
      // The connection's session keeps the buffer between calls.
      expect(data.buffers).toMatchObject([{ path: 'src/auth.ts', status: 'clean', buffer_version: 1 }]);
    },
  },
  {
    tool: 'buffer_diff',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain('[file:src/auth.ts]\nstatus: clean\n');
      expect(data).toMatchObject({ diff: '', lines_added: 0 });
    },
  },
  {
    // Open, the file takes the edit in its buffer; the disk is untouched.
    tool: 'replace',
    args: { path: 'src/auth.ts', old_text: 'this.attempts > retries', new_text: 'this.attempts >= retries' },
    check: (text, data) => {
      expect(text).toContain('Changed the open buffer of src/auth.ts');
      expect(data).toMatchObject({ success: true, op: 'replace', next: 'save_file({"path":"src/auth.ts"})' });
      expect(data.seq).toBeUndefined();
    },
  },
  {
    tool: 'undo_buffer_edit',
    args: { path: 'src/auth.ts' },
    check: (_text, data) => expect(data).toMatchObject({ status: 'clean', dirty: false, undo: 0, redo: 1 }),
  },
  {
    tool: 'save_file',
    args: { path: 'src/auth.ts' },
    check: (text, data) => {
      expect(text).toContain('src/auth.ts: nothing to save.');
      expect(data).toMatchObject({ saved: false, buffer: { status: 'clean' } });
    },
  },
  {
    tool: 'reload_file',
    args: { path: 'src/auth.ts' },
    check: (_text, data) => expect(data).toMatchObject({ status: 'clean', dirty: false }),
  },
  {
    tool: 'close_file',
    args: { path: 'src/auth.ts' },
    check: (text) => expect(text).toBe('Closed src/auth.ts.'),
  },
];

/** What src/config.ts holds after the script: the rollback undone, so both edits are back. */
const CONFIG_AFTER = CONFIG.replace('retries = 3', 'retries = 5').replace('timeoutMs = 5000', 'timeoutMs = 9000');

async function expectToolFailure(c: Connected, name: string, args: Data, code: string): Promise<string> {
  // A JSON-RPC error would reject here; a tool failure resolves, as a result.
  const r = await call(c.client, name, args);
  expect(r.isError, `${name} ${JSON.stringify(args)}: ${r.text}`).toBe(true);
  // A refused change carries its code in the structured result; any other failure opens its text with it.
  if (r.data?.success === false) expect(r.data.code).toBe(code);
  else expect(r.text.startsWith(`${code}:`), r.text).toBe(true);
  return r.text;
}

describe.each(matrix)('over $transport on $backend', ({ transport, backend }: { transport: TransportKind; backend: BackendWorkspace['kind'] }) => {
  let ws: BackendWorkspace;
  let c: Connected;

  beforeAll(async () => {
    ws = await backendWorkspace(backend, PROJECT);
    c = await serveOne(transport, ws.args);
  });
  afterAll(async () => {
    await c?.close();
    await ws?.remove();
  });

  it('lists every tool with schemas and annotations', () => {
    expect(c.tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    for (const t of c.tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations?.openWorldHint).toBe(false);
    }
  });

  it('runs every tool once, each result validated by the client against its output schema', async () => {
    for (const step of SCRIPT) {
      const before = c.validator.validated.length;
      const r = await call(c.client, step.tool, step.args);
      expect(r.isError, `${step.tool}: ${r.text}`).toBe(false);
      expect(r.data, `${step.tool} sent no structured content`).toBeDefined();
      const data = r.data ?? {};
      // The SDK client validated exactly this result, and found it valid.
      expect(c.validator.validated.length, `${step.tool} was not validated by the client`).toBe(before + 1);
      expect(c.validator.validated.at(-1)).toMatchObject({ input: data, valid: true });
      // The published schema and the definition's own agree on it.
      expect(TOOLS.find((t) => t.name === step.tool)?.output.safeParse(data).success).toBe(true);
      step.check(r.text, data);
    }
    expect(new Set(SCRIPT.map((s) => s.tool))).toEqual(new Set(c.tools.map((t) => t.name)));
  });

  it('left the changes on the backend', async () => {
    const read = ws.readBack ?? ((path: string) => readWhole(c, path));
    expect(await read('src/config.ts')).toBe(CONFIG_AFTER);
    expect(await read('notes/todo.md')).toBe('# TODO\n\n- ship\n');
    expect(await read('src/util.ts')).toContain('text.trim().toLowerCase()');
    const gone = await call(c.client, 'read_file', { path: 'src/lib/slug.ts' });
    expect(gone.text.startsWith('ENOENT:')).toBe(true);
  });

  /** Refusals of the workspace (not of the arguments), kept for the check of their hints. */
  const refusals: string[] = [];

  it('answers failures as tool results with isError', async () => {
    refusals.push(await expectToolFailure(c, 'read_lines', { path: 'src/missing.ts', start_line: 1 }, 'ENOENT'));
    refusals.push(await expectToolFailure(c, 'get_symbol', { path: 'src/auth.ts', name: 'AuthManager.signup' }, 'ENOENT'));
    refusals.push(await expectToolFailure(c, 'read_lines', { path: 'src/auth.ts', start_line: 9, end_line: 3 }, 'EINVAL'));
    expect(await expectToolFailure(c, 'read_file', { path: '../x' }, 'EPATHESCAPE')).toContain('paths are relative to the workspace root');
    expect(await expectToolFailure(c, 'write_file', { path: '../escaped.txt', content: 'x' }, 'EPATHESCAPE')).toContain('climbs above the workspace root');
    expect(await expectToolFailure(c, 'no_such_tool', {}, 'ENOTOOL')).toContain('The tools: project_overview, list_files');
    // Wrong type, missing argument, unknown argument: refused with the way to call it.
    expect(await expectToolFailure(c, 'read_lines', { path: 'src/auth.ts', start_line: 'abc' }, 'EINVAL')).toContain('read_lines(path, start_line');
    await expectToolFailure(c, 'read_file', {}, 'EINVAL');
    await expectToolFailure(c, 'grep', { pattern: 'x', colour: true }, 'EINVAL');
  });

  // The way on from a refusal is a call of the tools the client has (`glob({...})`), not of the library (`glob("**/x")`).
  it('writes the hints of a refusal as tool calls', () => {
    expect(refusals).toHaveLength(3);
    for (const text of refusals) expect(libraryCallsIn(text), text).toEqual([]);
  });

  it('sends a refused change with its structured result, validated like any other', async () => {
    const before = c.validator.validated.length;
    const r = await call(c.client, 'replace', { path: 'src/auth.ts', old_text: 'no such text anywhere', new_text: 'x' });
    expect(r.isError).toBe(true);
    expect(r.data).toMatchObject({ success: false, path: 'src/auth.ts' });
    expect(c.validator.validated.length).toBe(before + 1);
    expect(c.validator.validated.at(-1)?.valid).toBe(true);
  });
});

describe('a read-only server', () => {
  let ws: TempWorkspace;
  let c: Connected;

  beforeAll(async () => {
    ws = tempWorkspace();
    c = await serveOne('stdio', ['--root', ws.root, '--read-only']);
  });
  afterAll(async () => {
    await c?.close();
    ws?.remove();
  });

  it('offers only the tools that read, and has no others to call', async () => {
    expect(c.tools.map((t) => t.name)).toEqual(READ_TOOLS.map((t) => t.name));
    expect(c.tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect((await call(c.client, 'read_lines', { path: 'README.md', start_line: 1 })).text).toContain('# Demo service');
    expect(await expectToolFailure(c, 'write_file', { path: 'README.md', content: 'gone\n' }, 'ENOTOOL')).not.toContain('write_file,');
    expect(ws.read('README.md')).toBe(PROJECT['README.md']);
  });
});
