import { describe, expect, it } from 'vitest';
import { parseCall } from '../src/index.ts';
import { freshWorkspace } from './workspace.ts';

describe('dispatch in every shape, against a real session', () => {
  const workspace = freshWorkspace();

  it('runs a Chat Completions tool call with its arguments as a JSON string, nulls for the rest, and replies with a tool message', async () => {
    const w = workspace();
    const args = { path: 'src/doc.ts', start_line: 3, end_line: 4, context: null, column: null, max_tokens: null };
    const { call, result, reply } = await w.toolset.dispatch({
      id: 'call_1',
      type: 'function',
      function: { name: 'read_lines', arguments: JSON.stringify(args) },
    });
    expect(call).toEqual({ id: 'call_1', name: 'read_lines', arguments: JSON.stringify(args), shape: 'openai-chat' });
    expect(result.isError).toBe(false);
    expect(result.text).toContain('3\texport class Doc {\n4\t  args: string[];\n');
    expect(result.data).toMatchObject({ path: 'src/doc.ts', start_line: 3, end_line: 4, total_lines: 52 });
    expect(reply).toEqual({ role: 'tool', tool_call_id: 'call_1', content: result.text });
  });

  it('runs a Responses API function call and replies with a function_call_output named by call_id', async () => {
    const w = workspace();
    const { result, reply } = await w.toolset.dispatch({
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_2',
      name: 'grep',
      arguments: '{"pattern":"class Doc","path":null,"glob":"**/*.ts","literal":null,"ignore_case":null,"context_lines":null,"output":null}',
    });
    expect(result.text).toContain('src/doc.ts\n3:\texport class Doc {');
    expect(reply).toEqual({ type: 'function_call_output', call_id: 'call_2', output: result.text });
  });

  it('runs an Anthropic tool_use block and replies with a tool_result, marked as an error when it failed', async () => {
    const w = workspace();
    const ok = await w.toolset.dispatch({ type: 'tool_use', id: 'toolu_1', name: 'find_symbol', input: { query: 'Doc.write' } });
    expect(ok.result.text).toContain('get_symbol({"path":"src/doc.ts","name":"Doc.write"})');
    expect(ok.reply).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: ok.result.text });

    const missing = await w.toolset.dispatch({ type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'src/missing.ts' } });
    expect(missing.result).toMatchObject({ isError: true, data: { error: { code: 'ENOENT', path: 'src/missing.ts' } } });
    expect(missing.reply).toEqual({ type: 'tool_result', tool_use_id: 'toolu_2', content: missing.result.text, is_error: true });
    expect(missing.reply.content).toMatch(/^ENOENT: /);
    // The model's one line holds it all; the data says each part once, as the CLI's own errors do.
    const error = (missing.result.data as { error: { code: string; message: string; hint: string } }).error;
    expect(error.message).toBe("no file at src/missing.ts, read_file 'src/missing.ts'");
    expect(error.hint.length).toBeGreaterThan(0);
    expect(missing.result.text).toBe(`ENOENT: ${error.message} (${error.hint})`);
  });

  it('runs an AI SDK tool call and replies with a tool-result part, text or error-text', async () => {
    const w = workspace();
    const ok = await w.toolset.dispatch({ type: 'tool-call', toolCallId: 'c_1', toolName: 'get_excerpt', input: { path: 'README.md', max_lines: 3 } });
    expect(ok.call.shape).toBe('ai-sdk');
    expect(ok.reply).toEqual({ type: 'tool-result', toolCallId: 'c_1', toolName: 'get_excerpt', output: { type: 'text', value: ok.result.text } });

    const refused = await w.toolset.dispatch({ toolCallId: 'c_2', toolName: 'get_excerpt', input: { path: 'README.md', lines: 3 } });
    expect(refused.reply).toEqual({
      type: 'tool-result',
      toolCallId: 'c_2',
      toolName: 'get_excerpt',
      output: { type: 'error-text', value: 'EINVAL: get_excerpt: unknown argument "lines". Call it as get_excerpt(path, max_lines?) (? = optional).' },
    });
  });

  it('runs a plain call that changes a file, with the names models use, and replies with the text and the data', async () => {
    const w = workspace();
    await w.toolset.run('read_file', { path: 'src/doc.ts' });
    const { result, reply } = await w.toolset.dispatch({
      name: 'replace',
      arguments: '{"file_path":"src/doc.ts","old_string":"  indent = 0;","new_string":"  indent = 2;"}',
    });
    expect(result.isError).toBe(false);
    expect(result.text).toContain('-  indent = 0;\n+  indent = 2;');
    expect(reply).toEqual({ name: 'replace', id: undefined, content: result.text, isError: false, data: result.data });
    expect(result.data).toMatchObject({ success: true, path: 'src/doc.ts', lines_added: 1, lines_removed: 1 });
    expect(await w.text('src/doc.ts')).toContain('  indent = 2;\n');

    const undone = await w.toolset.dispatch({ name: 'undo', id: 'u1', input: { path: 'src/doc.ts' } });
    expect(undone.reply).toMatchObject({ id: 'u1', isError: false });
    expect(await w.text('src/doc.ts')).toContain('  indent = 0;\n');
  });

  it('answers an unknown tool with the list of tools, in the shape of the call', async () => {
    const w = workspace();
    const { reply } = await w.toolset.dispatch({ id: 'call_9', type: 'function', function: { name: 'cat', arguments: '{"path":"README.md"}' } });
    expect(reply.role).toBe('tool');
    expect(reply.content).toMatch(/^ENOTOOL: There is no tool "cat"\.\nThe tools: project_overview, list_files, glob, grep, /);
  });

  it('refuses what is not a call, and a call in an SDK shape without the id its reply needs', () => {
    expect(() => parseCall('read_file')).toThrow(TypeError);
    expect(() => parseCall({ arguments: {} })).toThrow('Not a tool call');
    expect(() => parseCall({ type: 'function', function: { name: 'read_file', arguments: '{}' } })).toThrow(
      'A tool call in the openai-chat shape carries its id; read_file has none.',
    );
    expect(() => parseCall({ type: 'tool_use', name: 'read_file', input: {} })).toThrow('carries its id');
    expect(() => parseCall({ toolName: 'read_file', input: {} })).toThrow('carries its toolCallId');
    expect(parseCall({ type: 'function_call', id: 'fc_1', name: 'read_file', arguments: '{}' })).toMatchObject({ id: 'fc_1', shape: 'openai-responses' });
    expect(parseCall({ name: 'read_file', args: { path: 'a' } })).toEqual({ id: undefined, name: 'read_file', arguments: { path: 'a' }, shape: 'plain' });
  });
});

