/**
 * What the tools serve of a file after an edit — a refused patch's lines, a
 * conflict's diff, a change's diff inside a key block, a buffer's diff — is
 * masked as read_file masks it; and an edit made from the masked text it was
 * served is refused rather than writing the mask over the secret. Host
 * backend, a PEM private key made now, a GitHub token, an AWS key.
 */
import { generateKeyPairSync, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ContextLayer, createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Toolset } from '../src/index.ts';

const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const GH = `ghp_${pick(ALNUM, 36)}`;
const GH_ROTATED = `ghp_${pick(ALNUM, 36)}`;
const AWS = `AKIA${pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`;
const PEM = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY_LINES = PEM.trim().split('\n').slice(1, -1);

const CONFIG = `const region = "eu-west-1";\nconst GH = "${GH}";\nconst AWS_KEY = "${AWS}";\nconst retries = 3;\n`;
// A YAML block scalar: the key's four body lines are lines 4-7.
const DEPLOY = `proxy:\n  tls_key: |\n    -----BEGIN PRIVATE KEY-----\n${KEY_LINES.map((l) => `    ${l}`).join('\n')}\n    -----END PRIVATE KEY-----\n  port: 8443\n`;

/** Each secret, or line of the key, that a tool result shows in clear (its text or its data). */
function leaks(r: { text: string; data?: unknown }): string[] {
  const all = `${r.text}\n${JSON.stringify(r.data ?? {})}`;
  return [GH, GH_ROTATED, AWS, ...KEY_LINES].filter((s) => all.includes(s));
}

let base: string;
let root: string;
let fs: HostFilesystem;
let ctx: ContextLayer;
let tools: Toolset;
beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), 'ctxfs-tools-redaction-'));
  root = join(base, 'ws');
  for (const [p, text] of Object.entries({ 'src/config.ts': CONFIG, 'deploy/proxy.yaml': DEPLOY })) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  fs = await HostFilesystem.open({ root, stateDir: join(base, 'state'), durability: 'none' });
  ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
  await ctx.scan();
  tools = new Toolset(ctx.session({ agent: 'llm:test', profile: 'large' }));
});
afterEach(async () => {
  await ctx.close();
  await fs.close();
  rmSync(base, { recursive: true, force: true });
});

const disk = (path: string) => readFileSync(join(root, path), 'utf8');

describe('tool results after an edit serve no secret in clear', () => {
  it('apply_patch refused for context copied from read_file: the lines it quotes are masked, and it says why they differ', async () => {
    expect((await tools.run('read_file', { path: 'src/config.ts' })).text).toContain('const GH = "[REDACTED:github-token]";');
    const r = await tools.run('apply_patch', {
      patch:
        '--- a/src/config.ts\n+++ b/src/config.ts\n@@ -2,3 +2,3 @@\n const GH = "[REDACTED:github-token]";\n const AWS_KEY = "[REDACTED:aws-access-key-id]";\n-const retries = 3;\n+const retries = 5;\n',
    });
    expect(r.isError).toBe(true);
    expect(leaks(r)).toEqual([]);
    expect(r.text).toContain('the mask served in place of a secret');
  });

  it('an edit conflict and check_conflicts show the other side masked', async () => {
    await tools.run('read_file', { path: 'src/config.ts' });
    writeFileSync(join(root, 'src/config.ts'), CONFIG.replace(GH, GH_ROTATED));
    const check = await tools.run('check_conflicts', { path: 'src/config.ts' });
    expect(check.data).toMatchObject({ conflict: true, their_diff: expect.stringContaining('+const GH = "[REDACTED:github-token]";') });
    expect(leaks(check)).toEqual([]);
    const edit = await tools.run('edit_lines', { path: 'src/config.ts', action: 'replace', start_line: 2, end_line: 2, text: 'const GH = process.env.GH;' });
    expect(edit.isError).toBe(true);
    expect(leaks(edit)).toEqual([]);
  });

  it('edit_lines inside a key block, get_diff and undo mask each line of the key', async () => {
    await tools.run('read_file', { path: 'deploy/proxy.yaml' });
    const edit = await tools.run('edit_lines', { path: 'deploy/proxy.yaml', action: 'replace', start_line: 9, end_line: 9, text: '  port: 9443' });
    expect(edit.isError).toBe(false);
    expect(leaks(edit)).toEqual([]);
    const inside = await tools.run('edit_lines', { path: 'deploy/proxy.yaml', action: 'insert_after', start_line: 5, text: '    # rotated' });
    expect(inside.isError).toBe(false);
    expect(leaks(inside)).toEqual([]);
    const diff = await tools.run('get_diff', { path: 'deploy/proxy.yaml', from: 1, to: 'current' });
    expect(diff.text).toContain('[REDACTED:private-key]');
    expect(leaks(diff)).toEqual([]);
    for (let i = 0; i < 2; i++) {
      const undo = await tools.run('undo', { path: 'deploy/proxy.yaml' });
      expect(undo.isError).toBe(false);
      expect(leaks(undo)).toEqual([]);
    }
    expect(disk('deploy/proxy.yaml')).toBe(DEPLOY);
  });

  it('with the file open in a buffer: replace and buffer_diff are masked', async () => {
    await tools.run('open_file', { path: 'src/config.ts' });
    const edit = await tools.run('replace', { path: 'src/config.ts', old_text: 'const retries = 3;', new_text: 'const retries = 5;' });
    expect(edit.isError).toBe(false);
    expect(leaks(edit)).toEqual([]);
    const diff = await tools.run('buffer_diff', { path: 'src/config.ts' });
    expect(diff.text).toContain(' const AWS_KEY = "[REDACTED:aws-access-key-id]";');
    expect(leaks(diff)).toEqual([]);
  });
});

describe('an edit made from the masked text is refused, the secret kept', () => {
  const served = CONFIG.replace(GH, '[REDACTED:github-token]').replace(AWS, '[REDACTED:aws-access-key-id]');

  it('edit_lines and write_file, on disk and in a buffer', async () => {
    await tools.run('read_file', { path: 'src/config.ts' });
    const calls: Array<[string, Record<string, unknown>]> = [
      ['edit_lines', { path: 'src/config.ts', action: 'replace', start_line: 2, end_line: 4, text: served.split('\n').slice(1, 4).join('\n') }],
      ['write_file', { path: 'src/config.ts', content: served.replace('retries = 3', 'retries = 5') }],
    ];
    for (const buffered of [false, true]) {
      if (buffered) await tools.run('open_file', { path: 'src/config.ts' });
      for (const [name, args] of calls) {
        const r = await tools.run(name, args);
        expect(r.isError).toBe(true);
        expect(r.text).toMatch(/^EINVAL: .*line 2 of src\/config\.ts .*holds \[REDACTED:github-token\]/);
      }
    }
    expect((await tools.run('save_file', { path: 'src/config.ts' })).text).toContain('nothing to save');
    expect(disk('src/config.ts')).toBe(CONFIG);
  });
});
