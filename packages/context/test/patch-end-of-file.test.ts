import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, type EditResult } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { gitApplied, unified } from './support/git-apply-patch.ts';
import { testState } from './support/test-state.ts';

const PNPM = join(import.meta.dirname, '../../../node_modules/.pnpm');

/** A file of an installed package (any installed version), as it is on disk. */
function installed(pkg: string, file: string): string {
  const dir = readdirSync(PNPM)
    .filter((d) => d.startsWith(`${pkg}@`))
    .sort()
    .find((d) => existsSync(join(PNPM, d, 'node_modules', pkg, file)));
  if (dir === undefined) throw new Error(`no installed ${pkg} under ${PNPM} has ${file}`);
  return readFileSync(join(PNPM, dir, 'node_modules', pkg, file), 'utf8');
}

// 46 lines, ending in a newline.
const SYMBOL = installed('typescript', 'lib/lib.es2015.symbol.d.ts');
// 54 lines, the last (`//# sourceMappingURL=index.js.map`) without a newline.
const NO_FINAL = installed('balanced-match', 'dist/esm/index.js');
// 8 lines, ending in a newline.
const VALID = installed('semver', 'functions/valid.js');
// 78 lines, ending in a newline, none of them blank.
const MANIFEST = installed('semver', 'package.json');
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
const lastLine = (text: string) => text.split('\n').at(-1) as string;
const NL = '\\ No newline at end of file\n';