describe('search results as data', () => {
  const workspace = freshWorkspace();

  it('find_symbol gives each entry as the JSON it is sent as: the session’s entry less its undefined members', async () => {
    const w = workspace();
    const viaTool = await w.toolset.run('find_symbol', { query: 'Doc' });
    const direct = await w.session.findSymbol('Doc');
    // The call each entry offers is written in its caller's style: a tool's call for the tool, the API's for the session.
    const offered = (xs: readonly object[]) => xs.map((x) => ({ ...x, call: undefined }));
    const items = (viaTool.data as { items: Array<{ call: string }> }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items[0]?.call).toBe('get_symbol({"path":"src/doc.ts","name":"Doc"})');
    expect(offered(items)).toEqual(offered(JSON.parse(JSON.stringify(direct.items)) as object[]));
    // Nothing undefined is left for a schema check or a client to trip on.
    for (const item of items) for (const v of Object.values(item as object)) expect(v).not.toBeUndefined();
  });

  it('list_files gives each entry by its name under the directory listed, with its size: no member a row repeats for nothing', async () => {
    const w = workspace();
    const viaTool = await w.toolset.run('list_files', { path: 'src' });
    const direct = await w.session.listFiles('src');
    expect(direct.items.length).toBeGreaterThan(0);
    expect(viaTool.data).toMatchObject({ dir: 'src', shown: direct.items.length });
    expect((viaTool.data as { items: unknown[] }).items).toEqual(direct.items.map((f) => ({ name: f.path.slice('src/'.length), size: f.size })));
  });

  it('glob gives each match by its name under the directory the matches share: no kind or sensitive: false on every row', async () => {
    const w = workspace();
    const viaTool = await w.toolset.run('glob', { pattern: '**/*.ts' });
    const direct = await w.session.glob('**/*.ts');
    expect(direct.items.length).toBeGreaterThan(1);
    const start = direct.dir === '' ? 0 : direct.dir.length + 1;
    expect(viaTool.data).toMatchObject({ dir: direct.dir, shown: direct.items.length });
    expect((viaTool.data as { items: unknown[] }).items).toEqual(direct.items.map((f) => ({ name: f.path.slice(start) })));
  });

  it('grep gives each file once, by its name under the directory the files share, with its lines: no path, version or empty context on every line', async () => {
    const w = workspace();
    const viaTool = await w.toolset.run('grep', { pattern: 'class' });
    const direct = await w.session.grep('class');
    const start = direct.dir === '' ? 0 : direct.dir.length + 1;
    const files = [...new Set(direct.items.map((h) => h.path))];
    expect(viaTool.data).toMatchObject({ dir: direct.dir, shown: direct.items.length });
    expect((viaTool.data as { items: unknown[] }).items).toEqual(
      files.map((path) => {
        const hits = direct.items.filter((h) => h.path === path);
        return { name: path.slice(start), matches: hits[0]?.matches, version: hits[0]?.version, lines: hits.map((h) => ({ line: h.line, text: h.text })) };
      }),
    );
  });
});

