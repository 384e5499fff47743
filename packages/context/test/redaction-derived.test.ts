/**
 * Secrets stay masked in what an edit serves, not only in what a read
 * serves: a diff, a conflict, a refusal quoting the file's lines, a buffer's
 * diff. Such a text shows parts of a file out of context (a hunk inside a
 * key block has no BEGIN line), so it is masked by the secrets of the files
 * it was made from. And an edit made from the masked text it was served
 * never writes the mask over the secret. Host backend, real-looking
 * secrets: a PEM private key made now, a GitHub token, an AWS key.
 */
import { generateKeyPairSync, randomInt } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { hostBackend, type Workspace } from './backends.ts';

const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const GH = `ghp_${pick(ALNUM, 36)}`;
const GH_ROTATED = `ghp_${pick(ALNUM, 36)}`;
const AWS = `AKIA${pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`;
const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY_LINES = PEM.trim().split('\n').slice(1, -1);

const CONFIG = `export const region = "eu-west-1";\nexport const GH = "${GH}";\nexport const AWS_KEY = "${AWS}";\nexport const retries = 3;\n`;
// The key's body starts on line 3; line 15 is deep inside it, more than three lines from either end.
const TLS = `// TLS material for the staging proxy.\nexport const TLS_KEY = \`${PEM.trim()}\n\`;\nexport const port = 8443;\n`;

/** Each secret, or line of the key, that `value` shows in clear. */
function leaks(value: unknown): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return [GH, GH_ROTATED, AWS, ...KEY_LINES].filter((s) => text.includes(s));
}

let ws: Workspace;
let ctx: ContextLayer;
beforeEach(async () => {
  ws = await hostBackend.create({ 'src/config.ts': CONFIG, 'deploy/tls.ts': TLS });
  ctx = await createContext({ fs: ws.fs, store: ':memory:', agent: 'llm:a', safety: { policyFiles: false } });
  await ctx.scan();
});
afterEach(async () => {
  await ctx.close();
  await ws.cleanup();
});

const disk = async (path: string) => new TextDecoder().decode(await ws.fs.readBytes(path));

describe('what an edit serves of a file is masked', () => {
  it('a patch made from the served line is refused, quoting the file masked and saying why it cannot match', async () => {
    const served = (await ctx.readFile('src/config.ts')).text;
    expect(served).toContain('export const GH = "[REDACTED:github-token]";');
    const r = await ctx.applyPatch(
      '--- a/src/config.ts\n+++ b/src/config.ts\n@@ -1,4 +1,4 @@\n export const region = "eu-west-1";\n export const GH = "[REDACTED:github-token]";\n export const AWS_KEY = "[REDACTED:aws-access-key-id]";\n-export const retries = 3;\n+export const retries = 5;\n',
    );
    expect(r.success).toBe(false);
    expect(leaks(r)).toEqual([]);
    expect(r.message).toContain('actual:   "export const GH = \\"[REDACTED:github-token]\\";"');
    expect(r.message).toMatch(/holds \[REDACTED:github-token\], the mask served in place of a secret/);
    expect(r.conflict?.hunks[0]?.closest?.lines.map((l) => l.actual)).toContain('export const GH = "[REDACTED:github-token]";');
    expect(await disk('src/config.ts')).toBe(CONFIG);
  });

  it('a refusal quoting a long line cut short masks what is left of a secret at the cut', async () => {
    // A minified line: the refusal shows 160 characters around where the patch's line first differs
    // (the GitHub token), which ends 12 characters into the AWS key.
    const line = `var a="${'x'.repeat(100)}";var GH="${GH}";var p="${'p'.repeat(35)}";var AWS="${AWS}";var b="${'y'.repeat(200)}";`;
    await ws.external('dist/app.min.js', `${line}\n`);
    const served = (await ctx.readLines('dist/app.min.js', 1, 1)).text;
    expect(served).toContain('[REDACTED:aws-access-key-id]');
    const masked = line.replace(GH, '[REDACTED:github-token]').replace(AWS, '[REDACTED:aws-access-key-id]');
    const r = await ctx.applyPatch(`@@ -1 +1 @@\n-${masked}\n+${masked.replace('var b=', 'var c=')}\n`, { path: 'dist/app.min.js' });
    expect(r.success).toBe(false);
    expect(r.message).toMatch(/actual: +"…[^\n]*…"/);
    const parts = (secret: string) => Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8));
    expect([...parts(GH), ...parts(AWS)].filter((p) => JSON.stringify(r).includes(p))).toEqual([]);
  });

  it('an edit conflict quotes both sides masked: their diff, yours, the regions and the merge with markers', async () => {
    await ctx.readFile('src/config.ts');
    // The person rotates the token while the model edits the same line.
    await ws.external('src/config.ts', CONFIG.replace(GH, GH_ROTATED));
    const r = await ctx.editLines('src/config.ts', { kind: 'replace', start: 2, end: 2, text: 'export const GH = process.env.GH;\n' }, { markers: true });
    expect(r.code).toBe('ECONFLICT');
    expect(r.conflict?.theirsDiff).toContain('+export const GH = "[REDACTED:github-token]";');
    expect(r.conflict?.markedText).toBeDefined();
    expect(r.conflict?.regions.length).toBeGreaterThan(0);
    expect(leaks(r)).toEqual([]);
    const c = await ctx.checkConflicts('src/config.ts');
    expect(c?.theirsDiff).toContain('-export const GH = "[REDACTED:github-token]";');
    expect(leaks(c)).toEqual([]);
  });

  it('a change inside a key block: the diffs of the edit, get_diff, undo and a dry run mask each line of the key', async () => {
    await ctx.readFile('deploy/tls.ts');
    const edit = await ctx.editLines('deploy/tls.ts', { kind: 'replace', start: 15, end: 15, text: 'REPLACED\n' });
    expect(edit.success).toBe(true);
    // Inside the block, the new line is part of the key too, as a read of the file would serve it.
    expect(edit.diff).toContain(' [REDACTED:private-key]\n-[REDACTED:private-key]\n+[REDACTED:private-key]\n [REDACTED:private-key]\n');
    expect(leaks(edit)).toEqual([]);
    const diff = await ctx.getDiff('deploy/tls.ts', 1, 'current');
    expect(diff.linesRemoved).toBe(1);
    expect(leaks(diff)).toEqual([]);
    const dry = await ctx.applyPatch('--- a/deploy/tls.ts\n+++ b/deploy/tls.ts\n@@ -15 +15 @@\n-REPLACED\n+AGAIN\n', { dryRun: true });
    expect(dry.success).toBe(true);
    expect(leaks(dry)).toEqual([]);
    const undone = await ctx.undo('deploy/tls.ts');
    expect(undone.success).toBe(true);
    expect(undone.diff).toContain('+[REDACTED:private-key]');
    expect(leaks(undone)).toEqual([]);
    expect(await disk('deploy/tls.ts')).toBe(TLS);
    // A hunk that holds the block's END line and not its BEGIN line.
    const after = await ctx.replace('deploy/tls.ts', 'export const port = 8443;', 'export const port = 9443;');
    expect(after.diff).toContain(' -----END PRIVATE KEY-----\n');
    expect(leaks(after)).toEqual([]);
  });

  it('a file open in a buffer: the edit, the buffer diff and a refused patch are masked', async () => {
    await ctx.buffers.open('src/config.ts');
    const edit = await ctx.replace('src/config.ts', 'export const retries = 3;', 'export const retries = 5;');
    expect(edit.success).toBe(true);
    expect(edit.diff).toContain(' export const GH = "[REDACTED:github-token]";');
    expect(leaks(edit)).toEqual([]);
    const d = await ctx.buffers.diff('src/config.ts');
    expect(d.diff).toContain('[REDACTED:aws-access-key-id]');
    expect(leaks(d)).toEqual([]);
    const patch = await ctx.applyPatch(
      '@@ -2,2 +2,2 @@\n export const GH = "[REDACTED:github-token]";\n-export const AWS_KEY = "x";\n+export const AWS_KEY = "y";\n',
      {
        path: 'src/config.ts',
      },
    );
    expect(patch.success).toBe(false);
    expect(leaks(patch)).toEqual([]);
  });
});

