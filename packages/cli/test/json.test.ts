import { afterAll, describe, expect, it } from 'vitest';
import { JSON_SHAPES } from '../src/schemas.ts';
import { ctxfs, shapeErrors, useProject } from './support/cli.ts';

// Every command's --json, from the built binary, against the shape the README documents.
describe('--json: every command answers one document of its documented shape', () => {
  const project = useProject();
  const checked = new Set<string>();

  function json(shape: string, args: readonly string[], expectedStatus = 0, input?: string): Record<string, unknown> {
    // Before a `--`, after which every word is the command's (ctxfs run).
    const end = args.indexOf('--');
    const r = ctxfs(project, end === -1 ? [...args, '--json'] : [...args.slice(0, end), '--json', ...args.slice(end)], { input });
    expect(r.status, `${args.join(' ')}\n${r.stderr}`).toBe(expectedStatus);
    const data = r.json();
    expect(shapeErrors(shape, data), `${args.join(' ')} → ${r.stdout}`).toEqual([]);
    checked.add(shape);
    return data;
  }

  it('the reading commands', () => {
    // .env is withheld by the default policy: the overview counts what ls lists.
    expect(json('overview', ['overview']).files).toBe(4);
    expect(json('ls', ['ls', 'src'])).toMatchObject({ shown: 2, dir: 'src', items: [{ name: 'main.ts' }, { name: 'math.ts' }] });
    expect(json('cat', ['cat', 'src/math.ts']).view).toBe('full');
    expect(json('cat --lines', ['cat', 'src/math.ts', '--lines', '2:4'])).toMatchObject({ view: 'lines', start_line: 2, end_line: 4 });
    expect(json('grep', ['grep', 'retries'])).toMatchObject({ total: 1, dir: '', items: [{ name: 'src/math.ts', matches: 1, lines: [{ line: 6 }] }] });
    // A file this small is served whole in place of its outline.
    expect(json('outline', ['outline', 'src/math.ts'])).toMatchObject({ path: 'src/math.ts', view: 'full' });
    expect(json('symbol <name> <file>', ['symbol', 'add', 'src/math.ts']).view).toBe('symbol');
    expect(json('symbol <name>', ['symbol', 'add']).shown).toBe(1);
    expect(json('related', ['related', 'src/math.ts']).related).toEqual([expect.objectContaining({ path: 'src/main.ts' })]);
  });

  it('the editing and history commands', () => {
    const patch = '--- a/src/math.ts\n+++ b/src/math.ts\n@@ -6 +6 @@\n-export const retries = 3;\n+export const retries = 4;\n';
    expect(json('patch', ['patch', '--dry-run'], 0, patch)).toMatchObject({ success: true, lines_added: 1, dry_run: true });
    expect(json('patch', ['patch'], 0, patch)).toMatchObject({ success: true, path: 'src/math.ts' });
    expect(json('replace', ['replace', 'src/math.ts', 'retries = 4', 'retries = 5'])).toMatchObject({ success: true });
    const versions = json('history', ['history', 'src/math.ts']).versions as unknown[];
    expect(versions).toHaveLength(3);
    expect(json('diff', ['diff', 'src/math.ts', '1', 'current']).lines_added).toBe(1);
    expect(json('undo', ['undo', 'src/math.ts'])).toMatchObject({ success: true, op: 'undo' });
    expect(json('rollback', ['rollback', 'src/math.ts', '1'])).toMatchObject({ success: true });
  });

  it('run: the command it ran, its exit code and output', () => {
    expect(json('run', ['run', '--', 'echo', 'hi'])).toMatchObject({ command: 'echo hi', exit_code: 0 });
  });

  it('scan, snapshots, policy, audit and doctor', () => {
    expect(json('scan', ['scan', '--index']).index).toMatchObject({ relations: 1 });
    const snap = json('snapshot create', ['snapshot', 'create', 'before']);
    expect(json('snapshot list', ['snapshot', 'list']).snapshots).toEqual([snap]);
    expect(json('snapshot restore', ['snapshot', 'restore', 'before'])).toEqual({ id: snap.id, action: 'restored' });
    expect(json('snapshot drop', ['snapshot', 'drop', String(snap.id)])).toEqual({ id: snap.id, action: 'dropped' });
    expect(json('policy show', ['policy', 'show']).mode).toBe('auto');
    expect(json('policy check', ['policy', 'check', 'read', '.env'], 4)).toMatchObject({ effect: 'deny', sensitive: true });
    const records = json('audit', ['audit', '--op', 'replace']).records as Array<{ sessionId: string }>;
    expect(records).toHaveLength(1);
    expect(json('audit verify', ['audit', 'verify']).ok).toBe(true);
    expect(json('audit reindex', ['audit', 'reindex'])).toMatchObject({ ok: true });
    const rolled = json('audit rollback', ['audit', 'rollback', '--session', (records[0] as { sessionId: string }).sessionId], 1);
    // The replace was undone and rolled back since: its change no longer applies, and the refusal says so.
    expect(rolled).toMatchObject({ changes: 1, refused: 1 });
    expect(json('doctor', ['doctor']).ok).toBe(true);
    // The replace, undo and rollback of the test before left versions of src/math.ts: one is kept.
    const pruned = json('prune', ['prune', '--max-versions', '1']);
    expect((pruned.history as { versions_removed: number }).versions_removed).toBeGreaterThan(0);
    expect(json('history', ['history', 'src/math.ts']).versions).toHaveLength(1);
  });

  it('serve --http prints where it listens', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('./support/cli.ts');
    const child = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', '--json'], {
      cwd: project.root,
      env: project.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('}\n')) resolve(out);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening`)));
    });
    const data = JSON.parse(line) as { url: string };
    expect(shapeErrors('serve --http', data)).toEqual([]);
    checked.add('serve --http');
    // A real MCP request: the tools the server lists are the catalog's.
    const res = await fetch(data.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '1' } },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"serverInfo"');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('a failure is {error} with --json', () => {
    const r = ctxfs(project, ['cat', 'missing.ts', '--json']);
    expect(r.status).toBe(3);
    expect(r.json()).toMatchObject({ error: { code: 'ENOENT' } });
    const usage = ctxfs(project, ['cat', '--json']);
    expect(usage.status).toBe(2);
    expect(usage.json()).toMatchObject({ error: { code: 'EINVAL' } });
  });

  afterAll(() => {
    // Run last (vitest runs a file's tests in order): every documented shape was checked.
    expect([...checked].sort()).toEqual(Object.keys(JSON_SHAPES).sort());
  });
});