describe('answers about a path that is not a readable file', () => {
  const workspace = freshWorkspace();

  it('check_conflicts on a directory or a missing file is a tool error with its code, never a protocol error or "no conflict"', async () => {
    const w = workspace();
    const dir = await w.toolset.run('check_conflicts', { path: 'src' });
    expect(dir.isError).toBe(true);
    expect(dir.text).toMatch(/^EISDIR/);
    const missing = await w.toolset.run('check_conflicts', { path: 'src/nowhere.ts' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^ENOENT: no file at src\/nowhere\.ts/);
    expect(missing.text).toContain('glob({"pattern":"**/nowhere.ts"})');
    const file = await w.toolset.run('check_conflicts', { path: 'src/doc.ts' });
    expect(file).toMatchObject({ isError: false, data: { path: 'src/doc.ts', conflict: false } });
  });

  it('get_file_metadata of a directory describes the directory, not a file in it', async () => {
    const w = workspace();
    for (const path of ['src', './src/', '.']) {
      const r = await w.toolset.run('get_file_metadata', { path });
      expect(r.text).not.toMatch(/^E[A-Z]+/);
      expect(r.isError).toBe(false);
      expect(r.data).toMatchObject({ path: path === '.' ? '.' : 'src', kind: 'directory' });
    }
    expect((await w.toolset.run('get_file_metadata', { path: 'src/doc.ts' })).data).toMatchObject({ path: 'src/doc.ts', kind: 'file' });
  });

  it('an edit refusal leads with its code; a binary file is refused with a call a model has', async () => {
    const w = workspace();
    const refused = await w.toolset.run('replace', { path: 'src/doc.ts', old_string: 'no such text anywhere', new_string: 'x' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^E[A-Z]+: /);
    expect(refused.text.startsWith(`${(refused.data as { code: string }).code}: `)).toBe(true);
    await w.fs.writeBytes('logo.bin', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0, 1, 2, 3]));
    const binary = await w.toolset.run('read_file', { path: 'logo.bin' });
    expect(binary.isError).toBe(true);
    expect(binary.text).toMatch(/^EBINARY/);
    expect(binary.text).toContain('list_files({"path":"logo.bin"})');
    expect(binary.text).not.toContain('fs.readBytes');
    const listed = await w.toolset.run('list_files', { path: 'logo.bin' });
    expect(listed.isError).toBe(false);
  });

  it('get_file_history of a missing path is ENOENT, of a directory EISDIR; a deleted file keeps its history', async () => {
    const w = workspace();
    const missing = await w.toolset.run('get_file_history', { path: 'src/nowhere.ts' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^ENOENT: no file at src\/nowhere\.ts, and none was ever recorded there/);
    expect((await w.toolset.run('get_file_history', { path: 'src' })).text).toMatch(/^EISDIR/);
    expect((await w.toolset.run('delete_file', { path: 'src/doc.ts' })).isError).toBe(false);
    const deleted = await w.toolset.run('get_file_history', { path: 'src/doc.ts' });
    expect(deleted.isError).toBe(false);
    expect(deleted.text).toContain('delete');
  });
});

describe('an operation no tool runs', () => {
  it('is named for who can do it, never as a call a model cannot make: the scan of an unscanned workspace', async () => {
    const { MemoryFilesystem } = await import('@ctxfs/memory');
    const { createContext } = await import('@ctxfs/context');
    const { Toolset } = await import('../src/index.ts');
    const ctx = await createContext({ fs: new MemoryFilesystem({ files: { 'notes.txt': 'no code here\n' } }), safety: { policyFiles: false } });
    try {
      const tools = new Toolset(ctx.session({ agent: 'llm:test' }));
      const missing = await tools.run('read_file', { path: 'src/b.ts' });
      // A file read makes the registry know one file: find_symbol then does not scan, and says a scan is missing.
      expect((await tools.run('read_file', { path: 'notes.txt' })).isError).toBe(false);
      for (const r of [missing, await tools.run('find_symbol', { query: 'nothing' })]) {
        expect(r.text).toContain('a scan of the workspace by the application running ctxfs');
        expect(r.text).not.toMatch(/\bscan\(/);
      }
    } finally {
      await ctx.close();
    }
  });
});

describe('a rollback of a path that never held a file', () => {
  const workspace = freshWorkspace();
  it('offers a search for the file, not its history (which does not exist either)', async () => {
    const w = workspace();
    const r = await w.toolset.run('rollback', { path: 'src/nope.ts', to: 1 });
    expect(r).toMatchObject({ isError: true });
    expect(r.text).toContain('none was ever recorded there');
    expect(r.text).not.toContain('get_file_history');
    const offered = /glob\((\{.*?\})\)/.exec(r.text);
    expect(offered, r.text).not.toBeNull();
    const followed = await w.toolset.run('glob', JSON.parse(offered?.[1] ?? '{}') as Record<string, unknown>);
    expect(followed.isError, followed.text).toBe(false);
  });
});

describe('metadata of a file over the edit limit', () => {
  it('is served: size and lines, no version (such a file is never versioned), not the edit limit refusal', async () => {
    const { MemoryFilesystem } = await import('@ctxfs/memory');
    const { createContext } = await import('@ctxfs/context');
    const { Toolset } = await import('../src/index.ts');
    const line = 'a log line that repeats\n';
    const big = line.repeat(Math.ceil((40 * 1024 * 1024) / line.length));
    const ctx = await createContext({ fs: new MemoryFilesystem({ files: { 'big.log': big } }), safety: { policyFiles: false } });
    try {
      await ctx.scan();
      const r = await new Toolset(ctx.session({ agent: 'llm:test' })).run('get_file_metadata', { path: 'big.log' });
      expect(r.isError, r.text).toBe(false);
      expect(r.data).toMatchObject({ path: 'big.log', kind: 'file', size: big.length, versions: 0 });
    } finally {
      await ctx.close();
    }
  });
});

describe('a budget too small for one line', () => {
  it('names the budget option as the tool names it (max_tokens), and offers none where the tool has none (grep)', async () => {
    const { MemoryFilesystem } = await import('@ctxfs/memory');
    const { createContext } = await import('@ctxfs/context');
    const { Toolset, TOOLS, toolCallStyle } = await import('../src/index.ts');
    // One line of about 400 tokens: a call with max_tokens 50 cannot hold it.
    const line = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const ctx = await createContext({ fs: new MemoryFilesystem({ files: { 'n.txt': `${line}\n` } }), safety: { policyFiles: false } });
    try {
      const tools = new Toolset(ctx.session({ agent: 'llm:test' }));
      const r = await tools.run('read_lines', { path: 'n.txt', start_line: 1, end_line: 1, max_tokens: 50 });
      expect(r.text).toContain('raise max_tokens (the profile allows up to');
      expect(r.text).not.toContain('maxTokens');
      // An error result, with its code first as every error result has it.
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/^ELIMIT: The budget of this call \(50 tokens\)/);
      const style = toolCallStyle(TOOLS);
      expect(style.optionName?.('readLines', 'maxTokens')).toBe('max_tokens');
      expect(style.optionName?.('grep', 'maxTokens')).toBeUndefined();
    } finally {
      await ctx.close();
    }
  });
});

describe('a failure that is no refusal', () => {
  it('is an EINTERNAL error result the model can act on, without host paths, never thrown through the transport', async () => {
    const { MemoryFilesystem } = await import('@ctxfs/memory');
    const { createContext } = await import('@ctxfs/context');
    const { Toolset } = await import('../src/index.ts');
    // A backend with a defect: its byte reads (read_file's is readWithStat) fail with a plain TypeError naming a host path.
    const defect = () => new TypeError("Cannot read properties of undefined (reading 'chunk') at /home/someone/secret/reader.js:12");
    class Broken extends MemoryFilesystem {
      override readBytes(): never {
        throw defect();
      }
      override readWithStat(): never {
        throw defect();
      }
    }
    const ctx = await createContext({ fs: new Broken({ files: { 'a.txt': 'alpha\n' } }), safety: { policyFiles: false } });
    try {
      const r = await new Toolset(ctx.session({ agent: 'llm:test' })).run('read_file', { path: 'a.txt' });
      expect(r.isError).toBe(true);
      expect(r.data).toMatchObject({ error: { code: 'EINTERNAL' } });
      expect(r.text).toMatch(/^EINTERNAL: ctxfs failed inside read_file \(TypeError: Cannot read properties of undefined/);
      expect(r.text).toContain('look at the file before trying again');
      expect(r.text).not.toContain('/home/someone');
    } finally {
      await ctx.close();
    }
  });
});

describe('the names a result gives its operation', () => {
  const workspace = freshWorkspace();
  it("are the tools' own (list_files, find_symbol), not the library's (listFiles, findSymbol)", async () => {
    const w = workspace();
    const listed = await w.toolset.run('list_files', { path: 'src' });
    expect(listed.text).toMatch(/^list_files src/);
    const missing = await w.toolset.run('find_symbol', { query: 'NoSuchNameAnywhere' });
    expect(missing.text).toMatch(/^find_symbol "NoSuchNameAnywhere": no definition matches/);
    for (const r of [listed, missing]) expect(r.text).not.toMatch(/\blistFiles\b|\bfindSymbol\b/);
  });

  it('a find_symbol that matches nothing offers a grep that runs: literal when the name holds regex syntax', async () => {
    const w = workspace();
    const r = await w.toolset.run('find_symbol', { query: 'zzNoSuchThing.run(' });
    const offered = /grep\((\{.*?\})\)/.exec(r.text);
    expect(offered, r.text).not.toBeNull();
    const args = JSON.parse(offered?.[1] ?? '{}') as Record<string, unknown>;
    expect(args).toMatchObject({ literal: true });
    const followed = await w.toolset.run('grep', args);
    expect(followed.isError, followed.text).toBe(false);
  });
});

describe('a file call given a name written as a directory', () => {
  const workspace = freshWorkspace();
  it("names the tool that takes a file (read_file), not the library's call", async () => {
    const r = await workspace().toolset.run('read_file', { path: 'src/doc.ts/' });
    expect(r).toMatchObject({ isError: true, data: { error: { code: 'ENOTDIR' } } });
    expect(r.text).toContain('but read_file takes a file');
    expect(r.text).not.toContain('readFile');
  });

  it('names the edit tool too (write_file, create_file, delete_file, edit_lines), not the edit as history records it', async () => {
    const w = workspace();
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { path: 'lib/', content: 'x\n' }],
      ['create_file', { path: 'lib/', content: 'x\n' }],
      ['delete_file', { path: 'src/doc.ts/' }],
      ['edit_lines', { path: 'src/doc.ts/', action: 'replace', start_line: 1, end_line: 1, text: 'x\n' }],
    ];
    for (const [tool, args] of calls) {
      const r = await w.toolset.run(tool, args);
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toContain(`but ${tool} takes a file`);
    }
  });
});