for (const backend of BACKENDS) {
  describe(`insertions at and past the end of a file, against git apply, over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });
    /** ctxfs's result and the file after it. */
    const apply = async (text: string, patch: string): Promise<{ r: EditResult; after: string }> => {
      ws = await backend.create({ 'a.txt': text });
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
      const r = await ctx.applyPatch(patch);
      return { r, after: new TextDecoder().decode(await ws.fs.readBytes('a.txt')) };
    };
    /**
     * git apply --unidiff-zero gives `want`, and ctxfs gives it too. Plain git apply gives the
     * same unless `plain` says it refuses, or `differs`: it puts an insertion without context at
     * the end, where such a hunk must match, however its line says.
     */
    const agrees = async (text: string, patch: string, plain: 'same' | 'refuses' | 'differs' = 'same') => {
      const want = gitApplied(text, patch, true);
      expect(want).toBeDefined();
      if (plain !== 'differs') expect(gitApplied(text, patch, false)).toBe(plain === 'same' ? want : undefined);
      const { r, after } = await apply(text, patch);
      expect(r.success, r.message).toBe(true);
      expect(after).toBe(want);
    };
    /** ctxfs refuses, saying `says`, with a code and the path, and leaves the file as it was. */
    const refuses = async (text: string, patch: string, ...says: string[]) => {
      const { r, after } = await apply(text, patch);
      expect(r.success).toBe(false);
      expect(r.code).toBe('ECONFLICT');
      expect(r.path).toBe('a.txt');
      for (const s of says) expect(r.message).toContain(s);
      expect(after).toBe(text);
      return r.message;
    };

    // git applies hunks one after another, clamping a past-end line to the file as the hunks
    // before left it, so every insertion past the end lands at the end, in the patch's order.
    it.each([
      ['both past the end', '@@ -50,0 +51,2 @@\n+X1\n+X2\n@@ -60,0 +62,1 @@\n+Y\n', 'same'],
      ['both past the end, the later line first', '@@ -60,0 +61,2 @@\n+X1\n+X2\n@@ -50,0 +53,1 @@\n+Y\n', 'same'],
      ['both at exactly the line count', '@@ -46,0 +47,2 @@\n+X1\n+X2\n@@ -46,0 +49,1 @@\n+Y\n', 'same'],
      ['at the line count, then past the end', '@@ -46,0 +47,2 @@\n+X1\n+X2\n@@ -90,0 +93,1 @@\n+Y\n', 'same'],
      ['one inside, two past the end', '@@ -3,0 +4 @@\n+W\n@@ -50,0 +52,2 @@\n+X1\n+X2\n@@ -60,0 +63,1 @@\n+Y\n', 'differs'],
    ] as const)('applies insertions %s in order, as git apply does', async (_, hunks, plain) => {
      const patch = unified(hunks);
      expect(gitApplied(SYMBOL, patch, true)?.endsWith('\nX1\nX2\nY\n')).toBe(true);
      await agrees(SYMBOL, patch, plain);
    });

    // A second hunk whose new line (47) contradicts its place after the first's lines: plain git
    // apply, which wants an insertion without context at the end, keeps the patch's order, and so
    // does ctxfs, placing by the old line as GNU patch does; --unidiff-zero goes by the new line.
    it('keeps the patch order of insertions at the end whose new line numbers contradict it, as plain git apply does', async () => {
      const patch = unified('@@ -46,0 +47,2 @@\n+X1\n+X2\n@@ -46,0 +47,1 @@\n+Y\n');
      expect(gitApplied(SYMBOL, patch, true)).toBe(`${SYMBOL}Y\nX1\nX2\n`);
      const want = `${SYMBOL}X1\nX2\nY\n`;
      expect(gitApplied(SYMBOL, patch, false)).toBe(want);
      const { r, after } = await apply(SYMBOL, patch);
      expect(r.success, r.message).toBe(true);
      expect(after).toBe(want);
    });

    it('applies insertions past the end of a CRLF file with the endings the patch states, as git apply does', async () => {
      const crlf = SYMBOL.replaceAll('\n', '\r\n');
      await agrees(crlf, unified('@@ -50,0 +51,2 @@\r\n+X1\r\n+X2\r\n@@ -60,0 +62,1 @@\r\n+Y\r\n'));
    });

    it.each([
      ['at 0', '@@ -0,0 +1 @@\n+X\n'],
      ['past the end', '@@ -5,0 +6 @@\n+X\n'],
      ['twice', '@@ -0,0 +1 @@\n+X\n@@ -5,0 +7 @@\n+Y\n'],
    ])('inserts into an empty file %s as git apply does', async (_, hunks) => {
      await agrees('', unified(hunks));
    });

    it.each([
      ['at 0', '@@ -0,0 +1 @@\n+X\n', 'refuses'],
      ['after its line', '@@ -1,0 +2 @@\n+X\n', 'refuses'],
      ['past the end', '@@ -5,0 +6 @@\n+X\n', 'same'],
      ['twice past the end', '@@ -5,0 +6 @@\n+X\n@@ -7,0 +9 @@\n+Y\n', 'same'],
      ['past the end, ending without a newline', `@@ -5,0 +6 @@\n+X\n${NL}`, 'same'],
    ] as const)('inserts into a file that is only a newline %s as git apply --unidiff-zero does', async (_, hunks, plain) => {
      await agrees('\n', unified(hunks), plain);
    });

    // Past the end of a file whose last line has no newline, git apply joins the first added
    // line onto that line (`…index.js.map` + `X` → `…index.js.mapX`); GNU patch puts it on a
    // line of its own. No diff tool writes such a hunk: a diff of that file takes the last
    // line out and puts it back. ctxfs refuses and shows that form, which git applies.
    const FIX = `-${lastLine(NO_FINAL)}\n${NL}+${lastLine(NO_FINAL)}\n`;
    it.each([
      ['at the line count', '@@ -54,0 +55 @@\n+X\n', 'X\n', `@@ -54 +54,2 @@\n${FIX}+X\n`],
      ['past the end', '@@ -90,0 +91 @@\n+X\n', 'X\n', `@@ -90 +90,2 @@\n${FIX}+X\n`],
      ['past the end, ending without a newline', `@@ -90,0 +91 @@\n+X\n${NL}`, 'X', `@@ -90 +90,2 @@\n${FIX}+X\n${NL}`],
      ['twice past the end', '@@ -90,0 +91 @@\n+X\n@@ -95,0 +97 @@\n+Y\n', 'X\nY\n', `@@ -90 +90,2 @@\n${FIX}+X\n@@ -95,0 +97 @@\n+Y\n`],
    ])('refuses an insertion %s after a last line without a newline, which git apply joins onto it', async (_, hunks, tail, fixed) => {
      const patch = unified(hunks);
      const joined = `${NO_FINAL}${tail}`;
      expect(gitApplied(NO_FINAL, patch, true)).toBe(joined);
      expect(gitApplied(NO_FINAL, patch, false)).toBe(joined);
      await refuses(NO_FINAL, patch, "line 54, the file's last line, which has no newline", FIX.slice(0, -1));
      // The form the message shows, git and ctxfs apply alike.
      await agrees(NO_FINAL, unified(fixed));
    });

    it.each([
      // The marker after a context line says the line has no newline on both sides.
      ['a last line as context marked without a newline', `@@ -53,2 +53,3 @@\n };\n ${lastLine(NO_FINAL)}\n${NL}+X\n`, `${NO_FINAL}X\n`],
      // Context without the marker says the line has one, which it has not: git refuses.
      ['a last line as context not marked', `@@ -53,2 +53,3 @@\n };\n ${lastLine(NO_FINAL)}\n+X\n`, undefined],
    ])('refuses lines added after %s in a file without a final newline, as git apply joins or refuses', async (_, hunks, git) => {
      const patch = unified(hunks);
      expect(gitApplied(NO_FINAL, patch, true)).toBe(git);
      await refuses(NO_FINAL, patch, 'line 54', `-${lastLine(NO_FINAL)}\n${NL}`);
    });

    it('refuses an insertion past the end of a CRLF file without a final newline, which git apply joins onto its last line', async () => {
      const crlf = NO_FINAL.replaceAll('\n', '\r\n');
      const patch = unified('@@ -90,0 +91 @@\r\n+X\r\n');
      expect(gitApplied(crlf, patch, true)).toBe(`${crlf}X\r\n`);
      await refuses(crlf, patch, 'no newline at its end');
    });

    it.each([
      ['the last line replaced, the new side ending with a newline', `@@ -54 +54,2 @@\n-${lastLine(NO_FINAL)}\n${NL}+${lastLine(NO_FINAL)}\n+X\n`],
      ['the last line replaced, the new side ending without one', `@@ -54 +54,2 @@\n-${lastLine(NO_FINAL)}\n${NL}+${lastLine(NO_FINAL)}\n+X\n${NL}`],
      ['the same past the end', `@@ -90 +90,2 @@\n-${lastLine(NO_FINAL)}\n${NL}+${lastLine(NO_FINAL)}\n+X\n`],
    ])('appends to a file without a final newline with %s, as git apply does', async (_, hunks) => {
      await agrees(NO_FINAL, unified(hunks));
    });

    // A marker says the line before it has no newline; where a line follows that one, git
    // apply joins them, wherever in the file it is.
    it.each([
      ['before a later insertion past the end', `@@ -50,0 +51 @@\n+X\n${NL}@@ -60,0 +62 @@\n+Y\n`, 'hunk #2', `${VALID}XY\n`],
      ['before a line of the file', `@@ -3,0 +4 @@\n+X\n${NL}`, 'line 4 of the file', VALID.replace("require('./parse')\n", "require('./parse')\nX")],
      ['before another added line of the hunk', `@@ -50,0 +51,2 @@\n+X\n${NL}+Y\n`, 'another line of the hunk', `${VALID}XY\n`],
      [
        'on a context line before an added one',
        `@@ -7,2 +7,3 @@\n }\n module.exports = valid\n${NL}+X\n`,
        'another line of the hunk',
        `${VALID.slice(0, -1)}X\n`,
      ],
    ])('refuses a line marked without a newline %s, which git apply joins', async (_, hunks, follows, git) => {
      const patch = unified(hunks);
      expect(gitApplied(VALID, patch, true)).toBe(git);
      await refuses(VALID, patch, '`\\ No newline at end of file`', follows, 'remove it');
    });

    it.each([
      ['an insertion past the end', `@@ -50,0 +51 @@\n+X\n${NL}`, 'same'],
      ['two, the last marked', `@@ -50,0 +51 @@\n+X\n@@ -60,0 +62 @@\n+Y\n${NL}`, 'same'],
      // The marker says the old last line has no newline, which it has: only --unidiff-zero applies it.
      ['a replaced last line marked on the old side', `@@ -8 +8,2 @@\n-module.exports = valid\n${NL}+module.exports = valid\n+X\n${NL}`, 'refuses'],
    ] as const)('makes a file end without a newline with %s, as git apply does', async (_, hunks, plain) => {
      await agrees(VALID, unified(hunks), plain);
    });

    it.each([
      ['lines that are nowhere', SYMBOL, '@@ -60,2 +60,1 @@\n-zzz\n-yyy\n+Y\n', ''],
      // git finds an empty line by content anywhere, so a file without one shows the refusal.
      [
        'the empty line a model counts after the last newline',
        MANIFEST,
        '@@ -79,1 +79,0 @@\n-\n',
        ' (the newline ending the last line is not an empty line after it)',
      ],
    ])('refuses a hunk past the end that removes %s, saying how many lines the file has', async (_, text, hunks, note) => {
      const patch = unified(hunks);
      expect(gitApplied(text, patch, true)).toBeUndefined();
      expect(gitApplied(text, patch, false)).toBeUndefined();
      const at = /-(\d+)/.exec(hunks)?.[1];
      await refuses(
        text,
        patch,
        `Its header puts it at line ${at}, past the end of the file, which has ${lineCount(text)} ${lineCount(text) === 1 ? 'line' : 'lines'}${note}.`,
      );
    });

    it('applies a hunk past the end that removes lines found in the file where they are, as git apply does', async () => {
      // Plain git apply wants a hunk without trailing context at the end, and refuses it elsewhere.
      await agrees(SYMBOL, unified('@@ -60,1 +60,1 @@\n-    readonly prototype: Symbol;\n+    readonly prototype: symbol;\n'), 'refuses');
    });
  });
}