describe('an edit never writes a served mask over the secret', () => {
  const served = CONFIG.replace(GH, '[REDACTED:github-token]').replace(AWS, '[REDACTED:aws-access-key-id]');

  it('edit_lines and write_file with the text as served are refused, naming the line; the secret stays on disk', async () => {
    await ctx.readFile('src/config.ts');
    const lines = await ctx.editLines('src/config.ts', { kind: 'replace', start: 2, end: 4, text: served.split('\n').slice(1, 4).join('\n') });
    expect(lines).toMatchObject({ success: false, code: 'EINVAL' });
    expect(lines.message).toMatch(/line 2 of src\/config\.ts .*holds \[REDACTED:github-token\]/);
    const whole = await ctx.writeFile('src/config.ts', served.replace('retries = 3', 'retries = 5'));
    expect(whole).toMatchObject({ success: false, code: 'EINVAL' });
    expect(await disk('src/config.ts')).toBe(CONFIG);
    // An edit beside the secret keeps it.
    expect((await ctx.editLines('src/config.ts', { kind: 'replace', start: 4, end: 4, text: 'export const retries = 5;\n' })).success).toBe(true);
    expect(await disk('src/config.ts')).toBe(CONFIG.replace('retries = 3', 'retries = 5'));
  });

  it('the same in a buffer: refused, and the buffer keeps the secret', async () => {
    await ctx.buffers.open('src/config.ts');
    const r = await ctx.editLines('src/config.ts', {
      kind: 'replace',
      start: 3,
      end: 3,
      text: 'export const AWS_KEY = "[REDACTED:aws-access-key-id]"; // rotated\n',
    });
    expect(r).toMatchObject({ success: false, code: 'EINVAL' });
    expect(r.message).toMatch(/line 3 of src\/config\.ts .*holds \[REDACTED:aws-access-key-id\]/);
    expect((await ctx.buffers.text('src/config.ts')).text).toBe(CONFIG);
  });

  it('a mask written where the file holds no secret of its kind is text like any other', async () => {
    const doc = 'Secrets are served as [REDACTED:github-token].\n';
    expect((await ctx.writeFile('docs/redaction.md', doc)).success).toBe(true);
    expect((await ctx.replace('docs/redaction.md', 'served as', 'shown as')).success).toBe(true);
    expect(await disk('docs/redaction.md')).toBe(doc.replace('served as', 'shown as'));
  });
});
