import { isFsError } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext } from '../src/index.ts';

describe('edge cases', () => {
  test('empty, CRLF, BOM, UTF-16, binary, and a single huge line', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Array.from(new TextEncoder().encode('hi\nthere\n')).flatMap((b) => [b, 0])]);
    const minified = `var a=${'1+'.repeat(20_000)}1;`;
    const fs = new MemoryFilesystem({
      files: {
        'empty.txt': '',
        'crlf.ts': 'export function a() {\r\n  return 1;\r\n}\r\n',
        'bom.md': '\uFEFF# Title\n\nText.\n',
        'utf16.txt': utf16,
        'image.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 1, 2, 3]),
        'bundle.min.js': minified,
      },
    });
    const ctx = await createContext({ fs, profile: 'small' });
    expect((await ctx.readFile('empty.txt')).view).toBe('full');
    expect((await ctx.readLines('empty.txt', 1)).totalLines).toBe(0);

    const crlf = await ctx.readLines('crlf.ts', 1, 3);
    expect(crlf.text).toContain('1\texport function a() {\n2\t  return 1;\n3\t}');
    expect(crlf.text).not.toContain('\r');
    expect((await ctx.getSymbol('crlf.ts', 'a')).text).toContain('return 1;');

    const bom = await ctx.getExcerpt('bom.md');
    expect(bom.text).toContain('1\t# Title');
    expect((await ctx.readLines('utf16.txt', 2, 2)).text).toContain('2\tthere');
    expect(isFsError(await ctx.readFile('image.png').catch((e: unknown) => e), 'EBINARY')).toBe(true);

    // One line far over budget: the cut happens inside the line, still within budget.
    const cut = await ctx.readFile('bundle.min.js', { strategy: 'start' });
    expect(cut.view).toBe('truncated');
    expect(cut.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
    expect(cut.text).toContain('tokens cut (strategy start)');
    // Its next call reads on from the column where the cut stopped: what it serves first is what follows the cut.
    const column = Number(/^readLines\("bundle\.min\.js", 1, 1, \{column: (\d+)\}\)$/.exec(cut.next ?? '')?.[1]);
    expect(column, cut.next).toBeGreaterThan(1);
    const whole = new TextDecoder().decode(await fs.readBytes('bundle.min.js'));
    const servedHead = /\n([^\n]*)\n\[… \d+ of \d+ tokens cut/.exec(cut.text)?.[1] ?? '';
    expect(whole.startsWith(servedHead)).toBe(true);
    expect(column).toBe(servedHead.length + 1);
    const on = await ctx.readLines('bundle.min.js', 1, 1, { column });
    expect(on.text).toContain(`1\t${whole.slice(column - 1, column + 19)}`);
    const narrow = await ctx.readFile('bundle.min.js');
    expect(narrow.view).toBe('narrow');
    expect(narrow.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
    const line = await ctx.readLines('bundle.min.js', 1, 1);
    // A line over the budget is served in pieces, each with the call for the next.
    expect(line.view).toBe('lines');
    expect(line.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
    expect(line.next).toMatch(/^readLines\("bundle\.min\.js", 1, 1, \{column: \d+\}\)$/);
    await ctx.close();
  });

  test('a maxTokens below the minimum a call needs is refused naming the minimum; from it on, even a refusal fits the budget', async () => {
    // A long line whose first character alone does not fit a small budget: the per-call notice is the answer.
    const long = `${'x'.repeat(40)}${'🙂'.repeat(400)}`;
    const fs = new MemoryFilesystem({
      files: { 'a.ts': 'export const a = 1;\n'.repeat(50), 'lib/a-rather-long-directory-name/and-a-long-file-name.min.js': `${long}\n` },
    });
    const ctx = await createContext({ fs, profile: 'small' });
    await ctx.scan();
    const calls = (maxTokens: number) => [
      () => ctx.readFile('a.ts', { maxTokens, strategy: 'start' }),
      () => ctx.readLines('lib/a-rather-long-directory-name/and-a-long-file-name.min.js', 1, 1, { maxTokens }),
      () => ctx.getSymbol('a.ts', 'a', { maxTokens }),
      () => ctx.grep('x', { maxTokens }),
      () => ctx.listFiles('', { maxTokens }),
      () => ctx.findSymbol('a', { maxTokens }),
    ];
    for (const call of calls(20)) await expect(call()).rejects.toMatchObject({ code: 'EINVAL', message: expect.stringContaining('48') });
    for (const budget of [48, 52, 60]) {
      for (const call of calls(budget)) {
        const r = await call();
        expect(r.tokens).toBeLessThanOrEqual(budget);
      }
    }
    const notice = await ctx.readLines('lib/a-rather-long-directory-name/and-a-long-file-name.min.js', 1, 1, { maxTokens: 48 });
    expect(notice.view).toBe('over-budget');
    expect(notice.text).toContain('budget of this call (48 tokens)');
    await ctx.close();
  });
});

describe('a missing file', () => {
  test('is ENOENT of the read that asked, with the nearest registered paths', async () => {
    const fs = new MemoryFilesystem({ files: { 'src/lib/parser.ts': 'export const p = 1;\n', 'src/util.ts': 'export const u = 1;\n', 'README.md': '# r\n' } });
    const ctx = await createContext({ fs, profile: 'small' });
    await ctx.scan();
    for (const [call, run] of [
      ['readFile', () => ctx.readFile('src/parser.ts')],
      ['readLines', () => ctx.readLines('src/parser.ts', 1, 2)],
      ['getOutline', () => ctx.getOutline('src/parser.ts')],
      // Never read nor recorded: nothing to check or list, and the same suggestions.
      ['checkConflicts', () => ctx.checkConflicts('src/parser.ts')],
      ['history', () => ctx.history('src/parser.ts')],
    ] as const) {
      const err = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(err, 'ENOENT')).toBe(true);
      expect(err).toMatchObject({ op: call, path: 'src/parser.ts' });
      expect((err as Error).message).toContain('did you mean "src/lib/parser.ts"');
    }
    const typo = await ctx.readFile('src/utl.ts').catch((e: unknown) => e);
    expect((typo as Error).message).toContain('"src/util.ts"');
    const far = await ctx.readFile('nothing/like/this.go').catch((e: unknown) => e);
    expect((far as Error).message).not.toContain('did you mean');
    expect((far as Error).message).toContain('glob("**/this.go")');
    // Removed behind ctxfs's back, still registered: not offered as its own near match.
    await fs.delete('src/util.ts');
    const gone = await ctx.readFile('src/util.ts').catch((e: unknown) => e);
    expect(isFsError(gone, 'ENOENT')).toBe(true);
    expect((gone as Error).message).not.toContain('did you mean "src/util.ts"');
    await ctx.close();
  });

  test('given from a directory below the root (a listing row taken for a path), names the path it ends first', async () => {
    // Listings, globs and greps name their rows under the directory their header gives; a model that takes a row
    // for the whole path asks for its end. Four other index.js files come first by name alone.
    const files: Record<string, string> = { 'package/lib/config/index.js': 'exports.a = 1;\n' };
    for (const d of ['a', 'b', 'c', 'lib']) files[`${d}/index.js`] = 'exports.b = 1;\n';
    const ctx = await createContext({ fs: new MemoryFilesystem({ files }), profile: 'small' });
    await ctx.scan();
    const err = await ctx.readFile('lib/config/index.js').catch((e: unknown) => e);
    expect(isFsError(err, 'ENOENT')).toBe(true);
    expect((err as Error).message).toContain('did you mean "package/lib/config/index.js", ');
    await ctx.close();
  });
});