describe('an edit refused over its base version', () => {
  const workspace = freshWorkspace();
  it('names the option as the tool takes it (base_version), and a stale delete gives the call that deletes the file as it is now', async () => {
    const w = workspace();
    const unknown = await w.toolset.run('replace', { path: 'README.md', old_text: 'Zod', new_text: 'zod', base_version: 'deadbeef' });
    const malformed = await w.toolset.run('replace', { path: 'README.md', old_text: 'Zod', new_text: 'zod', base_version: 'not-a-version' });
    for (const r of [unknown, malformed]) {
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toContain('base_version "');
      expect(r.text).not.toContain('baseVersion');
    }
    await w.toolset.run('read_file', { path: 'src/doc.ts' });
    await w.fs.writeBytes('src/doc.ts', new TextEncoder().encode(`// changed by someone else\n${await w.text('src/doc.ts')}`));
    const stale = await w.toolset.run('delete_file', { path: 'src/doc.ts' });
    expect(stale).toMatchObject({ isError: true, data: { code: 'ECONFLICT' } });
    expect(stale.text).not.toContain('baseVersion');
    const call = /delete_file\((\{.*?\})\)/.exec(stale.text);
    expect(call, stale.text).not.toBeNull();
    // The call it gives works: the file goes, as it is now.
    const followed = await w.toolset.run('delete_file', JSON.parse(call?.[1] ?? '{}') as Record<string, unknown>);
    expect(followed.isError, followed.text).toBe(false);
    expect(await w.fs.exists('src/doc.ts')).toBe(false);
  });
});
